#!/usr/bin/env bash
# test.sh — set up everything (see setup.sh) and run every test: unit, CLI, end-to-end on
# the real example packages, with the AF_PRESET build (arguments go to this ctest run). Then
# the asan preset (AddressSanitizer + UBSan) is configured and built into AF_ASAN_BUILD and
# its unit and CLI tests run (ctest -L 'unit|cli'): the same tools, with libtorch loaded in
# their workers. Skipped when AF_PRESET is asan itself or AF_ASAN=0.
#   AF_ASAN_BUILD  the asan build dir (default: build-asan)
# Exit status: 0 when both passed, else the first failing ctest's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
AF_ASAN="${AF_ASAN:-1}"
AF_ASAN_BUILD="${AF_ASAN_BUILD:-$AF_ROOT/build-asan}"
[ "$AF_PRESET" != asan ] || AF_ASAN=0

header() { printf '\n======== %s ========\n' "$*"; }

# Every test carries a LABELS property (unit, cli, e2e, fault; torch where it loads libtorch):
# the asan pass selects by label, so an unlabeled test would silently drop out of it.
check_labels() {
  local unlabeled
  unlabeled="$(cd "$1" && ctest -N -LE '.' | sed -n 's/^ *Test *#[0-9]*: //p')"
  if [ -n "$unlabeled" ]; then
    echo "test.sh: tests without a LABELS property in $1:" $unlabeled >&2
    return 1
  fi
}

# The counts the hardening tests print (ctest shows output only on failure): the fault soak,
# the kill -9 test and the bad-input suite, also when they pass.
counts() {
  local log="$1/Testing/Temporary/LastTest.log"
  [ -f "$log" ] || return 0
  awk '/^[0-9]+\/[0-9]+ Testing: / { t = $3 }
       t ~ /^(fault\.soak|fault\.kill9|cli\.bad_input)$/ &&
       /^(fault\.soak:|fault\.kill9:|execs |faults survived|misclassified|harness failures|signature drift|artifacts:|total +[0-9])/ {
         print "  " t ": " $0 }' "$log"
}

header "preset $AF_PRESET ($AF_BUILD): ctest $*"
t0=$SECONDS
rc_main=0
check_labels "$AF_BUILD" || rc_main=1
(cd "$AF_BUILD" && ctest --output-on-failure --timeout 1500 "$@") || rc_main=$?
main_s=$((SECONDS - t0))
header "counts (preset $AF_PRESET)"
counts "$AF_BUILD"

rc_asan=0
if [ "$AF_ASAN" != 0 ]; then
  header "preset asan ($AF_ASAN_BUILD): build, then ctest -L 'unit|cli'"
  t0=$SECONDS
  # ASan and UBSan stop at the first report (-fno-sanitize-recover), so a finding fails its
  # test. No ASAN_OPTIONS are needed for libtorch in the workers: the runtime is linked
  # statically (no link-order check to silence), the C++ runtime is linked in from the start
  # for ASan's __cxa_throw interceptor (CMakeLists.txt), and the zygote and workers, the only
  # processes that dlopen libtorch and the models, leave with _exit, so LeakSanitizer never
  # scans libtorch's never-freed globals; it does check the tools, which never load libtorch.
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
  if cmake --preset asan -B "$AF_ASAN_BUILD" -DAF_EXAMPLES_DIR="$AF_EXAMPLES" >/dev/null &&
     cmake --build "$AF_ASAN_BUILD"; then
    check_labels "$AF_ASAN_BUILD" || rc_asan=1
    (cd "$AF_ASAN_BUILD" && ctest --output-on-failure --timeout 1500 -L 'unit|cli') || rc_asan=$?
    header "counts (preset asan)"
    counts "$AF_ASAN_BUILD"
  else
    rc_asan=2
  fi
  asan_s=$((SECONDS - t0))
fi

header "summary"
printf 'preset %-6s %s (%d s)\n' "$AF_PRESET" "$( ((rc_main)) && echo FAILED || echo passed)" "$main_s"
if [ "$AF_ASAN" != 0 ]; then
  printf 'preset %-6s %s (%d s: build, unit and cli tests)\n' asan \
    "$( ((rc_asan)) && echo FAILED || echo passed)" "$asan_s"
fi
((rc_main == 0)) || exit "$rc_main"
exit "$rc_asan"
