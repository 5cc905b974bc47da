"""RMS norm (_fused_rms_norm) over the last dimension in Triton: rstd = 1 / sqrt(mean(x^2)
+ eps), out = x * rstd * weight, in float32. Rows of up to 16384 elements are held in the
registers of one program per row and read once; rows of up to 32768 are taken in turn by
one program per SM, which holds a 16-bit row and loads the next while it reduces and
writes the current one, or holds a float32 row as two chunks; rows of up to 131072 are
split over a cluster of programs (of up to 8 programs up to 65536, of up to 16 beyond),
each holding its slice in registers and exchanging its sum of squares with the others
through shared memory; wider rows are read in chunks,
twice (the second time from L2, where the first read asked them to stay), but for the
last chunk or two. The widths are lib/src/dsls/triton/triton_common.py's. Compiled ahead of time by
lib/src/dsls/triton/aot.py; launched by kernels/norm/triton.cpp."""

import triton
import triton.language as tl
from triton_common import DTYPES, cluster_open, cluster_position, exchange_sum, ladder, load_chunk


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
def fold_chunk(x, squares, BLOCK: tl.constexpr):
    """Adds a chunk's squares to the running sums of each group of 8 neighbouring elements."""
    groups = tl.reshape(x.to(tl.float32), [BLOCK // 8, 8])
    return squares + tl.sum(groups * groups, axis=1)


@triton.jit
def store_chunk(w_ptr, y_row, x, start, offs, width, rstd, HAS_WEIGHT: tl.constexpr):
    mask = start + offs < width
    y = x.to(tl.float32) * rstd
    if HAS_WEIGHT:
        y = y * tl.load(w_ptr + start + offs, mask=mask, other=0.0).to(tl.float32)
    # the output is read by nobody here: it leaves L2 first
    tl.store(y_row + start + offs, y.to(y_row.dtype.element_ty), mask=mask, cache_modifier=".cs")


@triton.jit
def rms_norm_rows_chunked(x_ptr, w_ptr, y_ptr, rstd_ptr, rows, width, eps, HAS_WEIGHT: tl.constexpr,
                          BLOCK: tl.constexpr, HOLD: tl.constexpr):
    """Rows of at least two chunks, taken in turn: the first pass keeps two chunks loading
    ahead of the one it folds; the second pass writes the last chunk, and with HOLD the one
    before, from registers, then reads the rest again from L2 (where the first pass asked them
    to stay), newest first."""
    offs = tl.arange(0, BLOCK)
    last = (tl.cdiv(width, BLOCK) - 1) * BLOCK
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        x_row = x_ptr + tl.cast(row, tl.int64) * width
        squares = tl.zeros([BLOCK // 8], tl.float32)
        x = load_chunk(x_row, 0, offs, width, 0.0, "evict_last")
        # not `x`: Triton carries through a loop only the names whose value changes in it
        before = tl.zeros([BLOCK], x.dtype)
        next_x = load_chunk(x_row, BLOCK, offs, width, 0.0, "evict_last")
        for start in range(2 * BLOCK, width, BLOCK):
            after = load_chunk(x_row, start, offs, width, 0.0, "evict_last")
            squares = fold_chunk(x, squares, BLOCK)
            before, x, next_x = x, next_x, after
        squares = fold_chunk(x, squares, BLOCK)
        before, x = x, next_x
        squares = fold_chunk(x, squares, BLOCK)
        rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / width + eps)
        y_row = y_ptr + tl.cast(row, tl.int64) * width
        store_chunk(w_ptr, y_row, x, last, offs, width, rstd, HAS_WEIGHT)
        reread = last - BLOCK
        if HOLD:
            store_chunk(w_ptr, y_row, before, reread, offs, width, rstd, HAS_WEIGHT)
            reread -= BLOCK
        # newest first; counted up (kernels/softmax/triton.py says why)
        for back in range(0, reread // BLOCK + 1):
            start = reread - back * BLOCK
            # the last read of these bytes: they leave L2 first
            x = load_chunk(x_row, start, offs, width, 0.0, "evict_first")
            store_chunk(w_ptr, y_row, x, start, offs, width, rstd, HAS_WEIGHT)
        tl.store(rstd_ptr + row, rstd)


@triton.jit
def as_pairs(ptr):
    """A row as words of two elements: int32 for 16-bit rows, int64 for float32 ones."""
    if ptr.dtype.element_ty == tl.float32:
        return ptr.to(tl.pointer_type(tl.int64))
    else:
        return ptr.to(tl.pointer_type(tl.int32))


@triton.jit
def unpack(pairs, after, DTYPE: tl.constexpr):
    """The (even, odd) elements of words of two DTYPE, as float32. Inline PTX, which the
    compiler neither merges with another unpack of the same words nor moves above the
    computation of `after`: the words, not their float32 values, stay in registers until
    then."""
    if DTYPE == tl.bfloat16:
        return tl.inline_asm_elementwise(
            "{ .reg .b16 even, odd; mov.b32 {even, odd}, $2; cvt.f32.bf16 $0, even; cvt.f32.bf16 $1, odd; }",
            "=r,=r,r,r", [pairs, after], dtype=(tl.float32, tl.float32), is_pure=True, pack=1)
    elif DTYPE == tl.float16:
        return tl.inline_asm_elementwise(
            "{ .reg .b16 even, odd; mov.b32 {even, odd}, $2; cvt.f32.f16 $0, even; cvt.f32.f16 $1, odd; }",
            "=r,=r,r,r", [pairs, after], dtype=(tl.float32, tl.float32), is_pure=True, pack=1)
    else:
        return tl.inline_asm_elementwise("mov.b64 {$0, $1}, $2;", "=r,=r,l,r", [pairs, after],
                                         dtype=(tl.float32, tl.float32), is_pure=True, pack=1)


@triton.jit
def pack(even, odd, DTYPE: tl.constexpr):
    """Words of two DTYPE from float32 (even, odd) elements, rounded to nearest."""
    if DTYPE == tl.bfloat16:
        return tl.inline_asm_elementwise("cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,r,r", [even, odd], dtype=tl.int32,
                                         is_pure=True, pack=1)
    elif DTYPE == tl.float16:
        return tl.inline_asm_elementwise("cvt.rn.f16x2.f32 $0, $2, $1;", "=r,r,r", [even, odd], dtype=tl.int32,
                                         is_pure=True, pack=1)
    else:
        return tl.inline_asm_elementwise("mov.b64 $0, {$1, $2};", "=l,r,r", [even, odd], dtype=tl.int64,
                                         is_pure=True, pack=1)


@triton.jit
def rms_norm_rows_cluster(x_ptr, w_ptr, y_ptr, rstd_ptr, width, eps, HAS_WEIGHT: tl.constexpr, BLOCK: tl.constexpr,
                          WIDE: tl.constexpr):
    """A row split over a cluster of programs, BLOCK columns each (the last slice may be
    partial): each sums its slice's squares, adds the others' and writes its slice. The slice
    and its weight are held as words of two elements, unpacked at each use: 16-bit ones
    took a register each as float32 or unpacked, and take half one as words."""
    row, rank = cluster_position()
    cluster_open(WIDE)
    DTYPE: tl.constexpr = x_ptr.dtype.element_ty
    half = width // 2  # the impl takes rows of a multiple of 16 elements only
    words = rank * (BLOCK // 2) + tl.arange(0, BLOCK // 2)
    mask = words < half
    x = tl.load(as_pairs(x_ptr) + row.to(tl.int64) * half + words, mask=mask, other=0)
    if HAS_WEIGHT:
        w = tl.load(as_pairs(w_ptr) + words, mask=mask, other=0)
    even, odd = unpack(x, 0.0, DTYPE)
    rstd = 1.0 / tl.sqrt(exchange_sum(tl.sum(even * even, axis=0) + tl.sum(odd * odd, axis=0), WIDE) / width + eps)
    even, odd = unpack(x, rstd, DTYPE)
    even *= rstd
    odd *= rstd
    if HAS_WEIGHT:
        w_even, w_odd = unpack(w, rstd, DTYPE)
        even *= w_even
        odd *= w_odd
    # the output is read by nobody here: it leaves L2 first
    tl.store(as_pairs(y_ptr) + row.to(tl.int64) * half + words, pack(even, odd, DTYPE), mask=mask,
             cache_modifier=".cs")
    if rank == 0:
        tl.store(rstd_ptr + row, rstd)


# Warps of the register-held variants.
WARPS = {1024: 4, 2048: 8, 4096: 8, 8192: 16, 16384: 16}
# Rows taken in turn (kernel, constexprs, warps), by whether they are float32: a 16-bit row
# of up to 32768 and the next fill the persistent kernel's registers; a float32 one would
# spill there, so it is held as two chunks; rows wider than triton_common.WIDE_CLUSTER_WIDTH
# are chunked, in chunks of 16384 on 32 warps, one program an SM, two chunks loading ahead
# (docs/design/triton-rows.md).
IN_TURN = {
    False: {"32768": (rms_norm_rows_persistent, {"BLOCK": 32768}, 32),
            "chunked": (rms_norm_rows_chunked, {"BLOCK": 16384, "HOLD": False}, 32)},
    True: {"32768": (rms_norm_rows_chunked, {"BLOCK": 16384, "HOLD": True}, 32),
           "chunked": (rms_norm_rows_chunked, {"BLOCK": 16384, "HOLD": True}, 32)},
}


def variants():
    out = []
    for dtype, pointer in DTYPES.items():
        for has_weight in (False, True):
            weighted = "weight" if has_weight else "plain"
            out += ladder(f"rms_norm_rows:{dtype}:{weighted}", rms_norm_rows, WARPS, IN_TURN[dtype == "f32"],
                          rms_norm_rows_cluster,
                          signature={"x_ptr": pointer, "w_ptr": pointer, "y_ptr": pointer, "rstd_ptr": "*fp32",
                                     "width": "i32", "eps": "fp32"},
                          constexprs={"HAS_WEIGHT": has_weight},
                          aligned=("x_ptr", "w_ptr", "y_ptr", "width"))  # the impl picks these for aligned rows only
    return out


AOT_VARIANTS = variants()
