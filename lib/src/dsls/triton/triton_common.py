"""What the triton DSL's kernel files share: the dtypes they are compiled for, the ladder
of row widths of the row kernels (kernels/softmax/triton.py, kernels/norm/triton.py),
which lib/src/dsls/triton/rows.h mirrors for the impls that pick a variant (a test checks that
every key it names was built), the chunked kernels' load of a chunk, and how the programs
of a cluster that share a row exchange their partial sums."""

import triton
import triton.language as tl

# Pointer types by the dtype keys of lib/src/dsls/triton/launch.h (kDtypeKeys).
DTYPES = {"f32": "*fp32", "f16": "*fp16", "bf16": "*bf16"}
# Row widths held in the registers of one program per row.
REGISTER_BLOCKS = (1024, 2048, 4096, 8192, 16384)
# The widest rows of the "32768" variant, which takes rows in turn, 32 warps an SM
# (lib/src/dsls/triton/launch.h, persistent_grid()).
IN_TURN_WIDTH = 32768
# Wider rows, up to CLUSTER_WIDTH, take the "cluster" variant: each row is split over a
# cluster of cdiv(width, CLUSTER_SLICE) programs (CTAs), CLUSTER_SLICE columns each, on
# CLUSTER_WARPS warps (lib/src/dsls/triton/rows.h, rows_grid()). Rows up to WIDE_CLUSTER_WIDTH
# take "wide_cluster", the same kernel in clusters of up to 16, which a kernel must be
# allowed (lib/src/dsls/triton/launch.cpp) and the H200 takes: its own variant, since
# merging 16 slots instead of 8 slowed softmax in clusters of 8 (docs/design/triton-rows.md).
# Wider rows still take the "chunked" variant, which takes rows in turn.
CLUSTER_SLICE = 8192
PORTABLE_CLUSTER = 8  # the cluster size every GPU with clusters takes
WIDE_CLUSTER = 16  # Hopper's largest
CLUSTER_WIDTH = CLUSTER_SLICE * PORTABLE_CLUSTER
WIDE_CLUSTER_WIDTH = CLUSTER_SLICE * WIDE_CLUSTER
CLUSTER_WARPS = 4


def ladder(key, held, warps, in_turn, cluster, signature, constexprs, aligned):
    """One op's variants for one dtype and flavour: "{key}:{block}" for each register block
    (`held`, on warps[block] warps, the block as BLOCK), then "{key}:32768" and
    "{key}:chunked" from in_turn, which maps each to (kernel, its constexprs, warps); those
    two take rows in turn, so they also take the row count ("rows"); and "{key}:cluster" and
    "{key}:wide_cluster", `cluster` with CLUSTER_SLICE as BLOCK on CLUSTER_WARPS warps and
    WIDE false or true, launched in clusters of up to max_cluster programs, each reserving
    exchange_bytes() of shared memory for exchange_max_sum() or exchange_sum()."""
    if tuple(warps) != REGISTER_BLOCKS:
        raise SystemExit(f"triton_common: {key}: warps are given for {tuple(warps)}, not {REGISTER_BLOCKS}")
    if sorted(in_turn) != ["32768", "chunked"]:
        raise SystemExit(f"triton_common: {key}: rows taken in turn name {sorted(in_turn)}, not 32768 and chunked")
    out = [dict(key=f"{key}:{block}", kernel=held, signature=signature, constexprs={**constexprs, "BLOCK": block},
                aligned=aligned, num_warps=warps[block]) for block in REGISTER_BLOCKS]
    for suffix, (kernel, own, num_warps) in in_turn.items():
        out.append(dict(key=f"{key}:{suffix}", kernel=kernel, signature={**signature, "rows": "i32"},
                        constexprs={**constexprs, **own}, aligned=aligned, num_warps=num_warps))
    for suffix, wide in (("cluster", False), ("wide_cluster", True)):
        out.append(dict(key=f"{key}:{suffix}", kernel=cluster, signature=signature,
                        constexprs={**constexprs, "BLOCK": CLUSTER_SLICE, "WIDE": wide}, aligned=aligned,
                        num_warps=CLUSTER_WARPS, max_cluster=cluster_size(wide),
                        cluster_exchange_bytes=exchange_bytes(cluster_size(wide))))
    return out


