#!/usr/bin/env bash
# Retakes every screenshot of README.md and docs/ with the app itself (offscreen, no display
# needed), and the walk through every tab at 1366 × 768 in docs/screenshots/1366x768/.
#   scripts/screenshots.sh            after scripts/build.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
app="${ATTNSCOPE_BUILD_DIR:-$root/build}/app/gui/attnscope"
export QT_QPA_PLATFORM=offscreen OMP_WAIT_POLICY=PASSIVE
cd "$root"
shot() {  # shot FILE ARGS...: one fresh process per picture, as a user starts the app
  local file=$1
  shift
  "$app" --screenshot "$file" "$@" 2>/dev/null || { echo "screenshot failed: $file ($*)" >&2; return 1; }
  echo "$file"
}

# README and docs (1400 × 900, the app's screenshot size)
shot docs/screenshot-main.png
shot docs/screenshot-mask.png --variant bigbird --param pad=true --view mask --query 40
shot docs/screenshot-links.png --view links
shot docs/screenshot-spectrum.png --variant linformer --view diagnostics
shot docs/screenshot-approximation.png --variant performer --view diagnostics --error-curve
shot docs/screenshot-image.png --image samples/airplane.jpg --variant sparse_strided --image-show mask --window-size 1366x768
shot docs/screenshots/compare.png --variant full --compare longformer,performer --view compare --head 1 --query 40 --key 3
shot docs/screenshots/atlas.png --view atlas --model samples/copy-model
shot docs/screenshots/receptive-field.png --variant transformer_xl --view diagnostics --receptive-field --text-file samples/sample.txt
shot docs/screenshots/eval-speed.png --view cost --eval-speed
shot docs/screenshots/experts.png --view experts
shot docs/screenshots/star.png --variant star --view diagnostics --text-file samples/short.txt
shot docs/screenshots/star-reach.png --variant star --view diagnostics --star-reach --text-file samples/short.txt

# Every tab on a 1366 × 768 screen, as a student's laptop shows it
small=docs/screenshots/1366x768
mkdir -p "$small"
size=(--window-size 1366x768)
shot "$small/heatmap.png" "${size[@]}"
shot "$small/welcome.png" "${size[@]}" --welcome --model samples/transfo-xl-moby  # what a first start shows
shot "$small/mask.png" "${size[@]}" --variant longformer --view mask --query 12
shot "$small/compare.png" "${size[@]}" --variant full --compare longformer,sparse_strided,performer --view compare
shot "$small/diagnostics.png" "${size[@]}" --variant reformer --view diagnostics
shot "$small/links.png" "${size[@]}" --view links
shot "$small/neuron.png" "${size[@]}" --model samples/copy-model --view neuron --text-file samples/short.txt
shot "$small/qkmap.png" "${size[@]}" --model samples/copy-model --view qkmap --text-file samples/short.txt
rm -rf samples/copy-model/attnscope-context  # the index built afresh, as a first search shows it
shot "$small/context.png" "${size[@]}" --model samples/copy-model --view context --text-file samples/short.txt --corpus samples/corpus.txt --query 5
shot "$small/cost.png" "${size[@]}" --variant full --compare longformer,linear --view cost --scaling 256,512,1024,2048
shot "$small/atlas.png" "${size[@]}" --view atlas --model samples/copy-model
shot "$small/experts.png" "${size[@]}" --view experts
shot "$small/help.png" "${size[@]}" --variant longformer --view mask --help-panel
shot "$small/tour.png" "${size[@]}" --tour 3
shot "$small/image.png" "${size[@]}" --image samples/airplane.jpg --variant reformer --image-show groups
# Each sample model as File ▸ Open Model opens it: its own attention of layer 0 first
for model in transfo-xl-moby switch-moby copy-model; do
  shot "$small/model-$model.png" "${size[@]}" --model "samples/$model" --text-file samples/short.txt
done
rm -rf samples/copy-model/attnscope-context
