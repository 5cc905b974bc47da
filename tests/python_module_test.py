"""The loadable module activates native-ops in a Python process on the same libtorch.

Run by ctest as: python python_module_test.py <path to libnative_ops_torch.so>
"""
import json
import sys

import torch


def status():
    return json.loads(torch.ops.native_ops.status())


def node(report, node_id):
    for graph in report["graphs"]:
        for entry in graph["nodes"]:
            if entry["id"] == node_id:
                return graph, entry
    raise AssertionError(f"no node {node_id} in {report}")


def main():
    torch.ops.load_library(sys.argv[1])
    report = status()
    assert report["initialized"] and not report["disabled"], report
    assert report["version"] == 1, report
    graph, bmm = node(report, "bmm_cpp_0")
    assert graph["router_installed"], graph
    assert bmm["hits"] == 0, bmm

    a = torch.randn(4, 16, 1)
    b = torch.randn(4, 1, 32)
    out = torch.bmm(a, b)  # K == 1: the cpp override fires
    torch.testing.assert_close(out, a * b)  # broadcast mul is not routed
    _, bmm = node(status(), "bmm_cpp_0")
    assert bmm["hits"] == 1, bmm

    x = torch.randn(1024, 100)  # large enough for the cond
    torch.testing.assert_close(torch.softmax(x, -1), torch.exp(x) / torch.exp(x).sum(-1, keepdim=True))
    _, softmax = node(status(), "_softmax_cpp_0")
    assert softmax["hits"] == 1, softmax
    print("python module: 3 checks passed")


if __name__ == "__main__":
    main()
