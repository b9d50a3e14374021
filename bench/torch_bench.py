#!/usr/bin/env python3
"""PyTorch side of the jitfuse benchmark (see BENCHMARKS.md).

Times PyTorch eager and torch.compile (default mode) on the workloads of
jitfuse_bench (same ids, shapes and dtypes) with triton.testing.do_bench
(median), computes effective bandwidth with the same minimal-bytes formula
(every input read once, every output written once), measures W8 per call
and W9 (the decode layer, jitfuse's llama_block example at T = 1) per call
back to back (eager, eager inside a CUDA graph, compile, compile inside a
CUDA graph), and the compile
latency of torch.compile for the add+RMSNorm function (C1-like: empty
inductor cache; C2-like: warm cache in a new process). Writes JSON.

Needs a CUDA GPU, torch and triton. Run from the repo root:
    python3 bench/torch_bench.py --json /tmp/torch.json [--only W3,W8,W9]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write every number to this JSON file")
    p.add_argument("--only", default="",
                   help="comma-separated workload groups or ids (W1..W22, W3-bf16-H4096)")
    p.add_argument("--warmup-ms", type=float, default=25, help="do_bench warmup (ms)")
    p.add_argument("--rep-ms", type=float, default=100, help="do_bench measurement time (ms)")
    p.add_argument("--calls", type=int, default=1000, help="W8, W9: back-to-back calls per repetition")
    p.add_argument("--skip-compile-latency", action="store_true",
                   help="skip the C1/C2-like torch.compile latency measurements")
    p.add_argument("--compile-only", action="store_true",
                   help="internal (C2-like): compile add+RMSNorm with the inductor cache "
                        "named by TORCHINDUCTOR_CACHE_DIR, print the time, exit")
    return p.parse_args(argv)


ARGS = parse_args()

# The inductor and Triton caches must be fresh for a cold compile time, and
# both read their location when first imported: set them before importing torch.
if not ARGS.compile_only:
    _cache = tempfile.mkdtemp(prefix="jitfuse-bench-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = _cache
    os.environ["TRITON_CACHE_DIR"] = os.path.join(_cache, "triton")

_T_IMPORT = time.perf_counter()
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_patterns import ln_backward, ln_backward_native  # noqa: E402,F401
import triton  # noqa: E402
from triton.testing import do_bench  # noqa: E402

IMPORT_S = time.perf_counter() - _T_IMPORT

N28 = 1 << 28


# --------------------------------------------------------------------------
# The workload functions: what a PyTorch user writes for each.
# --------------------------------------------------------------------------

def w1(a, b, c):
    return 2.5 * (a + b) + c


def w2(x):
    return torch.sum(torch.abs(x))


def add_rmsnorm(x, res, w):
    r = x + res
    if hasattr(F, "rms_norm"):
        y = F.rms_norm(r, (r.shape[-1],), w, 1e-6)
    else:
        rf = r.float()
        y = (rf * torch.rsqrt(rf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(r.dtype)
    return r, y


def add_layernorm(x, res, w, b):
    return F.layer_norm(x + res, (x.shape[-1],), w, b, 1e-5)


def swiglu(gu):
    g, u = gu.chunk(2, dim=-1)
    return F.silu(g) * u


def masked_softmax(s, mask):
    return torch.softmax(s + mask, dim=-1)


def col_sum(x):
    """W10: a bias gradient, the column sum of a bf16 [R, C] in f32."""
    return x.sum(0, dtype=torch.float32)


def col_sum_upcast(x):
    """W10 spelled the other common way; eager times both and keeps the
    faster (torch.compile gets col_sum: it fuses the upcast either way)."""
    return x.float().sum(0)


def bn_stats(x):
    """W17: BatchNorm statistics, sums of x and x^2 over (N, HW) of [N, C, HW] in f32."""
    xf = x.float()
    return xf.sum((0, 2)), (xf * xf).sum((0, 2))


def mean_pool(x):
    """W18: mean pooling over the sequence axis of [B, T, H] in f32."""
    return x.mean(1, dtype=torch.float32)


INV_SCALE = 1.0 / 65536


def amp_unscale(g):
    """W19: gradients unscaled out of place and a non-finite flag."""
    u = g * INV_SCALE
    return u, (~torch.isfinite(u)).any().float()


_AMP_STATE = {}


def amp_unscale_foreach(g):
    """W19 as GradScaler runs it: PyTorch's fused in-place kernel (one read
    and one write of g; the flag is a one-element tensor)."""
    if "inv" not in _AMP_STATE:
        _AMP_STATE["inv"] = torch.full((1,), INV_SCALE, device="cuda")
        _AMP_STATE["found"] = torch.zeros((1,), device="cuda")
    torch._amp_foreach_non_finite_check_and_unscale_([g], _AMP_STATE["found"], _AMP_STATE["inv"])
    return g, _AMP_STATE["found"]


def fake_quant_cols(w):
    """W20: symmetric per-channel fake quantization of w [in, out] over axis 0."""
    wf = w.float()
    s = wf.abs().amax(0, keepdim=True) / 127.0
    return (torch.clamp(torch.round(wf / s), -127, 127) * s).to(w.dtype), s


def relu_backward(dy, z):
    """W22: ReLU backward and the bias gradient of the layer before it."""
    dz = dy * (z > 0).to(dy.dtype)
    return dz, dz.float().sum(0)


def relu_backward_threshold(dy, z):
    """W22 as autograd runs it: threshold_backward, then the f32 column sum."""
    dz = torch.ops.aten.threshold_backward(dy, z, 0)
    return dz, dz.sum(0, dtype=torch.float32)


# Other eager spellings of a workload: eager reports the fastest of fn and
# these (each one's time is kept in the entry's "eager_spellings").
EAGER_SPELLINGS = {"W10": {"x.float().sum(0)": col_sum_upcast},
                   "W19": {"torch._amp_foreach_non_finite_check_and_unscale_":
                           amp_unscale_foreach},
                   "W21": {"aten.native_layer_norm_backward": ln_backward_native},
                   "W22": {"aten.threshold_backward": relu_backward_threshold}}


def group_norm(x, w, b):
    """W11: GroupNorm(32) with its per-channel affine over f16 [N, 320, HW]
    (jitfuse's group_norm example; its weight and bias are [320, 1])."""
    return F.group_norm(x, 32, w.view(-1), b.view(-1), 1e-5)


def head_rmsnorm(x, w):
    """W12: RMSNorm over each head of 128 of x [T, 4096], back to [T, 4096]."""
    t = x.shape[0]
    if hasattr(F, "rms_norm"):
        y = F.rms_norm(x.view(t, 32, 128), (128,), w, 1e-6)
    else:
        h = x.view(t, 32, 128).float()
        y = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)
    return y.view(t, 4096)


