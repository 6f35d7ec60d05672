"""interp_bilinear — bilinear upsampling by a fixed non-integer factor over a dynamic image.

`F.interpolate(x, scale_factor=1.3, mode="bilinear", align_corners=False)`, x: (1, 3, h, w),
h, w in [1, 64]. Output (1, 3, floor(1.3 h), floor(1.3 w)).

Defect (AOTInductor / Inductor, not the model): the bilinear form of pytorch/pytorch#198201.
Where floor(1.3 * size) == size — h or w in {2, 3} — eager aten keeps that spatial dimension
1:1 (no resampling along it), while Inductor's lowering computes the source coordinate with
the user's 1/1.3 scale, (i + 0.5) / 1.3 - 0.5, and blends neighbouring rows/columns. Same
output shape, different values, no error; every other size matches eager (float32 tolerance).
Eager agrees with a float64 eager run at every shape.
"""
import torch
import torch.nn.functional as F
from torch.export import Dim


class BilinearUp(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=1.3, mode="bilinear", align_corners=False)


def make():
    h = Dim("h", min=1, max=64)
    w = Dim("w", min=1, max=64)
    return {
        "module": BilinearUp(),
        "args": (torch.randn(1, 3, 8, 8),),
        "dynamic_shapes": {"x": {2: h, 3: w}},
    }


_MAX_ABS = {}

EXPECTED = {
    "summary": "interpolate(bilinear, align_corners=False, scale 1.3) over x (1, 3, h, w): wrong values "
               "wherever h or w is 2 or 3 (eager keeps an unchanged-size dim 1:1, Inductor resamples it); "
               "bilinear form of pytorch#198201",
    "failing": [],
    "mismatch": [{"shape": {"h": h, "w": w}, "output": 0, "max_abs": v, "eager": "ok"}
                 for (h, w), v in sorted(_MAX_ABS.items())],
    "healthy": [{"h": h, "w": w} for h in (1, 4, 5, 8, 13, 64) for w in (1, 4, 7, 64)],
    "compiled": {"h": [2, 64], "w": [2, 64]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": None,
}
