#!/usr/bin/env bash
# Trains the shipped Star-Transformer sample (samples/star-first/): fastNLP's encoder, 2 cycles,
# 2 heads of 16, on the task `first` (16 letters a–h; every position tagged with the first
# letter, which the far positions can only learn through the relay), and the same model without
# the relay for comparison (its accuracy is printed, the folder not kept). Deterministic for the
# seed; about a minute on two cores.
#
#   scripts/make-star-sample.sh [OUT]     (default: samples/star-first)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/samples/star-first}
cli=${ATTNSCOPE_CLI:-$root/build/app/attnscope-cli}
[[ -x $cli ]] || { echo "make-star-sample: build first ($cli missing)" >&2; exit 1; }
ablation=$(mktemp -d)
trap 'rm -rf "$ablation"' EXIT
args=(train --arch star-transformer --task first --layers 2 --heads 2 --dim 32 --length 16 --steps 600 --batch 32 --seed 1)
"$cli" "${args[@]}" --out "$out"
echo "make-star-sample: the same without the relay:" >&2
"$cli" "${args[@]}" --no-relay --out "$ablation/no-relay" 2>&1 | tail -2 >&2
