#!/usr/bin/env bash
# Runs one libFuzzer target of fuzz/ (clang, ASan + UBSan: the sanitizer build, scripts/sanitize.sh,
# built first when it is not there) on its corpus for SECONDS (docs/FUZZING.md).
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]     e.g. scripts/fuzz.sh fuzz_model_config 60
#   scripts/fuzz.sh --all SECONDS                            every target, one after another
#
# Build folder: $ATTNSCOPE_FUZZ_BUILD_DIR, else $ATTNSCOPE_ASAN_BUILD_DIR, else build-asan. Corpus: fuzz/corpus/TARGET (seeds from
# the test fixtures, committed) plus what the run finds, kept in the build folder.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNSCOPE_FUZZ_BUILD_DIR:-${ATTNSCOPE_ASAN_BUILD_DIR:-$root/build-asan}}
targets=(fuzz_safetensors_header fuzz_model_config fuzz_strict_json fuzz_tokenizer_json fuzz_wordpiece_vocab
  fuzz_byte_level_bpe fuzz_moe_router fuzz_result_file fuzz_qkv_file fuzz_model_folder fuzz_session fuzz_recipe fuzz_image_file
  fuzz_gguf_header fuzz_gguf_model)

# The dictionaries (fuzz/dict/) each target's mutations draw tokens from.
dictionaries_of() {
  case $1 in
    fuzz_safetensors_header|fuzz_qkv_file|fuzz_result_file) echo json safetensors ;;
    fuzz_model_config) echo json model_config ;;
    fuzz_model_folder) echo json model_config safetensors parts ;;
    fuzz_strict_json|fuzz_tokenizer_json|fuzz_byte_level_bpe) echo json ;;
    fuzz_session) echo json session ;;
    fuzz_recipe) echo json recipe parts ;;
  esac
}
(($# >= 2)) || { sed -n '2,9p' "${BASH_SOURCE[0]}"; exit 2; }
if [[ $1 == --all ]]; then
  wanted=("${targets[@]}")
else
  wanted=("$1")
fi
seconds=$2
shift 2
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (scripts/setup.sh installs clang)" >&2; exit 1; }
if [[ ! -f $build/CMakeCache.txt ]]; then
  ATTNSCOPE_ASAN_BUILD_DIR=$build bash "$root/scripts/sanitize.sh" --build
fi
cmake --build "$build" --target "${wanted[@]}" >/dev/null
for target in "${wanted[@]}"; do
  found="$build/corpus/$target"
  mkdir -p "$found"
  seeds="$root/fuzz/corpus/$target"
  dict=()
  if [[ -n $(dictionaries_of "$target") ]]; then
    for name in $(dictionaries_of "$target"); do cat "$root/fuzz/dict/$name.dict"; done > "$build/$target.dict"
    dict=(-dict="$build/$target.dict")
  fi
  echo "fuzz.sh: $target for $seconds s" >&2
  # (found first: new inputs go there, never into the committed seeds)
  set +e  # (libFuzzer's status is read below)
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/fuzz/$target" -max_total_time="$seconds" -print_final_stats=1 -max_len=65536 -rss_limit_mb=2048 \
    -timeout=10 -artifact_prefix="$build/$target-" "${dict[@]}" "$@" "$found" "$seeds" > "$build/$target.log" 2>&1
  status=$?
  grep -E "^stat::number_of_executed_units|ERROR|SUMMARY|Done" "$build/$target.log"
  set -e
  # Any one kind of finding fails the run (a single `ls` of the four patterns failed unless all
  # four kinds were there, so findings went unreported).
  shopt -s nullglob
  problems=("$build/$target"-crash-* "$build/$target"-leak-* "$build/$target"-timeout-* "$build/$target"-oom-*)
  shopt -u nullglob
  if ((${#problems[@]} > 0 || status != 0)); then
    tail -n 60 "$build/$target.log" >&2  # (the whole report stays in $build/$target.log)
    echo "fuzz.sh: $target found a problem (libFuzzer status $status): ${problems[*]:-no input kept}" >&2
    exit 1
  fi
done