def qk_norm_rope(q, k, qw, kw, cos, sin):
    """W13: RMSNorm over each head of q and k, then the half rotation
    (jitfuse's qk_norm_rope example; Qwen3/OLMo2 attention prep)."""
    if hasattr(F, "rms_norm"):
        qn = F.rms_norm(q, (q.shape[-1],), qw, 1e-6)
        kn = F.rms_norm(k, (k.shape[-1],), kw, 1e-6)
    else:
        def rms(x, w):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)
        qn, kn = rms(q, qw), rms(k, kw)
    return rope(qn, cos, sin), rope(kn, cos, sin)


def permute_add(q, y):
    """W14: heads to the front, plus a tensor in that layout (contiguous out)."""
    return (q.permute(0, 2, 1, 3) + y).contiguous()


def transpose_add(x):
    """W15: a transpose of the innermost axis plus 1, contiguous out."""
    return (x.t() + 1).contiguous()


def strided_rmsnorm(x, w):
    """W16: RMSNorm of a non-contiguous slice (x = buf[:, :4096])."""
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), w, 1e-6)
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)


def rope(q, cos, sin):
    half = q.shape[-1] // 2
    x1, x2 = q[..., :half], q[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)


def llama_block(hidden, residual, input_norm_weight, q, k, cos, sin, attn_out,
                post_norm_weight, gate_up):
    """jitfuse's llama_block example (examples/ExampleGraphs.cpp): the
    element-wise work of one LLaMA decoder layer, outputs in its order."""
    residual_mid, attn_in = add_rmsnorm(hidden, residual, input_norm_weight)
    q_rot, k_rot = rope(q, cos, sin), rope(k, cos, sin)
    residual_out, mlp_in = add_rmsnorm(attn_out, residual_mid, post_norm_weight)
    return residual_mid, attn_in, q_rot, k_rot, residual_out, mlp_in, swiglu(gate_up)


def rand(shape, dtype):
    """Uniform in [-2, 2), like jitfuse_bench's inputs."""
    return torch.rand(shape, device="cuda", dtype=torch.float32).mul_(4).sub_(2).to(dtype)


def rmsnorm_inputs(rows, h, dtype):
    return [rand((rows, h), dtype), rand((rows, h), dtype), rand((h,), dtype)]


