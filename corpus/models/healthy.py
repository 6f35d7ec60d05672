"""healthy — relu(Linear(16, 8)(x)), x: (b, 16), b in [0, 256]. Must never fail."""
import torch
from torch.export import Dim


class Healthy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))


def make():
    torch.manual_seed(0)
    b = Dim("b", min=0, max=256)
    return {
        "module": Healthy(),
        "args": (torch.randn(8, 16),),
        "dynamic_shapes": {"x": {0: b}},
    }


EXPECTED = {
    "summary": "relu(Linear(16, 8)(x)) over b in [0, 256]: no failing shape",
    "failing": [],
    "healthy": [{"b": 0}, {"b": 1}, {"b": 2}, {"b": 17}, {"b": 256}],
    # bounds the compiled check_input_N enforce (only with AOTI_RUNTIME_CHECK_INPUTS=1),
    # per Dim name; below them a checked Run fails with "dim value is too small".
    "compiled": {"b": [2, 256]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": None,
}
