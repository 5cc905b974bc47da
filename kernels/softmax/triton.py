"""Softmax and log-softmax over the last dimension in Triton. Rows of up to 16384 elements
are held in the registers of one program per row and read once; rows of up to 32768 are
taken in turn by one program per SM, which holds a 16-bit row and loads the next while it
reduces and writes the current one, or by two that hold a float32 row as two chunks; rows
of up to 131072 are split over a cluster of programs (of up to 8 programs up to 65536, of
up to 16 beyond), each holding its slice in registers and exchanging its (max, sum) with
the others through shared memory; wider rows are taken in turn by two programs an SM, which keep a running (max, sum) over chunks, then read the
row again (from L2, where the first read asked it to stay), but for the last chunk or two,
to write it. The widths are lib/src/dsls/triton/triton_common.py's. Compiled ahead of time by
lib/src/dsls/triton/aot.py; launched by kernels/softmax/triton.cpp."""

import triton
import triton.language as tl
from triton_common import DTYPES, cluster_open, cluster_position, exchange_max_sum, ladder, load_chunk

LOG2_E = tl.constexpr(1.4426950408889634)
LN_2 = tl.constexpr(0.6931471805599453)


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
            # A float32 row and the next fill the registers already: scaling the held exps by
            # 1/sum beats one more exp an element here (docs/design/triton-rows.md)
            exp = tl.exp(xf - row_max)
            y = exp * (1.0 / tl.sum(exp, axis=0))
        else:
            # log(sum) shifts the exponent instead of a held row of exps scaling by 1/sum: one
            # more exp an element, but 32 registers a thread fewer, so float16 no longer
            # spills. In base 2, one FFMA an element gives (x - max) * log2(e) and exp2 needs
            # no multiply. The rounding of max * log2(e) shifts every element alike, and
            # subtracting the log2 of their sum takes it back out.
            scaled = tl.fma(xf, LOG2_E, -(row_max * LOG2_E))
            y = tl.exp2(scaled - tl.log2(tl.sum(tl.exp2(scaled), axis=0)))
        # tl.cast, not row.to(): in Triton's interpreter (tests/triton_interpret_test.py) the
        # loop variable is a Python int
        tl.store(y_ptr + tl.cast(row, tl.int64) * width + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
        x = x_after


@triton.jit
def fold_chunk(x, running_max, running_sum, BLOCK: tl.constexpr):
    """Folds a chunk into the running (max, sum of exps) of each group of 8 neighbouring
    elements (a thread's 16 bytes of a 16-bit row): the group's max is taken before
    rescaling, so a chunk takes about one exp an element instead of two. exp2((x - max) *
    log2(e)): x - max is exact near the max, where x * log2(e) rounded first moved float32
    sums near 1e4 by 7e-4; and not tl.exp, which Triton lowers with a range check an
    element."""
    groups = tl.reshape(x.to(tl.float32), [BLOCK // 8, 8])
    new_max = tl.maximum(running_max, tl.max(groups, axis=1))
    # groups still all -inf add nothing (exp2(-inf - -inf) would be NaN)
    scale = tl.where(new_max == -float("inf"), 0.0, tl.exp2((running_max - new_max) * LOG2_E))
    terms = tl.where(new_max[:, None] == -float("inf"), 0.0, tl.exp2((groups - new_max[:, None]) * LOG2_E))
    return new_max, running_sum * scale + tl.sum(terms, axis=1)


@triton.jit
def store_chunk(y_row, x, start, offs, width, row_max, log2_total, LOG: tl.constexpr):
    """Writes a chunk's softmax (or log-softmax), given the row's max and the log2 of its sum
    of exps."""
    shifted = x.to(tl.float32) - row_max
    y = shifted - log2_total * LN_2 if LOG else tl.exp2(tl.fma(shifted, LOG2_E, -log2_total))
    # the output is read by nobody here: it leaves L2 first
    tl.store(y_row + start + offs, y.to(y_row.dtype.element_ty), mask=start + offs < width, cache_modifier=".cs")


@triton.jit
def softmax_rows_chunked(x_ptr, y_ptr, rows, width, LOG: tl.constexpr, BLOCK: tl.constexpr, DEPTH: tl.constexpr,
                         HOLD: tl.constexpr):
    """Rows of at least two chunks, taken in turn: the first pass keeps DEPTH chunks loading
    ahead of the one it folds; the second pass writes the last chunk, and with HOLD the one
    before, from registers, then reads the rest again from L2 (where the first pass asked them
    to stay), newest first."""
    offs = tl.arange(0, BLOCK)
    last = (tl.cdiv(width, BLOCK) - 1) * BLOCK
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        x_row = x_ptr + tl.cast(row, tl.int64) * width
        running_max = tl.full([BLOCK // 8], -float("inf"), tl.float32)
        running_sum = tl.zeros([BLOCK // 8], tl.float32)
        x = load_chunk(x_row, 0, offs, width, -float("inf"), "evict_last")
        # not `x`: Triton carries through a loop only the names whose value changes in it
        before = tl.zeros([BLOCK], x.dtype)
        if DEPTH == 2:
            next_x = load_chunk(x_row, BLOCK, offs, width, -float("inf"), "evict_last")
            for start in range(2 * BLOCK, width, BLOCK):
                after = load_chunk(x_row, start, offs, width, -float("inf"), "evict_last")
                running_max, running_sum = fold_chunk(x, running_max, running_sum, BLOCK)
                before, x, next_x = x, next_x, after
            running_max, running_sum = fold_chunk(x, running_max, running_sum, BLOCK)
            before, x = x, next_x
        else:
            for start in range(BLOCK, width, BLOCK):
                next_x = load_chunk(x_row, start, offs, width, -float("inf"), "evict_last")
                running_max, running_sum = fold_chunk(x, running_max, running_sum, BLOCK)
                before, x = x, next_x
        running_max, running_sum = fold_chunk(x, running_max, running_sum, BLOCK)
        row_max = tl.max(running_max, axis=0)
        group_sums = tl.where(running_max == -float("inf"), 0.0,
                              running_sum * tl.exp2((running_max - row_max) * LOG2_E))
        log2_total = tl.log2(tl.sum(group_sums, axis=0))
        y_row = y_ptr + tl.cast(row, tl.int64) * width
        store_chunk(y_row, x, last, offs, width, row_max, log2_total, LOG)
        reread = last - BLOCK
        if HOLD:
            store_chunk(y_row, before, reread, offs, width, row_max, log2_total, LOG)
            reread -= BLOCK
        # newest first; counted up, since a loop counting down (a negative step) compiled to
        # 102 registers a thread against 40 (bf16, 16 warps)
        for back in range(0, reread // BLOCK + 1):
            start = reread - back * BLOCK
            # the last read of these bytes: they leave L2 first
            x = load_chunk(x_row, start, offs, width, 0.0, "evict_first")
            store_chunk(y_row, x, start, offs, width, row_max, log2_total, LOG)


@triton.jit
def softmax_rows_cluster(x_ptr, y_ptr, width, LOG: tl.constexpr, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    """A row split over a cluster of programs, BLOCK columns each (the last slice may be
    partial): each reduces its slice to (max, sum of exps), merges them with the others' and
    writes its slice. Softmax keeps the slice's exps, not the slice, and scales them: one
    exp an element instead of two."""
    row, rank = cluster_position()
    cluster_open(WIDE)
    columns = rank * BLOCK + tl.arange(0, BLOCK)
    mask = columns < width
    x_row = x_ptr + row.to(tl.int64) * width
    x = tl.load(x_row + columns, mask=mask, other=-float("inf")).to(tl.float32)
    slice_max = tl.max(x, axis=0)
    # a slice all -inf (attention-masked) sums to 0 and writes 0 (or -inf), not NaN
    shift = tl.where(slice_max == -float("inf"), 0.0, slice_max)
    if LOG:
        slice_sum = tl.sum(tl.exp2((x - shift) * LOG2_E), axis=0)
    else:
        x = tl.exp2((x - shift) * LOG2_E)
        slice_sum = tl.sum(x, axis=0)
    row_max, total = exchange_max_sum(slice_max, slice_sum, WIDE)
    log2_total = tl.log2(total)
    if LOG:
        y = x - (row_max + log2_total * LN_2)
    else:
        y = x * tl.where(slice_max == -float("inf"), 0.0, tl.exp2((shift - row_max) * LOG2_E - log2_total))
    # the output is read by nobody here: it leaves L2 first
    y_row = y_ptr + row.to(tl.int64) * width
    tl.store(y_row + columns, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")


# Warps of the register-held variants, as measured best (docs/design/triton-rows.md).
WARPS = {1024: 2, 2048: 8, 4096: 8, 8192: 16, 16384: 16}
# Rows taken in turn (kernel, constexprs, warps), by whether they are float32: a 16-bit row
# of up to 32768 and the next fill the persistent kernel's registers; a float32 one would
# spill there, so it is held as two chunks; rows wider than triton_common.WIDE_CLUSTER_WIDTH
# are chunked, in chunks of 8192 on 16 warps, two programs an SM
# (docs/design/triton-rows.md).
IN_TURN = {
    False: {"32768": (softmax_rows_persistent, {"BLOCK": 32768}, 32),
            "chunked": (softmax_rows_chunked, {"BLOCK": 8192, "DEPTH": 1, "HOLD": False}, 16)},
    True: {"32768": (softmax_rows_chunked, {"BLOCK": 16384, "DEPTH": 2, "HOLD": True}, 16),
           "chunked": (softmax_rows_chunked, {"BLOCK": 8192, "DEPTH": 1, "HOLD": True}, 16)},
}


def variants():
    out = []
    for dtype, pointer in DTYPES.items():
        for log in (False, True):
            name = "log_softmax" if log else "softmax"
            out += ladder(f"{name}_rows:{dtype}", softmax_rows, WARPS, IN_TURN[dtype == "f32"], softmax_rows_cluster,
                          signature={"x_ptr": pointer, "y_ptr": pointer, "width": "i32"}, constexprs={"LOG": log},
                          aligned=("x_ptr", "y_ptr", "width"))  # the impl picks these for aligned rows only
    return out


AOT_VARIANTS = variants()
