"""topk in CUDA graphs: python3 topk-cluster-rows-h100.py aten | LIBRARY.so [--select-cells | --bound-cells]

Prints a JSON object: for each dtype, [rows,width] and k, the median time a call (us) of 20
topk calls captured in one CUDA graph and replayed 25 times, with the library loaded (its
path given) or not ("aten"). The cells: rows 1/8/32 x widths 32000-262144 x k 1/50/256
(docs/design/data/topk-cluster-rows-h100.json holds that output), or with --select-cells
7 decode shapes x k 1/50/128/256 (docs/design/data/topk-cluster-select-h100.json), or with
--bound-cells rows 1/4/8/12/16 x widths 32000-151936 x k 1-256 in float16 too (where the cluster
pays: docs/design/data/topk-cluster-bound-h100.json).

Several builds in one run: copy each build's libraries aside (cp -a build/lib DIR) and run
LD_LIBRARY_PATH=DIR python3 topk-cluster-rows-h100.py DIR/libnative_ops_torch.so: the
runtime then loads from DIR, and the cuda kernels' library with it (it is found next to the
runtime).
"""
import json, statistics, sys
import torch
if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--select-cells"], ["--bound-cells"]):
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
else:
    shapes = [(rows, width) for width in (32000, 50257, 128256, 151936, 262144) for rows in (1, 8, 32)]
    ks = (1, 50, 256)
res = {}
calls = 20
for dtype in dtypes:
    for rows, width in shapes:
        for k in ks:
            x = torch.empty(rows, width, device="cuda", dtype=dtype).uniform_(-8, 8)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    torch.topk(x, k)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(calls):
                    torch.topk(x, k)
            for _ in range(3):
                g.replay()
            times = []
            for _ in range(25):
                a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
                a.record(); g.replay(); b.record(); b.synchronize()
                times.append(a.elapsed_time(b) * 1000 / calls)
            res[f"{str(dtype)[6:]} [{rows},{width}] k {k}"] = round(statistics.median(times), 2)
print(json.dumps(res, indent=0))
