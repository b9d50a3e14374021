"""The sweep's points without torch: shapes, bytes and the order in which
sweep_torch.py spends its torch.compile budget (issue 12 item 6; see
BENCHMARKS.md). Imported by sweep_torch.py; tested by
tests/test_sweep_tools.py on machines without a GPU."""

ESIZE = {"f32": 4, "bf16": 2, "f16": 2}
# The targets of issue 12 are stated for points moving >= 64 MB.
BIG_BYTES = 64 << 20


def rope_head_dim(h):
    return 128 if h % 128 == 0 else 64


def shapes(pattern, h, rows):
    """(input shapes, output shapes) of a point, as jitfuse_sweep builds them."""
    if pattern == "add_rmsnorm":
        return [(rows, h), (rows, h), (h,)], [(rows, h), (rows, h)]
    if pattern == "layernorm":
        return [(rows, h), (h,), (h,)], [(rows, h)]
    if pattern == "softmax":
        return [(rows, h)], [(rows, h)]
    if pattern == "silu_mul":
        return [(rows, h), (rows, h)], [(rows, h)]
    if pattern == "rope":
        d = rope_head_dim(h)
        return [(rows, h // d, d), (rows, d // 2), (rows, d // 2)], [(rows, h // d, d)]
    if pattern == "bias_gelu":
        return [(rows, h), (h,)], [(rows, h)]
    if pattern == "sum_abs_amax":
        return [(rows, h)], [(rows,), (rows,)]
    if pattern == "col_sum":
        return [(rows, h)], [(h,)]
    if pattern == "layernorm_bwd":  # x, dy, w, mean, rstd -> dx, dw, db
        return [(rows, h), (rows, h), (h,), (rows, 1), (rows, 1)], [(rows, h), (h,), (h,)]
    if pattern == "rmsnorm_bwd":  # x, dy, w, rstd -> dx, dw
        return [(rows, h), (rows, h), (h,), (rows, 1)], [(rows, h), (h,)]
    raise ValueError(f"unknown pattern {pattern}")


# The norm backwards' f32 tensors whatever the point's dtype: the saved
# statistics (the last inputs) and the column sums (the outputs after dx).
F32_INPUTS = {"layernorm_bwd": 2, "rmsnorm_bwd": 1}


def dtypes(pattern, dtype):
    """(input dtypes, output dtypes) of a point of dtype `dtype`."""
    ins, outs = shapes(pattern, 1, 1)
    k = F32_INPUTS.get(pattern, 0)
    in_t = [dtype] * (len(ins) - k) + ["f32"] * k
    out_t = [dtype] + ["f32"] * (len(outs) - 1) if k else [dtype] * len(outs)
    return in_t, out_t


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def point_bytes(p):
    """Minimal bytes a point moves (its inputs and outputs once)."""
    ins, outs = shapes(p["pattern"], p["H"], p["rows"])
    in_t, out_t = dtypes(p["pattern"], p["dtype"])
    return sum(numel(s) * ESIZE[t] for s, t in zip(ins + outs, in_t + out_t))


def compile_order(points):
    """torch.compile's order within its budget. Points of >= 64 MB first
    (the targets are stated for them; a budget spent on small points left
    about half of them, f32 x 32064 among them, without a torch.compile time
    in 2026-12-01's sweeps), bf16 before the other dtypes, and round-robin
    over the patterns within each group so each gets its share."""
    rank, seen = [], {}
    for i, p in enumerate(points):
        group = (point_bytes(p) < BIG_BYTES, p["dtype"] != "bf16")
        k = (group, p["pattern"])
        seen[k] = seen.get(k, 0) + 1
        rank.append((group, seen[k], p["pattern"], i))
    return [points[r[3]] for r in sorted(rank)]
