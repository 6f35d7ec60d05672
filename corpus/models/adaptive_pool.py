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
then guards x.size()[2] == 8). corpus/build.py's unified archive is written after the compile, so
its exported program has that problem: torch.export.load(<name>.pt2).module() raises "Guard failed:
x.size()[2] == 8" at any other size (its range_constraints still say [1, 64]); <name>.ep.pt2, saved
before the compile, runs every shape. Use the .ep.pt2 as the eager reference for this model.
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


# max_abs measured with torch.manual_seed(0); x = torch.randn(2, 4, h, w), AOTI vs ep.module() under
# torch.no_grad(), on a subset of the 4095 mismatching shapes (every (h, w) in [1, 64]^2 but (8, 8)
# mismatches). Where h*w < 64 the kernel reads past the input, so those values (and the Inf/NaN
# counts) depend on heap contents and vary from run to run; the rest are deterministic.
_MAX_ABS = {
    (1, 1): 3.27594e+35, (1, 2): 2.65529e+36, (1, 3): None, (1, 4): 3.82534e+19, (1, 7): 2.21914e+36, (1, 8): 3.83277e+26,
    (1, 9): 4.44723e+33, (1, 16): 9.41011e+32, (1, 31): 4.70703e+18, (1, 64): 0.388974, (2, 1): None, (2, 2): 2.60821e+31,
    (2, 3): 3.22942e+36, (2, 4): 129714000.0, (2, 7): 1.36954e+33, (2, 8): 218722000.0, (2, 9): None, (2, 16): 1.60621e+30,
    (2, 31): 3117070000000.0, (2, 64): 0.330241, (3, 1): None, (3, 2): None, (3, 3): 3.93731e+32, (3, 4): 84851200.0,
    (3, 7): 4.76471e+22, (3, 8): 313396000.0, (3, 9): 3.08714e+36, (3, 16): 1.95367e+18, (3, 31): 0.550612, (3, 64): 0.415888,
    (4, 1): None, (4, 2): None, (4, 3): 3.07185e+33, (4, 4): None, (4, 7): 3.08714e+36, (4, 8): 0.416887,
    (4, 9): 0.432806, (4, 16): 0.559562, (4, 31): 0.4657, (4, 64): 0.536748, (7, 1): 3.5597e+19, (7, 2): None,
    (7, 3): 3.63751e+35, (7, 4): 7.8029e+17, (7, 7): 3579390000000.0, (7, 8): 1.10218e+18, (7, 9): 3117070000000.0, (7, 16): 0.492806,
    (7, 31): 0.368043, (7, 64): 0.369111, (8, 1): 163653000.0, (8, 2): 1.60801e+21, (8, 3): 3.94775e+24, (8, 4): 3309460000000.0,
    (8, 7): 1.10218e+18, (8, 9): 0.402366, (8, 16): 0.459862, (8, 31): 0.521241, (8, 64): 0.45177, (9, 1): 2.95891e+36,
    (9, 2): 4.09422e+31, (9, 3): 4.39029e+18, (9, 4): 0.709219, (9, 7): 3117070000000.0, (9, 8): 0.420179, (9, 9): 0.410624,
    (9, 16): 0.490438, (9, 31): 0.343176, (9, 64): 0.410799, (16, 1): None, (16, 2): 2.78928e+30, (16, 3): 2.24066e+36,
    (16, 4): 0.299843, (16, 7): 0.435121, (16, 8): 0.524798, (16, 9): 0.422636, (16, 16): 0.428468, (16, 31): 0.463894,
    (16, 64): 0.461736, (31, 1): 1.47725e+36, (31, 2): 3117070000000.0, (31, 3): 0.503112, (31, 4): 0.601409, (31, 7): 0.457005,
    (31, 8): 0.595672, (31, 9): 0.416686, (31, 16): 0.389037, (31, 31): 0.387846, (31, 64): 0.378543, (64, 1): 0.257191,
    (64, 2): 0.453674, (64, 3): 0.378671, (64, 4): 0.36832, (64, 7): 0.326763, (64, 8): 0.438106, (64, 9): 0.406159,
    (64, 16): 0.32053, (64, 31): 0.352184, (64, 64): 0.355232,
}
# AOTI output elements that are Inf/NaN (eager's are all finite); max_abs above is over the finite ones
_NONFINITE = {
    (1, 1): 6, (1, 2): 6, (1, 3): 12, (1, 7): 6, (1, 9): 6, (2, 1): 12,
    (2, 2): 6, (2, 3): 6, (2, 4): 6, (2, 7): 6, (2, 8): 6, (2, 9): 12,
    (3, 1): 12, (3, 2): 12, (3, 3): 6, (3, 4): 6, (3, 7): 6, (3, 8): 6,
    (4, 1): 12, (4, 2): 12, (4, 3): 6, (4, 4): 12, (4, 8): 6, (4, 9): 6,
    (7, 2): 12, (7, 3): 6, (7, 4): 6, (8, 2): 6, (9, 1): 6, (9, 2): 6,
    (9, 4): 6, (16, 1): 12,
}

EXPECTED = {
    "summary": "AdaptiveAvgPool2d((3,5))+Linear over x (2, 4, h, w): Inductor specializes h, w to the "
               "example's 8 x 8; every other shape gives wrong values (over-reads the input when < 8)",
    "failing": [],
    "mismatch": [dict({"shape": {"h": h, "w": w}, "output": 0, "max_abs": v, "eager": "ok"},
                      **({"aoti_nonfinite": _NONFINITE[(h, w)]} if (h, w) in _NONFINITE else {}))
                 for (h, w), v in sorted(_MAX_ABS.items())],
    "healthy": [{"h": 8, "w": 8}],
    "compiled": {"h": [8, 8], "w": [8, 8]},
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu",
    "minimal": None,
}
