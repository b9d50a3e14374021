#!/usr/bin/env python3
"""Issue 12's alignment target: a pattern's rows at a pointer offset (+2 B for
16-bit dtypes, +4 B for f32) and of odd length (4095, 4999) within 5% of its
aligned rows of 4096, as bandwidth over the aligned point's, per pattern and
dtype, from a jitfuse_sweep --jsonl file (bench/run_sweep.sh writes it as
odd_rows_table.md). Ratios under 0.95 are in bold.

  python3 bench/odd_rows_table.py sweep_jitfuse.jsonl [more.jsonl ...]

Later files win for the same point (sweep_report.read_all)."""

import sys

from sweep_report import read_all

PATTERNS = ["add_rmsnorm", "layernorm", "softmax", "silu_mul", "rope", "bias_gelu",
            "sum_abs_amax"]
# The dtype and the offset that misaligns it; 16384 rows (the f32 rows of 4999
# are capped at 256 MiB: 13424 rows).
DTYPES = [("bf16", 2), ("f16", 2), ("f32", 4)]
TARGET = 0.95


def gbs(points, pattern, dtype, h, rows, offset):
    d = points.get(f"{pattern}/{dtype}/H{h}/R{rows}/o{offset}")
    return d["gbs"] if d and d.get("status") == "ok" else None


def rows_of(points):
    """(pattern, dtype, aligned GB/s, [offset, x 4095, x 4999] ratios or None)."""
    out = []
    for p in PATTERNS:
        for dt, off in DTYPES:
            base = gbs(points, p, dt, 4096, 16384, 0)
            if not base:
                continue
            odd = gbs(points, p, dt, 4999, 16384, 0) or gbs(points, p, dt, 4999, 13424, 0)
            others = [gbs(points, p, dt, 4096, 16384, off), gbs(points, p, dt, 4095, 16384, 0), odd]
            out.append((p, dt, base, [None if o is None else o / base for o in others]))
    return out


def cell(r):
    if r is None:
        return "-"
    return f"**{r:.2f}**" if r < TARGET else f"{r:.2f}"


def markdown(rows):
    lines = ["| pattern | dtype | aligned 4096 GB/s | +2 B / +4 B | rows of 4095 | rows of 4999 |",
             "|---|---|---:|---:|---:|---:|"]
    for p, dt, base, ratios in rows:
        lines.append(f"| {p} | {dt} | {base:.0f} | " + " | ".join(cell(r) for r in ratios) + " |")
    short = sum(1 for _, _, _, rs in rows for r in rs if r is not None and r < TARGET)
    lines.append("")
    lines.append(f"{short} ratios under {TARGET} (bold).")
    return "\n".join(lines)


def main(argv):
    if len(argv) < 2:
        print("usage: odd_rows_table.py SWEEP_JSONL [MORE_JSONL ...]", file=sys.stderr)
        return 2
    print(markdown(rows_of(read_all(argv[1:]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
