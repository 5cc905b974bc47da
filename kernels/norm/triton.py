"""RMS norm (_fused_rms_norm) over the last dimension in Triton: rstd = 1 / sqrt(mean(x^2)
+ eps), out = x * rstd * weight, in float32. Rows of up to 16384 elements are held in the
registers of one program per row and read once; rows of up to 32768 elements fill a
program's registers, so one program per SM takes every (grid)-th row and loads the next
while it reduces and writes the current one; wider rows are taken in turn by two programs
an SM, which read each twice (the second time from L2, where the first read asked it to
stay). The widths are kernels/triton_common.py's. Compiled ahead of time by
cmake/triton_aot.py; launched by kernels/norm/triton.cpp."""

import triton
import triton.language as tl
from triton_common import DTYPES, ladder


@triton.jit
def rms_norm_rows(x_ptr, w_ptr, y_ptr, rstd_ptr, width, eps, HAS_WEIGHT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < width
    x = tl.load(x_ptr + row * width + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / width + eps)
    y = x * rstd
    if HAS_WEIGHT:
        y = y * tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * width + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rms_norm_rows_persistent(x_ptr, w_ptr, y_ptr, rstd_ptr, rows, width, eps, HAS_WEIGHT: tl.constexpr,
                             BLOCK: tl.constexpr):
    first = tl.program_id(0)
    step = tl.num_programs(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < width
    x = tl.load(x_ptr + first.to(tl.int64) * width + offs, mask=mask, other=0.0)
    for row in range(first, rows, step):
        after = row + step  # loaded before this row's reduction, which it overlaps
        x_after = tl.load(x_ptr + after.to(tl.int64) * width + offs, mask=mask & (after < rows), other=0.0)
        xf = x.to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(xf * xf, axis=0) / width + eps)
        y = xf * rstd
        if HAS_WEIGHT:
            y = y * tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        # tl.cast, not row.to(): in Triton's interpreter (tests/triton_interpret_test.py) the
        # loop variable is a Python int
        tl.store(y_ptr + tl.cast(row, tl.int64) * width + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
        tl.store(rstd_ptr + row, rstd)
        x = x_after


@triton.jit
def rms_norm_rows_chunked(x_ptr, w_ptr, y_ptr, rstd_ptr, rows, width, eps, HAS_WEIGHT: tl.constexpr,
                          BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        base = tl.cast(row, tl.int64) * width
        squares = tl.zeros([BLOCK], tl.float32)
        for start in range(0, width, BLOCK):
            mask = start + offs < width
            # kept in L2 for the second pass (the open rows, two an SM, fit in it)
            x = tl.load(x_ptr + base + start + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            squares += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / width + eps)
        for start in range(0, width, BLOCK):
            mask = start + offs < width
            # the last read of these bytes, and the output read by nobody here: both leave L2
            # first (bf16 [1024,65536]: 62% of the floor without the hints, 65% with them)
            x = tl.load(x_ptr + base + start + offs, mask=mask, other=0.0, eviction_policy="evict_first")
            y = x.to(tl.float32) * rstd
            if HAS_WEIGHT:
                y = y * tl.load(w_ptr + start + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_ptr + base + start + offs, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")
        tl.store(rstd_ptr + row, rstd)


# Warps of the register-held variants.
WARPS = {1024: 4, 2048: 8, 4096: 8, 8192: 16, 16384: 16}


def variants():
    out = []
    for dtype, pointer in DTYPES.items():
        for has_weight in (False, True):
            weighted = "weight" if has_weight else "plain"
            out += ladder(f"rms_norm_rows:{dtype}:{weighted}", rms_norm_rows, rms_norm_rows_persistent,
                          rms_norm_rows_chunked, WARPS,
                          signature={"x_ptr": pointer, "w_ptr": pointer, "y_ptr": pointer, "rstd_ptr": "*fp32",
                                     "width": "i32", "eps": "fp32"},
                          constexprs={"HAS_WEIGHT": has_weight},
                          aligned=("x_ptr", "w_ptr", "y_ptr", "width"))  # the impl picks these for aligned rows only
    return out


AOT_VARIANTS = variants()
