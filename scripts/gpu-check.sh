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
#                                              (GPU_CHECK_TIMEOUT: seconds a program may run, 300)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
checkdir="$root/gpu-check"
bundle="$checkdir/bundle.tar.gz"
limit_bytes=$((60 * 1024 * 1024))  # the device tool carries at most 64 MiB, the working tree included

# The programs run on the GPU: "source|ranks|what a passing run prints (an extended regex)[|arguments
# [|disparcc options[|tolerance]]]". Ranks 0: one per VNODE instance. With a tolerance, pack also runs the
# program here, on the host path (whose values the end-to-end tests check against values they compute
# themselves), and the GPU run's output must match that one line by line, every number within the
# relative tolerance: the programs that call cuBLAS and cuFFT, which run NVIDIA's libraries on a GPU and
# DISPAR's stand-ins on the host path, and the fused and unfused builds of the library-fusion test (whose
# last transforms are single precision: 1e-5); and, exactly, the texture filter's corner weights at every
# bilinear fraction pair and 65,536 trilinear triples (tests/gpu_probes/texture_weights.dsp).
programs=(
  "examples/fir/fir.dsp|4|^frames=64 max_error=[0-9.e+-]+ checksum="
  "tests/e2e/cuda/constructs.dsp|3|^constructs: ok"
  "tests/e2e/cuda/shapes.dsp|3|^shapes: ok"
  "examples/split/hotspot.dsp|3|^hotspot: last step: cpu share|2048 20"
  "tests/e2e/cuda/libraries.dsp|0|^libraries 1 |||1e-9"
  "examples/stap/stap.dsp|0|^stap: cpi 3 |||1e-4"
  "tests/fusion/cublas_fusion_e2e.dsp|0|^-?[0-9]||-ffusion|1e-5"
  "tests/fusion/cublas_fusion_e2e.dsp|0|^-?[0-9]||-fno-fusion|1e-5"
  "tests/gpu_probes/texture_weights.dsp|1|^texture_weights bilinear a=0 |||0"
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
  # The GPU tests are GoogleTest programs: the test path's set-up (scripts/setup.sh --tests) configures them.
  "$root/scripts/setup.sh" --tests --no-build
  cmake -S "$root" -B "$root/build" >/dev/null
  cmake --build "$root/build" --target disparcc gpu_device_test bench_device_pipe profile_overhead >/dev/null
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/bin" "$stage/lib" "$stage/programs" "$stage/debs"

  cp "$root/build/bin/gpu_device_test" "$root/build/bin/bench_device_pipe" "$root/build/bin/profile_overhead" \
    "$stage/bin/"
  : >"$stage/programs/list"
  for entry in "${programs[@]}"; do
    IFS='|' read -r source ranks pattern arguments options tolerance <<<"$entry"
    local name
    name=$(basename "$source" .dsp)${options:+_${options//[^A-Za-z0-9]/}}
    # Programs of one name in two folders (examples/split/hotspot.dsp, tests/external/hotspot.dsp) keep
    # their folder's name in front.
    if grep -q "^$name|" "$stage/programs/list"; then name="$(basename "$(dirname "$source")")_$name"; fi
    echo "gpu-check: compiling $source${options:+ ($options)} for $arch"
    local work="$stage/work-$name"
    mkdir -p "$work"
    cp "$root/$source" "$work/$name.dsp"
    # shellcheck disable=SC2086  # the options are words
    (cd "$work" && "$root/build/bin/disparcc" "$name.dsp" -o "$name" --cuda-arch "$arch" $options)
    if [ "$ranks" = 0 ]; then  # one rank per VNODE instance, as the RTG lists them
      ranks=$(grep -c '"vnode"' "$work/$name.rtg.json")
    fi
    if [ -n "$tolerance" ]; then  # the host path's output, which the GPU's must match
      # shellcheck disable=SC2086
      (cd "$work" && timeout 300 mpiexec -launcher fork -n "$ranks" "./$name" $arguments </dev/null) 2>&1 |
        grep -v '^dispar: ' >"$stage/programs/$name.expected"
      grep -Eq "$pattern" "$stage/programs/$name.expected" ||
        { echo "gpu-check: $name does not pass on the host path here" >&2; exit 1; }
    fi
    cp "$work/$name" "$stage/programs/"
    printf '%s|%s|%s|%s|%s\n' "$name" "$ranks" "$pattern" "$arguments" "$tolerance" >>"$stage/programs/list"
    rm -rf "$work"
  done
  # The paper's Fig. 7 on this GPU: FIR as DISPAR builds it and as written by hand in MPI + CUDA
  # (examples/fir/handwritten), as written (32 taps, every output checked) and GPU-bound (256 taps, one
  # output in 1024 checked), as bench/paper/run.sh builds them for the simulator.
  mkdir -p "$stage/fig7"
  local taps check taps_check
  for taps_check in 32:1 256:1024; do
    taps=${taps_check%:*} check=${taps_check#*:}
    echo "gpu-check: compiling FIR with $taps taps, DISPAR's and by hand, for $arch"
    cp "$root/examples/fir/fir.dsp" "$stage/fig7/fir.dsp"
    (cd "$stage/fig7" && "$root/build/bin/disparcc" fir.dsp -o "dispar_$taps" --cuda-arch "$arch" \
      -DFIR_TAPS="$taps" -DFIR_CHECK_EVERY="$check" >/dev/null)
    /usr/local/cuda/bin/nvcc -ccbin mpicxx -std=c++17 -O2 -arch="$arch" -DFIR_TAPS="$taps" \
      -DFIR_CHECK_EVERY="$check" "$root/examples/fir/handwritten/fir_mpi_cuda.cu" -o "$stage/fig7/hand_$taps"
    mv "$stage/fig7/dispar_$taps" "$stage/fig7/hand_$taps" "$stage/programs/"
  done
  rm -rf "$stage/fig7"
  strip --strip-debug "$stage"/bin/* "$stage"/programs/* 2>/dev/null || true  # not the .expected files

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
  # And every other library they load that glibc does not provide (libslurm and libudev for MPICH's
  # launcher, libstdc++ newer than the GPU machine's may be): the closure ldd finds, from this machine.
  local binary library
  for binary in "$stage"/bin/* "$stage"/programs/*; do
    [ -f "$binary" ] && [ -x "$binary" ] || continue
    LD_LIBRARY_PATH="$stage/lib" ldd "$binary" | awk '/=> \// { print $3 }'
  done | sort -u | while read -r library; do
    case "$(basename "$library")" in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | ld-linux*) ;;
      *) [ "$(dirname "$library")" = "$stage/lib" ] || cp -aL "$library" "$stage/lib/" ;;
    esac
  done

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
  # The unpacked bundle goes when the check ends, unless the log and profiles were written into it.
  # shellcheck disable=SC2064  # $here is expanded now, while it is set
  if [ -n "${OUT:-}" ]; then trap "rm -rf '$here'" EXIT; fi
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
    output=$(cd "$here" && timeout "${GPU_CHECK_TIMEOUT:-300}" mpiexec.hydra -launcher fork -n "$ranks" "$@" 2>&1 </dev/null)
    status=$?
    set -e
    end=$(date +%s.%N)
    { echo "==== $name (exit $status)"; echo "$output"; } >>"$log"
    last_output=$output
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

  # elapsed OUTPUT COMMAND...: runs COMMAND from the bundle's folder, its output into the file OUTPUT;
  # prints the wall seconds it took, or fails as COMMAND failed. minimum A B: the smaller number.
  elapsed() {
    local into=$1 start end
    shift
    start=$(date +%s.%N)
    (cd "$here" && "$@") >"$into" 2>&1 </dev/null || return 1
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }'
  }
  minimum() { awk -v a="$1" -v b="$2" 'BEGIN { print (b < a ? b : a) }'; }

  # matches NAME TOLERANCE: the last check's output, less the runtime's own lines, against the host
  # path's (NAME.expected): the same lines, the same text between the numbers, every number within the
  # relative TOLERANCE (or TOLERANCE itself, near zero).
  local last_output=""
  matches() {
    local verdict
    if verdict=$(grep -v '^dispar: ' <<<"$last_output" | python3 -c '
import re, sys
expected = open(sys.argv[1]).read().splitlines()
got = sys.stdin.read().splitlines()
tolerance = float(sys.argv[2])
number = re.compile(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
if len(got) != len(expected):
    sys.exit("%d lines, the host path printed %d" % (len(got), len(expected)))
worst = 0.0
for n, (a, b) in enumerate(zip(got, expected), 1):
    pa, pb = number.split(a), number.split(b)
    if len(pa) != len(pb) or pa[0::2] != pb[0::2]:
        sys.exit("line %d: \"%s\", the host path printed \"%s\"" % (n, a, b))
    for x, y in zip(pa[1::2], pb[1::2]):
        x, y = float(x), float(y)
        difference = abs(x - y) / max(abs(x), abs(y), 1.0)
        worst = max(worst, difference)
        if difference > tolerance:
            sys.exit("line %d: %r against the host path\x27s %r (relative difference %.3g > %g)" % (
                n, x, y, difference, tolerance))
print("%d lines match the host path, largest relative difference %.3g" % (len(got), worst))
' "$here/programs/$1.expected" "$2" 2>&1); then
      note "PASS  $1 = host path  ($verdict)"
    else
      failures=$((failures + 1))
      note "FAIL  $1 = host path  ($verdict)"
    fi
  }

  # Fig. 7 on this GPU: DISPAR's FIR against the hand-written MPI + CUDA one, four ranks on this node (the
  # placement worked out by hand for a node with GPUs: every rank here), 512 frames, best of 5, alternating;
  # both must print the same checksum (relative 1e-6: the same kernels, other launch shapes).
  figure7() {
    local taps version round seconds best_dispar=999 best_hand=999 out_dispar out_hand
    for taps in 32 256; do
      best_dispar=999 best_hand=999
      for round in 1 2 3 4 5; do
        for version in dispar hand; do
          if ! seconds=$(elapsed "$here/fig7.out" timeout 120 mpiexec.hydra -launcher fork -n 4 \
            "$here/programs/${version}_$taps" 512); then
            failures=$((failures + 1))
            note "FAIL  fig7_$taps  ($version run $round: $(tail -1 "$here/fig7.out"))"
            return
          fi
          output=$(grep '^frames=' "$here/fig7.out")
          echo "fig7 $taps taps $version run $round: $seconds s: $output" >>"$log"
          if [ "$version" = dispar ]; then
            out_dispar=$output
            best_dispar=$(minimum "$best_dispar" "$seconds")
          else
            out_hand=$output
            best_hand=$(minimum "$best_hand" "$seconds")
          fi
        done
      done
      local same
      same=$(awk -v a="${out_dispar##*checksum=}" -v b="${out_hand##*checksum=}" \
        'BEGIN { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); print (d <= 1e-6 * (m > 1 ? m : 1)) ? "yes" : "no" }')
      if [ "$same" = yes ]; then
        note "INFO  fig7_$taps  ($taps taps, 512 frames, best of 5: DISPAR $best_dispar s, by hand $best_hand s: DISPAR/hand $(awk -v a="$best_dispar" -v b="$best_hand" 'BEGIN { printf "%.3fx", a / b }'); $out_dispar)"
      else
        failures=$((failures + 1))
        note "FAIL  fig7_$taps  (checksums differ: DISPAR '$out_dispar', by hand '$out_hand')"
      fi
    done
  }

  # Run profiles on the GPU (docs/streammap.md, "Run profiles"): FIR profiled, the profile checked for
  # ranks that ran on the GPU and kernel sites timed there (it comes back in $OUT for streammap profile
  # add); then what profiling costs, in one run: FIR (512 frames) best of 5 with and without
  # DISPAR_PROFILE, alternating, and the 64 KiB pipe of bench/profile (profile_overhead, 2 ranks).
  profiles() {
    local profile="${OUT:-$here}/fir-gpu-profile.json"
    DISPAR_PROFILE="$profile" check fir_profiled 4 "^frames=64 max_error" "$here/programs/fir"
    local verdict
    if verdict=$(python3 - "$profile" 2>&1 <<'PY'
import json, sys
profile = json.load(open(sys.argv[1]))
for i in profile["instances"]:
    print("  %-8s[%d] rank %d %-9s %-28s compute %.4f s, read wait %.4f s, write wait %.4f s" % (
        i["vnode"], i["replica"], i["rank"], i["device"], i.get("device_model", ""), i["compute_s"],
        i["read_wait_s"], i["write_wait_s"]))
    if "gpu" in i:
        print("            GPU: %d SMs, %d kHz, compute capability %s" % (
            i["gpu"]["multiprocessors"], i["gpu"]["clock_khz"], i["gpu"]["compute_capability"]))
for k in profile["kernels"]:
    print("  kernel %s at %s, %s[%d] on %s: %d launches, %.6f s (%.1f us each)" % (
        k["kernel"], k["site"], k["vnode"], k["replica"], k["device"], k["launches"], k["seconds"],
        k["seconds"] / max(k["launches"], 1) * 1e6))
gpu_instances = [i for i in profile["instances"] if i["device"] == "gpu" and i.get("device_model")
                 and i.get("gpu", {}).get("multiprocessors", 0) > 0 and i["gpu"].get("clock_khz", 0) > 0]
gpu_sites = [k for k in profile["kernels"] if k["device"] == "gpu" and k["launches"] > 0 and k["seconds"] > 0]
if not profile.get("complete", True) or not gpu_instances or not gpu_sites:
    sys.exit("profile: complete=%s, %d instances on a named and described GPU, %d kernel sites timed on the GPU" % (
        profile.get("complete"), len(gpu_instances), len(gpu_sites)))
PY
    ); then
      note "PASS  fir_profile  (instances and kernel sites on the GPU)"
    else
      failures=$((failures + 1))
      note "FAIL  fir_profile  (see $log)"
    fi
    { echo "==== fir_profile"; echo "$verdict"; } >>"$log"
    echo "==== FIR run profile on the GPU"; echo "$verdict"

    # A run trace on the GPU (docs/runtime.md, "Run traces"): FIR traced, the trace checked for a GPU kernel
    # track per GPU instance with its launches on it (it comes back in $OUT: `streammap report --trace`
    # and tests/lang's checker read it here).
    local trace="${OUT:-$here}/fir-gpu-trace.json"
    DISPAR_TRACE="$trace" check fir_traced 4 "^frames=64 max_error" "$here/programs/fir"
    if verdict=$(python3 - "$trace" 2>&1 <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
gpu_tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"].endswith("kernels and library calls (GPU)")}
kernels = [e for e in events if e["ph"] == "X" and e.get("cat") == "kernel" and (e["pid"], e["tid"]) in gpu_tracks]
for key, name in sorted(gpu_tracks.items()):
    mine = [e["dur"] for e in kernels if (e["pid"], e["tid"]) == key]
    print("  %s: %d launches, %.1f us each on average" % (name, len(mine), sum(mine) / max(len(mine), 1)))
if not gpu_tracks or not kernels:
    sys.exit("trace: %d GPU kernel tracks, %d kernel spans on them" % (len(gpu_tracks), len(kernels)))
PY
    ); then
      note "PASS  fir_trace  ($(head -1 <<<"$verdict" | sed 's/^ *//'))"
    else
      failures=$((failures + 1))
      note "FAIL  fir_trace  ($verdict)"
    fi
    { echo "==== fir_trace"; echo "$verdict"; } >>"$log"

    # split_for's rates as a profile records them (docs/split.md, "Carry-over"): hotspot's site, with
    # the GPU's rate measured on the GPU.
    local split="${OUT:-$here}/hotspot-gpu-profile.json"
    DISPAR_PROFILE="$split" check hotspot_profiled 3 "^hotspot: last step" "$here/programs/hotspot" 2048 20
    if verdict=$(python3 - "$split" 2>&1 <<'PY'
import json, sys
profile = json.load(open(sys.argv[1]))
sites = profile.get("split_sites", [])
for s in sites:
    print("  split site %s (rank %d): GPU %.4g rows/s, one CPU thread %.4g rows/s" % (
        s["site"], s["rank"], s["gpu_rate"], s["cpu_thread_rate"]))
on_gpu = {i["rank"] for i in profile["instances"] if i["device"] == "gpu"}
if not [s for s in sites if s["rank"] in on_gpu and s["gpu_rate"] > 0 and s["cpu_thread_rate"] > 0]:
    sys.exit("profile: no split site of a GPU rank with both rates measured (%d sites)" % len(sites))
PY
    ); then
      note "PASS  hotspot_profile  ($(head -1 <<<"$verdict" | sed 's/^ *//'))"
    else
      failures=$((failures + 1))
      note "FAIL  hotspot_profile  ($verdict)"
    fi
    { echo "==== hotspot_profile"; echo "$verdict"; } >>"$log"

    local round mode best_plain=999 best_profiled=999 seconds with
    for round in 1 2 3 4 5; do
      for mode in plain profiled; do
        with=()
        if [ "$mode" = profiled ]; then with=(DISPAR_PROFILE="$here/overhead.json"); fi
        seconds=$(elapsed /dev/null env "${with[@]}" timeout 120 mpiexec.hydra -launcher fork -n 4 \
          "$here/programs/fir" 512) || { note "FAIL  fir_overhead  ($mode run $round)"; failures=$((failures + 1)); return; }
        echo "fir 512 frames $mode run $round: $seconds s" >>"$log"
        if [ "$mode" = profiled ]; then
          best_profiled=$(minimum "$best_profiled" "$seconds")
        else
          best_plain=$(minimum "$best_plain" "$seconds")
        fi
      done
    done
    note "INFO  fir_overhead  (512 frames, 4 ranks, best of 5: $best_plain s without, $best_profiled s with DISPAR_PROFILE: $(awk -v a="$best_plain" -v b="$best_profiled" 'BEGIN { printf "%+.1f%%", (b / a - 1) * 100 }'))"
    check profile_overhead 2 "overhead" "$here/bin/profile_overhead"
    echo "==== profile_overhead" && sed -n '/==== profile_overhead/,$p' "$log" | sed '1d'
  }

  echo "gpu-check: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
  check gpu_device_test 2 "PASSED" "$here/bin/gpu_device_test"
  check bench_device_pipe 2 "pipelined" "$here/bin/bench_device_pipe"
  while IFS='|' read -r name ranks pattern arguments tolerance; do
    # shellcheck disable=SC2086  # the arguments are words
    DISPAR_VERBOSE=1 check "$name" "$ranks" "$pattern" "$here/programs/$name" $arguments
    if [ -n "$tolerance" ]; then matches "$name" "$tolerance"; fi
  done <"$here/programs/list"
  profiles
  figure7

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
