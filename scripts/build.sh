#!/usr/bin/env bash
# Installs what is missing, then configures and builds AttnScope in ./build (Release).
#   scripts/build.sh [extra cmake args...]
# ATTNSCOPE_BUILD_TARGETS="a b": build only those targets (scripts/run-app.sh builds the window's
# alone); unset or empty: everything.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
build="${ATTNSCOPE_BUILD_DIR:-$root/build}"
# A compiler cache, when there is one, makes a second build of the same sources quick.
launcher=()
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >/dev/null
targets=()
if [[ -n ${ATTNSCOPE_BUILD_TARGETS:-} ]]; then read -r -a targets <<<"$ATTNSCOPE_BUILD_TARGETS"; targets=(--target "${targets[@]}"); fi
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
