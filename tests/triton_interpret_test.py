"""Every Triton kernel variant the build compiles (the AOT_VARIANTS of kernels/*/triton.py),
run in Triton's interpreter on the CPU against torch, so that a kernel whose arithmetic is
wrong fails CI on a machine without a GPU, not only a kernel that does not compile.

Each variant runs with its own constexprs on a shape it is meant for: register-held rows a
little narrower than their block (the masked tail), persistent rows with more rows than
programs (so a program takes several, and its last prefetch runs past the end), chunked
rows with a partial last chunk, softmax rows with columns masked to -inf, outer-product
tiles with partial edge tiles and, for the strided variants, a strided mat2. The
interpreter runs numpy on the CPU: it checks what the kernels compute, not their speed,
layouts or hints (the GPU sweep does that). It runs no PTX, so the variants whose
programs exchange through their cluster's shared memory (cluster_exchange_bytes; inline
PTX, lib/src/dsls/triton/triton_common.py) are listed as left to the GPU sweep, not run.

Run by ctest as: python triton_interpret_test.py <kernels folder> <triton DSL folder>. Exits 77 (skipped) with
the reason when triton 3.6.0 or numpy is not importable.
"""
import importlib.util
import os
import re
import sys

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported

SKIP = 77


def skip(reason):
    print(f"triton_interpret: skipped: {reason}")
    sys.exit(SKIP)


try:
    import numpy  # the interpreter's arrays
    import torch
    import triton
except ImportError as error:
    skip(f"{error.name} is not importable by {sys.executable}: run scripts/setup.sh, which installs it in .venv")
if triton.__version__ != "3.6.0":
    skip(f"triton {triton.__version__} is not the pinned 3.6.0")
try:
    int(numpy.zeros(1))  # what the interpreter does to a loop bound held in a one-element array
except TypeError:
    skip(f"numpy {numpy.__version__} no longer converts one-element arrays with int(), which Triton 3.6's "
         "interpreter does: use numpy 2.2.6, which scripts/setup.sh installs in .venv")

