"""What the triton DSL's kernel files share: the dtypes they are compiled for, and the
ladder of row widths of the row kernels (kernels/softmax/triton.py, kernels/norm/triton.py),
which kernels/triton_rows.h mirrors for the impls that pick a variant (a test checks that
every key it names was built)."""

# Pointer types by the dtype keys of lib/src/dsls/triton_kernels.h (kDtypeKeys).
DTYPES = {"f32": "*fp32", "f16": "*fp16", "bf16": "*bf16"}
# Row widths held in the registers of one program per row.
REGISTER_BLOCKS = (1024, 2048, 4096, 8192, 16384)
# Held by one program per SM: 32 elements a thread over 32 warps, with the next row's.
PERSISTENT_BLOCK = 32768
PERSISTENT_WARPS = 32
# Wider rows are read in chunks of this many elements, by a few programs an SM taking rows
# in turn (bf16 [1024,65536] on the H200, two programs an SM: softmax and rms_norm at 68-69%
# of the floor in chunks of 8192 on 16 warps, 58-61% in chunks of 4096 on 8).
CHUNK = 8192
CHUNK_WARPS = 16


def ladder(key, held, persistent, chunked, warps, signature, constexprs, aligned):
    """One op's variants for one dtype and flavour: "{key}:{block}" for each register block
    (`held`, on warps[block] warps), "{key}:persistent" (`persistent`) and "{key}:chunked"
    (`chunked`); the last two take rows in turn, so they also take the row count ("rows").
    The kernels take their width as BLOCK."""
    if tuple(warps) != REGISTER_BLOCKS:
        raise SystemExit(f"triton_common: {key}: warps are given for {tuple(warps)}, not {REGISTER_BLOCKS}")
    out = [dict(key=f"{key}:{block}", kernel=held, signature=signature, constexprs={**constexprs, "BLOCK": block},
                aligned=aligned, num_warps=warps[block]) for block in REGISTER_BLOCKS]
    in_turn = {**signature, "rows": "i32"}
    out.append(dict(key=f"{key}:persistent", kernel=persistent, signature=in_turn,
                    constexprs={**constexprs, "BLOCK": PERSISTENT_BLOCK}, aligned=aligned,
                    num_warps=PERSISTENT_WARPS))
    out.append(dict(key=f"{key}:chunked", kernel=chunked, signature=in_turn,
                    constexprs={**constexprs, "BLOCK": CHUNK}, aligned=aligned, num_warps=CHUNK_WARPS))
    return out
