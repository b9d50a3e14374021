#!/usr/bin/env python3
"""Merges jitfuse_bench's and torch_bench.py's JSON into one side-by-side
markdown table (stdout and --md) and a chart of % of the copy ceiling per
workload (--chart). Either JSON may be missing; its columns then show "-".
When jitfuse's JSON has per-kernel rows (kernels_roofline), a per-kernel
roofline follows: every fused kernel, and the slowest unfused kernels.

    python3 bench/report.py --jitfuse J.json --torch T.json --md OUT.md --chart OUT.png
"""

import argparse
import json
import os
import sys

# The copy bandwidth measured on this H200 on 2026-11-29 (DESIGN.md); used
# only when neither JSON carries a measured ceiling.
REFERENCE_COPY_GBS = 4241.0


def load(path):
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def get(d, *keys):
    """d[k0][k1]... or None when any level is missing or null."""
    for k in keys:
        if not isinstance(d, dict) or d.get(k) is None:
            return None
        d = d[k]
    return d


def fmt(v, spec=".1f"):
    return "-" if v is None else format(v, spec)


def times(v):
    return "-" if v is None else f"{v:.2f}x"


def ratio(num, den):
    return None if num is None or den is None or den == 0 else num / den


def ceiling_of(jf, th):
    c = get(jf, "ceiling", "ceiling_gbs")
    if c:
        return c, "jitfuse_bench measured copy ceiling (max of cuMemcpyDtoD, jitfuse copy graph)"
    c = get(th, "ceiling", "torch_copy_gbs")
    if c:
        return c, "torch copy_ (jitfuse ceiling missing)"
    return REFERENCE_COPY_GBS, "reference copy bandwidth from DESIGN.md (none measured)"


def by_id(doc):
    return {w["id"]: w for w in (doc or {}).get("workloads", [])}


def ordered_ids(jf, th):
    ids = []
    for doc in (jf, th):
        for w in (doc or {}).get("workloads", []):
            if w["id"] not in ids:
                ids.append(w["id"])
    return ids


def pct(gbs, ceiling):
    return None if gbs is None else 100 * gbs / ceiling


def bandwidth_rows(jf, th, ceiling):
    J, T = by_id(jf), by_id(th)
    rows = []
    for wid in ordered_ids(jf, th):
        j, t = J.get(wid, {}), T.get(wid, {})
        if j.get("per_call") or t.get("per_call"):
            continue
        jbytes, tbytes = j.get("min_bytes"), t.get("min_bytes")
        r = {
            "id": wid,
            "bytes": jbytes if jbytes is not None else tbytes,
            "bytes_differ": jbytes is not None and tbytes is not None and jbytes != tbytes,
            "status": j.get("status", "-"),
            "fused_us": get(j, "fused", "median_us"), "fused_gbs": get(j, "fused", "gbs"),
            "fused_kernels": get(j, "fused", "kernels"),
            "unfused_us": get(j, "unfused", "median_us"),
            "unfused_gbs": get(j, "unfused", "gbs"),
            "unfused_kernels": get(j, "unfused", "kernels"),
            "eager_us": get(t, "eager", "median_us"), "eager_gbs": get(t, "eager", "gbs"),
            "compile_us": get(t, "compile", "median_us"),
            "compile_gbs": get(t, "compile", "gbs"),
            "torch_status": t.get("status", "-"),
        }
        for k in ("fused", "unfused", "eager", "compile"):
            r[k + "_pct"] = pct(r[k + "_gbs"], ceiling)
        # Same bytes on both sides, so the bandwidth ratio is the speedup.
        r["vs_eager"] = ratio(r["eager_us"], r["fused_us"])
        r["vs_compile"] = ratio(r["compile_us"], r["fused_us"])
        rows.append(r)
    return rows


def md_cell(s):
    return str(s).replace("|", "\\|")


def kernel_rows(w, mode):
    """The kernels_roofline list of workload w's mode, or None (older JSON)."""
    rows = get(w, mode, "kernels_roofline")
    return rows if isinstance(rows, list) else None


