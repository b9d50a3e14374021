#!/usr/bin/env python3
"""Report of the shape sweep (issue 12 item 6; see BENCHMARKS.md).

Joins jitfuse_sweep's JSON lines with sweep_torch.py's (several lines of one
id are merged) and, per pattern, prints the MINIMUM speed ratio
jitfuse / best peer (best peer = the fastest of eager, torch.compile and
Liger where measured; ratio = peer time / jitfuse time, > 1 means jitfuse is
faster) over the sweep and over the points with >= 64 MB of traffic, with
the shapes where they occur, and, from jitfuse_sweep's copy time of each
point (the driver's device copy of the point's minimal bytes, L2 flushed
alike), the points of >= 64 MB below COPY_TARGET of the copy of their size
(the issue's copy-ceiling target; a copy of 64 MB does not reach the
bandwidth of one of 1 GB, so each point is judged against its own). Writes a markdown table (--md) and, when
matplotlib is importable, a heatmap PNG (--png) of the minimum ratio per
pattern x row length.

--jitfuse and --torch take several files: for jitfuse later files win for
the same id and key (the latest measurement of each point), for the peers
each point keeps its fastest time over the files. --baseline adds a table of
the change against another jitfuse run of the same points (run in the same
device call: per pattern, median, minimum and maximum of baseline time /
jitfuse time, > 1 means faster now), the points slowed down most and those
sped up most, each with its kernel variants' registers before -> after.

    python3 bench/sweep_report.py --jitfuse J.jsonl [J2.jsonl ...] --torch T.jsonl [...]
        [--jitfuse-best] [--baseline OLD.jsonl] [--md M] [--png P]
"""

import argparse
import json
import math
import os
import sys

BIG = 64 << 20
COPY_TARGET = 0.85
PEERS = ("eager_us", "compile_us", "liger_us")


def read_all(paths, keep_min=()):
    """read_jsonl over several files, later ones updating earlier ones, except
    the keys in keep_min, which keep their smallest value (a peer's best time
    over calls: torch.compile timed the same point 183.6 us in one call and
    285.3 in another, and the report must not pick the slower one)."""
    recs = {}
    for path in paths:
        for pid, r in read_jsonl(path).items():
            cur = recs.setdefault(pid, {})
            for k, v in r.items():
                old = cur.get(k)
                if (k in keep_min and isinstance(v, (int, float)) and isinstance(old, (int, float))
                        and old <= v):
                    continue
                cur[k] = v
    return recs


def read_jsonl(path):
    recs = {}
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                recs.setdefault(r["id"], {}).update(r)
    except FileNotFoundError:
        print(f"sweep_report.py: {path} not found; treated as empty", file=sys.stderr)
    return recs


def join(jf, tr):
    rows = []
    for pid, j in jf.items():
        t = tr.get(pid, {})
        row = {k: j.get(k) for k in ("id", "pattern", "H", "rows", "offset", "dtype", "bytes",
                                      "kernels", "us", "gbs", "status")}
        peers = {k[:-3]: t[k] for k in PEERS if isinstance(t.get(k), (int, float)) and t[k] > 0}
        row.update({k + "_us": v for k, v in peers.items()})
        us = j.get("us")
        copy = j.get("copy_us")
        if isinstance(copy, (int, float)) and copy > 0 and isinstance(us, (int, float)) and us > 0:
            row["copy_us"] = copy
            row["of_copy"] = copy / us
        if peers and isinstance(us, (int, float)) and us > 0:
            best = min(peers, key=peers.get)
            row["best_peer"] = best
            row["ratio"] = peers[best] / us
        rows.append(row)
    return rows


def shape(r):
    return f"{r['dtype']} {r['rows']}x{r['H']} +{r['offset']}B"


def fmt_ratio(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}x"


def summary(rows):
    """Per pattern: points with a ratio, min over all, min over >= 64 MB, how
    many >= 64 MB points are below 1.0x and how many points lack a
    torch.compile time."""
    out = {}
    for r in rows:
        if "ratio" not in r:
            continue
        s = out.setdefault(r["pattern"], {"n": 0, "min": None, "min_big": None, "n_big_below": 0,
                                          "n_no_compile": 0})
        s["n"] += 1
        # Without a torch.compile time the ratio is against the other peers
        # only (sweep_torch.py's compile budget ran out first).
        s["n_no_compile"] += "compile_us" not in r
        if s["min"] is None or r["ratio"] < s["min"]["ratio"]:
            s["min"] = r
        if (r.get("bytes") or 0) >= BIG:
            if s["min_big"] is None or r["ratio"] < s["min_big"]["ratio"]:
                s["min_big"] = r
            s["n_big_below"] += r["ratio"] < 1.0
    return out


