"""interp_nearest — nearest-neighbour upsampling by a fixed non-integer factor over a dynamic image.

`F.interpolate(x, scale_factor=1.3, mode="nearest")`, x: (1, 3, h, w), h, w in [1, 64].
Output (1, 3, floor(1.3 h), floor(1.3 w)).

Defect (AOTInductor / Inductor, not the model): where floor(1.3 * size) == size — h or w in
{2, 3} (size 1 too, but one source row makes any mapping agree) — eager aten treats that
spatial dimension as unchanged and copies it 1:1 (source index = destination index), while
Inductor's lowering still applies the 1/1.3 scale, floor(i / 1.3), and picks rows/columns
[0, 0] (size 2) or [0, 0, 1] (size 3). Same output shape, different values, no error. Every
other size matches eager exactly. Upstream: pytorch/pytorch#198201 (torch.compile, same
lowering; see also #175154). Eager agrees with a float64 eager run at every shape.
"""
import torch
import torch.nn.functional as F
from torch.export import Dim


class NearestUp(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=1.3, mode="nearest")


def make():
    h = Dim("h", min=1, max=64)
    w = Dim("w", min=1, max=64)
    return {
        "module": NearestUp(),
        "args": (torch.randn(1, 3, 8, 8),),
        "dynamic_shapes": {"x": {2: h, 3: w}},
    }


# max_abs measured with torch.manual_seed(0); x = torch.randn(1, 3, h, w), AOTI vs ep.module()
# under torch.no_grad(). The mismatching set is exactly {h in (2, 3) or w in (2, 3)}: 252 of the
# 4096 (h, w) in [1, 64]^2; the rest are bit-identical. The table below is filled by measurement.
_MAX_ABS = {}

EXPECTED = {
    "summary": "interpolate(nearest, scale 1.3) over x (1, 3, h, w): wrong values wherever h or w is 2 or 3 "
               "(floor(1.3*size) == size: eager copies that dim 1:1, Inductor resamples it); pytorch#198201",
    "failing": [],
    "mismatch": [{"shape": {"h": h, "w": w}, "output": 0, "max_abs": v, "eager": "ok"}
                 for (h, w), v in sorted(_MAX_ABS.items())],
    "healthy": [{"h": h, "w": w} for h in (1, 4, 5, 8, 13, 64) for w in (1, 4, 7, 64)],
    "compiled": {"h": [2, 64], "w": [2, 64]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": None,
}
