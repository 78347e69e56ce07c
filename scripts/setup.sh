#!/usr/bin/env bash
# Installs every Debian package the build, the app, the tests and the benchmarks need.
# Idempotent: when everything is present it installs nothing and touches no package list.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-svg-dev libqt6svg6 qt6-qpa-plugins
  libqcustomplot-dev libqcustomplot2.1-qt6
  libtorch-dev libopenblas0-pthread libopenblas-pthread-dev
  nlohmann-json3-dev libicu-dev libcli11-dev libsentencepiece-dev sentencepiece
  libgtest-dev libgmock-dev libbenchmark-dev
  xvfb xauth fonts-dejavu-core
  python3-numpy python3-pil
  clang libclang-rt-14-dev
  ccache
)
# node + npm run the GPT-2 tokenizer parity test (scripts/fetch-test-data.sh, gpt-3-encoder). Any
# existing install will do: NodeSource's nodejs bundles npm and conflicts with Debian's npm.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# LibTorch links the generic BLAS/LAPACK names; the reference BLAS is far too slow for it.
# Debian's alternatives pick the implementation: select OpenBLAS (pthread build) explicitly.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
for lib in libblas.so.3 liblapack.so.3; do
  target="/usr/lib/${arch}/openblas-pthread/${lib}"
  link="${lib}-${arch}"
  if [[ -e $target ]] && [[ $(update-alternatives --query "$link" 2>/dev/null | awk '/^Value:/{print $2}') != "$target" ]]; then
    "${sudo_cmd[@]}" update-alternatives --set "$link" "$target" >&2
  fi
done
exit 0