def copy_markdown(rows, limit=40):
    """Per pattern, the >= 64 MB points with a copy time: how many, the
    lowest fraction of the copy of their size and where, how many are below
    COPY_TARGET; then those points, lowest first (at most `limit`). Empty
    when no point has a copy time (runs before the copy was timed)."""
    big = [r for r in rows if "of_copy" in r and (r.get("bytes") or 0) >= BIG]
    if not big:
        return []
    lines = ["", f"Points of >= 64 MB against the copy of their size (jitfuse time / copy time "
             f"of the same bytes; target >= {COPY_TARGET:.0%}):", "",
             "| pattern | points | min of copy | at | below target |", "|---|---:|---:|---|---:|"]
    per = {}
    for r in big:
        per.setdefault(r["pattern"], []).append(r)
    for pat in sorted(per):
        rs = per[pat]
        m = min(rs, key=lambda r: r["of_copy"])
        below = sum(r["of_copy"] < COPY_TARGET for r in rs)
        lines.append(f"| {pat} | {len(rs)} | {m['of_copy']:.0%} | {shape(m)} | {below} |")
    low = sorted((r for r in big if r["of_copy"] < COPY_TARGET), key=lambda r: r["of_copy"])
    if low:
        lines += ["", f"Below {COPY_TARGET:.0%} of the copy, lowest first"
                  + (f" ({limit} of {len(low)})" if len(low) > limit else "") + ":", ""]
        for r in low[:limit]:
            ratio = f", {fmt_ratio(r['ratio'])} best peer" if "ratio" in r else ""
            lines.append(f"- {r['pattern']} {shape(r)}: {r['us']:.1f} us, copy {r['copy_us']:.1f} "
                         f"us ({r['of_copy']:.0%}{ratio})")
    return lines


def heat(rows):
    """{pattern: {H: min ratio}}."""
    h = {}
    for r in rows:
        if "ratio" in r:
            cell = h.setdefault(r["pattern"], {})
            cell[r["H"]] = min(cell.get(r["H"], math.inf), r["ratio"])
    return h


def markdown(rows, summ, hm):
    lines = ["| pattern | points | min jitfuse/best peer | at | min at >= 64 MB | at | "
             ">= 64 MB points below 1.0x | points without torch.compile |",
             "|---|---:|---:|---|---:|---|---:|---:|"]
    for pat in sorted(summ):
        s = summ[pat]
        m, mb = s["min"], s["min_big"]
        lines.append(f"| {pat} | {s['n']} | {fmt_ratio(m['ratio'])} | {shape(m)} vs {m['best_peer']}"
                     f" | {fmt_ratio(mb['ratio']) if mb else '-'} | "
                     f"{shape(mb) + ' vs ' + mb['best_peer'] if mb else '-'} | {s['n_big_below']} |"
                     f" {s['n_no_compile']} |")
    hs = sorted({H for c in hm.values() for H in c})
    if not hs:
        lines += ["", "No point has both a jitfuse and a peer time."]
        hs = None
    lines += [] if hs is None else ["", "Minimum ratio per pattern and row length H (over rows, offsets, dtypes):", "",
              "| pattern | " + " | ".join(str(H) for H in hs) + " |",
              "|---|" + "---:|" * len(hs)]
    for pat in sorted(hm) if hs else []:
        lines.append(f"| {pat} | " + " | ".join(fmt_ratio(hm[pat].get(H)) for H in hs) + " |")
    lines += copy_markdown(rows)
    bad = [r for r in rows if r.get("status") not in ("ok", None)]
    if bad:
        lines += ["", f"jitfuse points not timed: {len(bad)} ("
                  + ", ".join(sorted({str(r['status']) for r in bad})) + ")"]
    return "\n".join(lines) + "\n"


def registers_change(old, new):
    """The registers (and spills) of the variants both records compiled,
    "suffix old->new" in the new record's order; the suffix is the variant's
    name after the prefix the new record's variants share, up to its last
    "_" (p8, o8, t256_p8 of jf_k0_cast_*). Empty when no variant is in both.
    What an A/B of a schedule option changes first, and what explains its
    time."""
    before = {v.get("name"): v for v in old.get("variants") or []}
    names = [v.get("name") or "" for v in new.get("variants") or []]
    common = os.path.commonprefix(names) if names else ""
    cut = common.rfind("_") + 1
    parts = []
    for v in new.get("variants") or []:
        o = before.get(v.get("name"))
        if o is None:
            continue
        text = f"{v['name'][cut:]} {o.get('registers')}->{v.get('registers')}"
        if o.get("spill_bytes") or v.get("spill_bytes"):
            text += f" (spills {o.get('spill_bytes', 0)}->{v.get('spill_bytes', 0)} B)"
        parts.append(text)
    return ", ".join(parts)


