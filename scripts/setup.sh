#!/usr/bin/env bash
# Installs the Debian 12 packages DISPAR needs, only those missing (idempotent), then configures and
# builds the project into build/. Run as root (or with sudo available). Usage: scripts/setup.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  clang-19 libclang-19-dev libclang-cpp19-dev llvm-19-dev
  mpich libmpich-dev
  libgtest-dev googletest
  libfftw3-dev libopenblas-dev
  hwloc libhwloc-dev
  sqlite3 libsqlite3-dev
  nlohmann-json3-dev
  postgresql libpq-dev
  slurmctld slurmd slurm-client
  openmpi-bin libopenmpi-dev
  libsimgrid-dev
  clangd-19 libclang-rt-19-dev clang-format-19
)

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Open MPI installs beside MPICH and takes over the plain `mpicc`/`mpiexec` names through Debian's
# alternatives; MPICH stays the default (README's `mpiexec -f`), Open MPI is used by its own names.
if [ -e /usr/bin/mpicc.mpich ] && [ "$(readlink -f /etc/alternatives/mpi)" != /usr/bin/mpicc.mpich ]; then
  "${sudo_cmd[@]}" update-alternatives --quiet --set mpi /usr/bin/mpicc.mpich
fi
if [ -e /usr/bin/mpirun.mpich ] && [ "$(readlink -f /etc/alternatives/mpirun)" != /usr/bin/mpirun.mpich ]; then
  "${sudo_cmd[@]}" update-alternatives --quiet --set mpirun /usr/bin/mpirun.mpich
fi

[ "${1:-}" = "--no-build" ] && exit 0
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
