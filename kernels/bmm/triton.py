"""bmm with an inner dimension of 1 (a batched outer product) in Triton: out[b, i, j] =
a[b, i] * m[b, j], one BLOCK_M x BLOCK_N tile of the output per program. All the cost is
writing the output; the product of two 16-bit values is exact in float32, so rounding it
once to the output dtype gives aten's result. Compiled ahead of time by
lib/src/dsls/triton/aot.py; launched by kernels/bmm/triton.cpp."""

import triton
import triton.language as tl
from triton_common import DTYPES


@triton.jit
def outer_product(a_ptr, m_ptr, out_ptr, rows, cols, a_batch_stride, a_row_stride, m_batch_stride, m_col_stride,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    b = tl.program_id(2).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    a = tl.load(a_ptr + b * a_batch_stride + offs_m * a_row_stride, mask=offs_m < rows).to(tl.float32)
    m = tl.load(m_ptr + b * m_batch_stride + offs_n * m_col_stride, mask=offs_n < cols).to(tl.float32)
    product = a[:, None] * m[None, :]
    out = out_ptr + b * rows * cols + offs_m[:, None].to(tl.int64) * cols + offs_n[None, :]
    tl.store(out, product.to(out_ptr.dtype.element_ty), mask=(offs_m[:, None] < rows) & (offs_n[None, :] < cols))


# (BLOCK_M, BLOCK_N, warps) by output width: narrow rows take taller tiles.
TILES = {"narrow": (64, 64, 4), "wide": (16, 256, 4)}


def variants():
    out = []
    for dtype, pointer in DTYPES.items():
        for width, (block_m, block_n, warps) in TILES.items():
            for layout in ("contiguous", "strided"):
                signature = {"a_ptr": pointer, "m_ptr": pointer, "out_ptr": pointer, "rows": "i32", "cols": "i32",
                             "a_batch_stride": "i64", "a_row_stride": "i64", "m_batch_stride": "i64"}
                constexprs = {"BLOCK_M": block_m, "BLOCK_N": block_n}
                aligned = ()
                if layout == "contiguous":  # m's rows unit-stride, out's rows 16-byte aligned
                    constexprs["m_col_stride"] = 1
                    aligned = ("m_ptr", "out_ptr", "cols", "m_batch_stride")
                else:
                    signature["m_col_stride"] = "i64"
                out.append(dict(key=f"outer_product:{dtype}:{width}:{layout}", kernel=outer_product,
                                signature=signature, constexprs=constexprs, aligned=aligned, num_warps=warps))
    return out


AOT_VARIANTS = variants()
