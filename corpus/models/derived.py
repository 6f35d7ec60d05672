"""derived — several inputs sharing one symbol, one of them through a derived Dim.

x: (n, 16), y: (2n, 16) (derived Dim 2*n), z: (n, 4), n declared in [1, 64].
Computes (cat([x, x]) + y) folded back to (n, 16), its first 4 columns times z. Export
specializes 0/1, so the compiled input checks demand n >= 2 (y: >= 4) although n = 1 is
declared valid; this model shows how the derived dim and that gap look in the wrapper.
"""
import torch
from torch.export import Dim


class Derived(torch.nn.Module):
    def forward(self, x, y, z):
        a = torch.cat([x, x]) + y                    # (2n, 16)
        b = a.view(2, x.shape[0], 16).sum(0)         # (n, 16)
        return b[:, :4] * z                          # (n, 4)


def make():
    n = Dim("n", min=1, max=64)
    return {
        "module": Derived(),
        "args": (torch.randn(8, 16), torch.randn(16, 16), torch.randn(8, 4)),
        "dynamic_shapes": {"x": {0: n}, "y": {0: 2 * n}, "z": {0: n}},
    }


EXPECTED = {
    "summary": "x (n,16), y (2n,16), z (n,4) sharing n with a derived dim",
    "failing": [],
    "healthy": [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 64}],
    # bounds the compiled check_input_N enforce (only with AOTI_RUNTIME_CHECK_INPUTS=1),
    # per Dim name; below them a checked Run fails with "dim value is too small".
    "compiled": {"n": [2, 64]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": None,
}
