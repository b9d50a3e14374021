"""PyTorch spellings of patterns both torch_bench.py (the workloads) and
sweep_torch.py (the shape sweep) time, written once: what a PyTorch user
writes for the same graph jitfuse compiles (bench/Workloads.cpp,
bench/jitfuse_sweep.cpp; ir/NN.h's layerNormBackward, rmsNormBackward)."""

import torch


def ln_backward(x, dy, w, mean, rstd):
    """LayerNorm backward from the saved mean and rstd ([B, 1] f32), in f32
    math: dx (x's dtype), dw and db (f32 column sums)."""
    xh = (x.float() - mean) * rstd
    dyf = dy.float()
    wdy = w.float() * dyf
    dx = rstd * (wdy - wdy.mean(-1, keepdim=True) - xh * (wdy * xh).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dyf * xh).sum(0), dyf.sum(0)


def ln_backward_native(x, dy, w, mean, rstd):
    """The same as autograd runs it: PyTorch's fused LayerNorm backward
    kernels (dw and db in the weight's dtype)."""
    return torch.ops.aten.native_layer_norm_backward(
        dy, x, [x.shape[-1]], mean, rstd, w, w, [True, True, True])


def rms_backward(x, dy, w, rstd):
    """RMSNorm backward from the saved rstd ([B, 1] f32): dx, dw (f32)."""
    xh = x.float() * rstd
    dyf = dy.float()
    wdy = w.float() * dyf
    dx = rstd * (wdy - xh * (wdy * xh).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dyf * xh).sum(0)
