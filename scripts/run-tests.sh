#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (GUI tests run offscreen).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/build.sh"
build="${ATTNSCOPE_BUILD_DIR:-$root/build}"
export QT_QPA_PLATFORM=offscreen
cd "$build"
ctest --output-on-failure -j 2 --timeout 900
# The sanitizer job: the engine, the CLI, their tests and the fuzz targets built once more (clang,
# ASan and UBSan), the suite run under them.
ATTNSCOPE_ASAN_BUILD_DIR="$build-asan" bash "$root/scripts/sanitize.sh"
# Every parser fuzz target of that build for 10 s on its corpus, so that a regression in a parser
# is caught (docs/FUZZING.md; the long runs are done apart, with scripts/fuzz.sh TARGET SECONDS).
ATTNSCOPE_FUZZ_BUILD_DIR="$build-asan" bash "$root/scripts/fuzz.sh" --all 10
