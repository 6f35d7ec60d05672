# aotif_fill — aoti-fuzz's fill function (docs/fill.md) in torch int64 ops, exact.
# The one Python implementation: the reference process (aotif_ref.py) imports it, and
# aoti-minimize embeds this file's text in every repro.py it writes (the build turns it
# into a C string), so the C fill (harness/case.h), the reference and the repro agree.
# It also holds load_program, which both use to read the exported program.
import zipfile

import torch

# The copy the tools embed gets these numbers from harness/include/aotif/case.h (embed.cmake).
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


def load_program(path, name="model"):
    """The ExportedProgram alone, from a unified PT2 archive or a torch.export.save file.

    torch.export.load on a unified archive also loads the archive's AOTInductor models: it
    builds CPU-ISA probe programs with the compiler and dlopens the model .so. Measured on an
    H200 machine (torch 2.11): over 40 s before the program is back, then a segfault where the
    .so needs another C++ runtime. The eager reference needs only the program, so read just
    that, with the reader torch.export.load uses; another torch without it: its public loader."""
    try:
        with zipfile.ZipFile(path) as z:
            aoti = any(("/" + n).find("/data/aotinductor/") >= 0 for n in z.namelist())
    except (OSError, zipfile.BadZipFile):
        aoti = False
    if aoti:
        try:
            from torch.export.pt2_archive._package import PT2ArchiveReader, _load_exported_programs
            with PT2ArchiveReader(path) as r:
                eps = _load_exported_programs(r, r.get_file_names(), None)
            if name in eps:
                return eps[name]
            if eps:
                return next(iter(eps.values()))
        except (ImportError, AttributeError, TypeError):
            pass
    return torch.export.load(path)
