"""topk in CUDA graphs:

  python3 topk-cluster-rows-h100.py aten | LIBRARY.so [--select-cells | --bound-cells | --k1-cells |
                                                       --k1-narrow-cells | --decode-k1-cells]

Prints a JSON object: for each dtype, [rows,width] and k, the median time a call (us) of 20
topk calls captured in one CUDA graph and replayed 25 times, with the library loaded (its
path given) or not ("aten"). The cells: rows 1/8/32 x widths 32000-262144 x k 1/50/256
(docs/design/data/topk-cluster-rows-h100.json holds that output), or with --select-cells
7 decode shapes x k 1/50/128/256 (docs/design/data/topk-cluster-select-h100.json), or with
--bound-cells rows 1/4/8/12/16 x widths 32000-151936 x k 1-256 in float16 too (where the cluster
pays: docs/design/data/topk-cluster-bound-h100.json), or with --k1-cells 1-4096 rows of
32000-262144 at k 1, each also as torch.max(x, -1) ("max ..."; docs/design/data/topk-k1-h100.json;
3 calls a graph where the tensor holds 2^24 elements or more), or with --k1-narrow-cells 64-8192
rows of 768-32000 (odd widths among them) at k 1 in float16 too, topk alone, or with
--decode-k1-cells 1-64 rows of 32000-262144 in float16 too, topk at k 1 and torch.max(x, -1).

Several builds in one run: copy each build's libraries aside (cp -a build/lib DIR) and run
LD_LIBRARY_PATH=DIR python3 topk-cluster-rows-h100.py DIR/libnative_ops_torch.so: the
runtime then loads from DIR, and the cuda kernels' library with it (it is found next to the
runtime).
"""
import json, statistics, sys
import torch
if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--select-cells"], ["--bound-cells"], ["--k1-cells"],
                                                          ["--k1-narrow-cells"], ["--decode-k1-cells"]):
    sys.exit(__doc__)
if sys.argv[1] != "aten":
    torch.ops.load_library(sys.argv[1])
dtypes = (torch.bfloat16, torch.float32)
if sys.argv[2:] == ["--select-cells"]:
    shapes = ((1, 32000), (1, 50257), (8, 50257), (1, 128256), (8, 128256), (1, 151936), (32, 151936))
    ks = (1, 50, 128, 256)
elif sys.argv[2:] == ["--bound-cells"]:
    shapes = [(rows, width) for width in (32000, 50257, 100003, 128256, 151936) for rows in (1, 4, 8, 12, 16)]
    ks = (1, 8, 32, 64, 96, 128, 256)
    dtypes = (torch.bfloat16, torch.float16, torch.float32)
elif sys.argv[2:] == ["--k1-cells"]:
    shapes = [(1, 151936), (8, 151936), (16, 151936), (32, 151936), (64, 50257), (64, 128256), (256, 32000),
              (512, 50257), (4096, 32000), (4096, 128256), (256, 262144), (32, 262144), (1, 262144)]
    ks = (1,)
elif sys.argv[2:] == ["--decode-k1-cells"]:
    shapes = [(rows, width) for width in (32000, 50257, 128256, 151936, 262144) for rows in (1, 2, 4, 8, 16, 32, 64)]
    ks = (1,)
    dtypes = (torch.bfloat16, torch.float16, torch.float32)
elif sys.argv[2:] == ["--k1-narrow-cells"]:
    shapes = [(rows, width) for width in (768, 1031, 4096, 4097, 5003, 6144, 8191, 16384, 32000)
              for rows in (64, 512, 2048, 8192)]
    ks = (1,)
    dtypes = (torch.bfloat16, torch.float16, torch.float32)
else:
    shapes = [(rows, width) for width in (32000, 50257, 128256, 151936, 262144) for rows in (1, 8, 32)]
    ks = (1, 50, 256)


def graph_us(call, calls):
    """The median time (us) of one call among `calls` captured in a CUDA graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            call()
    for _ in range(3):
        g.replay()
    times = []
    for _ in range(25):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / calls)
    return round(statistics.median(times), 2)


res = {}
for dtype in dtypes:
    for rows, width in shapes:
        for k in ks:
            x = torch.empty(rows, width, device="cuda", dtype=dtype).uniform_(-8, 8)
            if sys.argv[2:] in (["--k1-cells"], ["--decode-k1-cells"]):
                calls = 20 if rows * width < 2**24 else 3
                res[f"topk1 {str(dtype)[6:]} [{rows},{width}]"] = graph_us(lambda: torch.topk(x, 1), calls)
                res[f"max {str(dtype)[6:]} [{rows},{width}]"] = graph_us(lambda: torch.max(x, -1), calls)
            elif sys.argv[2:] == ["--k1-narrow-cells"]:
                res[f"topk1 {str(dtype)[6:]} [{rows},{width}]"] = graph_us(lambda: torch.topk(x, 1),
                                                                           20 if rows * width < 2**24 else 3)
            else:
                res[f"{str(dtype)[6:]} [{rows},{width}] k {k}"] = graph_us(lambda: torch.topk(x, k), 20)
print(json.dumps(res, indent=0))