def change(jf, base, worst=10):
    """Per pattern: the points timed by both runs and the median, minimum
    and maximum of base time / jitfuse time; up to `worst` points slower
    now (the largest slowdowns first) and up to `worst` faster (the largest
    first), each with its variants' registers before and after
    (registers_change)."""
    pairs = []
    for pid, j in jf.items():
        b = base.get(pid, {})
        us, bus = j.get("us"), b.get("us")
        if isinstance(us, (int, float)) and us > 0 and isinstance(bus, (int, float)) and bus > 0:
            pairs.append((bus / us, pid, j.get("pattern", pid.split("/")[0]), bus, us,
                          registers_change(b, j)))
    per = {}
    for p in pairs:
        per.setdefault(p[2], []).append(p)
    out = {}
    for pat, ps in per.items():
        ps.sort()
        n = len(ps)
        med = ps[n // 2][0] if n % 2 else (ps[n // 2 - 1][0] + ps[n // 2][0]) / 2
        out[pat] = {"n": n, "median": med, "min": ps[0], "max": ps[-1]}
    ranked = sorted(pairs)
    slow = [p for p in ranked[:worst] if p[0] < 1]
    fast = [p for p in reversed(ranked[-worst:]) if p[0] > 1] if worst else []
    return out, slow, fast


def change_markdown(per, worst, best=()):
    lines = ["", "Change against the baseline run (baseline time / jitfuse time; > 1: faster now):",
             "", "| pattern | points | median | min | at | max | at |",
             "|---|---:|---:|---:|---|---:|---|"]
    for pat in sorted(per):
        c = per[pat]
        lines.append(f"| {pat} | {c['n']} | {fmt_ratio(c['median'])} | {fmt_ratio(c['min'][0])} | "
                     f"{c['min'][1]} | {fmt_ratio(c['max'][0])} | {c['max'][1]} |")
    def item(r):
        regs = f"; registers {r[5]}" if len(r) > 5 and r[5] else ""
        return f"- {r[1]}: {r[3]:.1f} -> {r[4]:.1f} us ({fmt_ratio(r[0])}{regs})"
    if worst:
        lines += ["", "Largest slowdowns:", ""]
        lines += [item(r) for r in worst]
    if best:
        lines += ["", "Largest speedups:", ""]
        lines += [item(r) for r in best]
    return "\n".join(lines) + "\n"


def write_png(hm, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import TwoSlopeNorm
    except ImportError:
        print(f"sweep_report.py: matplotlib not importable; no heatmap ({path})")
        return
    pats = sorted(hm)
    hs = sorted({H for c in hm.values() for H in c})
    if not pats or not hs:
        print("sweep_report.py: no joined points; no heatmap")
        return
    data = [[hm[p].get(H, math.nan) for H in hs] for p in pats]
    vals = [v for row in data for v in row if not math.isnan(v)]
    lo, hi = min(vals + [0.99]), max(vals + [1.01])
    fig, ax = plt.subplots(figsize=(max(8.0, 1.5 + 0.75 * len(hs)), 1.5 + 0.5 * len(pats)))
    im = ax.imshow(data, cmap="RdYlGn", norm=TwoSlopeNorm(vmin=lo, vcenter=1.0, vmax=hi),
                   aspect="auto")
    ax.set_xticks(range(len(hs)), [str(H) for H in hs], rotation=45)
    ax.set_yticks(range(len(pats)), pats)
    for i, row in enumerate(data):
        for k, v in enumerate(row):
            if not math.isnan(v):
                ax.text(k, i, f"{v:.2f}", ha="center", va="center", fontsize=7)
    ax.set_xlabel("row length H")
    ax.set_title("jitfuse / best peer (min over rows, offsets, dtypes; >1: jitfuse faster)",
                 fontsize=9)
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jitfuse", required=True, nargs="+",
                   help="jitfuse_sweep --jsonl output(s); later files win")
    p.add_argument("--torch", nargs="+", default=[],
                   help="sweep_torch.py --jsonl output(s); a peer keeps its fastest time "
                        "(required unless --baseline: then without it, only the change table)")
    p.add_argument("--jitfuse-best", action="store_true",
                   help="jitfuse keeps each point's fastest time over the --jitfuse files, as "
                        "the peers do (files of repeated runs of the same binary, to tell a "
                        "loss from run-to-run variance)")
    p.add_argument("--baseline", help="jitfuse_sweep --jsonl of another binary, same points")
    p.add_argument("--md", help="write the markdown tables here")
    p.add_argument("--png", help="write the heatmap here (needs matplotlib)")
    a = p.parse_args(argv)
    if not a.torch and not a.baseline:
        p.error("--torch is required (or --baseline, for the change table alone)")
    jf = read_all(a.jitfuse, keep_min=("us", "copy_us") if a.jitfuse_best else ())
    if a.jitfuse_best:
        for r in jf.values():
            if isinstance(r.get("us"), (int, float)) and r["us"] > 0 and r.get("bytes"):
                r["gbs"] = r["bytes"] / (r["us"] * 1e3)
    hm = {}
    md = ""
    if a.torch:
        rows = join(jf, read_all(a.torch, keep_min=PEERS))
        summ, hm = summary(rows), heat(rows)
        md = markdown(rows, summ, hm)
    if a.baseline:
        md += change_markdown(*change(jf, read_jsonl(a.baseline)))
    print(md)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    if a.png and hm:
        write_png(hm, a.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
