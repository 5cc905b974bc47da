"""Softmax and log-softmax over the last dimension in Triton. Rows of up to 16384 elements
are held in the registers of one program per row and read once; rows of up to 32768
elements fill a program's registers, so one program per SM takes every (grid)-th row and
loads the next while it reduces and writes the current one; wider rows are taken in turn
by a few programs an SM, which keep a running (max, sum) over chunks, then read the row
again (from L2, where the first read asked it to stay) to write it. The widths are
kernels/triton_common.py's. Compiled ahead of time by cmake/triton_aot.py; launched by
kernels/softmax/triton.cpp."""

import triton
import triton.language as tl
from triton_common import DTYPES, ladder

LOG2_E = tl.constexpr(1.4426950408889634)


@triton.jit
def softmax_rows(x_ptr, y_ptr, width, LOG: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < width
    x = tl.load(x_ptr + row * width + offs, mask=mask, other=-float("inf")).to(tl.float32)
    shifted = x - tl.max(x, axis=0)
    exp = tl.exp(shifted)
    total = tl.sum(exp, axis=0)
    y = shifted - tl.log(total) if LOG else exp * (1.0 / total)
    tl.store(y_ptr + row * width + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_rows_persistent(x_ptr, y_ptr, rows, width, LOG: tl.constexpr, BLOCK: tl.constexpr):
    first = tl.program_id(0)
    step = tl.num_programs(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < width
    x = tl.load(x_ptr + first.to(tl.int64) * width + offs, mask=mask, other=-float("inf"))
    for row in range(first, rows, step):
        after = row + step  # loaded before this row's reductions, which it overlaps
        x_after = tl.load(x_ptr + after.to(tl.int64) * width + offs, mask=mask & (after < rows), other=-float("inf"))
        xf = x.to(tl.float32)
        row_max = tl.max(xf, axis=0)
        if LOG:
            shifted = xf - row_max
            y = shifted - tl.log(tl.sum(tl.exp(shifted), axis=0))
        elif x_ptr.dtype.element_ty == tl.float32:
            # A float32 row and the next fill the registers already: the row of exps, scaled
            # by 1/sum, ran at 370 us at [4096,32000] on the H200, exp(x - max - log(sum)) at 448
            exp = tl.exp(xf - row_max)
            y = exp * (1.0 / tl.sum(exp, axis=0))
        else:
            # log(sum) shifts the exponent instead of a held row of exps scaling by 1/sum: one
            # more exp an element, but 32 registers a thread fewer (float16 no longer spills;
            # bf16 [4096,32000] 162 -> 148 us, f16 201 -> 148 us on the H200). In base 2, one
            # FFMA an element gives (x - max) * log2(e) and exp2 needs no multiply: 148.7 ->
            # 140.2 us (86% -> 91% of the floor), f16 148.2 -> 142.5 us (JIT, same H200). The
            # rounding of max * log2(e) shifts every element alike, and subtracting the log2
            # of their sum takes it back out.
            scaled = tl.fma(xf, LOG2_E, -(row_max * LOG2_E))
            y = tl.exp2(scaled - tl.log2(tl.sum(tl.exp2(scaled), axis=0)))
        # tl.cast, not row.to(): in Triton's interpreter (tests/triton_interpret_test.py) the
        # loop variable is a Python int
        tl.store(y_ptr + tl.cast(row, tl.int64) * width + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
        x = x_after


@triton.jit
def softmax_rows_chunked(x_ptr, y_ptr, rows, width, LOG: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        base = tl.cast(row, tl.int64) * width
        # A running (max, sum of exps) per group of 8 neighbouring elements (a thread's 16
        # bytes of a 16-bit row): the group's max is taken before rescaling, so the first
        # pass takes about one exp an element instead of two (bf16 [1024,65536] 55% -> 60%
        # of the floor on the H200, one program an SM, JIT)
        running_max = tl.full([BLOCK // 8], -float("inf"), tl.float32)
        running_sum = tl.zeros([BLOCK // 8], tl.float32)
        for start in range(0, width, BLOCK):
            mask = start + offs < width
            # kept in L2 for the second pass (the open rows, a few an SM, fit in it)
            x = tl.load(x_ptr + base + start + offs, mask=mask, other=-float("inf"), eviction_policy="evict_last")
            groups = tl.reshape(x.to(tl.float32), [BLOCK // 8, 8])
            new_max = tl.maximum(running_max, tl.max(groups, axis=1))
            # groups still all -inf add nothing (exp(-inf - -inf) would be NaN)
            scale = tl.where(new_max == -float("inf"), 0.0, tl.exp(running_max - new_max))
            terms = tl.where(new_max[:, None] == -float("inf"), 0.0, tl.exp(groups - new_max[:, None]))
            running_sum = running_sum * scale + tl.sum(terms, axis=1)
            running_max = new_max
        row_max = tl.max(running_max, axis=0)
        group_scale = tl.where(running_max == -float("inf"), 0.0, tl.exp(running_max - row_max))
        total = tl.sum(running_sum * group_scale, axis=0)
        for start in range(0, width, BLOCK):
            mask = start + offs < width
            # the last read of these bytes, and the output read by nobody here: both leave L2
            # first (bf16 [1024,65536], two programs an SM of 8 warps: 48% of the floor without
            # the hints, 59% with them)
            x = tl.load(x_ptr + base + start + offs, mask=mask, other=0.0, eviction_policy="evict_first")
            shifted = x.to(tl.float32) - row_max
            y = shifted - tl.log(total) if LOG else tl.exp(shifted) * (1.0 / total)
            tl.store(y_ptr + base + start + offs, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")


# Warps of the register-held variants (1024 on two: 96% of the floor at 16-bit
# [65536,1024] on the H200, 90% on four).
WARPS = {1024: 2, 2048: 8, 4096: 8, 8192: 16, 16384: 16}


def variants():
    out = []
    for dtype, pointer in DTYPES.items():
        for log in (False, True):
            name = "log_softmax" if log else "softmax"
            out += ladder(f"{name}_rows:{dtype}", softmax_rows, softmax_rows_persistent, softmax_rows_chunked, WARPS,
                          signature={"x_ptr": pointer, "y_ptr": pointer, "width": "i32"}, constexprs={"LOG": log},
                          aligned=("x_ptr", "y_ptr", "width"))  # the impl picks these for aligned rows only
    return out


AOT_VARIANTS = variants()