def kernel_cells(k, ceiling):
    """Kernel, level, MB, us, GB/s, % of ceiling; "-" where not timed."""
    mb = k.get("bytes")
    return (f"{md_cell(k.get('name', '-'))} | {k.get('level', '-')} | "
            f"{'-' if mb is None else format(mb / 1e6, '.1f')} | "
            f"{fmt(k.get('median_us'))} | {fmt(k.get('gbs'), '.0f')} | "
            f"{fmt(pct(k.get('gbs'), ceiling), '.0f')}")


UNFUSED_WORST = 3


def roofline_markdown(jf, ceiling):
    """Per-kernel roofline of jitfuse: every fused kernel; per unfused
    executable the UNFUSED_WORST slowest kernels (largest by bytes when
    untimed) and the sum over all its kernels. [] when the JSON has none."""
    workloads = [w for w in (jf or {}).get("workloads", [])
                 if kernel_rows(w, "fused") is not None or kernel_rows(w, "unfused") is not None]
    if not workloads:
        return []
    out = ["Per-kernel roofline (jitfuse fused): each kernel timed alone between CUDA "
           "events (median, inputs not rotated); MB = predicted minimal bytes of the "
           "kernel; % = of the copy ceiling above; \"-\" = not timed.", ""]
    out.append("| workload | kernel | level | MB | us | GB/s | % | whole graph us |")
    out.append("|" + "---|" * 8)
    for w in workloads:
        whole = fmt(get(w, "fused", "median_us"))
        for i, k in enumerate(kernel_rows(w, "fused") or []):
            out.append(f"| {w['id'] if i == 0 else ''} | {kernel_cells(k, ceiling)} | "
                       f"{whole if i == 0 else ''} |")
    out.append("")
    out.append(f"Per-kernel roofline (jitfuse unfused): the {UNFUSED_WORST} slowest kernels "
               "per workload (largest by bytes when untimed); sum = all its kernels.")
    out.append("")
    out.append("| workload | kernels | sum us | sum MB | kernel | level | MB | us | GB/s | % |")
    out.append("|" + "---|" * 10)
    for w in workloads:
        ks = kernel_rows(w, "unfused") or []
        if not ks:
            continue
        timed = [k for k in ks if k.get("median_us") is not None]
        if timed:
            worst = sorted(timed, key=lambda k: -k["median_us"])[:UNFUSED_WORST]
            total_us = fmt(sum(k["median_us"] for k in timed)) + \
                ("" if len(timed) == len(ks) else f" ({len(timed)} timed)")
        else:
            worst = sorted(ks, key=lambda k: -(k.get("bytes") or 0))[:UNFUSED_WORST]
            total_us = "-"
        total_mb = sum(k.get("bytes") or 0 for k in ks) / 1e6
        for i, k in enumerate(worst):
            lead = (f"{w['id']} | {len(ks)} | {total_us} | {total_mb:.1f}" if i == 0
                    else " |  |  | ")
            out.append(f"| {lead} | {kernel_cells(k, ceiling)} |")
    out.append("")
    return out


def per_call_markdown(wj, wt, title):
    """The per-call table of a back-to-back workload (W8, W9); [] when
    neither JSON has it."""
    if not wj and not wt:
        return []

    def kernels(mode):
        k = get(wj, mode, "kernels")
        return "" if k is None else f" ({k} kernel{'' if k == 1 else 's'})"

    out = [f"{title}, per call, back to back:", "",
           "| implementation | GPU time per call us | host enqueue per call us |",
           "|---|---|---|"]
    for name, d in ((f"jitfuse fused{kernels('fused')}", get(wj, "fused")),
                    (f"jitfuse unfused{kernels('unfused')}", get(wj, "unfused")),
                    ("jitfuse fused + CUDA graph", get(wj, "fused", "graph")),
                    ("jitfuse unfused + CUDA graph", get(wj, "unfused", "graph")),
                    ("torch eager", get(wt, "eager")),
                    ("torch eager + CUDA graph", get(wt, "eager_graph")),
                    ("torch.compile", get(wt, "compile")),
                    ("torch.compile + CUDA graph", get(wt, "compile_graph"))):
        out.append(f"| {name} | {fmt(get(d, 'per_call_gpu_us'), '.2f')} | "
                   f"{fmt(get(d, 'host_enqueue_us'), '.2f')} |")
    for side, w in (("jitfuse", wj), ("torch", wt)):
        if w and w.get("status") not in (None, "ok"):
            out.append("")
            out.append(f"{side} status: {w.get('status')} {w.get('error', '')}".rstrip())
    out.append("")
    return out


