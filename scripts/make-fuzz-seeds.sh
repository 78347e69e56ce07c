#!/usr/bin/env bash
# Rewrites the generated seed inputs of fuzz/corpus/ (docs/FUZZING.md): the model folders and
# --qkv files from the tests' tiny checkpoints (fuzz_make_seeds, in the fuzz build), and real
# result files of several variants written by attnscope-cli (the normal build). Run it when a
# format changes; the hand-written seeds (sessions, recipes, configs, tokenizers) stay as they are.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNSCOPE_BUILD_DIR:-$root/build}
fuzz_build=${ATTNSCOPE_FUZZ_BUILD_DIR:-$root/build-fuzz}
cmake --build "$fuzz_build" --target fuzz_make_seeds >/dev/null
"$fuzz_build/fuzz/fuzz_make_seeds" "$root/fuzz/corpus" "$root/samples"
out="$root/fuzz/corpus/fuzz_result_file"
mkdir -p "$out"
# (small on purpose: libFuzzer mutates inputs of up to 64 KiB)
for variant in full longformer bigbird reformer routing transformer_xl performer linformer star topk; do
  OMP_WAIT_POLICY=PASSIVE "$build/app/attnscope-cli" run --text "The cat sat on the mat because it was tired of the dog." \
    --variant "$variant" $([[ $variant == bigbird ]] && echo --param pad=true --param block=2) --heads 2 --head-dim 4 --quiet --out "$out/$variant.safetensors"
done
# pictures: pixels (strided) and patches with CLS (local2d), their grid in attnscope.image
OMP_WAIT_POLICY=PASSIVE "$build/app/attnscope-cli" run --image "$root/samples/airplane.jpg" --image-grid 4x4 --variant sparse_strided \
  --heads 2 --head-dim 4 --quiet --out "$out/image-pixels.safetensors"
OMP_WAIT_POLICY=PASSIVE "$build/app/attnscope-cli" run --image "$root/samples/airplane.jpg" --image-tokens patches --patch 80 --cls \
  --variant local2d --heads 2 --head-dim 4 --quiet --out "$out/image-patches.safetensors"
ls -l "$out"
