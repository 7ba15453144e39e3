#!/usr/bin/env python3
"""Draws a soak run's samples (the CSV of `posthorn-bench --scenarios soak`) as a PNG:
resident memory, window p99, rate, failures and the machine's load over time, one panel each.

Usage: python3 bench/plot_soak.py SOAK.csv OUT.png [TITLE]
Needs matplotlib (`pip install matplotlib==3.9.2`).
"""

import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def column(rows, name):
    return [float(r[name]) if r[name] != "" else float("nan") for r in rows]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit("no samples in " + sys.argv[1])
    t = column(rows, "seconds")
    panels = [
        ("rss_mib", "server RSS (MiB)"),
        ("p99_ms", "window p99 (ms)"),
        ("req_per_s", "answered req/s"),
        ("failures", "failures per window"),
        ("load1", "machine load (1 min)"),
    ]
    # Samples of older runs lack some columns.
    panels = [(name, label) for name, label in panels if name in rows[0]]
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(9, 2.2 * len(panels)))
    for ax, (name, label) in zip(axes, panels):
        ax.plot(t, column(rows, name), marker=".")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("seconds since start")
    fig.suptitle(sys.argv[3] if len(sys.argv) > 3 else "Posthorn soak")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
