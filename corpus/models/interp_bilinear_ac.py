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


_MAX_ABS = {
    (1, 1): 3, (1, 2): 9, (1, 3): 15, (1, 4): 18, (1, 5): 24, (1, 6): 30,
    (1, 7): 33, (1, 8): 39, (1, 9): 45, (1, 10): 51, (1, 11): 54, (1, 12): 60,
    (1, 13): 66, (1, 14): 69, (1, 15): 75, (1, 16): 81, (1, 17): 84, (1, 18): 90,
    (1, 19): 96, (1, 20): 102, (1, 21): 105, (1, 22): 111, (1, 23): 117, (1, 24): 120,
    (1, 25): 126, (1, 26): 132, (1, 27): 135, (1, 28): 141, (1, 29): 147, (1, 30): 153,
    (1, 31): 156, (1, 32): 162, (1, 33): 168, (1, 34): 171, (1, 35): 177, (1, 36): 183,
    (1, 37): 186, (1, 38): 192, (1, 39): 198, (1, 40): 204, (1, 41): 207, (1, 42): 213,
    (1, 43): 219, (1, 44): 222, (1, 45): 228, (1, 46): 234, (1, 47): 237, (1, 48): 243,
    (1, 49): 249, (1, 50): 255, (1, 51): 258, (1, 52): 264, (1, 53): 270, (1, 54): 273,
    (1, 55): 279, (1, 56): 285, (1, 57): 288, (1, 58): 294, (1, 59): 300, (1, 60): 306,
    (1, 61): 309, (1, 62): 315, (1, 63): 321, (1, 64): 324, (2, 1): 9, (3, 1): 15,
    (4, 1): 18, (5, 1): 24, (6, 1): 30, (7, 1): 33, (8, 1): 39, (9, 1): 45,
    (10, 1): 51, (11, 1): 54, (12, 1): 60, (13, 1): 66, (14, 1): 69, (15, 1): 75,
    (16, 1): 81, (17, 1): 84, (18, 1): 90, (19, 1): 96, (20, 1): 102, (21, 1): 105,
    (22, 1): 111, (23, 1): 117, (24, 1): 120, (25, 1): 126, (26, 1): 132, (27, 1): 135,
    (28, 1): 141, (29, 1): 147, (30, 1): 153, (31, 1): 156, (32, 1): 162, (33, 1): 168,
    (34, 1): 171, (35, 1): 177, (36, 1): 183, (37, 1): 186, (38, 1): 192, (39, 1): 198,
    (40, 1): 204, (41, 1): 207, (42, 1): 213, (43, 1): 219, (44, 1): 222, (45, 1): 228,
    (46, 1): 234, (47, 1): 237, (48, 1): 243, (49, 1): 249, (50, 1): 255, (51, 1): 258,
    (52, 1): 264, (53, 1): 270, (54, 1): 273, (55, 1): 279, (56, 1): 285, (57, 1): 288,
    (58, 1): 294, (59, 1): 300, (60, 1): 306, (61, 1): 309, (62, 1): 315, (63, 1): 321,
    (64, 1): 324,
}

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
