"""lasttok — reads the last row of a dynamic-length input.

`x[x.shape[0] - 1] * 2 + x.mean(0)`, x: (n, 16), n in [0, 128]. Eager PyTorch raises
IndexError at n = 0; the compiled model indexes row -1 of an empty tensor instead (no bounds
check in the generated kernel) and reads before the start of a NULL/empty buffer.
"""
import torch
from torch.export import Dim


class LastTok(torch.nn.Module):
    def forward(self, x):
        return x[x.shape[0] - 1] * 2 + x.mean(0)


def make():
    n = Dim("n", min=0, max=128)
    return {
        "module": LastTok(),
        "args": (torch.randn(8, 16),),
        "dynamic_shapes": {"x": {0: n}},
    }


EXPECTED = {
    "summary": "last row of x (n, 16): n = 0 indexes row -1 of an empty buffer",
    "failing": [{"shape": {"n": 0}, "class": "SIGNAL", "signature_contains": "SIGSEGV"}],
    "healthy": [{"n": 1}, {"n": 2}, {"n": 5}, {"n": 128}],
    # bounds the compiled check_input_N enforce (only with AOTI_RUNTIME_CHECK_INPUTS=1),
    # per Dim name; below them a checked Run fails with "dim value is too small".
    "compiled": {"n": [2, 128]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": {"n": 0},
}
