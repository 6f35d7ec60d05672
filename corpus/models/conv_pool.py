"""conv_pool — Conv1d + ReLU twice, global average pool, Linear, over x (batch, 4, length).

Both convolutions have kernel 3 and padding 1, so they keep the length; AdaptiveAvgPool1d(1)
then averages over it, so any length >= 1 is valid: Dim("length", min=1, max=128) is the
model's real contract, Dim("batch", min=1, max=16). Output (batch, 5). Seeded weights.
"""
import torch
from torch.export import Dim

PLAIN = True  # corpus/build.py also writes conv_pool.plain.pt2 (no aoti-fuzz metadata)


class ConvPool(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv1d(4, 8, kernel_size=3, padding=1)
        self.conv2 = torch.nn.Conv1d(8, 8, kernel_size=3, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool1d(1)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        h = torch.relu(self.conv1(x))
        h = torch.relu(self.conv2(h))
        return self.fc(self.pool(h).flatten(1))


def make():
    torch.manual_seed(0)
    batch = Dim("batch", min=1, max=16)
    length = Dim("length", min=1, max=128)
    return {
        "module": ConvPool().eval(),
        "args": (torch.randn(2, 4, 16),),
        "dynamic_shapes": {"x": {0: batch, 2: length}},
    }


_HEALTHY = [{"batch": b, "length": n} for b in (1, 2, 16) for n in (1, 2, 7, 16, 128)]

EXPECTED = {
    "summary": "Conv1d+ReLU x2, AdaptiveAvgPool1d(1), Linear over x (batch, 4, length): no failing shape; "
               "the compiled batch bound is 15, one below the declared max",
    "failing": [],
    # checked one process per shape, and in-process for every (batch, length) in [1, 16] x [1, 128]
    # against ep.module() (rtol 1e-4, atol 1e-5)
    "healthy": _HEALTHY,
    # bounds the compiled check_input_N enforce (only with AOTI_RUNTIME_CHECK_INPUTS=1), per Dim
    # name. batch's upper bound is 15, not the declared 16: while compiling, the conv's fake
    # kernel asks which backend to use (torch._C._select_conv_backend, a "batch >= 16" test on
    # the example's hint 2) and adds the guard s < 16. With the checks on, batch = 16 is
    # rejected ("dim value is too large at 0, expected to be <= 15"); with them off it runs
    # and matches eager.
    "compiled": {"batch": [2, 15], "length": [2, 128]},
    # outside the contract, AOTI_RUNTIME_CHECK_INPUTS unset; "eager" is what the nn.Module does
    "beyond_contract": [
        {"shape": {"batch": 0, "length": 16}, "what": "size below declared min", "class": "OK",
         "signature_contains": "", "eager": "OK, same (empty) output"},
        {"shape": {"batch": 2, "length": 0}, "what": "size below declared min", "class": "RUNTIME_ERROR",
         "signature_contains": "Kernel size can't be greater than actual input size",
         "eager": "RUNTIME_ERROR, the same message (both run aten's convolution)"},
        {"shape": {"batch": 0, "length": 0}, "what": "size below declared min", "class": "RUNTIME_ERROR",
         "signature_contains": "Kernel size can't be greater than actual input size",
         "eager": "RUNTIME_ERROR, the same message"},
        {"shape": {"batch": 17, "length": 16}, "what": "size above declared max", "class": "OK",
         "signature_contains": "", "eager": "OK, same outputs"},
        {"shape": {"batch": 2, "length": 129}, "what": "size above declared max", "class": "OK",
         "signature_contains": "", "eager": "OK, same outputs"},
    ],
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": None,
}
