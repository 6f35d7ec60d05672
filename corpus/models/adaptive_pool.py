"""adaptive_pool — AdaptiveAvgPool2d((3, 5)) + Linear head over a dynamic-size feature map.

x: (2, 4, h, w), h, w in [1, 64]; AdaptiveAvgPool2d((3, 5)) -> (2, 4, 3, 5) -> flatten ->
Linear(60, 6). Valid for every h, w >= 1 (adaptive pooling takes any input size). Seeded
weights.

Defect (AOTInductor / Inductor, not the model): export keeps h and w dynamic
(range_constraints [1, 64]), but Inductor's _adaptive_avg_pool2d lowering guards the pooling
window extents on the example's size (8 x 8), which specializes both dims: the generated
kernel has 8, 64 and 6*64 baked in, and the wrapper's check_input_N say h, w >= 8 and <= 8.
Nothing warns at compile time. With AOTI_RUNTIME_CHECK_INPUTS unset every other (h, w) runs
the 8 x 8 kernel: wrong values, and for inputs smaller than 8 x 8 it reads past the input
buffer (garbage up to ~1e37, Inf/NaN). Only h = w = 8 matches eager. See
pytorch/pytorch#159550, PRs #160401 and #185369 (the lowering's guard on symbolic windows).
Side effect seen: aoti_compile_and_package also rewrites the ExportedProgram's node metadata
to the concrete sizes (torch.export.save of ep after the compile loses the symbols; ep.module()
then guards x.size()[2] == 8).
"""
import torch
from torch.export import Dim


class AdaptivePoolHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = torch.nn.AdaptiveAvgPool2d((3, 5))
        self.fc = torch.nn.Linear(4 * 3 * 5, 6)

    def forward(self, x):
        return self.fc(self.pool(x).flatten(1))


def make():
    torch.manual_seed(0)
    h = Dim("h", min=1, max=64)
    w = Dim("w", min=1, max=64)
    return {
        "module": AdaptivePoolHead().eval(),
        "args": (torch.randn(2, 4, 8, 8),),
        "dynamic_shapes": {"x": {2: h, 3: w}},
    }


_MAX_ABS = {}

EXPECTED = {
    "summary": "AdaptiveAvgPool2d((3,5))+Linear over x (2, 4, h, w): Inductor specializes h, w to the "
               "example's 8 x 8; every other shape gives wrong values (over-reads the input when < 8)",
    "failing": [],
    "mismatch": [{"shape": {"h": h, "w": w}, "output": 0, "max_abs": v, "eager": "ok"}
                 for (h, w), v in sorted(_MAX_ABS.items())],
    "healthy": [{"h": 8, "w": 8}],
    "compiled": {"h": [8, 8], "w": [8, 8]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": None,
}