IN_TURN_WIDTH = None  # lib/src/dsls/triton/triton_common.py's, once main() has put it on the path
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def load(path):
    name = "interpret_" + os.path.basename(os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def close(actual, expected, what):
    """torch.testing's default tolerances for the output dtype, against a float64 reference."""
    torch.testing.assert_close(actual, expected.to(actual.dtype), msg=lambda m: f"{what}: {m}")


def row_shape(variant):
    """(rows, width, programs) for a row variant: those that take rows in turn get two
    programs for five rows (one takes three, and the persistent kernel's last prefetch runs
    past the end); the others get a program per row."""
    block = variant["constexprs"]["BLOCK"]
    if variant["key"].endswith(f":{IN_TURN_WIDTH}"):
        return 5, IN_TURN_WIDTH - 16, 2  # the persistent kernel's masked tail, or two chunks, the second partial
    if variant["key"].endswith(":chunked"):
        return 5, 2 * block + block // 2 + 16, 2  # two whole chunks and a partial one
    return 3, block - 16, 3  # the masked tail of the block


def rows_in_turn(variant):
    return variant["key"].endswith((f":{IN_TURN_WIDTH}", ":chunked"))


def run_softmax(variant, dtype):
    log = variant["constexprs"]["LOG"]
    rows, width, programs = row_shape(variant)
    generator = torch.Generator().manual_seed(width)
    # float32 also near 1e4, where rounding x * log2(e) moved a row's sum by 7e-4
    for offset in (0, 1e4) if dtype == torch.float32 else (0,):
        x = (torch.randn(rows, width, generator=generator) * 4 + offset).to(dtype)
        # Masked columns, as attention masks write them: -inf in the first 8 of every 1024
        # (for the chunked kernel, a group of 8 whose running max is -inf in every chunk)
        x[:, torch.arange(width) % 1024 < 8] = -float("inf")
        y = torch.full_like(x, float("nan"))
        extra = dict(variant["constexprs"], num_warps=variant["num_warps"])
        if rows_in_turn(variant):
            variant["kernel"][(programs,)](x, y, rows, width, **extra)
        else:
            variant["kernel"][(programs,)](x, y, width, **extra)
        reference = torch.log_softmax(x.double(), -1) if log else torch.softmax(x.double(), -1)
        close(y, reference, f"{variant['key']} on [{rows},{width}] around {offset}")


def run_rms_norm(variant, dtype):
    has_weight = variant["constexprs"]["HAS_WEIGHT"]
    rows, width, programs = row_shape(variant)
    generator = torch.Generator().manual_seed(width)
    x = torch.randn(rows, width, generator=generator).to(dtype)
    weight = (torch.rand(width, generator=generator) + 0.5).to(dtype)
    y = torch.full_like(x, float("nan"))
    rstd = torch.full((rows,), float("nan"))
    eps = 1e-6
    extra = dict(variant["constexprs"], num_warps=variant["num_warps"])
    if rows_in_turn(variant):
        variant["kernel"][(programs,)](x, weight, y, rstd, rows, width, eps, **extra)
    else:
        variant["kernel"][(programs,)](x, weight, y, rstd, width, eps, **extra)
    expected_rstd = torch.rsqrt(x.double().pow(2).mean(-1) + eps)
    expected = x.double() * expected_rstd[:, None] * (weight.double() if has_weight else 1.0)
    close(y, expected, f"{variant['key']} on [{rows},{width}]")
    close(rstd, expected_rstd, f"{variant['key']} rstd on [{rows},{width}]")


def run_outer_product(variant, dtype):
    block_m, block_n = variant["constexprs"]["BLOCK_M"], variant["constexprs"]["BLOCK_N"]
    # Partial tiles at both edges; narrow variants take outputs up to 64 columns wide.
    batch, rows, cols = 3, block_m + 5, 48 if ":narrow:" in variant["key"] else block_n + 16
    generator = torch.Generator().manual_seed(rows)
    a = torch.randn(batch, rows, 1, generator=generator).to(dtype)
    strided = "m_col_stride" not in variant["constexprs"]
    # A strided mat2: every other column of a wider one.
    m = torch.randn(batch, 1, 2 * cols, generator=generator).to(dtype)[:, :, ::2] if strided \
        else torch.randn(batch, 1, cols, generator=generator).to(dtype)
    out = torch.full((batch, rows, cols), float("nan"), dtype=dtype)
    grid = (triton.cdiv(rows, block_m), triton.cdiv(cols, block_n), batch)
    args = [a, m, out, rows, cols, a.stride(0), a.stride(1), m.stride(0)] + ([m.stride(2)] if strided else [])
    variant["kernel"][grid](*args, **variant["constexprs"], num_warps=variant["num_warps"])
    close(out, torch.bmm(a.double(), m.double()), f"{variant['key']} on ({batch},{rows},1)x({batch},1,{cols})")


RUNNERS = {"softmax": run_softmax, "log_softmax": run_softmax, "rms_norm": run_rms_norm,
           "outer_product": run_outer_product}


def check_mirrored_widths(dsl_dir):
    """The widths that pick a row variant and a cluster's size in C++ (lib/src/dsls/triton/rows.h)
    are those the kernels were compiled for: no key names the slice or the cluster sizes of
    the cluster kernels, so the build's check of the keys cannot catch it."""
    import triton_common
    header = "lib/src/dsls/triton/rows.h"
    text = open(os.path.join(dsl_dir, "rows.h")).read()
    mirrored = {"kInTurnWidth": "IN_TURN_WIDTH", "kClusterSlice": "CLUSTER_SLICE",
                "kPortableCluster": "PORTABLE_CLUSTER", "kWideCluster": "WIDE_CLUSTER"}
    for name, python_name in mirrored.items():
        found = re.search(rf"\b{name} = (\d+);", text)
        if not found:
            raise SystemExit(f"triton_interpret: {header} no longer defines {name} as a number: update this check")
        if int(found.group(1)) != getattr(triton_common, python_name):
            raise SystemExit(f"triton_interpret: {header} has {name} = {found.group(1)}, but lib/src/dsls/triton/triton_common.py "
                             f"has {python_name} = {getattr(triton_common, python_name)}: change both")


def main():
    kernels, dsl_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, dsl_dir)  # the kernel files import lib/src/dsls/triton/triton_common.py
    global IN_TURN_WIDTH
    from triton_common import IN_TURN_WIDTH
    check_mirrored_widths(dsl_dir)
    checked, on_gpu_only = 0, []
    for op in sorted(os.listdir(kernels)):
        path = os.path.join(kernels, op, "triton.py")
        if not os.path.exists(path):
            continue
        for variant in load(path).AOT_VARIANTS:
            if variant.get("cluster_exchange_bytes"):
                on_gpu_only.append(variant["key"])
                continue
            family, dtype_key = variant["key"].split(":")[:2]
            family = family.removesuffix("_rows")
            if family not in RUNNERS:
                raise SystemExit(f"triton_interpret: {variant['key']}: no runner for the family {family}: add one here")
            RUNNERS[family](variant, DTYPES[dtype_key])
            checked += 1
    print(f"triton_interpret: {checked} variants match torch")
    if on_gpu_only:
        print(f"triton_interpret: {len(on_gpu_only)} variants exchange through a cluster in inline PTX, which the "
              f"interpreter cannot run; the GPU sweep checks them: {', '.join(on_gpu_only)}")


if __name__ == "__main__":
    main()
