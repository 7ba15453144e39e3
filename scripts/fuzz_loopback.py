"""Loopback sinks of scripts/fuzz-api.sh: a stub DNS resolver and a webhook receiver.

Standard library only. Both listen on 127.0.0.1 at ports the system picks, write
`dns=PORT` and `webhook=PORT` to the file named by the first argument once they listen, and
log every query and request (one line each) to `dns.log` and `webhook.log` beside it, so a
run can show that the server's lookups came here and nowhere else.

The resolver answers at once, authoritatively:
- NS of `com` (the server's canary: a resolver that denies `com` is not believed),
- MX, A and TXT (SPF) records of the sender domains the fuzzed document uses in its
  examples (`example.com`, `acme.com`) and their `mx.` hosts, with TEST-NET addresses
  (RFC 5737) that nothing connects to,
- NXDOMAIN for every other name, NOERROR without records for other types of known names.

Usage: python3 scripts/fuzz_loopback.py PORTS_FILE
"""

import errno
import os
import socket
import socketserver
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TYPE_A, TYPE_NS, TYPE_MX, TYPE_TXT, TYPE_AAAA = 1, 2, 15, 16, 28
TYPE_NAMES = {TYPE_A: "A", TYPE_NS: "NS", TYPE_MX: "MX", TYPE_TXT: "TXT", TYPE_AAAA: "AAAA"}
TTL = 300
MAIL_DOMAINS = ("example.com", "acme.com")


def encode_name(name):
    out = b""
    for label in name.strip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode("ascii")
    return out + b"\x00"


def records(name, qtype):
    """The records of (name, qtype) as (type, rdata) pairs, or None for NXDOMAIN."""
    if name == "com":
        return [(TYPE_NS, encode_name("a.gtld-servers.net"))] if qtype == TYPE_NS else []
    for domain in MAIL_DOMAINS:
        if name == domain:
            if qtype == TYPE_MX:
                return [(TYPE_MX, struct.pack("!H", 10) + encode_name(f"mx.{domain}"))]
            if qtype == TYPE_A:
                return [(TYPE_A, socket.inet_aton("192.0.2.1"))]
            if qtype == TYPE_TXT:
                text = b"v=spf1 -all"
                return [(TYPE_TXT, bytes([len(text)]) + text)]
            return []
        if name == f"mx.{domain}":
            return [(TYPE_A, socket.inet_aton("192.0.2.25"))] if qtype == TYPE_A else []
    return None


def parse_question(packet):
    """(id, flags, qname, qtype, end of the question) of a query, or None if malformed."""
    if len(packet) < 12:
        return None
    ident, flags, qdcount = struct.unpack("!HHH", packet[:6])
    if qdcount != 1 or flags & 0x8000:
        return None
    labels, pos = [], 12
    while True:
        if pos >= len(packet):
            return None
        length = packet[pos]
        pos += 1
        if length == 0:
            break
        if length & 0xC0 or pos + length > len(packet):
            return None
        labels.append(packet[pos : pos + length].decode("ascii", "replace"))
        pos += length
    if pos + 4 > len(packet):
        return None
    qtype, _qclass = struct.unpack("!HH", packet[pos : pos + 4])
    return ident, flags, ".".join(labels).lower(), qtype, pos + 4


def answer(packet, log):
    """The reply to one query (bytes), or None to stay silent on garbage."""
    parsed = parse_question(packet)
    if parsed is None:
        return None
    ident, flags, qname, qtype, end = parsed
    found = records(qname, qtype)
    log(f"{qname} {TYPE_NAMES.get(qtype, qtype)} {'NXDOMAIN' if found is None else len(found)}")
    rcode = 3 if found is None else 0
    # Response, authoritative, recursion desired copied, recursion available.
    reply_flags = 0x8000 | 0x0400 | (flags & 0x0100) | 0x0080 | rcode
    body = b""
    for rtype, rdata in found or []:
        body += struct.pack("!HHHIH", 0xC00C, rtype, 1, TTL, len(rdata)) + rdata
    header = struct.pack("!HHHHHH", ident, reply_flags, 1, len(found or []), 0, 0)
    return header + packet[12:end] + body


class Log:
    def __init__(self, path):
        self.file = open(path, "a", buffering=1, encoding="utf-8")
        self.lock = threading.Lock()

    def __call__(self, line):
        with self.lock:
            self.file.write(line + "\n")


class UdpHandler(socketserver.BaseRequestHandler):
    def handle(self):
        packet, sock = self.request
        reply = answer(packet, self.server.log)
        if reply is not None:
            sock.sendto(reply, self.client_address)


class TcpHandler(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            size = self.request.recv(2)
            if len(size) < 2:
                return
            (length,) = struct.unpack("!H", size)
            packet = b""
            while len(packet) < length:
                chunk = self.request.recv(length - len(packet))
                if not chunk:
                    return
                packet += chunk
            reply = answer(packet, self.server.log)
            if reply is None:
                return
            self.request.sendall(struct.pack("!H", len(reply)) + reply)


class WebhookHandler(BaseHTTPRequestHandler):
    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.server.log(f"{self.command} {self.path}")
        body = b'{"ok":true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, *args):
        pass


def dns_servers(attempts=50):
    """A UDP and a TCP server on one free loopback port (TCP for truncated answers and
    resolvers that prefer it). The port the system gives the UDP socket can be taken for TCP
    (an outgoing connection of an earlier run uses it): then another port is tried."""
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    for _ in range(attempts):
        udp = socketserver.ThreadingUDPServer(("127.0.0.1", 0), UdpHandler)
        try:
            tcp = socketserver.ThreadingTCPServer(("127.0.0.1", udp.server_address[1]), TcpHandler)
        except OSError as error:
            udp.server_close()
            if error.errno != errno.EADDRINUSE:
                raise
            continue
        return udp, tcp
    raise OSError(errno.EADDRINUSE, f"no loopback port free for both UDP and TCP in {attempts} tries")


def main():
    ports_file = sys.argv[1]
    here = os.path.dirname(os.path.abspath(ports_file))
    dns_log = Log(os.path.join(here, "dns.log"))
    hook_log = Log(os.path.join(here, "webhook.log"))

    udp, tcp = dns_servers()
    udp.log = dns_log
    tcp.log = dns_log
    port = udp.server_address[1]
    hooks = ThreadingHTTPServer(("127.0.0.1", 0), WebhookHandler)
    hooks.log = hook_log
    for server in (udp, tcp, hooks):
        threading.Thread(target=server.serve_forever, daemon=True).start()

    tmp = ports_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(f"dns={port}\nwebhook={hooks.server_address[1]}\n")
    os.replace(tmp, ports_file)
    threading.Event().wait()


if __name__ == "__main__":
    main()
