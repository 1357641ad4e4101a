# Sourced by the benchmark scripts (bench/*/run.sh): sets `build` (the build directory: the script's
# first argument, else build/), `mpiexec` (the one CMake found) and moves into a scratch directory that
# is removed on exit.
build=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../build}" && pwd)
mpiexec=$(grep -m1 '^DISPAR_MPIEXEC:' "$build/CMakeCache.txt" | cut -d= -f2)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
