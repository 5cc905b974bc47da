"""How many more candidates topk's threshold lets through when it is selected among each
thread's two largest sample keys instead of the whole sample (docs/design/backward-and-topk.md:
measured, not taken): the kernel's sample layout (128 chunks of
32 columns spread over the row; thread t holds sample[t::256]) and rank rule, over rows
rounded to bfloat16. Run: .venv/bin/python docs/design/data/topk-top-two-model.py"""
import math

import numpy as np

SAMPLE, THREADS, CHUNK, CANDIDATES, TOP_TWO_RANKS = 4096, 256, 32, 4096, 128


def bf16(x):
    return (x.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)


def sample_and_rank(row, k):
    width = row.size
    if width <= SAMPLE:
        return row, k
    chunks = SAMPLE // CHUNK
    spacing = width // chunks
    columns = (np.arange(chunks)[:, None] * spacing + np.arange(CHUNK)[None, :]).ravel()
    expected = k * SAMPLE / width
    return row[columns], min(math.ceil(expected + 3 * math.sqrt(expected)) + 8, SAMPLE)


def kth_largest(values, rank):
    return np.partition(values, values.size - rank)[values.size - rank]


def main():
    rng = np.random.default_rng(0)
    print("width    k  dist  rank  candidates more: mean  max   fewer than k  over 4096")
    for width, k in [(4189, 50), (50257, 50), (128256, 50), (600, 50), (4096, 50), (50257, 256), (262144, 256),
                     (50257, 1024), (128256, 1024)]:
        for dist in ("normal", "uniform"):
            ratios, fewer, over = [], 0, 0
            for _ in range(60):
                row = bf16(rng.standard_normal(width) if dist == "normal" else rng.uniform(-8, 8, width))
                sample, rank = sample_and_rank(row, k)
                assert rank <= TOP_TWO_RANKS
                tops = np.concatenate([np.sort(sample[t::THREADS])[-2:] for t in range(min(THREADS, sample.size))])
                before = np.count_nonzero(row >= kth_largest(sample, rank))
                after = np.count_nonzero(row >= kth_largest(tops, rank))
                ratios.append(after / before)
                fewer += after < k
                over += after > CANDIDATES
            print(f"{width:6d} {k:4d}  {dist:7s} {rank:4d}  {100 * (np.mean(ratios) - 1):5.1f}% "
                  f"{100 * (np.max(ratios) - 1):5.1f}%  {fewer:3d}  {over:3d}")


if __name__ == "__main__":
    main()
