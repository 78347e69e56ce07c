#!/usr/bin/env bash
# The sanitizer job: the engine, both CLI programs and their tests built with AddressSanitizer and
# UndefinedBehaviorSanitizer (as the `asan` preset: no GUI, no benchmarks, -O1, which halves the
# build against -O3 and is what the sanitizers' authors advise) and the suite run under them; the
# first report fails it (docs/FUZZING.md, "Sanitizers").
#   scripts/sanitize.sh            build in build-asan (or $ATTNSCOPE_ASAN_BUILD_DIR) and test
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNSCOPE_ASAN_BUILD_DIR:-$root/build-asan}
bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DATTNSCOPE_SANITIZE=ON \
  -DATTNSCOPE_BUILD_GUI=OFF -DATTNSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$root/scripts/sanitizer-suppressions/lsan.supp:print_suppressions=0"
cd "$build"
ctest --output-on-failure -j 2 --timeout 1800
