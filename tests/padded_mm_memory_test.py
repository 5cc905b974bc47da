"""mm's padded override runs aten's own mm where the memory for its copies is not there.

Run by ctest (label gpu) as: python padded_mm_memory_test.py <path to libnative_ops_torch.so>;
exits 77 (skipped) without a CUDA device.
"""
import json
import sys

import torch


def hits(node_id):
    for graph in json.loads(torch.ops.native_ops.status())["graphs"]:
        for node in graph["nodes"]:
            if node["id"] == node_id:
                return node["hits"]
    raise AssertionError(f"no node {node_id}")


def main():
    if not torch.cuda.is_available():
        print("padded mm memory: skipped: no CUDA device in this process")
        return 77
    x = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    weight = torch.randn(50257, 2048, device="cuda", dtype=torch.bfloat16)
    aten = x @ weight.t()  # before the library loads
    torch.ops.load_library(sys.argv[1])
    padded = x @ weight.t()  # n = 50257: the override, with room for its copies
    assert hits("mm_cpp_0") == 1, hits("mm_cpp_0")
    torch.testing.assert_close(padded, aten, rtol=1.6e-2, atol=0.5)

    # Room for aten's output (206 MB), not for the override's copy of the weight, its padded
    # product and the output (618 MB): the override must run aten's mm, not fail.
    torch.cuda.empty_cache()
    output_bytes = aten.numel() * aten.element_size()
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_reserved() + 1.5 * output_bytes) / total)
    try:
        short = x @ weight.t()
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    assert hits("mm_cpp_0") == 2, hits("mm_cpp_0")
    assert torch.equal(short, aten), "with too little memory for its copies, the override did not run aten's mm"
    print("padded mm memory: 2 checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
