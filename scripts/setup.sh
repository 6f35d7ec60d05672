#!/usr/bin/env bash
# setup.sh — install what aoti-fuzz needs on Debian 12, build it, export the example models.
# Idempotent: a second run only rebuilds what changed. Sourced by test.sh and demo.sh.
#   AF_VENV   python venv with torch (default: .venv in the repo)
#   AF_BUILD  build dir (default: build, the "default" CMake preset)
set -euo pipefail
AF_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AF_VENV="${AF_VENV:-$AF_ROOT/.venv}"
AF_PRESET="${AF_PRESET:-default}"
AF_BUILD="${AF_BUILD:-$AF_ROOT/build}"
AF_EXAMPLES="${AF_EXAMPLES:-$AF_ROOT/.cache/examples}"
export AF_ROOT AF_VENV AF_BUILD AF_EXAMPLES

need_pkgs=()
for p in libzip-dev libcjson-dev clang clang-format-14 libclang-rt-14-dev ninja-build cmake pkg-config librsvg2-bin; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
  echo "setup: installing ${need_pkgs[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if [ ! -x "$AF_VENV/bin/python" ]; then
  echo "setup: creating $AF_VENV"
  python3 -m venv "$AF_VENV"
fi
if ! "$AF_VENV/bin/python" -c 'import torch' 2>/dev/null; then
  echo "setup: installing torch 2.13.0 (CPU) into $AF_VENV"
  "$AF_VENV/bin/pip" install -q torch==2.13.0 numpy
fi
# transformers for corpus/models/bert_encoder.py (a small random-init BertModel, no download).
# Pinned, and installed with torch pinned beside it so pip never swaps the torch above.
AF_TRANSFORMERS=5.23.0
if [ "$("$AF_VENV/bin/python" -c 'import transformers; print(transformers.__version__)' 2>/dev/null)" != "$AF_TRANSFORMERS" ]; then
  echo "setup: installing transformers $AF_TRANSFORMERS into $AF_VENV"
  torch_before="$("$AF_VENV/bin/python" -c 'import torch; print(torch.__version__)')"
  "$AF_VENV/bin/pip" install -q "transformers==$AF_TRANSFORMERS" "torch==${torch_before%%+*}"
  torch_after="$("$AF_VENV/bin/python" -c 'import torch; print(torch.__version__)')"
  if [ "$torch_after" != "$torch_before" ]; then
    echo "setup: installing transformers changed torch $torch_before -> $torch_after" >&2
    exit 1
  fi
fi
export AOTI_FUZZ_PYTHON="$AF_VENV/bin/python"

echo "setup: building ($AF_PRESET preset)"
cmake --preset "$AF_PRESET" -B "$AF_BUILD" -DAF_EXAMPLES_DIR="$AF_EXAMPLES" >/dev/null
cmake --build "$AF_BUILD"

echo "setup: exporting the example models (cached by torch version and model source)"
"$AF_VENV/bin/python" "$AF_ROOT/corpus/build.py" --out "$AF_EXAMPLES"
