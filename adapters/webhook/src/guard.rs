//! The address half of the SSRF guard: which IP addresses a webhook may connect to.
//!
//! Pure: no lookup, no socket. [`forbidden_range`] names the special-purpose range an address
//! falls in; [`AddressPolicy::check`] decides whether that range may be contacted.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A special-purpose range a webhook target may fall in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Range {
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, and the local-use NAT64 prefix 64:ff9b:1::/48.
    Private,
    /// 169.254.0.0/16 (cloud metadata lives here), fe80::/10.
    LinkLocal,
    /// 100.64.0.0/10, carrier-grade NAT shared space.
    SharedNat,
    /// fc00::/7.
    UniqueLocal,
    /// fec0::/10 (deprecated site-local).
    SiteLocal,
    /// 0.0.0.0, ::.
    Unspecified,
    /// 0.0.0.0/8 other than 0.0.0.0 ("this network").
    ThisNetwork,
    /// 224.0.0.0/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32, 3fff::/20.
    Documentation,
    /// 198.18.0.0/15, 2001:2::/48.
    Benchmark,
    /// Everything else not publicly routable: 192.0.0.0/24, 192.88.99.0/24, 240.0.0.0/4,
    /// 100::/64 (discard), Teredo 2001::/32, deprecated IPv4-compatible ::a.b.c.d, and IPv6
    /// outside global unicast 2000::/3.
    Reserved,
}

impl Range {
    /// Whether `allow_private` lifts the refusal: the ranges a development setup or an
    /// internal deployment legitimately targets. The others are never a real receiver.
    pub fn is_internal(self) -> bool {
        matches!(
            self,
            Self::Loopback
                | Self::Private
                | Self::LinkLocal
                | Self::SharedNat
                | Self::UniqueLocal
                | Self::SiteLocal
        )
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::SharedNat => "shared (carrier-grade NAT)",
            Self::UniqueLocal => "unique-local",
            Self::SiteLocal => "site-local",
            Self::Unspecified => "unspecified",
            Self::ThisNetwork => "\"this network\"",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Documentation => "documentation",
            Self::Benchmark => "benchmarking",
            Self::Reserved => "reserved",
        }
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// `true` when `ip` lies in `base/prefix`.
fn in_v4(ip: Ipv4Addr, base: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(base)) & mask
}

/// `true` when `ip` lies in `base/prefix`.
fn in_v6(ip: Ipv6Addr, base: Ipv6Addr, prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    u128::from(ip) & mask == u128::from(base) & mask
}

/// The IPv4 address in the low 32 bits.
fn low_v4(ip: Ipv6Addr) -> Ipv4Addr {
    // Truncation is the point: the embedded address is the last 32 bits.
    Ipv4Addr::from(u128::from(ip) as u32)
}

/// The special-purpose IPv4 range of `ip`, or `None` for a public address.
fn forbidden_v4(ip: Ipv4Addr) -> Option<Range> {
    let table: &[([u8; 4], u32, Range)] = &[
        ([0, 0, 0, 0], 32, Range::Unspecified),
        ([0, 0, 0, 0], 8, Range::ThisNetwork),
        ([10, 0, 0, 0], 8, Range::Private),
        ([100, 64, 0, 0], 10, Range::SharedNat),
        ([127, 0, 0, 0], 8, Range::Loopback),
        ([169, 254, 0, 0], 16, Range::LinkLocal),
        ([172, 16, 0, 0], 12, Range::Private),
        ([192, 0, 0, 0], 24, Range::Reserved),
        ([192, 0, 2, 0], 24, Range::Documentation),
        ([192, 88, 99, 0], 24, Range::Reserved),
        ([192, 168, 0, 0], 16, Range::Private),
        ([198, 18, 0, 0], 15, Range::Benchmark),
        ([198, 51, 100, 0], 24, Range::Documentation),
        ([203, 0, 113, 0], 24, Range::Documentation),
        ([224, 0, 0, 0], 4, Range::Multicast),
        ([255, 255, 255, 255], 32, Range::Broadcast),
        ([240, 0, 0, 0], 4, Range::Reserved),
    ];
    table
        .iter()
        .find(|(base, prefix, _)| in_v4(ip, *base, *prefix))
        .map(|(_, _, range)| *range)
}

