#!/usr/bin/env bash
# The linear-cost variants at 131,072 and 1,048,576 tokens (8 heads, d = 64): one fresh process per
# run, wall time and peak RSS (/usr/bin/time), the two lengths alternating, and time(1M) / time(131k).
#
#   bench/million_tokens.sh FOLDER [ROUNDS]
#
# FOLDER receives the inputs (made once by bench/make_qkv.py: 0.8 and 6.4 GB) and the results (up to
# 6.4 GB each, overwritten). Prints a Markdown table of medians (docs/PERFORMANCE.md "A million tokens").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
folder=${1:?usage: bench/million_tokens.sh FOLDER [ROUNDS]}
rounds=${2:-1}
cli="${ATTNSCOPE_BUILD_DIR:-$root/build}/app/attnscope-cli"
export OMP_WAIT_POLICY=PASSIVE
mkdir -p "$folder"
for n in 131072 1048576; do
  [[ -f "$folder/qkv$n.safetensors" ]] || python3 "$root/bench/make_qkv.py" "$folder/qkv$n.safetensors" --n "$n"
done

# variant and its parameters; {width} is the picture's width for local2d (a square-ish grid)
runs=(
  "linear"
  "performer --param nb_features=256"
  "longformer --param window=256"
  "bigbird --param block=64 --param random=3"
  "sparse_strided --param stride={sqrt}"
  "local2d --param width={width}"
)

one_run() {  # variant-and-params n -> "seconds kib"
  local spec=$1 n=$2 width sqrt
  width=$([[ $n == 131072 ]] && echo 512 || echo 1024)
  sqrt=$([[ $n == 131072 ]] && echo 362 || echo 1024)
  spec=${spec//\{width\}/$width}
  spec=${spec//\{sqrt\}/$sqrt}
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o "$folder/time.txt" "$cli" run --variant $spec --qkv "$folder/qkv$n.safetensors" \
      --dense-limit 0 --memory-budget 20000000000 --out "$folder/result$n.safetensors" >/dev/null 2>"$folder/log.txt" ||
    { cat "$folder/log.txt" >&2; return 1; }
  cat "$folder/time.txt"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "| variant | 131,072 s | GiB | 1,048,576 s | GiB | time ratio |"
echo "|---|---:|---:|---:|---:|---:|"
for spec in "${runs[@]}"; do
  small_t=() small_m=() big_t=() big_m=()
  for ((r = 0; r < rounds; ++r)); do
    read -r t m < <(one_run "$spec" 131072); small_t+=("$t"); small_m+=("$m")
    read -r t m < <(one_run "$spec" 1048576); big_t+=("$t"); big_m+=("$m")
  done
  st=$(printf '%s\n' "${small_t[@]}" | median); bt=$(printf '%s\n' "${big_t[@]}" | median)
  sm=$(printf '%s\n' "${small_m[@]}" | sort -g | tail -1); bm=$(printf '%s\n' "${big_m[@]}" | sort -g | tail -1)
  awk -v v="${spec%% *}" -v st="$st" -v sm="$sm" -v bt="$bt" -v bm="$bm" \
    'BEGIN {printf "| `%s` | %.2f | %.2f | %.2f | %.2f | %.1f |\n", v, st, sm / 1048576, bt, bm / 1048576, bt / st}'
done
