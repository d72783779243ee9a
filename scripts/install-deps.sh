#!/usr/bin/env bash
# Installs the Debian 12 packages fusebox needs to build and test, if missing.
# Usage: scripts/install-deps.sh [--with-fuzz] [--with-chromium]
#   --with-chromium  Debian's chromium, for test_cli_ab's headless render of the
#                    `fusebox ab --report` page (large: ~100 MB download; it took
#                    24 s to install here; without it that check is skipped)
set -euo pipefail
# OpenCL: the ICD loader and PoCL's CPU device, for the OpenCL host service
# and the nvfuser_like plugin's OpenCL path (fusebox dlopens libOpenCL.so.1).
# OpenBLAS: the CBLAS behind the matmul family (core/ops/k_linalg.c); CMake requires it.
# libtorch-dev + python3-torch (1.13, the same version): the optional PyTorch bridge
# (bridges/torch: fusebox import, the `torch` peer of bench) and its test models'
# generator (tests/torch/gen_models.py); CMake skips the bridge when libtorch is missing.
pkgs=(build-essential cmake pkg-config check libdlpack-dev ocl-icd-opencl-dev pocl-opencl-icd libopenblas-dev
  libtorch-dev python3-torch)
for arg in "$@"; do
  case "$arg" in
    --with-fuzz) pkgs+=(clang libclang-rt-14-dev) ;;
    --with-chromium) pkgs+=(chromium) ;;
    *) echo "usage: scripts/install-deps.sh [--with-fuzz] [--with-chromium]" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "error: run as root (apt-get install ${missing[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
