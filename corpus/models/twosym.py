"""twosym — a failure that needs two symbols at once.

z = cat([x, y]) with x: (n, 16), y: (m, 16), n, m in [0, 128]; the model reads z's last row.
z is empty only when n = 0 AND m = 0: then row -1 is read before the start of x's (empty)
buffer. Either dim alone at 0 is fine, so a one-dim-at-a-time search misses it.
"""
import torch
from torch.export import Dim


class TwoSym(torch.nn.Module):
    def forward(self, x, y):
        z = torch.cat([x, y])
        return z[z.shape[0] - 1] * 2 + z.mean(0)


def make():
    n = Dim("n", min=0, max=128)
    m = Dim("m", min=0, max=128)
    return {
        "module": TwoSym(),
        "args": (torch.randn(8, 16), torch.randn(4, 16)),
        "dynamic_shapes": {"x": {0: n}, "y": {0: m}},
    }


EXPECTED = {
    "summary": "last row of cat([x (n,16), y (m,16)]): fails only when n = 0 and m = 0",
    "failing": [{"shape": {"n": 0, "m": 0}, "class": "SIGNAL", "signature_contains": "SIGSEGV"}],
    "healthy": [{"n": 0, "m": 1}, {"n": 1, "m": 0}, {"n": 0, "m": 128}, {"n": 128, "m": 0},
                {"n": 5, "m": 7}, {"n": 128, "m": 128}],
    # bounds the compiled check_input_N enforce (only with AOTI_RUNTIME_CHECK_INPUTS=1),
    # per Dim name; below them a checked Run fails with "dim value is too small".
    "compiled": {"n": [2, 128], "m": [2, 128]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": {"n": 0, "m": 0},
}
