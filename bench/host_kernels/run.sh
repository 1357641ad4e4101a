#!/usr/bin/env bash
# Seven kernels of the public suites' kind on the host path (suite.dsp: the samples' saxpy, PolyBench's
# fdtd-2d, Rodinia's srad, the CUDA samples' matrixMul, histogram256 and reduction, GPU Gems 3's scan),
# each against the same computation as a plain C++ loop and with OpenMP (baselines.cpp, g++ -O2), in the
# same run: with one host thread (DISPAR_HOST_THREADS=1, OMP_NUM_THREADS=1) and with every core. Prints a
# table per thread count and the geometric means, then the cost of the blocks' memory order alone
# (AccessOrder.cpp). The suite is built by disparcc as a user's program is (no toolkit: the kernels' host
# clones, compiled by g++ -O2 like the baselines).
#
#   bench/host_kernels/run.sh [BUILD_DIR]     HOST_KERNELS_RUNS=N: best of N runs per figure (default 5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../common.sh
source "$here/../common.sh"
cmake --build "$build" --target disparcc host_kernels_baselines host_kernels_access_order >/dev/null
DISPAR_CUDA_PATH=/nonexistent "$build/bin/disparcc" "$here/suite.dsp" -o suite -I"$here" -L"$build/lib" \
  -lhost_kernels_baselines -lgomp 2>&1 | grep -v 'no CUDA toolkit found' || true
[ -x suite ] || { echo "host_kernels: the suite did not build" >&2; exit 1; }
for threads in 1 "$(nproc)"; do
  echo "== $threads host thread(s): DISPAR_HOST_THREADS=$threads OMP_NUM_THREADS=$threads"
  DISPAR_HOST_THREADS=$threads OMP_NUM_THREADS=$threads OMP_PROC_BIND=false "$mpiexec" -n 1 ./suite
done
echo "== the memory order of running blocks one after another, against a loop's (one thread)"
"$build/bin/host_kernels_access_order"
