"""rowgather — the first m rows of x, for an m taken from another input.

`x[torch.arange(y.shape[0])] * 2`, x: (n, 4096), y: (m,), n in [0, 64], m in [1, 64]. The model
assumes y is never longer than x, which the declared ranges do not say: every case with m > n
(about half of the declared space) reads past x's last row. The compiled kernel checks each row
index (`AOTI_TORCH_CHECK(tmp1 < ks1, "index out of bounds: tmp1 < ks1")`), but the check sits
inside the kernel's OpenMP parallel region (4096-wide rows make Inductor parallelize it), where
a C++ exception cannot propagate: the process aborts (SIGABRT) instead of raising, whatever the
fill (pytorch/pytorch#195402 is that class). Eager PyTorch raises IndexError. A fault-heavy
model whose faults end the worker on the CPU too; on CUDA the check is a Triton device-side
assert, sticky like every such fault.
"""
import torch
from torch.export import Dim


class RowGather(torch.nn.Module):
    def forward(self, x, y):
        return x[torch.arange(y.shape[0], device=x.device)] * 2


def make():
    n = Dim("n", min=0, max=64)
    m = Dim("m", min=1, max=64)
    return {
        "module": RowGather(),
        "args": (torch.randn(8, 4096), torch.randn(4)),
        "dynamic_shapes": {"x": {0: n}, "y": {0: m}},
    }


EXPECTED = {
    "summary": "x[arange(m)] with x (n, 4096), y (m,): every m > n reads past x; the bounds check "
               "in the parallel kernel aborts the process",
    "failing": [{"shape": {"n": 0, "m": 1}, "class": "SIGNAL", "signature_contains": "SIGABRT"},
                {"shape": {"n": 4, "m": 8}, "class": "SIGNAL", "signature_contains": "SIGABRT"},
                {"shape": {"n": 2, "m": 64}, "class": "SIGNAL", "signature_contains": "SIGABRT"}],
    "healthy": [{"n": 8, "m": 4}, {"n": 64, "m": 64}, {"n": 1, "m": 1}],
    "compiled": {"n": [2, 64], "m": [2, 64]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; exported on a 2-core machine (the kernel's "
                  "OpenMP region is compiled in when torch has more than one thread); measured on "
                  "torch 2.13.0+cpu",
    "minimal": {"n": 0, "m": 1},
}
