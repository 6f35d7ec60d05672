"""crossidx — an index taken from one dim used on another.

`x[y.argmax().unsqueeze(0)] * 2`, x: (n, 16), y: (m,), n in [0, 64], m in [1, 64]. The model
assumes y is never longer than x, which the declared ranges do not say: the row index can reach m - 1,
and the compiled bounds check on the indirect load fails when it is >= n. With zero-filled
inputs argmax is 0, so the smallest failing shape is n = 0 (any m). On the CPU the check is a
TORCH_CHECK (a runtime error); on CUDA a Triton device-side assert (CUDA error 710).
"""
import torch
from torch.export import Dim


class CrossIdx(torch.nn.Module):
    def forward(self, x, y):
        return x[y.argmax().unsqueeze(0)] * 2


def make():
    n = Dim("n", min=0, max=64)
    m = Dim("m", min=1, max=64)
    return {
        "module": CrossIdx(),
        "args": (torch.randn(8, 16), torch.randn(4)),
        "dynamic_shapes": {"x": {0: n}, "y": {0: m}},
    }


EXPECTED = {
    "summary": "x[y.argmax().unsqueeze(0)] with x (n,16), y (m,): the indirect load's bounds check fails at n = 0",
    "failing": [{"shape": {"n": 0, "m": 1}, "class": "RUNTIME_ERROR",
                 "signature_contains": "index out of bounds"}],
    "healthy": [{"n": 1, "m": 1}, {"n": 64, "m": 1}, {"n": 64, "m": 64}],
    "compiled": {"n": [2, 64], "m": [2, 64]},
    # with random fills it also fails wherever y's argmax >= n (e.g. n=2, m=64)
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": {"n": 0, "m": 1},
}
