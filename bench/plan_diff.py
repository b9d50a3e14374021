#!/usr/bin/env python3
"""Which sweep points an option changes, before any GPU time: compares two
`jitfuse_sweep --compile-only --jsonl` runs (A, B) point by point by the
program each point's rows run (`cache_key`: every kernel and variant, as
NVRTC compiles it) and prints the points whose code differs, with each
changed variant's registers and spills A -> B.

  bench/plan_diff.py A.jsonl B.jsonl [--md OUT.md]

bench/plan_diff.sh runs both compiles and this. Exit status: 0 (also when
nothing changed), 2 on unreadable input or runs of different points."""

import argparse
import json
import sys


def load(path):
    """Points of a jsonl run by id; the run's order kept."""
    points = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                p = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not JSON ({e})") from e
            if "id" not in p:
                raise ValueError(f"{path}:{n}: a point without an id")
            points[p["id"]] = p
    return points


def variants(p):
    """name -> (registers, spill bytes) of a point's compiled variants."""
    return {v["name"]: (v.get("registers", 0), v.get("spill_bytes", 0))
            for v in p.get("variants", [])}


def fmt_variant(rs):
    regs, spill = rs
    return f"{regs}" + (f" ({spill} B spilled)" if spill else "")


def diff(a, b):
    """(changed, errors): changed is [(id, [(variant, A, B)])] in A's order,
    A and B a variant's (registers, spills) or None where it is absent;
    errors are ids whose compile failed in either run."""
    changed, errors = [], []
    for pid, pa in a.items():
        pb = b.get(pid)
        if pb is None:
            continue
        if pa.get("status") == "error" or pb.get("status") == "error":
            errors.append(pid)
            continue
        if pa.get("cache_key") == pb.get("cache_key"):
            continue
        va, vb = variants(pa), variants(pb)
        rows = []
        for name in sorted(set(va) | set(vb)):
            if va.get(name) != vb.get(name):
                rows.append((name, va.get(name), vb.get(name)))
        changed.append((pid, rows))
    return changed, errors


def report(a, b, changed, errors):
    out = [f"{len(changed)} of {len(a)} points compile differently in B"
           + (f"; {len(errors)} failed to compile" if errors else "") + "."]
    if changed:
        out += ["", "| point | variant | A registers | B registers |", "|---|---|---:|---:|"]
        for pid, rows in changed:
            if not rows:  # the same variants and registers, other code
                out.append(f"| {pid} | (same variants, other code) | | |")
            for name, ra, rb in rows:
                out.append(f"| {pid} | {name} | {fmt_variant(ra) if ra else '-'} "
                           f"| {fmt_variant(rb) if rb else '-'} |")
    for pid in errors:
        msg = (a[pid].get("error") or b[pid].get("error") or "").splitlines()
        out.append(f"error: {pid}: {msg[0] if msg else 'compile failed'}")
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--md", help="also write the report here")
    args = ap.parse_args(argv)
    try:
        a, b = load(args.a), load(args.b)
    except (OSError, ValueError) as e:
        print(f"plan_diff.py: {e}", file=sys.stderr)
        return 2
    if set(a) != set(b):
        only = sorted(set(a) ^ set(b))
        print(f"plan_diff.py: the runs differ in {len(only)} point(s), e.g. {only[0]}",
              file=sys.stderr)
        return 2
    changed, errors = diff(a, b)
    text = report(a, b, changed, errors)
    sys.stdout.write(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
