# aotif_fill — aoti-fuzz's fill function (docs/fill.md) in torch int64 ops, exact.
# The one Python implementation: the reference process (aotif_ref.py) imports it, and
# aoti-minimize embeds this file's text in every repro.py it writes (the build turns it
# into a C string), so the C fill (harness/case.h), the reference and the repro agree.
import torch

MOD, A, B, C = 1000003, 40503, 9973, 12345


def fill(shape, dtype, i, seed, mode, int_range):
    """Input i's values: aoti-fuzz's fill function (docs/fill.md), exact in int64."""
    if mode == "zeros":
        return torch.zeros(shape, dtype=dtype)
    if mode == "ones":
        return torch.ones(shape, dtype=dtype)
    numel = 1
    for d in shape:
        numel *= d
    j = torch.arange(numel, dtype=torch.int64)
    v = ((j % MOD) * A + i * B + seed % MOD) % MOD
    w = (v * v + C) % MOD
    if dtype.is_floating_point:
        t = (((w % 257) - 128).to(torch.float64) / 64).to(dtype)
    elif dtype == torch.bool:
        t = (w % 2).to(torch.bool)
    else:
        lo, hi = int_range
        span = hi - lo + 1
        if mode == "wide":  # beyond the contract: half the values past the valid range
            span *= 2
        t = (lo + w % span).to(dtype)
    return t.reshape(shape)
