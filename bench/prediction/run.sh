#!/bin/bash
# Cost prediction from code features, measured (bench/prediction/README.md): every program of a corpus
# (the examples, the StreamIt ports, the external CUDA corpus, bench/profile's known work) is built
# host-only, run once with profiling, one rank per instance, and recorded in a fresh performance history;
# then bench_prediction predicts each VNODE's cost from all the others (leave-one-out k-nearest
# neighbours on the RTG's code features) against its measured cost, beside the corpus median's error.
# Usage: bench/prediction/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/../common.sh"

db=$work/history.db
corpus=("$root"/examples/*/*.dsp "$root"/tests/external/*.dsp "$root/bench/profile/known_work.dsp")
recorded=0
for i in "${!corpus[@]}"; do
  dsp=${corpus[$i]}
  name=$(basename "$dsp" .dsp)
  mkdir "$i" && cd "$i"
  cp "$dsp" "$name.dsp"
  # The host libraries a program calls are linked by name, as its README says (-lfftw3 -lopenblas).
  libraries=()
  grep -q 'fftw_' "$name.dsp" && libraries+=(-lfftw3)
  grep -q 'fftwf_' "$name.dsp" && libraries+=(-lfftw3f)
  grep -q 'cblas_' "$name.dsp" && libraries+=(-lopenblas)
  if ! DISPAR_CUDA_PATH=/nonexistent "$build/bin/disparcc" "$name.dsp" -o "$name" "${libraries[@]}" >build.log 2>&1; then
    echo "bench_prediction: $name does not build host-only; left out" >&2
    cd .. && continue
  fi
  ranks=$(python3 -c "import json; print(len(json.load(open('$name.rtg.json'))['vertices']))")
  if ! DISPAR_PROFILE=$name.profile.json timeout 300 "$mpiexec" -launcher fork -n "$ranks" "./$name" >run.log 2>&1; then
    echo "bench_prediction: $name failed to run; left out" >&2
    cd .. && continue
  fi
  "$build/bin/streammap" profile add "$name.profile.json" --db "$db" >/dev/null 2>&1
  recorded=$((recorded + 1))
  cd ..
done
echo "recorded $recorded of ${#corpus[@]} programs"
"$build/bin/bench_prediction" "$db" cpu
