"""End-to-end: a Llama-style decoder with native-ops loaded against the same without it.

A decoder stack (RMS norm or layer norm, softmax attention written out, a SwiGLU MLP, a
vocabulary head with cross-entropy) is timed on a forward pass, a training step (forward,
backward, an SGD update) and sampling from the last position's logits (greedy: argmax;
top-k: topk, softmax, multinomial), in processes with the library loaded and without it,
alternating, from the same seed. Each process also writes its loss, logits and gradients;
the run compares them with a float32 reference (without the library) and reports how far
each is from it, and which overrides fired.

  python bench/e2e.py --library build/lib/libnative_ops_torch.so --device cuda --vocab 50257
  python bench/e2e.py --library build/lib/libnative_ops_torch.so --device cpu --dtype f32 --tiny

Prints a line as each process ends, then a table; --json FILE also writes the numbers. --profile N also profiles N training
steps in each process (torch.profiler) and prints the step's time by aten op, without the
library and with it: where the step's time goes, and which ops the library changes. Times are medians over --iterations
after warm-up (CUDA events on a GPU), then the median over --rounds processes of each kind.
A sampling step is timed as --sample-calls steps issued back to back, divided: one step
alone, synchronized, measures the host's launch latency more than the GPU. On a GPU the
sampling steps are also timed as those steps captured in one CUDA graph (the rows
*_graph), as a serving loop replays its decode step: the GPU's time, the host's left out.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

DTYPES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}


# Each model and sampling size: (its default, its --tiny default, what it counts).
SIZES = {
    "vocab": (50257, 1000, "tokens"),
    "hidden": (2048, 64, "features"),
    "layers": (4, 2, "layers"),
    "heads": (16, 4, "heads"),
    "seq": (1024, 32, "positions"),
    "batch": (4, 2, "sequences"),
    "sample_rows": (64, 4, "rows"),
    "sample_calls": (100, 2, "calls"),
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", required=True, help="libnative_ops_torch.so, loaded with torch.ops.load_library")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    p.add_argument("--vocab", type=int)
    p.add_argument("--hidden", type=int)
    p.add_argument("--layers", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--seq", type=int)
    p.add_argument("--batch", type=int)
    p.add_argument("--norm", default="rms", choices=["rms", "layer"])
    p.add_argument("--top-k", type=int, default=50)
    p.add_argument("--sample-rows", type=int, help="decode rows sampled at once")
    p.add_argument("--sample-calls", type=int,
                   help="sampling steps issued back to back per timing: one alone is host-bound")
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3, help="processes of each kind, alternating")
    p.add_argument("--tiny", action="store_true",
                   help="a model small enough for a CPU smoke run (the sizes not given on the command line)")
    p.add_argument("--profile", type=int, default=0, metavar="STEPS",
                   help="also profile STEPS training steps and print the time by op (default 0: no profile)")
    p.add_argument("--json", help="also write the results to FILE")
    p.add_argument("--check", action="store_true",
                   help="exit 1 when an output of the loaded run is further from the reference than 1.5x aten's")
    p.add_argument("--worker", choices=["loaded", "aten", "reference"], help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for name, (default, tiny, counted) in SIZES.items():
        if getattr(args, name) is None:
            setattr(args, name, tiny if args.tiny else default)
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} {getattr(args, name)} is not a positive number of {counted}")
    if args.hidden % args.heads:
        p.error(f"--hidden {args.hidden} is not a multiple of --heads {args.heads}")
    if not 1 <= args.top_k <= args.vocab:
        p.error(f"--top-k {args.top_k} must be between 1 and --vocab {args.vocab}")
    if args.profile < 0:
        p.error(f"--profile {args.profile}: give a number of training steps, or 0 for no profile")
    if args.rounds < 1 or args.iterations < 1:
        p.error("--rounds and --iterations must be at least 1")
    if args.worker:
        return args
    if not os.path.isfile(args.library):
        p.error(f"--library {args.library}: no such file (build it: bash scripts/build.sh)")
    if args.json:
        folder = os.path.dirname(os.path.abspath(args.json))
        if os.path.isdir(args.json) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            p.error(f"--json {args.json}: cannot write a file there (give a file in an existing, writable folder)")
    if args.device == "cuda":
        import torch
        if not torch.cuda.is_available():
            p.error("--device cuda: torch sees no CUDA device here; run on a machine with an NVIDIA GPU, "
                    "or pass --device cpu")
    return args


# ---- the worker: one process, one kind ---------------------------------------------------

def worker(args):
    import torch
    import torch.nn.functional as F

    if args.worker == "loaded":
        torch.ops.load_library(args.library)
    device = torch.device(args.device)
    dtype = torch.float32 if args.worker == "reference" else getattr(torch, DTYPES[args.dtype])
    torch.manual_seed(0)
    h, v, nh = args.hidden, args.vocab, args.heads
    inter = (8 * h // 3 + 255) // 256 * 256

    def param(*shape, scale):
        return (torch.randn(*shape, device=device) * scale).to(dtype).requires_grad_(True)

    def norm_weight():
        return torch.ones(h, device=device, dtype=dtype).requires_grad_(True)

    layers = [{
        "norm1": norm_weight(),
        "qkv": param(3 * h, h, scale=h ** -0.5),
        "o": param(h, h, scale=h ** -0.5),
        "norm2": norm_weight(),
        "gate": param(inter, h, scale=h ** -0.5),
        "up": param(inter, h, scale=h ** -0.5),
        "down": param(h, inter, scale=inter ** -0.5),
    } for _ in range(args.layers)]
    embedding = param(v, h, scale=1.0)
    final_norm = norm_weight()
    head = param(v, h, scale=h ** -0.5)
    params = [embedding, final_norm, head] + [p for layer in layers for p in layer.values()]
    tokens = torch.randint(0, v, (args.batch, args.seq + 1), device=device)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    causal = torch.ones(args.seq, args.seq, device=device, dtype=torch.bool).triu(1)

    def norm(x, weight):
        if args.norm == "rms":
            return F.rms_norm(x, (h,), weight, 1e-6)
        return F.layer_norm(x, (h,), weight, None, 1e-5)

    def forward(ids):
        b, t = ids.shape
        x = F.embedding(ids, embedding)
        for layer in layers:
            q, k, val = (norm(x, layer["norm1"]) @ layer["qkv"].t()).split(h, dim=-1)
            q, k, val = (z.view(b, t, nh, h // nh).transpose(1, 2) for z in (q, k, val))
            scores = (q @ k.transpose(-2, -1)) * (h // nh) ** -0.5
            attention = torch.softmax(scores.masked_fill(causal[:t, :t], float("-inf")), dim=-1)
            x = x + (attention @ val).transpose(1, 2).reshape(b, t, h) @ layer["o"].t()
            y = norm(x, layer["norm2"])
            x = x + (F.silu(y @ layer["gate"].t()) * (y @ layer["up"].t())) @ layer["down"].t()
        return norm(x, final_norm) @ head.t()

    def loss_of(logits):
        return F.cross_entropy(logits.reshape(-1, v), targets.reshape(-1))

    def train_step():
        loss = loss_of(forward(inputs))
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-1e-4)
                p.grad = None
        return loss

    # The outputs to compare, from the initial weights.
    logits = forward(inputs)
    loss = loss_of(logits)
    loss.backward()
    grads = {"embedding": embedding.grad, "head": head.grad, "norm1": layers[0]["norm1"].grad}
    result_tensors = {"loss": loss.detach().float().cpu(), "logits": logits.detach().float().cpu()}
    result_tensors.update({f"grad_{k}": g.float().cpu() for k, g in grads.items()})
    for p in params:
        p.grad = None

    sample_logits = torch.randn(args.sample_rows, v, device=device).to(dtype) * 4
    generator = torch.Generator(device=device)

    def greedy():
        return torch.argmax(sample_logits, dim=-1)

    def top_k():
        values, indices = torch.topk(sample_logits, args.top_k, dim=-1)
        choice = torch.multinomial(torch.softmax(values.float(), dim=-1), 1, generator=generator)
        return indices.gather(-1, choice)

    def timed(fn, grad=True, calls=1):
        """Median seconds of one call; `calls` calls are issued back to back per timing."""
        times = []
        for i in range(args.iterations + 2):  # two warm-up calls
            if device.type == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                start.record()
                with torch.set_grad_enabled(grad):
                    for _ in range(calls):
                        fn()
                end.record()
                torch.cuda.synchronize()
                elapsed = start.elapsed_time(end) / 1e3 / calls
            else:
                t0 = time.perf_counter()
                with torch.set_grad_enabled(grad):
                    for _ in range(calls):
                        fn()
                elapsed = (time.perf_counter() - t0) / calls
            if i >= 2:
                times.append(elapsed)
        return statistics.median(times)

    def captured(fn, calls):
        """`calls` calls of fn in one CUDA graph, as a serving loop replays its decode step."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), torch.no_grad():
            for _ in range(3):  # warm-up outside the graph, as capture requires
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        graph.register_generator_state(generator)
        with torch.no_grad(), torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        return graph.replay

    generator.manual_seed(1)
    times = {
        "forward": timed(lambda: forward(inputs), grad=False),
        "train_step": timed(train_step),
        "greedy": timed(greedy, grad=False, calls=args.sample_calls),
        "top_k": timed(top_k, grad=False, calls=args.sample_calls),
    }
    if device.type == "cuda":
        for name, fn in (("greedy", greedy), ("top_k", top_k)):
            times[name + "_graph"] = timed(captured(fn, args.sample_calls), grad=False) / args.sample_calls
    profile = profile_steps(train_step, device, args.profile) if args.profile else {}
    fired = {}
    if args.worker == "loaded":
        for graph in json.loads(torch.ops.native_ops.status())["graphs"]:
            for node in graph["nodes"]:
                if node["hits"]:
                    fired[node["id"]] = node["hits"]
    torch.save(result_tensors, args.out + ".pt")
    with open(args.out + ".json", "w") as f:
        json.dump({"times": times, "fired": fired, "profile": profile}, f)