def markdown(jf, th):
    ceiling, ceiling_src = ceiling_of(jf, th)
    out = []
    meta_j, meta_t = (jf or {}).get("meta", {}), (th or {}).get("meta", {})
    dev = get(jf, "device", "name") or meta_t.get("device") or "unknown GPU"
    out.append(f"Device: {dev}. jitfuse run {meta_j.get('time_utc', '-')}, "
               f"torch run {meta_t.get('time_utc', '-')} "
               f"(torch {meta_t.get('torch', '-')}, triton {meta_t.get('triton', '-')}).")
    out.append("")
    out.append(f"Copy ceiling: **{ceiling:.0f} GB/s** ({ceiling_src}); "
               f"cuMemcpyDtoD {fmt(get(jf, 'ceiling', 'memcpy_dtod_gbs'), '.0f')} GB/s, "
               f"jitfuse copy graph {fmt(get(jf, 'ceiling', 'jitfuse_copy_gbs'), '.0f')} GB/s, "
               f"torch copy_ {fmt(get(th, 'ceiling', 'torch_copy_gbs'), '.0f')} GB/s.")
    out.append("")
    out.append("Median time per run; GB/s = minimal bytes (inputs read once, outputs "
               "written once) / median; % = of the copy ceiling; speedup = torch time / "
               "jitfuse fused time (= bandwidth ratio jitfuse/torch).")
    out.append("")
    out.append("| workload | MB | jf fused us | GB/s | % | k | jf unfused us | GB/s | % | k | "
               "eager us | GB/s | % | compile us | GB/s | % | jf/eager | jf/compile |")
    out.append("|" + "---|" * 18)
    notes = []
    jrows = by_id(jf)
    for r in bandwidth_rows(jf, th, ceiling):
        mb = "-" if r["bytes"] is None else f"{r['bytes'] / 1e6:.0f}"
        out.append(
            f"| {r['id']} | {mb} | {fmt(r['fused_us'])} | {fmt(r['fused_gbs'], '.0f')} | "
            f"{fmt(r['fused_pct'], '.0f')} | {fmt(r['fused_kernels'], '.0f')} | "
            f"{fmt(r['unfused_us'])} | {fmt(r['unfused_gbs'], '.0f')} | "
            f"{fmt(r['unfused_pct'], '.0f')} | {fmt(r['unfused_kernels'], '.0f')} | "
            f"{fmt(r['eager_us'])} | {fmt(r['eager_gbs'], '.0f')} | {fmt(r['eager_pct'], '.0f')} | "
            f"{fmt(r['compile_us'])} | {fmt(r['compile_gbs'], '.0f')} | "
            f"{fmt(r['compile_pct'], '.0f')} | {times(r['vs_eager'])} | "
            f"{times(r['vs_compile'])} |")
        if r["status"] not in ("ok", "-"):
            notes.append(f"{r['id']}: jitfuse status {r['status']}")
        if r["torch_status"] not in ("ok", "-"):
            notes.append(f"{r['id']}: torch status {r['torch_status']}")
        if r["bytes_differ"]:
            notes.append(f"{r['id']}: minimal bytes differ between jitfuse and torch")
        for mode in ("fused", "unfused"):
            err = get(jrows.get(r["id"]), mode, "kernels_roofline_error")
            if err:
                notes.append(f"{r['id']}: {mode} per-kernel profile failed ({err})")
    out.append("")

    for wid, title in (("W8", "W8 (decode add+RMSNorm bf16 1x4096)"),
                       ("W9", "W9 (decode layer: the llama_block example, bf16, T = 1)")):
        out.extend(per_call_markdown(by_id(jf).get(wid, {}), by_id(th).get(wid, {}), title))

    jl, tl = get(jf, "jit_latency"), get(th, "compile_latency")
    if jl or tl:
        out.append("Compile latency of the add+RMSNorm graph (ms):")
        out.append("")
        out.append("| case | jitfuse | torch.compile (first call) |")
        out.append("|---|---|---|")

        def s_ms(k):
            v = get(tl, k)
            return None if v is None else 1e3 * v

        rows = [
            ("C1 cold, first in process", get(jl, "c1_first_in_process", "wall_ms"),
             s_ms("c1_first_in_process_s")),
            ("C1 cold, compiler already loaded (variant)", get(jl, "c1_cold_nvrtc_warm", "wall_ms"),
             s_ms("c1_cold_warm_process_s")),
            ("warm cache, same process", get(jl, "disk_hit_in_process", "wall_ms"),
             s_ms("warm_cache_in_process_s")),
            ("in-process memory hit", get(jl, "memory_hit", "wall_ms"), None),
            ("C2 warm disk cache, new process", get(jl, "c2_new_process", "wall_ms"),
             s_ms("c2_new_process_first_call_s")),
            ("C2 whole child process", get(jl, "c2_new_process", "process_total_ms"),
             s_ms("c2_process_total_s")),
        ]
        for name, a, b in rows:
            out.append(f"| {name} | {fmt(a)} | {fmt(b)} |")
        su = get(jl, "startup")
        out.append("")
        out.append(f"jitfuse start-up outside C1: driver init {fmt(get(su, 'driver_init_ms'))} ms, "
                   f"primary context {fmt(get(su, 'context_init_ms'))} ms. torch import "
                   f"{fmt(s_ms('import_torch_s'), '.0f')} ms (first-call times include "
                   f"dynamo, inductor and Triton compile and one run).")
        out.append("")
    out.extend(roofline_markdown(jf, ceiling))
    if notes:
        out.append("Notes: " + "; ".join(notes) + ".")
        out.append("")
    return "\n".join(out), ceiling