/// The special-purpose IPv6 range of `ip`, or `None` for a public address. Forms that embed
/// an IPv4 address (mapped, translated, NAT64, 6to4) take the range of the embedded address.
fn forbidden_v6(ip: Ipv6Addr) -> Option<Range> {
    let net = |s: &str| s.parse::<Ipv6Addr>().unwrap_or(Ipv6Addr::UNSPECIFIED);
    if ip.is_unspecified() {
        return Some(Range::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Range::Loopback);
    }
    // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT translated), 64:ff9b::a.b.c.d (NAT64):
    // a connection reaches the embedded IPv4 address, so judge that one.
    for embedding in ["::ffff:0:0", "::ffff:0:0:0", "64:ff9b::"] {
        if in_v6(ip, net(embedding), 96) {
            return forbidden_v4(low_v4(ip));
        }
    }
    // ::a.b.c.d (IPv4-compatible, deprecated): never a legitimate target, and routed as
    // IPv6, so not even a loopback or private one reaches what its digits suggest.
    if in_v6(ip, Ipv6Addr::UNSPECIFIED, 96) {
        return Some(Range::Reserved);
    }
    // 6to4 (2002:a.b.c.d::/48) carries an IPv4 address in bits 16 to 48.
    if in_v6(ip, net("2002::"), 16) {
        let embedded = Ipv4Addr::from((u128::from(ip) >> 80) as u32);
        if let Some(range) = forbidden_v4(embedded) {
            return Some(range);
        }
    }
    let table: &[(&str, u32, Range)] = &[
        ("64:ff9b:1::", 48, Range::Private),
        ("100::", 64, Range::Reserved),
        ("2001::", 32, Range::Reserved),
        ("2001:2::", 48, Range::Benchmark),
        ("2001:db8::", 32, Range::Documentation),
        ("3fff::", 20, Range::Documentation),
        ("fc00::", 7, Range::UniqueLocal),
        ("fe80::", 10, Range::LinkLocal),
        ("fec0::", 10, Range::SiteLocal),
        ("ff00::", 8, Range::Multicast),
    ];
    if let Some((_, _, range)) = table
        .iter()
        .find(|(base, prefix, _)| in_v6(ip, net(base), *prefix))
    {
        return Some(*range);
    }
    // Only 2000::/3 is allocated for global unicast.
    if !in_v6(ip, net("2000::"), 3) {
        return Some(Range::Reserved);
    }
    None
}

/// The special-purpose range `ip` falls in, or `None` when it is an ordinary public address.
pub fn forbidden_range(ip: IpAddr) -> Option<Range> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

/// Which special ranges a target may be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AddressPolicy {
    /// Permit every [`Range::is_internal`] range (`POSTHORN_WEBHOOK_ALLOW_PRIVATE`).
    pub allow_private: bool,
    /// Permit loopback only (the target names a loopback host that is on the allow-list).
    pub allow_loopback: bool,
}

