"""runtime_check — a run-time assertion compiled into the wrapper that valid shapes violate.

The row count of x (n, 16), n in [0, 128], is recomputed through nonzero() (which gives an
unbacked size u0; at run time u0 == n, since the mask is all ones, so the failure depends on
the shape only, never on values), and the model insists on at least two rows with
torch._check. Export cannot prove u0 >= 2 from n's range, so it keeps the check as a
run-time assertion (aten._assert_scalar) and AOTInductor compiles it into the wrapper: for
n in {0, 1} Run returns an error ("u0 >= 2") and the process survives.
"""
import torch
from torch.export import Dim


class RuntimeCheck(torch.nn.Module):
    def forward(self, x):
        k = torch.ones(x.shape[0]).nonzero().shape[0]  # unbacked u0, equals n at run time
        torch._check(k >= 2)
        return x[: k - 1] * 2


def make():
    n = Dim("n", min=0, max=128)
    return {
        "module": RuntimeCheck(),
        "args": (torch.randn(8, 16),),
        "dynamic_shapes": {"x": {0: n}},
    }


EXPECTED = {
    "summary": "torch._check(u0 >= 2) on an unbacked copy of n compiled into the wrapper: n < 2 errors",
    "failing": [
        {"shape": {"n": 0}, "class": "RUNTIME_ERROR", "signature_contains": "u0 >= 2"},
        {"shape": {"n": 1}, "class": "RUNTIME_ERROR", "signature_contains": "u0 >= 2"},
    ],
    "healthy": [{"n": 2}, {"n": 3}, {"n": 64}, {"n": 128}],
    # bounds the compiled check_input_N enforce (only with AOTI_RUNTIME_CHECK_INPUTS=1),
    # per Dim name; below them a checked Run fails with "dim value is too small".
    "compiled": {"n": [2, 128]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": {"n": 0},
}