def chart(jf, th, ceiling, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: matplotlib missing; no chart", file=sys.stderr)
        return False
    rows = bandwidth_rows(jf, th, ceiling)
    if not rows:
        return False
    series = [("jitfuse fused", "fused_pct", "#1f77b4"),
              ("jitfuse unfused", "unfused_pct", "#aec7e8"),
              ("torch eager", "eager_pct", "#ff7f0e"),
              ("torch.compile", "compile_pct", "#2ca02c")]
    width = 0.2
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(rows) + 2), 4.8))
    for i, (label, key, color) in enumerate(series):
        xs = [k + (i - 1.5) * width for k in range(len(rows))]
        ax.bar(xs, [r[key] or 0 for r in rows], width, label=label, color=color)
    ax.axhline(100, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["id"] for r in rows], rotation=30, ha="right")
    ax.set_ylabel(f"% of copy ceiling ({ceiling:.0f} GB/s)")
    dev = get(jf, "device", "name") or get(th, "meta", "device") or ""
    ax.set_title(f"Effective bandwidth (minimal bytes / median time) {dev}".strip())
    ax.legend(ncol=4, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main(argv=None):
    p = argparse.ArgumentParser(description="merge jitfuse and torch benchmark JSON")
    p.add_argument("--jitfuse", help="jitfuse_bench --json output")
    p.add_argument("--torch", help="torch_bench.py --json output")
    p.add_argument("--md", help="also write the markdown here")
    p.add_argument("--chart", help="write the PNG chart here")
    a = p.parse_args(argv)
    jf, th = load(a.jitfuse), load(a.torch)
    if jf is None and th is None:
        print("report.py: neither JSON file exists; nothing to report", file=sys.stderr)
        return 1
    text, ceiling = markdown(jf, th)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text + "\n")
    if a.chart and chart(jf, th, ceiling, a.chart):
        print(f"wrote {a.chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
