#!/usr/bin/env python3
"""PyTorch side of the shape sweep (issue 12 item 6; see BENCHMARKS.md).

Times PyTorch eager, torch.compile (default mode, dynamic=False) and, when
importable, Liger-Kernel on the points that `jitfuse_sweep --list` printed
(same patterns, shapes, dtypes and pointer offsets), with
triton.testing.do_bench (median; it clears a 256 MB buffer before each run,
as jitfuse_sweep does). Each tensor is a view of a larger buffer at an element
offset of offset_bytes / element size. Writes one JSON object per point
(JSON lines, flushed as it goes, so a timeout keeps what was measured).

torch.compile compiles once per shape, which costs seconds: it stops after
--compile-budget-s seconds and later points record compile as null with
"compile_skipped": "time budget". Points moving >= 64 MB are compiled first
(sweep_points.compile_order).

Needs a CUDA GPU, torch and triton. Run from the repo root:
    gpu-carry/jitfuse_sweep --list > /tmp/points.json
    python3 bench/sweep_torch.py --points /tmp/points.json --jsonl /tmp/sweep_torch.jsonl
"""

import argparse
import json
import os
import sys
import tempfile
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--points", required=True, help="JSON array from jitfuse_sweep --list")
    p.add_argument("--jsonl", required=True, help="write one JSON object per point here")
    p.add_argument("--warmup-ms", type=float, default=10, help="do_bench warmup (ms)")
    p.add_argument("--rep-ms", type=float, default=40, help="do_bench measurement time (ms)")
    p.add_argument("--compile-budget-s", type=float, default=170,
                   help="stop compiling new torch.compile points after this many seconds")
    p.add_argument("--budget-s", type=float, default=290,
                   help="stop timing anything after this many seconds")
    p.add_argument("--no-compile", action="store_true", help="eager (and Liger) only")
    return p.parse_args(argv)


ARGS = parse_args()
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="jitfuse-sweep-inductor-"))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_points import compile_order, dtypes, numel, point_bytes, shapes  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from triton.testing import do_bench  # noqa: E402
from torch_patterns import ln_backward, ln_backward_native, rms_backward  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}

# Many shapes per function: let dynamo keep them all rather than fall back to
# eager after its default 8 recompiles.
for _knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
              "accumulated_recompile_limit"):
    if hasattr(torch._dynamo.config, _knob):
        setattr(torch._dynamo.config, _knob, 100000)


# --------------------------------------------------------------------------
# The patterns: what a PyTorch user writes (the graphs of jitfuse_sweep.cpp).
# --------------------------------------------------------------------------

