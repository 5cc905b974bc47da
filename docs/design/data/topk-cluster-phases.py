"""The cluster topk kernel's time by phase (topk_cluster_rows).

  python3 topk-cluster-phases.py instrument TREE   # edits TREE/kernels/topk/cuda_kernels.cu
  (build TREE: bash TREE/scripts/gpu_check.sh --out DIR --op topk --step build)
  python3 topk-cluster-phases.py run TREE/build/lib/libnative_ops_torch.so

`instrument` makes a tree's kernel read clock64() at the end of each phase (loads,
threshold, pool, select, sort and write; within the threshold, its search's start and each
of its 4 steps) and print them for the first block of the first row; `run` calls topk once
a shape the cluster takes, 3 warm-ups then the timed call, each printing one line. Never on
main: printf in a kernel. Its output for the kernel and the changes tried:
topk-cluster-select-h100.json, topk-cluster-known-key-bits-h100.json,
topk-cluster-threshold-radix-h100.json and topk-cluster-phase-steps-h100.json (the fourth
line of each shape's four; the steps within the threshold in the last); docs/design/
backward-and-topk.md (topk, item 9).
"""
import sys


def instrument(tree):
    path = tree + "/kernels/topk/cuda_kernels.cu"
    s = open(path).read()

    def insert(anchor, text, after=True):
        nonlocal s
        assert anchor in s, anchor
        s = s.replace(anchor, anchor + text if after else text + anchor, 1)

    s = s.replace("#include <cmath>\n", "#include <cmath>\n#include <cstdio>\n", 1)
    insert("template <int N>\n__device__ uint32_t kth_largest_sample_key",
           "__device__ long long threshold_clocks[5];  // the search's start and each step's end\n", after=False)
    insert("  const int lane = static_cast<int>(threadIdx.x % 32);\n  uint32_t prefix = 0;\n",
           "  if (threadIdx.x == 0 && blockIdx.x == 0) threshold_clocks[0] = clock64();\n")
    insert("    prefix |= static_cast<uint32_t>(digit) << shift;\n",
           "    if (threadIdx.x == 0 && blockIdx.x == 0) threshold_clocks[step + 1] = clock64();\n")
    insert("  cluster.barrier_arrive();  // waited for before any block touches another's shared memory\n",
           "  const long long clock_start = clock64();\n")
    insert("  // Calls f(x, column) for each element the thread holds, read again",
           "  __syncthreads();\n  const long long clock_loaded = clock64();\n", after=False)
    insert("  // Calls f(candidate) for each element the thread holds that reaches",
           "  const long long clock_threshold = clock64();\n", after=False)
    insert("  cluster.sync();  // the pool is complete\n", "  const long long clock_pool = clock64();\n")
    insert("  if (rank != 0) return;\n  __syncthreads();\n  rank_sort",
           "  const long long clock_selected = clock64();\n", after=False)
    insert("#else\n  __trap();\n#endif\n}\n\n// Rows taken a cluster a row",
           '  if (t == 0 && blockIdx.x == 0) printf("phases k=%d width=%d blocks=%u pooled=%u: loads %lld '
           'threshold %lld pool %lld select %lld sort+write %lld; threshold: to its search %lld, steps %lld %lld '
           '%lld %lld\\n", a.k, width, blocks, pooled, '
           "clock_loaded - clock_start, clock_threshold - clock_loaded, clock_pool - clock_threshold, "
           "clock_selected - clock_pool, clock64() - clock_selected, threshold_clocks[0] - clock_loaded, "
           "threshold_clocks[1] - threshold_clocks[0], threshold_clocks[2] - threshold_clocks[1], "
           "threshold_clocks[3] - threshold_clocks[2], threshold_clocks[4] - threshold_clocks[3]);\n", after=False)
    open(path, "w").write(s)


def run(library):
    import torch
    torch.ops.load_library(library)
    for dtype in (torch.bfloat16, torch.float32):
        # k 1 takes the maximum, which has none of these phases.
        for width, k in ((32000, 50), (32000, 256), (50257, 256), (128256, 50), (65536, 128)):
            x = torch.empty(1, width, device="cuda", dtype=dtype).uniform_(-8, 8)
            for _ in range(3):
                torch.topk(x, k)
                torch.cuda.synchronize()
            print(dtype, width, k, flush=True)
            torch.topk(x, k)
            torch.cuda.synchronize()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("instrument", "run"):
        sys.exit(__doc__)
    instrument(sys.argv[2]) if sys.argv[1] == "instrument" else run(sys.argv[2])
