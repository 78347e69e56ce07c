#!/usr/bin/env bash
# Installs what is missing, builds, and opens the app on the bundled sample text.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The window's programs only (the launcher pulls in attnscope-gui and the tokenizer helper): the
# tests, benchmarks and command line wait for scripts/run-tests.sh or scripts/build.sh.
ATTNSCOPE_BUILD_TARGETS=${ATTNSCOPE_BUILD_TARGETS-attnscope} bash "$root/scripts/build.sh"
build="${ATTNSCOPE_BUILD_DIR:-$root/build}"
if [[ -z ${DISPLAY:-} && -z ${WAYLAND_DISPLAY:-} && -z ${QT_QPA_PLATFORM:-} ]]; then
  echo "run-app: no display found (DISPLAY and WAYLAND_DISPLAY are unset)." >&2
  echo "run-app: on a headless machine, try: xvfb-run -a $build/app/gui/attnscope --screenshot shot.png" >&2
  exit 1
fi
# The app opens on the bundled sample (or the text autosaved from the last session). Without
# arguments it also opens the bundled Transformer-XL trained on Moby-Dick (samples/transfo-xl-moby),
# so the first picture is a model's own attention over the whole sample: causal segments of 32
# tokens, each seeing the memory of the 32 before it. The Q/K/V source box switches back to
# random projections.
if [[ $# -eq 0 && -f "$root/samples/transfo-xl-moby/config.json" ]]; then
  set -- --model "$root/samples/transfo-xl-moby"
fi
exec "$build/app/gui/attnscope" "$@"
