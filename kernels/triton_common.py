"""What the triton DSL's kernel files share: the dtypes they are compiled for, the ladder
of row widths of the row kernels (kernels/softmax/triton.py, kernels/norm/triton.py),
which kernels/triton_rows.h mirrors for the impls that pick a variant (a test checks that
every key it names was built), and the chunked kernels' load of a chunk."""

import triton
import triton.language as tl

# Pointer types by the dtype keys of lib/src/dsls/triton_kernels.h (kDtypeKeys).
DTYPES = {"f32": "*fp32", "f16": "*fp16", "bf16": "*bf16"}
# Row widths held in the registers of one program per row.
REGISTER_BLOCKS = (1024, 2048, 4096, 8192, 16384)
# The widest rows of the "32768" variant; wider ones take the "chunked" one. Both take rows
# in turn, 32 warps an SM (lib/src/dsls/triton_kernels.h, persistent_grid()).
IN_TURN_WIDTH = 32768


def ladder(key, held, warps, in_turn, signature, constexprs, aligned):
    """One op's variants for one dtype and flavour: "{key}:{block}" for each register block
    (`held`, on warps[block] warps, the block as BLOCK), then "{key}:32768" and
    "{key}:chunked" from in_turn, which maps each to (kernel, its constexprs, warps); those
    two take rows in turn, so they also take the row count ("rows")."""
    if tuple(warps) != REGISTER_BLOCKS:
        raise SystemExit(f"triton_common: {key}: warps are given for {tuple(warps)}, not {REGISTER_BLOCKS}")
    if sorted(in_turn) != ["32768", "chunked"]:
        raise SystemExit(f"triton_common: {key}: rows taken in turn name {sorted(in_turn)}, not 32768 and chunked")
    out = [dict(key=f"{key}:{block}", kernel=held, signature=signature, constexprs={**constexprs, "BLOCK": block},
                aligned=aligned, num_warps=warps[block]) for block in REGISTER_BLOCKS]
    for suffix, (kernel, own, num_warps) in in_turn.items():
        out.append(dict(key=f"{key}:{suffix}", kernel=kernel, signature={**signature, "rows": "i32"},
                        constexprs={**constexprs, **own}, aligned=aligned, num_warps=num_warps))
    return out


@triton.jit
def load_chunk(row, start, offs, width, other, EVICTION: tl.constexpr):
    """The chunk of a row at `start` (elements past `width` read as `other`)."""
    return tl.load(row + start + offs, mask=start + offs < width, other=other, eviction_policy=EVICTION)
