#!/usr/bin/env python3
"""Registers and occupancy of the sweep's kernels, from jitfuse_sweep --jsonl.

Each point's "variants" (jitfuse_sweep) carry ptxas's register count and the
block size. Resident threads per SM follow from the H200's (sm_90) limits:
65536 registers, allocated per warp in units of 256; 2048 threads; 32
blocks. Prints the share of the SM's 2048 threads resident per kernel kind
and the variants at or below a threshold, lowest first, with their points.
Needs no GPU: `jitfuse_sweep --compile-only --jsonl J` writes the input.

  python3 bench/occupancy_report.py J [--max-percent 25]
"""
import argparse
import collections
import json
import sys

REGISTERS, THREADS, BLOCKS, UNIT = 65536, 2048, 32, 256


def resident_threads(registers, threads):
    """Threads of blocks of `threads` resident on one SM by registers,
    threads and blocks (shared memory is not the limit for these kernels)."""
    warps = (threads + 31) // 32
    per_warp = (registers * 32 + UNIT - 1) // UNIT * UNIT
    blocks = min(REGISTERS // per_warp // warps, THREADS // threads, BLOCKS)
    return blocks * threads


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("jsonl", help="jitfuse_sweep --jsonl output")
    p.add_argument("--max-percent", type=float, default=25,
                   help="list variants with at most this share of 2048 threads resident")
    a = p.parse_args(argv)
    seen = {}
    with open(a.jsonl) as f:
        for line in f:
            r = json.loads(line)
            key = (r["pattern"], r["dtype"], r["H"])
            for v in r.get("variants", []):
                if not v["threads"]:
                    continue
                k = key + (v["name"],)
                pct = 100.0 * resident_threads(v["registers"], v["threads"]) / THREADS
                seen.setdefault(k, (pct, v["registers"], v["threads"], []))[3].append(r["id"])
    by = collections.Counter()
    for (pattern, dtype, h, name), (pct, regs, threads, ids) in seen.items():
        by[(pattern, round(pct))] += 1
    print("pattern, % of 2048 threads resident: variants")
    for (pattern, pct), n in sorted(by.items()):
        print(f"  {pattern:<14} {pct:>4}%: {n}")
    low = sorted((v[0], -v[1], k, v) for k, v in seen.items() if v[0] <= a.max_percent)
    print(f"\n{len(low)} variants at <= {a.max_percent:g}% (pattern dtype H variant: "
          "registers x threads, resident)")
    for pct, _, (pattern, dtype, h, name), (_, regs, threads, ids) in low:
        print(f"  {pattern:<12} {dtype:<5} {h:>6} {name:<16} {regs:>3} regs x {threads:>3}: "
              f"{pct:.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