def profile_steps(step, device, steps):
    """Seconds per step by aten op: on a GPU the kernel time each op launches itself (its
    self device time: an override's kernels count to the op it replaces), on the CPU the op's
    self CPU time. Ops that nest others count only their own part, so the values add up."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    on_gpu = device.type == "cuda"
    step()  # outside the profile: its first call pays the profiler's set-up
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with profile(activities=activities) as trace:
        for _ in range(steps):
            step()
        if on_gpu:
            torch.cuda.synchronize()
    by_op = {}
    for event in trace.key_averages():
        if event.device_type != DeviceType.CPU:
            continue  # kernels: counted through the op that launched them
        us = event.self_device_time_total if on_gpu else event.self_cpu_time_total
        if us > 0:
            by_op[event.key] = by_op.get(event.key, 0) + us / 1e6 / steps
    return by_op


# ---- the parent: alternate the workers, compare, report -----------------------------------

def run_worker(args, kind, out):
    command = [sys.executable, os.path.abspath(__file__), "--worker", kind, "--out", out]
    for name in ("library", "device", "dtype", "vocab", "hidden", "layers", "heads", "seq", "batch", "norm",
                 "top_k", "sample_rows", "sample_calls", "iterations", "profile"):
        command += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        sys.exit(f"e2e: the {kind} worker failed (exit {completed.returncode}):\n{completed.stderr[-4000:]}")
    with open(out + ".json") as f:
        return json.load(f)


def distance(actual, reference):
    """max |actual - reference| / max |reference|: 0 is exact."""
    scale = reference.abs().max().item() or 1.0
    return (actual - reference).abs().max().item() / scale


def rms_distance(actual, reference):
    """||actual - reference|| / ||reference||, over all elements: the error spread over a
    tensor, which one element's rounding moves less than the largest error."""
    scale = reference.double().norm().item() or 1.0
    return (actual.double() - reference.double()).norm().item() / scale