@triton.jit
def load_chunk(row, start, offs, width, other, EVICTION: tl.constexpr):
    """The chunk of a row at `start` (elements past `width` read as `other`)."""
    return tl.load(row + start + offs, mask=start + offs < width, other=other, eviction_policy=EVICTION)


# --- Rows over a cluster ---------------------------------------------------------------
# The programs (CTAs) of a cluster that share a row exchange one pair of floats each
# through distributed shared memory, as the cuda kernels do (docs/BENCHMARKS.md, "Clusters
# that exchange through shared memory"): each writes its pair into a slot of every CTA of
# the cluster with st.async, which counts the bytes on the receiving CTA's mbarrier, and
# each waits on its own mbarrier only. No cluster barrier waits at the exchange or at
# exit. Triton has no words for this, so it is inline PTX. The slots (a pair for each
# program of the largest cluster the kernel takes) and the mbarrier sit at the end of the
# dynamic shared memory, past what the kernel uses itself: the launch asks for
# exchange_bytes() more (lib/src/dsls/triton/aot.py). The PTX is spelled out per slot count, as
# the asm strings below. In Triton's interpreter, which runs no PTX, these kernels cannot
# run (tests/triton_interpret_test.py says so); the GPU sweep checks them.


def cluster_size(wide):
    """The largest cluster of the "wide_cluster" (wide) or "cluster" variant."""
    return WIDE_CLUSTER if wide else PORTABLE_CLUSTER


def exchange_bytes(slots):
    """The exchange's shared memory: a pair of floats a slot, then the mbarrier."""
    return slots * 8 + 8


def _exchange_at(slots):
    """PTX that declares base (the slots) and bar (the mbarrier) and points them at the
    exchange."""
    return f"""
        .reg .u32 base, bar, shared_size;
        mov.u32 base, global_smem;
        mov.u32 shared_size, %dynamic_smem_size;
        add.u32 base, base, shared_size;
        sub.u32 base, base, {exchange_bytes(slots)};
        add.u32 bar, base, {slots * 8};"""

# Thread 0 fills the slots no CTA of this cluster writes with (-inf, 0), which change no
# max or sum, sets up the mbarrier to expect a pair from each CTA (the mbarrier's arrival
# releases those fills to the threads that wait on it), and every thread then signals the
# cluster that this CTA is ready. Relaxed: a release here made each thread wait for its
# row's loads.
def _open_asm(slots):
    return "{" + _exchange_at(slots) + """
        .reg .u32 ctas, bytes, thread;
        .reg .f32 lowest, zero;
        .reg .pred first, unused;
        mov.u32 ctas, %cluster_nctarank;
        mov.u32 thread, %tid.x;
        setp.eq.u32 first, thread, 0;
        mov.b32 lowest, 0xff800000;
        mov.b32 zero, 0;
""" + "".join(f"""        setp.le.and.u32 unused, ctas, {i}, first;
        @unused st.shared.v2.f32 [base+{8 * i}], {{lowest, zero}};
""" for i in range(slots)) + """        @first mbarrier.init.shared::cta.b64 [bar], 1;
        shl.b32 bytes, ctas, 3;
        @first mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes;
        @first fence.mbarrier_init.release.cluster;
        barrier.cluster.arrive.relaxed.aligned;
        mov.u32 $0, 0;
}"""

# Once every CTA is ready, thread t writes this CTA's pair (the operands `first`, `second`)
# into CTA t's slot [rank]; then every thread waits until its own CTA's slots are all
# written. One exchange
# a kernel: it waits for the mbarrier's first phase, and its label is the function's.
def _send_and_wait(slots, first, second):
    return _exchange_at(slots) + f"""
        .reg .u32 rank, slot, ctas, thread, remote_slot, remote_bar;
        .reg .pred writer, arrived;
        mov.u32 rank, %cluster_ctarank;
        mov.u32 ctas, %cluster_nctarank;
        mov.u32 thread, %tid.x;
        setp.lt.u32 writer, thread, ctas;
        mad.lo.u32 slot, rank, 8, base;
        barrier.cluster.wait.aligned;
        @writer mapa.shared::cluster.u32 remote_slot, slot, thread;
        @writer mapa.shared::cluster.u32 remote_bar, bar, thread;
        @writer st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [remote_slot], {{{first}, {second}}}, [remote_bar];
        waiting:
        mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 arrived, [bar], 0;
        @!arrived bra waiting;"""


