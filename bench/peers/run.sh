#!/bin/bash
# DISPAR against its peers on the same workloads, in one run (bench/peers/README.md): Task Bench's
# dependence patterns in DISPAR, in StarPU with StarPU-MPI (its default scheduler, and dmda with its
# performance model calibrated first) and in hand-written MPI, all under Open MPI (StarPU-MPI's MPI in
# Debian), with DISPAR and MPI under MPICH beside them: METG(50%) of each; then the paper's FIR in the
# three, frames per second; and each version's source size.
# Usage: bench/peers/run.sh [--quick] [BUILD_DIR]
#   --quick   every version of every pattern once at one small grain, checking that all give the same
#             checksum (CI's smoke test; no timings judged)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
quick=()
if [ "${1:-}" = --quick ]; then quick=(--quick); shift; fi
# StarPU, StarPU-MPI and Open MPI come from Debian with the test path's packages.
"$root/scripts/setup.sh" --tests --no-build >/dev/null
source "$here/../common.sh"

tb=$here/taskbench
starpu_flags=$(pkg-config --cflags --libs libstarpumpi | sed 's/-DSTARPU_USE_DEPRECATED[A-Z_]*//g')
c++ -O2 -I"$tb" "$tb/taskbench_graph.cpp" -o taskbench_graph
c++ -O2 -I"$tb" "$tb/taskbench_calibrate.cpp" -o taskbench_calibrate
mpicxx.openmpi -O2 -I"$tb" "$tb/taskbench_mpi.cpp" -o taskbench_mpi_openmpi
mpicxx.mpich -O2 -I"$tb" "$tb/taskbench_mpi.cpp" -o taskbench_mpi_mpich
# shellcheck disable=SC2086  # pkg-config's flags are words
mpicc.openmpi -O2 -std=gnu11 -I"$tb" "$tb/taskbench_starpu.c" -o taskbench_starpu $starpu_flags
# The FIR's peers: StarPU's, and the hand-written MPI + CUDA one without nvcc (its filter on the CPU).
# shellcheck disable=SC2086
mpicxx.openmpi -std=c++17 -O2 -Wno-deprecated-declarations -I"$here/fir" "$here/fir/fir_starpu.cpp" -o fir_starpu \
  $starpu_flags
mpicxx.openmpi -std=c++17 -O2 -x c++ "$root/examples/fir/handwritten/fir_mpi_cuda.cu" -o fir_mpi_openmpi
mpicxx.mpich -std=c++17 -O2 -x c++ "$root/examples/fir/handwritten/fir_mpi_cuda.cu" -o fir_mpi_mpich
export DISPAR_RESOURCE_DB=$work/resources.db  # a database of this machine alone, as scripts/demo.sh keeps
"$build/bin/streammap" --discover >/dev/null
python3 "$here/sweep.py" "${quick[@]}" --build "$build" --mpiexec "$mpiexec" --sources "$here" --work "$work"