def print_profile(profile, steps, what, top=20):
    """The ops of a training step by their time without the library, and with it."""
    ops = sorted(set(profile["aten"]) | set(profile["loaded"]),
                 key=lambda op: -max(profile["aten"].get(op, 0), profile["loaded"].get(op, 0)))
    print(f"\na training step's {what} by aten op (torch.profiler over {steps} steps; the median over the "
          f"processes of each kind):")
    print(f"{'op':<56}{'aten':>12}{'loaded':>12}{'saved':>12}")

    def line(name, a, l):
        print(f"{name:<56}{a * 1e3:>10.3f}ms{l * 1e3:>10.3f}ms{(a - l) * 1e3:>10.3f}ms")

    for op in ops[:top]:
        line(op[:55], profile["aten"].get(op, 0), profile["loaded"].get(op, 0))
    rest = ops[top:]
    if rest:
        line(f"({len(rest)} other ops)", sum(profile["aten"].get(op, 0) for op in rest),
             sum(profile["loaded"].get(op, 0) for op in rest))
    line("(all)", sum(profile["aten"].values()), sum(profile["loaded"].values()))


def main(argv):
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    import torch

    work = tempfile.mkdtemp(prefix="native-ops-e2e-")
    runs = {"loaded": [], "aten": []}
    # A line a process as it ends: a run stopped by a time limit still shows what it measured.
    for r in range(args.rounds):
        for kind in ("aten", "loaded") if r % 2 == 0 else ("loaded", "aten"):
            started = time.monotonic()
            runs[kind].append(run_worker(args, kind, f"{work}/{kind}{r}"))
            print(f"e2e: {kind} process {r + 1} of {args.rounds} ({time.monotonic() - started:.0f} s): " +
                  ", ".join(f"{step} {seconds * 1e3:.3f} ms" for step, seconds in runs[kind][-1]["times"].items()),
                  flush=True)
    run_worker(args, "reference", f"{work}/reference")
    reference = torch.load(f"{work}/reference.pt")
    errors, rms_errors = {}, {}
    for kind in ("aten", "loaded"):
        outputs = torch.load(f"{work}/{kind}0.pt")
        errors[kind] = {name: distance(outputs[name], reference[name]) for name in reference}
        rms_errors[kind] = {name: rms_distance(outputs[name], reference[name]) for name in reference}

    times = {kind: {step: statistics.median(run["times"][step] for run in runs[kind])
                    for step in runs[kind][0]["times"]} for kind in runs}
    config = (f"{args.device} {args.dtype}, vocab {args.vocab}, hidden {args.hidden}, {args.layers} layers, "
              f"{args.heads} heads, batch {args.batch} x seq {args.seq}, {args.norm} norm; sampling {args.sample_rows} "
              f"rows, top-k {args.top_k}")
    print(f"e2e: {config}")
    print(f"{'step':<12}{'aten':>12}{'loaded':>12}{'speedup':>10}")
    for step in times["aten"]:
        a, l = times["aten"][step], times["loaded"][step]
        print(f"{step:<12}{a * 1e3:>10.3f}ms{l * 1e3:>10.3f}ms{a / l:>9.3f}x")
    print(f"\ndistance from the float32 reference, aten / loaded: max |x - ref| / max |ref|, "
          f"and ||x - ref|| / ||ref||")
    for name in reference:
        print(f"  {name:<16}{errors['aten'][name]:>10.2e} / {errors['loaded'][name]:>8.2e}"
              f"{rms_errors['aten'][name]:>14.2e} / {rms_errors['loaded'][name]:>8.2e}")
    fired = runs["loaded"][0]["fired"]
    print("\noverrides that fired (hits, one loaded process): " +
          (", ".join(f"{k} {n}" for k, n in sorted(fired.items())) or "none"))
    profile = {}
    if args.profile:
        profile = {kind: {op: statistics.median(run["profile"].get(op, 0.0) for run in runs[kind])
                          for op in set().union(*(run["profile"] for run in runs[kind]))} for kind in runs}
        print_profile(profile, args.profile, "kernel time" if args.device == "cuda" else "CPU time")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": vars(args), "times": times, "errors": errors, "rms_errors": rms_errors, "fired": fired,
                       "profile": profile}, f, indent=1)
    if args.check:
        worse = [name for name in reference if errors["loaded"][name] > 1.5 * errors["aten"][name] + 1e-6]
        if worse:
            print(f"e2e: FAILED: with native-ops loaded, further from the float32 reference than aten: {worse}")
            return 1
        print("e2e: PASSED: every output of the loaded run as close to the float32 reference as aten's")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
