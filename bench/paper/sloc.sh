#!/bin/bash
# Fig. 6 of the paper: source lines of the three FIR versions, as bench/sloc.py counts them ('#' lines of
# a machinefile are comments), and each version's ratio to DISPAR's. Usage: bench/paper/sloc.sh
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
python3 - "$src" <<'PY'
import sys
src = sys.argv[1]
sys.path.insert(0, src + "/bench")
from sloc import code_lines  # bench/sloc.py, shared with bench/peers

dsp = code_lines(f"{src}/examples/fir/fir.dsp")
cu = code_lines(f"{src}/examples/fir/handwritten/fir_mpi_cuda.cu")
machinefile = code_lines(f"{src}/examples/fir/handwritten/paper4.machinefile", hash_comments=True)
rows = [("DISPAR (examples/fir/fir.dsp)", dsp),
        ("MPI+CUDA, arbitrary placement (fir_mpi_cuda.cu)", cu),
        ("MPI+CUDA, hand-optimised (fir_mpi_cuda.cu + paper4.machinefile)", cu + machinefile)]
print("%-66s %6s %8s" % ("version", "lines", "vs DISPAR"))
for name, lines in rows:
    print("%-66s %6d %8.2fx" % (name, lines, lines / dsp))
print("DISPAR's source the smallest: %s" % ("PASS" if all(dsp < lines for _, lines in rows[1:]) else "FAIL"))
PY