# Slots of (max, sum of exp(x - max)) merged into the row's max ($0) and sum of exp(x -
# row max) ($1), in slot order, so that every CTA gets the same bits. A slot whose max is
# -inf adds 0 * exp2(-inf) = 0. Merged here rather than in Triton, which held all 16
# floats of 8 slots at once: softmax took 96 registers a thread, here 80 (JIT prototype).
def _max_sum_asm(slots):
    return "{" + _send_and_wait(slots, "$2", "$3") + """
        .reg .f32 slot_max, slot_sum, scale;
        ld.shared.f32 $0, [base];
""" + "".join(f"""        ld.shared.f32 slot_max, [base+{8 * i}];
        max.f32 $0, $0, slot_max;
""" for i in range(1, slots)) + """        mov.f32 $1, 0f00000000;
""" + "".join(f"""        ld.shared.v2.f32 {{slot_max, slot_sum}}, [base+{8 * i}];
        sub.f32 scale, slot_max, $0;
        mul.f32 scale, scale, 0f3FB8AA3B;
        ex2.approx.ftz.f32 scale, scale;
        fma.rn.f32 $1, slot_sum, scale, $1;
""" for i in range(slots)) + "}"


# Slots of sums added in slot order (the pair's first float is unused).
def _sum_asm(slots):
    return "{" + _send_and_wait(slots, "$1", "$2") + """
        .reg .f32 slot_sum;
        ld.shared.f32 $0, [base+4];
""" + "".join(f"""        ld.shared.f32 slot_sum, [base+{8 * i + 4}];
        add.f32 $0, $0, slot_sum;
""" for i in range(1, slots)) + "}"


OPEN_ASM = tl.constexpr(_open_asm(PORTABLE_CLUSTER))
MAX_SUM_ASM = tl.constexpr(_max_sum_asm(PORTABLE_CLUSTER))
SUM_ASM = tl.constexpr(_sum_asm(PORTABLE_CLUSTER))
WIDE_OPEN_ASM = tl.constexpr(_open_asm(WIDE_CLUSTER))
WIDE_MAX_SUM_ASM = tl.constexpr(_max_sum_asm(WIDE_CLUSTER))
WIDE_SUM_ASM = tl.constexpr(_sum_asm(WIDE_CLUSTER))


@triton.jit
def cluster_position():
    """(the row: this cluster's index, the slice: this CTA's rank in it), as int32."""
    return tl.inline_asm_elementwise("mov.u32 $0, %clusterid.x; mov.u32 $1, %cluster_ctarank;", "=r,=r", [],
                                     dtype=(tl.int32, tl.int32), is_pure=True, pack=1)


# Each of these takes WIDE: whether the kernel is the "wide_cluster" variant, whose
# exchange has WIDE_CLUSTER slots (PORTABLE_CLUSTER otherwise).

@triton.jit
def cluster_open(WIDE: tl.constexpr):
    """Readies this CTA's exchange and tells the cluster so; called first, so that the row's
    loads overlap the other CTAs' starts."""
    if WIDE:
        tl.inline_asm_elementwise(WIDE_OPEN_ASM, "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    else:
        tl.inline_asm_elementwise(OPEN_ASM, "=r", [], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def exchange_max_sum(slice_max, slice_sum, WIDE: tl.constexpr):
    """The row's (max, sum of exp(x - max)) from each CTA's (max, sum of exp(x - its max))."""
    if WIDE:
        return tl.inline_asm_elementwise(WIDE_MAX_SUM_ASM, "=r,=r,r,r", [slice_max, slice_sum],
                                         dtype=(tl.float32, tl.float32), is_pure=False, pack=1)
    else:
        return tl.inline_asm_elementwise(MAX_SUM_ASM, "=r,=r,r,r", [slice_max, slice_sum],
                                         dtype=(tl.float32, tl.float32), is_pure=False, pack=1)


@triton.jit
def exchange_sum(slice_sum, WIDE: tl.constexpr):
    """The sum of each CTA's slice_sum."""
    if WIDE:
        return tl.inline_asm_elementwise(WIDE_SUM_ASM, "=r,r,r", [0.0, slice_sum], dtype=tl.float32, is_pure=False,
                                         pack=1)
    else:
        return tl.inline_asm_elementwise(SUM_ASM, "=r,r,r", [0.0, slice_sum], dtype=tl.float32, is_pure=False, pack=1)
