"""A model of the cluster's pool selection (kernels/topk/cuda_kernels.cu, starting below the
key bits the pool shares): python3 topk-cluster-known-key-bits-model.py

kth() mirrors kth_largest_candidate (halving over key bits, then column bits where the k-th
key ties, stopping once exactly k reach). Over 3000 random pools (16- and 32-bit keys at or
above a threshold, spreads from all equal to half the key range, ties, columns of rows up to
65536), starting below the bits the threshold and the pool's top key share must select the
same k candidates as starting at the key's top bit. Prints "ok" or fails an assert.
"""
import random
def clz(x): return 32 - x.bit_length()
def kth(items, k, known_key, first_key_bit, column_bits):
    prefix = known_key << 32
    def halve(trial):
        nonlocal prefix
        r = sum(1 for i in items if i >= trial)
        if r >= k: prefix = trial
        return r == k
    for bit in range(first_key_bit, -1, -1):
        if halve(prefix | (1 << (32 + bit))): return prefix
    prefix |= ~((1 << column_bits) - 1) & 0xffffffff
    for bit in range(column_bits - 1, -1, -1):
        if halve(prefix | (1 << bit)): return prefix
    return prefix
random.seed(3); steps=0
for trial in range(3000):
    width = random.choice([32000, 50257, 65536])
    column_bits = (width - 1).bit_length()
    kb = random.choice([16, 32])
    thr = random.randrange(0, 1 << kb)
    if kb == 32: thr &= 0xffff0000
    spread = random.choice([0, 1, 3, 40, 1000, 1 << (kb - 1)])
    n = random.randint(1, 300); k = random.randint(1, n)
    keys = [min((1 << kb) - 1, thr + random.randint(0, spread)) for _ in range(n)]
    cols = random.sample(range(width), n)
    items = [(key << 32) | (~c & 0xffffffff) for key, c in zip(keys, cols)]
    top = max(keys); d = thr ^ top
    fkb = 31 - clz(d)
    known = thr if fkb < 0 else thr & ~(((2 << fkb) - 1) & 0xffffffff)
    a = kth(items, k, known, fkb, column_bits)
    b = kth(items, k, 0, kb - 1, column_bits)
    want = sorted(items, reverse=True)[:k]
    assert sorted([i for i in items if i >= a], reverse=True) == want, trial
    assert sorted([i for i in items if i >= b], reverse=True) == want, trial
print("ok")