def llama_block_inputs(t):
    """LLaMA-2-7B sizes of the example: H 4096, 32 q / 8 kv heads of 128,
    I 11008; t tokens."""
    bf16 = torch.bfloat16
    return [rand((t, 4096), bf16), rand((t, 4096), bf16), rand((4096,), bf16),
            rand((t, 32, 128), bf16), rand((t, 8, 128), bf16), rand((t, 64), bf16),
            rand((t, 64), bf16), rand((t, 4096), bf16), rand((4096,), bf16),
            rand((t, 2 * 11008), bf16)]


def workloads():
    """(id, group, fn, make_inputs, per_call) in the order of jitfuse_bench."""
    bf16, f32 = torch.bfloat16, torch.float32
    w = [
        ("W1", "W1", w1, lambda: [rand((N28,), f32) for _ in range(3)], False),
        ("W2", "W2", w2, lambda: [rand((N28,), f32)], False),
    ]
    for dt, name in ((bf16, "bf16"), (f32, "f32")):
        for h in (4096, 8192):
            w.append((f"W3-{name}-H{h}", "W3", add_rmsnorm,
                      (lambda dt=dt, h=h: rmsnorm_inputs(16384, h, dt)), False))
    w += [
        ("W4", "W4", add_layernorm,
         lambda: [rand((65536, 4096), bf16), rand((65536, 4096), bf16),
                  rand((4096,), bf16), rand((4096,), bf16)], False),
        ("W5", "W5", swiglu, lambda: [rand((16384, 2 * 11008), bf16)], False),
        # jitfuse's W5 with CompileOptions::FastMath: the same torch function,
        # timed again so each row has its own torch numbers.
        ("W5-fast", "W5", swiglu, lambda: [rand((16384, 2 * 11008), bf16)], False),
        ("W6", "W6", masked_softmax, lambda: [rand((65536, 2048), f32), rand((2048,), f32)], False),
        ("W7", "W7", rope,
         lambda: [rand((32768, 32, 128), bf16), rand((32768, 64), bf16),
                  rand((32768, 64), bf16)], False),
        ("W8", "W8", add_rmsnorm, lambda: rmsnorm_inputs(1, 4096, bf16), True),
        ("W9", "W9", llama_block, lambda: llama_block_inputs(1), True),
        ("W9L", "W9L", llama_block, lambda: llama_block_inputs(4096), False),
        ("W10", "W10", col_sum, lambda: [rand((65536, 4096), bf16)], False),
        ("W11", "W11", group_norm,
         lambda: [rand((8, 320, 64 * 64), torch.float16), rand((320, 1), torch.float16),
                  rand((320, 1), torch.float16)], False),
        ("W12", "W12", head_rmsnorm, lambda: [rand((16384, 4096), bf16), rand((128,), bf16)],
         False),
        ("W13", "W13", qk_norm_rope,
         lambda: [rand((16384, 32, 128), bf16), rand((16384, 8, 128), bf16),
                  rand((128,), bf16), rand((128,), bf16), rand((16384, 64), bf16),
                  rand((16384, 64), bf16)], False),
        ("W14", "W14", permute_add,
         lambda: [rand((8, 2048, 32, 128), bf16), rand((8, 32, 2048, 128), bf16)], False),
        ("W15", "W15", transpose_add, lambda: [rand((8192, 8192), bf16)], False),
        # The slice is the input: min bytes count its elements, not the buffer's.
        ("W16", "W16", strided_rmsnorm,
         lambda: [rand((16384, 4224), bf16)[:, :4096], rand((4096,), bf16)], False),
        ("W17", "W17", bn_stats, lambda: [rand((64, 256, 3136), bf16)], False),
        ("W18", "W18", mean_pool, lambda: [rand((8, 4096, 4096), bf16)], False),
        ("W19", "W19", amp_unscale, lambda: [rand((1 << 26,), torch.float32)], False),
        ("W20", "W20", fake_quant_cols, lambda: [rand((8192, 8192), bf16)], False),
        ("W21", "W21", ln_backward,
         lambda: [rand((16384, 4096), bf16), rand((16384, 4096), bf16), rand((4096,), bf16),
                  rand((16384, 1), torch.float32), rand((16384, 1), torch.float32)], False),
        ("W22", "W22", relu_backward,
         lambda: [rand((65536, 4096), bf16), rand((65536, 4096), bf16)], False),
    ]
    return w


def selected(wid, group, only):
    if not only:
        return True
    return any(s.lower() in (wid.lower(), group.lower()) for s in only)


def nbytes(tensors):
    if isinstance(tensors, torch.Tensor):
        tensors = [tensors]
    return sum(t.numel() * t.element_size() for t in tensors)


