"""healthy_blob — the healthy model with its weights outside the .so, in a
<stem>.wrapper_weights.blob that the runtime loads through
AOTInductorModelUpdateConstantsFromBlob. Same weights as healthy.py (same seed): at the
same case the two packages must give the same outputs. Must never fail."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import healthy  # noqa: E402


def make():
    m = healthy.make()
    m["inductor_configs"] = {
        "aot_inductor.package_constants_in_so": False,
        "aot_inductor.package_constants_on_disk_format": "binary_blob",
    }
    return m


EXPECTED = dict(healthy.EXPECTED)
EXPECTED["summary"] = "healthy.py with its weights in a .wrapper_weights.blob: no failing shape"
EXPECTED["same_outputs_as"] = "healthy"
