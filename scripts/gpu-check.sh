#!/usr/bin/env bash
# The GPU checks in one command, for a machine with an NVIDIA GPU that has the CUDA driver but neither
# MPICH nor Clang nor a package manager that can reach anything (docs/cuda.md, "Checking on a GPU").
#
#   scripts/gpu-check.sh pack [--arch sm_90]   here (Debian 12, with the build): compiles the GPU test
#                                              binaries, the benchmark, the FIR example and the CUDA
#                                              test programs for the GPU's architecture, and bundles
#                                              them with MPICH's runtime (unpacked from its Debian
#                                              packages with dpkg -x) into gpu-check/bundle.tar.gz
#   scripts/gpu-check.sh [run]                 there, from the repository root with gpu-check/ carried
#                                              over: runs everything on the GPU, prints one summary;
#                                              exit status 0 only when every check passed
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
checkdir="$root/gpu-check"
bundle="$checkdir/bundle.tar.gz"
limit_bytes=$((60 * 1024 * 1024))  # the device tool carries at most 64 MiB, the working tree included

# The programs run on the GPU: "source|ranks|what a passing run prints (an extended regex)".
programs=(
  "examples/fir/fir.dsp|4|^frames=64 max_error=[0-9.e+-]+ checksum="
  "tests/e2e/cuda/constructs.dsp|3|^constructs: ok"
  "tests/e2e/cuda/shapes.dsp|3|^shapes: ok"
)
for external in "$root"/tests/external/*.dsp; do
  [ -e "$external" ] || continue
  name=$(basename "$external" .dsp)
  programs+=("tests/external/$name.dsp|0|^external $name: ok")
done

pack() {
  local arch=sm_90
  while [ $# -gt 0 ]; do
    case "$1" in
      --arch) arch=$2; shift 2 ;;
      *) echo "gpu-check: unknown option '$1'" >&2; exit 2 ;;
    esac
  done
  [ -x /usr/local/cuda/bin/nvcc ] || { echo "gpu-check: pack needs the CUDA toolkit at /usr/local/cuda" >&2; exit 1; }
  cmake --build "$root/build" --target disparcc gpu_device_test bench_device_pipe >/dev/null
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/bin" "$stage/lib" "$stage/programs" "$stage/debs"

  cp "$root/build/bin/gpu_device_test" "$root/build/bin/bench_device_pipe" "$stage/bin/"
  : >"$stage/programs/list"
  for entry in "${programs[@]}"; do
    IFS='|' read -r source ranks pattern <<<"$entry"
    local name
    name=$(basename "$source" .dsp)
    echo "gpu-check: compiling $source for $arch"
    local work="$stage/work-$name"
    mkdir -p "$work"
    cp "$root/$source" "$work/"
    (cd "$work" && "$root/build/bin/disparcc" "$name.dsp" -o "$name" --cuda-arch "$arch")
    if [ "$ranks" = 0 ]; then  # one rank per VNODE instance, as the RTG lists them
      ranks=$(grep -c '"vnode"' "$work/$name.rtg.json")
    fi
    cp "$work/$name" "$stage/programs/"
    printf '%s|%s|%s\n' "$name" "$ranks" "$pattern" >>"$stage/programs/list"
    rm -rf "$work"
  done
  strip --strip-debug "$stage"/bin/* "$stage"/programs/* 2>/dev/null || true

  # MPICH's launcher and runtime, and what they and the binaries load, from Debian's packages.
  chmod a+rwx "$stage/debs"  # apt's sandbox user writes the downloads
  (cd "$stage/debs" && apt-get download -qq mpich libmpich12 libhwloc15 libucx0 libnuma1 >/dev/null)
  for deb in "$stage"/debs/*.deb; do dpkg -x "$deb" "$stage/root"; done
  cp "$stage"/root/usr/bin/mpiexec.hydra "$stage"/root/usr/bin/hydra_pmi_proxy "$stage/bin/"
  cp -a "$stage"/root/usr/lib/x86_64-linux-gnu/*.so* "$stage/lib/"
  cp -a "$stage"/root/usr/lib/x86_64-linux-gnu/ucx "$stage/lib/ucx"
  rm -f "$stage"/lib/ucx/*.a
  cp -aL /usr/local/cuda/lib64/libcudart.so.13 "$stage/lib/" 2>/dev/null || cp -aL /usr/local/cuda/lib/libcudart.so.13 "$stage/lib/"
  rm -rf "$stage/root" "$stage/debs"

  mkdir -p "$checkdir"
  tar -C "$stage" -czf "$bundle" bin lib programs
  local size
  size=$(stat -c %s "$bundle")
  if [ "$size" -gt "$limit_bytes" ]; then
    echo "gpu-check: $bundle is $size bytes, more than the $limit_bytes the device tool can carry" >&2
    exit 1
  fi
  echo "gpu-check: wrote $bundle ($((size / 1024 / 1024)) MiB, $(wc -l <"$stage/programs/list") programs for $arch)"
  echo "gpu-check: on the GPU machine, from the repository root: scripts/gpu-check.sh"
  echo "gpu-check: (device tool: run command 'scripts/gpu-check.sh' with carry ['gpu-check'])"
}

run() {
  [ -f "$bundle" ] || { echo "gpu-check: no $bundle; make it with 'scripts/gpu-check.sh pack' on the build machine" >&2; exit 1; }
  local here
  here=$(mktemp -d /tmp/dispar-gpu-check.XXXXXX)
  tar -C "$here" -xzf "$bundle"
  export PATH="$here/bin:$PATH"
  export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export UCX_MODULE_DIR="$here/lib/ucx"
  export HYDRA_LAUNCHER=fork
  local log="${OUT:-$here}/gpu-check.log"
  : >"$log"
  local failures=0 summary=""

  note() { summary+="$1"$'\n'; }
  check() {  # check NAME RANKS PATTERN COMMAND...: runs under mpiexec, passes on status 0 and the pattern
    local name=$1 ranks=$2 pattern=$3
    shift 3
    local start end output status
    start=$(date +%s.%N)
    set +e
    output=$(cd "$here" && timeout 300 mpiexec.hydra -launcher fork -n "$ranks" "$@" 2>&1 </dev/null)
    status=$?
    set -e
    end=$(date +%s.%N)
    { echo "==== $name (exit $status)"; echo "$output"; } >>"$log"
    local gpus
    gpus=$(grep -c "': GPU " <<<"$output" || true)
    local seconds
    seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    if [ "$status" -eq 0 ] && grep -Eq "$pattern" <<<"$output"; then
      note "PASS  $name  (${seconds} s, ranks on a GPU: $gpus)"
    else
      failures=$((failures + 1))
      note "FAIL  $name  (exit $status, ${seconds} s; see $log)"
    fi
  }

  echo "gpu-check: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
  check gpu_device_test 2 "PASSED" "$here/bin/gpu_device_test"
  check bench_device_pipe 2 "pipelined" "$here/bin/bench_device_pipe"
  while IFS='|' read -r name ranks pattern; do
    DISPAR_VERBOSE=1 check "$name" "$ranks" "$pattern" "$here/programs/$name"
  done <"$here/programs/list"

  echo "==== bench_device_pipe" && sed -n '/==== bench_device_pipe/,/^====/p' "$log" | sed '1d;$d'
  echo "==== summary"
  printf '%s' "$summary"
  if [ "$failures" -gt 0 ]; then
    echo "gpu-check: $failures check(s) failed; the full output is in $log"
    exit 1
  fi
  echo "gpu-check: all checks passed"
}

case "${1:-run}" in
  pack) shift; pack "$@" ;;
  run) run ;;
  *) echo "usage: scripts/gpu-check.sh [pack [--arch sm_XX] | run]" >&2; exit 2 ;;
esac