def min_bytes(fn, inputs):
    """Each input read once plus each output written once."""
    return nbytes(inputs) + nbytes(fn(*inputs))


def bench_ms(fn):
    return do_bench(fn, warmup=ARGS.warmup_ms, rep=ARGS.rep_ms, return_mode="median")


def bw_entry(ms, nbytes_, ceiling_gbs):
    us = ms * 1e3
    gbs = nbytes_ / (us * 1e3)
    return {"median_us": us, "gbs": gbs,
            "pct_of_copy_ceiling": 100 * gbs / ceiling_gbs if ceiling_gbs else None}


def per_call(launch, calls, reps=5):
    """GPU time per call from one event pair around `calls` back-to-back
    launches, and host time per call of the same loop (median of reps)."""
    for _ in range(calls // 10 + 1):
        launch()
    torch.cuda.synchronize()
    gpu, host = [], []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        torch.cuda.synchronize()
        start.record()
        t0 = time.perf_counter()
        for _ in range(calls):
            launch()
        host.append((time.perf_counter() - t0) * 1e6 / calls)
        end.record()
        end.synchronize()
        gpu.append(start.elapsed_time(end) * 1e3 / calls)
    gpu.sort()
    host.sort()
    return {"per_call_gpu_us": gpu[len(gpu) // 2], "host_enqueue_us": host[len(host) // 2],
            "calls": calls}


def graph_per_call(fn, inputs, calls):
    """fn captured once in a torch.cuda.CUDAGraph, replayed back to back."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn(*inputs)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn(*inputs)
    return per_call(g.replay, calls)


def timed_first_call(fn, inputs):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn(*inputs)
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def run_workload(wid, group, fn, make_inputs, is_per_call, ceiling_gbs):
    entry = {"id": wid, "group": group, "per_call": is_per_call}
    inputs = make_inputs()
    entry["shapes"] = [list(t.shape) for t in inputs]
    entry["dtypes"] = [str(t.dtype).replace("torch.", "") for t in inputs]
    entry["min_bytes"] = min_bytes(fn, inputs)
    torch._dynamo.reset()
    cfn = torch.compile(fn)
    entry["compile_first_call_s"] = timed_first_call(cfn, inputs)
    if is_per_call:
        entry["eager"] = per_call(lambda: fn(*inputs), ARGS.calls)
        entry["eager_graph"] = graph_per_call(fn, inputs, ARGS.calls)
        entry["compile"] = per_call(lambda: cfn(*inputs), ARGS.calls)
        entry["compile_graph"] = graph_per_call(cfn, inputs, ARGS.calls)
    else:
        entry["eager"] = bw_entry(bench_ms(lambda: fn(*inputs)), entry["min_bytes"], ceiling_gbs)
        spellings = EAGER_SPELLINGS.get(wid, {})
        if spellings:
            entry["eager"]["spelling"] = fn.__name__
            entry["eager_spellings"] = {fn.__name__: entry["eager"]}
            for name, alt in spellings.items():
                e = bw_entry(bench_ms(lambda alt=alt: alt(*inputs)), entry["min_bytes"],
                             ceiling_gbs)
                e["spelling"] = name
                entry["eager_spellings"][name] = e
                if e["median_us"] < entry["eager"]["median_us"]:
                    entry["eager"] = e
        entry["compile"] = bw_entry(bench_ms(lambda: cfn(*inputs)), entry["min_bytes"],
                                    ceiling_gbs)
    entry["status"] = "ok"
    return entry


def measure_ceiling():
    src = rand((N28,), torch.float32)
    dst = torch.empty_like(src)
    ms = bench_ms(lambda: dst.copy_(src))
    nb = 2 * src.numel() * 4
    return {"bytes": nb, "torch_copy_median_us": ms * 1e3, "torch_copy_gbs": nb / (ms * 1e6)}


def compile_latency_child():
    """C2-like: a new process compiling add+RMSNorm with a warm cache."""
    x, res, w = rmsnorm_inputs(16384, 4096, torch.bfloat16)
    cfn = torch.compile(add_rmsnorm)
    s = timed_first_call(cfn, [x, res, w])
    print(f"JITFUSE_TORCH_COMPILE_ONLY first_call_s={s:.6f} import_s={IMPORT_S:.6f}", flush=True)


def compile_latency():
    """C1-like: torch.compile of add+RMSNorm (bf16 16384x4096), first call
    including compile, with empty inductor/Triton caches; then a second
    variant (H=8192) cold with the compiler already loaded; then the same
    graph again after a dynamo reset (in-process warm cache); then a new
    process with the warm cache (C2-like)."""
    out = {"graph": "add+RMSNorm bf16 16384xH, torch.compile default mode",
           "import_torch_s": IMPORT_S,
           "inductor_cache_dir": os.environ["TORCHINDUCTOR_CACHE_DIR"]}
    x, res, w = rmsnorm_inputs(16384, 4096, torch.bfloat16)
    torch._dynamo.reset()
    out["c1_first_in_process_s"] = timed_first_call(torch.compile(add_rmsnorm), [x, res, w])
    torch._dynamo.reset()
    out["c1_cold_warm_process_s"] = timed_first_call(
        torch.compile(add_rmsnorm), rmsnorm_inputs(16384, 8192, torch.bfloat16))
    torch._dynamo.reset()
    out["warm_cache_in_process_s"] = timed_first_call(torch.compile(add_rmsnorm), [x, res, w])
    out["steady_call_s"] = timed_first_call(add_rmsnorm, [x, res, w])
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--compile-only"],
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)
    out["c2_process_total_s"] = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith("JITFUSE_TORCH_COMPILE_ONLY"):
            fields = dict(kv.split("=") for kv in line.split()[1:])
            out["c2_new_process_first_call_s"] = float(fields["first_call_s"])
            out["c2_import_torch_s"] = float(fields["import_s"])
            break
    else:
        out["c2_error"] = f"exit {proc.returncode}: {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
    return out


def save(root):
    """Writes what is measured so far: a run cut short by its time limit
    still leaves every finished workload in the file."""
    if ARGS.json:
        with open(ARGS.json + ".tmp", "w") as f:
            json.dump(root, f, indent=2)
        os.replace(ARGS.json + ".tmp", ARGS.json)


def main():
    if ARGS.compile_only:
        compile_latency_child()
        return 0
    if not torch.cuda.is_available():
        print("torch_bench: no CUDA device visible to PyTorch; nothing to time")
        return 0
    only = [s for s in ARGS.only.split(",") if s]
    t0 = time.perf_counter()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    root = {"meta": {"tool": "torch_bench.py",
                     "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "command": " ".join(sys.argv),
                     "torch": torch.__version__, "triton": triton.__version__,
                     "python": sys.version.split()[0],
                     "device": torch.cuda.get_device_name(0),
                     "cuda_init_s": time.perf_counter() - t0,
                     "do_bench": {"warmup_ms": ARGS.warmup_ms, "rep_ms": ARGS.rep_ms,
                                  "return_mode": "median"},
                     "bytes_formula": "each input read once + each output written once",
                     "rms_norm": "F.rms_norm" if hasattr(F, "rms_norm") else "manual"}}
    if not ARGS.skip_compile_latency:
        try:
            root["compile_latency"] = compile_latency()
        except Exception as e:  # keep timing the workloads
            root["compile_latency"] = {"error": repr(e)}
        print("torch.compile latency:", json.dumps(root["compile_latency"], indent=1), flush=True)
        save(root)
    root["ceiling"] = measure_ceiling()
    print(f"torch copy: {root['ceiling']['torch_copy_gbs']:.0f} GB/s", flush=True)
    rows = []
    root["workloads"] = rows
    for wid, group, fn, make_inputs, is_per_call in workloads():
        if not selected(wid, group, only):
            continue
        try:
            e = run_workload(wid, group, fn, make_inputs, is_per_call, None)
        except Exception as ex:  # one broken workload must not lose the rest
            e = {"id": wid, "group": group, "per_call": is_per_call, "status": "error",
                 "error": repr(ex)}
        rows.append(e)
        if is_per_call and e["status"] == "ok":
            print(f"{wid}: per call us: eager {e['eager']['per_call_gpu_us']:.2f}, "
                  f"eager+graph {e['eager_graph']['per_call_gpu_us']:.2f}, "
                  f"compile {e['compile']['per_call_gpu_us']:.2f}, "
                  f"compile+graph {e['compile_graph']['per_call_gpu_us']:.2f}", flush=True)
        elif e["status"] == "ok":
            print(f"{wid}: eager {e['eager']['median_us']:.1f} us {e['eager']['gbs']:.0f} GB/s, "
                  f"compile {e['compile']['median_us']:.1f} us {e['compile']['gbs']:.0f} GB/s "
                  f"(first call {e['compile_first_call_s']:.1f} s)", flush=True)
        else:
            print(f"{wid}: ERROR {e['error']}", flush=True)
        torch._dynamo.reset()
        torch.cuda.empty_cache()
        save(root)
    root["meta"]["complete"] = True
    save(root)
    if ARGS.json:
        print(f"wrote {ARGS.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
