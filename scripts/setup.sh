#!/usr/bin/env bash
# Installs every Debian 12 package pbdlab needs (idempotent: apt-get runs only when one is
# missing). OpenBLAS is included: CHOLMOD is about 8x slower on the reference BLAS.
# python3-meshio and gmsh (the 84 kB command-line program over libgmsh) read pbdlab's .vtu and
# .msh output in the outputs_meshio test; ParaView is not installed (too large): its check is
# skipped without pvpython.
set -euo pipefail
packages=(cmake g++ ninja-build git libeigen3-dev libsuitesparse-dev libopenblas0-pthread
          libgmsh-dev libgtest-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev
          zlib1g-dev python3-matplotlib python3-numpy python3-meshio gmsh strace)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) == 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all packages present" >&2
fi
