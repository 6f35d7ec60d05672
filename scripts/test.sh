#!/usr/bin/env bash
# test.sh — set up everything (see setup.sh) and run every test: unit, CLI, end-to-end on
# the real example packages. Exit status is ctest's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$AF_BUILD"
ctest --output-on-failure --timeout 1500 "$@"
