#!/usr/bin/env bash
# The sanitizer job: the engine, both CLI programs, their tests and the libFuzzer targets built once
# with clang, AddressSanitizer and UndefinedBehaviorSanitizer (no GUI, no benchmarks, -O1, which is
# what the sanitizers' authors advise), and the suite run under them; the first report fails it
# (docs/FUZZING.md, "Sanitizers"). scripts/fuzz.sh runs the fuzz targets of the same build.
#   scripts/sanitize.sh            build in build-asan (or $ATTNSCOPE_ASAN_BUILD_DIR) and test
#   scripts/sanitize.sh --build    only build
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNSCOPE_ASAN_BUILD_DIR:-$root/build-asan}
bash "$root/scripts/setup.sh"
command -v clang++ >/dev/null || { echo "sanitize.sh: clang++ not found (scripts/setup.sh installs clang)" >&2; exit 1; }
launcher=()
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
  -DATTNSCOPE_SANITIZE=ON -DATTNSCOPE_FUZZ=ON -DATTNSCOPE_BUILD_GUI=OFF -DATTNSCOPE_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
[[ ${1:-} == --build ]] && exit 0
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$root/scripts/sanitizer-suppressions/lsan.supp:print_suppressions=0"
cd "$build"
ctest --output-on-failure -j 2 --timeout 1800