impl AddressPolicy {
    /// `Ok` when a webhook may connect to `ip`; otherwise the range that forbids it.
    pub fn check(self, ip: IpAddr) -> Result<(), Range> {
        match forbidden_range(ip) {
            None => Ok(()),
            Some(range) if self.allow_private && range.is_internal() => Ok(()),
            // Only an address that is really this machine's: a NAT64 or 6to4 form of 127.x
            // leaves the machine through a gateway.
            Some(Range::Loopback) if self.allow_loopback && ip.to_canonical().is_loopback() => {
                Ok(())
            }
            Some(range) => Err(range),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever IPv4 address hides in a mapped, translated or NAT64 address, the guard
        /// judges the hidden one; an IPv4-compatible spelling is always refused.
        #[test]
        fn embedded_ipv4_addresses_are_judged_as_themselves(bits in any::<u32>()) {
            let v4 = Ipv4Addr::from(bits);
            let expected = forbidden_v4(v4);
            let embed = |prefix: u128| IpAddr::V6(Ipv6Addr::from(prefix | u128::from(bits)));
            prop_assert_eq!(forbidden_range(embed(0xffff << 32)), expected);
            prop_assert_eq!(forbidden_range(embed(0xffff << 48)), expected);
            prop_assert_eq!(forbidden_range(embed(0x64_ff9b << 96)), expected);
            let compat = forbidden_range(embed(0));
            match bits {
                0 => prop_assert_eq!(compat, Some(Range::Unspecified)),
                1 => prop_assert_eq!(compat, Some(Range::Loopback)),
                _ => prop_assert_eq!(compat, Some(Range::Reserved)),
            }
        }

        /// Loopback is lifted for an allow-listed host only where it really is this machine.
        #[test]
        fn allow_loopback_never_lifts_anything_but_real_loopback(bits in any::<u128>()) {
            let ip = IpAddr::V6(Ipv6Addr::from(bits));
            let lifted = AddressPolicy { allow_private: false, allow_loopback: true };
            if lifted.check(ip).is_ok() {
                prop_assert!(forbidden_range(ip).is_none() || ip.to_canonical().is_loopback());
            }
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|_| panic!("bad test address {s}"))
    }

    /// Every form the guard must refuse, with the range it must name: the first and last
    /// address of each range, and the embedded forms of IPv4 ranges.
    const REFUSED: &[(&str, Range)] = &[
        ("0.0.0.0", Range::Unspecified),
        ("0.0.0.1", Range::ThisNetwork),
        ("0.255.255.255", Range::ThisNetwork),
        ("10.0.0.0", Range::Private),
        ("10.255.255.255", Range::Private),
        ("100.64.0.0", Range::SharedNat),
        ("100.127.255.255", Range::SharedNat),
        ("127.0.0.0", Range::Loopback),
        ("127.0.0.1", Range::Loopback),
        ("127.255.255.255", Range::Loopback),
        ("169.254.0.0", Range::LinkLocal),
        ("169.254.169.254", Range::LinkLocal),
        ("169.254.255.255", Range::LinkLocal),
        ("172.16.0.0", Range::Private),
        ("172.31.255.255", Range::Private),
        ("192.0.0.0", Range::Reserved),
        ("192.0.0.255", Range::Reserved),
        ("192.0.2.0", Range::Documentation),
        ("192.0.2.255", Range::Documentation),
        ("192.88.99.1", Range::Reserved),
        ("192.168.0.0", Range::Private),
        ("192.168.255.255", Range::Private),
        ("198.18.0.0", Range::Benchmark),
        ("198.19.255.255", Range::Benchmark),
        ("198.51.100.0", Range::Documentation),
        ("198.51.100.255", Range::Documentation),
        ("203.0.113.0", Range::Documentation),
        ("203.0.113.255", Range::Documentation),
        ("224.0.0.0", Range::Multicast),
        ("239.255.255.255", Range::Multicast),
        ("240.0.0.0", Range::Reserved),
        ("255.255.255.254", Range::Reserved),
        ("255.255.255.255", Range::Broadcast),
        // IPv6 native ranges.
        ("::", Range::Unspecified),
        ("::1", Range::Loopback),
        ("fe80::", Range::LinkLocal),
        ("fe80::1", Range::LinkLocal),
        ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Range::LinkLocal),
        ("fec0::1", Range::SiteLocal),
        ("fc00::", Range::UniqueLocal),
        ("fd12:3456:789a::1", Range::UniqueLocal),
        (
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            Range::UniqueLocal,
        ),
        ("ff00::", Range::Multicast),
        ("ff02::1", Range::Multicast),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Range::Multicast),
        ("2001:db8::", Range::Documentation),
        (
            "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
            Range::Documentation,
        ),
        ("3fff::1", Range::Documentation),
        ("3fff:fff::1", Range::Documentation),
        ("2001:2::1", Range::Benchmark),
        ("2001::1", Range::Reserved),
        ("100::1", Range::Reserved),
        ("64:ff9b:1::a00:1", Range::Private),
        ("4000::1", Range::Reserved),
        ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Range::Reserved),
        // IPv4-mapped forms.
        ("::ffff:127.0.0.1", Range::Loopback),
        ("::ffff:7f00:1", Range::Loopback),
        ("::ffff:10.1.2.3", Range::Private),
        ("::ffff:172.16.0.1", Range::Private),
        ("::ffff:192.168.1.1", Range::Private),
        ("::ffff:169.254.169.254", Range::LinkLocal),
        ("::ffff:100.64.0.1", Range::SharedNat),
        ("::ffff:0.0.0.0", Range::Unspecified),
        ("::ffff:255.255.255.255", Range::Broadcast),
        ("::ffff:224.0.0.1", Range::Multicast),
        ("::ffff:192.0.2.1", Range::Documentation),
        ("::ffff:198.18.0.1", Range::Benchmark),
        // SIIT-translated forms.
        ("::ffff:0:127.0.0.1", Range::Loopback),
        ("::ffff:0:10.0.0.1", Range::Private),
        // NAT64 forms.
        ("64:ff9b::127.0.0.1", Range::Loopback),
        ("64:ff9b::7f00:1", Range::Loopback),
        ("64:ff9b::10.0.0.1", Range::Private),
        ("64:ff9b::192.168.0.1", Range::Private),
        ("64:ff9b::169.254.169.254", Range::LinkLocal),
        ("64:ff9b::100.64.0.1", Range::SharedNat),
        ("64:ff9b::0.0.0.0", Range::Unspecified),
        ("64:ff9b::224.0.0.1", Range::Multicast),
        // IPv4-compatible forms.
        ("::127.0.0.1", Range::Reserved),
        ("::7f00:1", Range::Reserved),
        ("::10.0.0.1", Range::Reserved),
        ("::169.254.169.254", Range::Reserved),
        ("::172.16.0.1", Range::Reserved),
        ("::192.168.0.1", Range::Reserved),
        ("::0.0.0.2", Range::Reserved),
        ("::8.8.8.8", Range::Reserved),
        // 6to4 wrapping a forbidden IPv4 address.
        ("2002:7f00:1::", Range::Loopback),
        ("2002:a00:1::1", Range::Private),
        ("2002:a9fe:a9fe::", Range::LinkLocal),
    ];

    /// Public addresses, including the neighbours just outside each refused range.
    const PERMITTED: &[&str] = &[
        "1.1.1.1",
        "8.8.8.8",
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "126.255.255.255",
        "128.0.0.0",
        "169.253.255.255",
        "169.255.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.0.1.255",
        "192.0.3.0",
        "192.167.255.255",
        "192.169.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "198.51.99.255",
        "198.51.101.0",
        "203.0.112.255",
        "203.0.114.0",
        "223.255.255.255",
        "2606:4700:4700::1111",
        "2001:4860:4860::8888",
        "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:db9::",
        "2000::1",
        "3ffe:ffff::1",
        "::ffff:8.8.8.8",
        "::ffff:0:1.1.1.1",
        "64:ff9b::8.8.8.8",
        "2002:808:808::1",
    ];

    #[test]
    fn every_special_address_form_is_refused_with_its_range() {
        let policy = AddressPolicy::default();
        for (text, range) in REFUSED {
            assert_eq!(forbidden_range(ip(text)), Some(*range), "{text}");
            assert_eq!(policy.check(ip(text)), Err(*range), "{text}");
        }
    }

    #[test]
    fn public_addresses_next_to_the_ranges_are_permitted() {
        let policy = AddressPolicy::default();
        for text in PERMITTED {
            assert_eq!(forbidden_range(ip(text)), None, "{text}");
            assert_eq!(policy.check(ip(text)), Ok(()), "{text}");
        }
    }

    #[test]
    fn allow_private_lifts_only_the_internal_ranges() {
        let policy = AddressPolicy {
            allow_private: true,
            allow_loopback: false,
        };
        for (text, range) in REFUSED {
            let expected = if range.is_internal() {
                Ok(())
            } else {
                Err(*range)
            };
            assert_eq!(policy.check(ip(text)), expected, "{text}");
        }
        for text in [
            "127.0.0.1",
            "::1",
            "10.0.0.1",
            "::ffff:192.168.0.1",
            "fd00::1",
        ] {
            assert_eq!(policy.check(ip(text)), Ok(()), "{text}");
        }
        for text in ["0.0.0.0", "::", "255.255.255.255", "224.0.0.1", "192.0.2.1"] {
            assert!(policy.check(ip(text)).is_err(), "{text}");
        }
    }

    #[test]
    fn an_allow_listed_host_may_be_loopback_and_nothing_else_special() {
        let policy = AddressPolicy {
            allow_private: false,
            allow_loopback: true,
        };
        for text in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(policy.check(ip(text)), Ok(()), "{text}");
        }
        for text in [
            "10.0.0.1",
            "169.254.169.254",
            "fd00::1",
            "0.0.0.0",
            "::",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "::ffff:0:127.0.0.1",
        ] {
            assert!(policy.check(ip(text)).is_err(), "{text}");
        }
    }
}
