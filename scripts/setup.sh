#!/usr/bin/env bash
# Installs the Debian 12 packages the main job needs (only those missing; idempotent), then configures
# and builds into build/ what the main job needs: disparcc, streammap and the runtime libraries. Run as
# root (or with sudo available).
# Usage: scripts/setup.sh [--no-build] [--tests]
#   --tests     also install what only the test suite needs (GoogleTest, PostgreSQL, Slurm, Open MPI, StarPU,
#               SimGrid, clangd, clang-format, lintian) and build everything: tests, benchmarks, the
#               other runtimes. scripts/test.sh runs this before the suite.
#   --no-build  install only.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1 tests=0
for arg in "$@"; do
  case $arg in
    --no-build) build=0 ;;
    --tests) tests=1 ;;
    *) echo "usage: scripts/setup.sh [--no-build] [--tests]" >&2; exit 2 ;;
  esac
done

main_packages=(
  build-essential cmake ninja-build pkg-config
  clang-19 libclang-19-dev libclang-cpp19-dev llvm-19-dev
  mpich libmpich-dev
  libfftw3-dev libopenblas-dev
  hwloc libhwloc-dev
  sqlite3 libsqlite3-dev libpq-dev
  nlohmann-json3-dev
)
test_packages=(
  libgtest-dev googletest
  postgresql
  slurmctld slurmd slurm-client
  openmpi-bin libopenmpi-dev
  libsimgrid-dev
  clangd-19 libclang-rt-19-dev clang-format-19
  lintian
  iproute2 jq
  libstarpu-dev libstarpumpi-1.3-3 starpu-tools
  chromium
)

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
updated=0
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [ $updated -eq 0 ]; then
    "${sudo_cmd[@]}" apt-get update -qq
    updated=1
  fi
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The system's `mpiexec`/`mpicc` are Debian alternatives. Installing Open MPI beside MPICH would take them
# over (its priority is higher) and the README's `mpiexec -f` would then start Open MPI: whatever they
# were before the install, they are set back, and this says so. Nothing else changes them.
# One level: the alternative registered (/usr/bin/mpirun.mpich), not the file it names in turn (mpiexec.hydra),
# which update-alternatives --set refuses.
alternative() { readlink "/etc/alternatives/$1" 2>/dev/null || true; }
install_keeping_mpi_alternatives() {
  local -A before=([mpi]=$(alternative mpi) [mpirun]=$(alternative mpirun))
  install_missing "$@"
  local name
  for name in mpi mpirun; do
    if [ -n "${before[$name]}" ] && [ "$(alternative $name)" != "${before[$name]}" ]; then
      echo "setup: installing Open MPI changed the system's '$name' alternative; set it back to ${before[$name]}"
      "${sudo_cmd[@]}" update-alternatives --quiet --set $name "${before[$name]}"
    fi
  done
}

install_missing "${main_packages[@]}"
[ $tests -eq 1 ] && install_keeping_mpi_alternatives "${test_packages[@]}"
[ $build -eq 0 ] && exit 0

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
if [ $tests -eq 1 ]; then
  cmake --build build -j"$(nproc)"
else
  cmake --build build -j"$(nproc)" --target disparcc streammap
fi