def add_rmsnorm(x, res, w):
    r = x + res
    if hasattr(F, "rms_norm"):
        return r, F.rms_norm(r, (r.shape[-1],), w, 1e-6)
    rf = r.float()
    return r, (rf * torch.rsqrt(rf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(r.dtype)


def layernorm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def softmax(x):
    return torch.softmax(x, dim=-1)


def silu_mul(g, u):
    return F.silu(g) * u


def rope(q, cos, sin):
    half = q.shape[-1] // 2
    x1, x2 = q[..., :half], q[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)


def bias_gelu(x, b):
    return F.gelu(x + b, approximate="tanh")


def sum_abs_amax(x):
    a = x.abs()
    return a.sum(-1), a.amax(-1)


def col_sum(x):
    """A bias gradient: the column sum, in x's dtype (accumulated in f32)."""
    return x.sum(0)


FNS = {"add_rmsnorm": add_rmsnorm, "layernorm": layernorm, "softmax": softmax,
       "silu_mul": silu_mul, "rope": rope, "bias_gelu": bias_gelu,
       "sum_abs_amax": sum_abs_amax, "col_sum": col_sum,
       "layernorm_bwd": ln_backward, "rmsnorm_bwd": rms_backward}
# Other eager spellings of a pattern: eager_us is the fastest of FNS's and
# these (each one's time in "eager_spellings").
EAGER_SPELLINGS = {"layernorm_bwd": {"aten.native_layer_norm_backward": ln_backward_native}}


def offset_tensor(shape, dtype, offset_bytes):
    """Uniform [-2, 2) values in a view offset_bytes into a larger buffer."""
    esize = torch.finfo(dtype).bits // 8
    off = offset_bytes // esize
    base = torch.empty(numel(shape) + 16 // esize, device="cuda", dtype=dtype)
    base.uniform_(-2, 2)
    return base[off:off + numel(shape)].view(shape)


# --------------------------------------------------------------------------
# Liger-Kernel (optional; any failure leaves the point without a Liger time).
# --------------------------------------------------------------------------

def liger_fns():
    try:
        import liger_kernel  # noqa: F401
    except Exception:
        return {}
    fns = {}
    try:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction

        def lg_add_rmsnorm(x, res, w):
            r = x + res
            return r, LigerRMSNormFunction.apply(r, w, 1e-6)
        fns["add_rmsnorm"] = lg_add_rmsnorm
    except Exception:
        pass
    try:
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        fns["layernorm"] = lambda x, w, b: LigerLayerNormFunction.apply(x, w, b, 1e-5)
    except Exception:
        pass
    try:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
        fns["softmax"] = lambda x: LigerSoftmaxFunction.apply(x)
    except Exception:
        pass
    try:
        from liger_kernel.ops.swiglu import LigerSiLUMulFunction
        fns["silu_mul"] = lambda g, u: LigerSiLUMulFunction.apply(g, u)
    except Exception:
        pass
    return fns


def bench(fn, args):
    with torch.no_grad():
        fn(*args)
        torch.cuda.synchronize()
        return do_bench(lambda: fn(*args), warmup=ARGS.warmup_ms, rep=ARGS.rep_ms,
                        return_mode="median") * 1e3


def main():
    with open(ARGS.points) as f:
        points = json.load(f)
    liger = liger_fns()
    compiled = {name: torch.compile(fn, dynamic=False) for name, fn in FNS.items()}
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {len(points)} points, "
          f"liger: {sorted(liger) or 'not importable'}", flush=True)
    start = time.perf_counter()
    compile_s = 0.0
    # Pass 1: eager (and Liger) on every point; pass 2: torch.compile in
    # compile_order() until its budget is spent. Each pass writes one line
    # per point; sweep_report.py merges the lines of one id.
    with open(ARGS.jsonl, "w") as out:
        for pass_ in ("eager", "compile"):
            if pass_ == "compile" and ARGS.no_compile:
                break
            todo = points if pass_ == "eager" else compile_order(points)
            for i, p in enumerate(todo):
                rec = {"id": p["id"]} if pass_ == "compile" else dict(p)
                dtype = DTYPES[p["dtype"]]
                esize = torch.finfo(dtype).bits // 8
                in_t, _ = dtypes(p["pattern"], p["dtype"])
                if p["offset"] % esize:
                    rec["status"] = "n/a (offset not a multiple of the element size)"
                    out.write(json.dumps(rec) + "\n")
                    continue
                if time.perf_counter() - start > ARGS.budget_s:
                    rec["status" if pass_ == "eager" else "compile_skipped"] = "skipped (time budget)"
                    out.write(json.dumps(rec) + "\n")
                    continue
                if pass_ == "compile" and compile_s > ARGS.compile_budget_s:
                    rec["compile_skipped"] = "torch.compile time budget"
                    out.write(json.dumps(rec) + "\n")
                    continue
                ins, outs = shapes(p["pattern"], p["H"], p["rows"])
                rec["bytes"] = point_bytes(p)
                try:
                    # offset_first_only (jitfuse_sweep --offset-first-only): the
                    # first input alone at the offset. A tensor of wider
                    # elements than the offset (f32 statistics at +2 B) stays
                    # aligned, as in jitfuse_sweep.
                    first = p.get("offset_first_only", False)
                    args = []
                    for i, (s, t) in enumerate(zip(ins, in_t)):
                        off = p["offset"] if i == 0 or not first else 0
                        if off % (torch.finfo(DTYPES[t]).bits // 8):
                            off = 0
                        args.append(offset_tensor(s, DTYPES[t], off))
                    if pass_ == "eager":
                        rec["eager_us"] = bench(FNS[p["pattern"]], args)
                        for name, fn in EAGER_SPELLINGS.get(p["pattern"], {}).items():
                            try:
                                t_us = bench(fn, args)
                            except Exception as e:  # noqa: BLE001
                                rec.setdefault("eager_spelling_errors", {})[name] = str(e)[:200]
                                continue
                            rec.setdefault("eager_spellings", {})[name] = t_us
                            rec["eager_us"] = min(rec["eager_us"], t_us)
                        if p["pattern"] in liger:
                            try:
                                rec["liger_us"] = bench(liger[p["pattern"]], args)
                            except Exception as e:  # noqa: BLE001
                                rec["liger_error"] = str(e)[:200]
                        rec["status"] = "ok"
                    else:
                        t0 = time.perf_counter()
                        try:
                            rec["compile_us"] = bench(compiled[p["pattern"]], args)
                        finally:
                            compile_s += time.perf_counter() - t0
                    del args
                except Exception as e:  # noqa: BLE001
                    if pass_ == "eager":
                        rec["status"] = "error"
                    rec["error" if pass_ == "eager" else "compile_error"] = str(e)[:300]
                    torch.cuda.empty_cache()
                out.write(json.dumps(rec) + "\n")
                out.flush()
                if i % 25 == 0:
                    us = rec.get("eager_us", rec.get("compile_us", float("nan")))
                    print(f"[{pass_} {i}/{len(todo)} {time.perf_counter() - start:.0f} s] "
                          f"{p['id']}: {us:.1f} us", flush=True)
    print(f"sweep_torch.py: {len(points)} points in {time.perf_counter() - start:.0f} s "
          f"(torch.compile incl. compiling: {compile_s:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
