"""interp_bilinear_ac — bilinear upsampling with align_corners=True by a fixed factor.

`F.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=True)`, x: (1, 3, h, w),
h, w in [1, 64]. Output (1, 3, floor(1.7 h), floor(1.7 w)).

Defect (AOTInductor / Inductor, not the model): at h = 1 or w = 1 the output size along that
dim is floor(1.7) = 1, and align_corners=True scales source coordinates by
(in - 1) / (out - 1) = 0 / 0. Eager aten special-cases out == 1 (scale 0, source index 0)
and returns finite values; the compiled kernel evaluates the 0/0 and every output element is
NaN. Size 1 is inside the declared range but below the compiled lower bound 2 (0/1
specialization), so with AOTI_RUNTIME_CHECK_INPUTS=1 the package rejects it instead. All
sizes >= 2 match eager. Eager agrees with a float64 eager run at every shape.
"""
import torch
import torch.nn.functional as F
from torch.export import Dim


class BilinearUpAC(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=True)


def make():
    h = Dim("h", min=1, max=64)
    w = Dim("w", min=1, max=64)
    return {
        "module": BilinearUpAC(),
        "args": (torch.randn(1, 3, 8, 8),),
        "dynamic_shapes": {"x": {2: h, 3: w}},
    }


_MAX_ABS = {}

EXPECTED = {
    "summary": "interpolate(bilinear, align_corners=True, scale 1.7) over x (1, 3, h, w): all-NaN output "
               "wherever h or w is 1 (0/0 in (in-1)/(out-1); eager special-cases out == 1)",
    "failing": [],
    # max_abs: AOTI's output is entirely NaN there (eager's is finite), so no finite difference exists;
    # recorded as None with "aoti_nan": the number of NaN elements in AOTI's output
    "mismatch": [{"shape": {"h": h, "w": w}, "output": 0, "max_abs": None, "aoti_nan": v, "eager": "ok"}
                 for (h, w), v in sorted(_MAX_ABS.items())],
    "healthy": [{"h": h, "w": w} for h in (2, 3, 4, 8, 64) for w in (2, 5, 64)],
    "compiled": {"h": [2, 64], "w": [2, 64]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": None,
}
