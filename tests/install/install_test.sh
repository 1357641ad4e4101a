#!/usr/bin/env bash
# Installs DISPAR from a built tree into a temporary prefix, moves the installed tree (it must be
# relocatable), builds tests/install/project against it with find_package(Dispar) outside the source
# tree, runs the program, and checks that editing a header the .dsp includes rebuilds it. With --deb,
# the same from the Debian package `cpack -G DEB` makes, unpacked (dpkg-deb -x) rather than installed
# (the test must not change the machine), after checking its control data and that apt-get can install
# it with its dependencies (simulated).
#   install_test.sh [--deb] BUILD_DIR SOURCE_DIR MPIEXEC
set -euo pipefail
deb=0
if [ "${1:-}" = --deb ]; then deb=1; shift; fi
build=$1 source=$2 mpiexec=$3
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

fail() { echo "install_test: $*" >&2; exit 1; }

if [ $deb = 1 ]; then
  (cd "$build" && cpack -G DEB -B "$work/deb") > "$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack failed"; }
  package=$(ls "$work"/deb/dispar_*.deb)
  control=$(dpkg-deb -f "$package")
  for dependency in mpich libmpich-dev libclang-cpp19 libsqlite3-0 libpq5 libhwloc15; do
    grep -q "^Depends:.*\b$dependency\b" <<< "$control" || fail "the package does not depend on $dependency: $control"
  done
  # `apt-get install ./dispar_*.deb` installs it with its dependencies: simulated here (the test must not
  # change the machine), and every dependency must have an installation candidate in the configured
  # archives that satisfies its version, which is what a fresh Debian 12 pulls.
  apt-get install --simulate "$package" > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get cannot install the package"; }
  grep -q "^Inst dispar " "$work/apt.log" || { cat "$work/apt.log"; fail "apt-get would not install dispar"; }
  IFS=',' read -ra groups <<< "$(dpkg-deb -f "$package" Depends)"
  for group in "${groups[@]}"; do
    satisfied=0
    IFS='|' read -ra alternatives <<< "$group"
    for alternative in "${alternatives[@]}"; do
      read -r name relation version <<< "$(tr -d '()' <<< "$alternative")"
      candidate=$(apt-cache policy "$name" | awk '/Candidate:/ {print $2}')
      [ -n "$candidate" ] && [ "$candidate" != "(none)" ] || continue
      if [ -z "${relation:-}" ] || dpkg --compare-versions "$candidate" "$relation" "$version"; then satisfied=1; fi
    done
    [ $satisfied = 1 ] || fail "no installation candidate for the dependency '$group' (apt-get update, as scripts/setup.sh does, first)"
  done
  listing=$(dpkg-deb -c "$package")
  grep -q "./usr/lib/systemd/system/streammap-daemon.service" <<< "$listing" || fail "no systemd unit in the package"
  for page in disparcc streammap; do
    grep -q "./usr/share/man/man1/$page.1.gz" <<< "$listing" || fail "no man page for $page in the package"
  done
  # Debian's policy, as lintian checks it: no error (copyright, changelog, description, man pages...).
  command -v lintian > /dev/null || fail "lintian is not installed (scripts/setup.sh --tests installs it)"
  lintian --fail-on error "$package" > "$work/lintian.log" 2>&1 || { cat "$work/lintian.log"; fail "lintian reports errors"; }
  # Stripped: the build tree's RelWithDebInfo libraries made a 25 MB package; without debug information
  # it is a third of that.
  size=$(stat -c %s "$package")
  [ "$size" -lt 12000000 ] || fail "the package is $size bytes: not stripped?"
  dpkg-deb -x "$package" "$work/root"
  # The daemon's unit starts the streammap the package installs.
  grep -q "^ExecStart=/usr/bin/streammap daemon " "$work/root/usr/lib/systemd/system/streammap-daemon.service" \
    || fail "the unit does not run /usr/bin/streammap: $(grep ExecStart "$work/root/usr/lib/systemd/system/streammap-daemon.service")"
  # The man pages are the tools' own --help: every option of disparcc's is on its page.
  zcat "$work/root/usr/share/man/man1/disparcc.1.gz" | grep -q -- "--emit-rtg FILE" || fail "disparcc.1 lacks --emit-rtg"
  zcat "$work/root/usr/share/man/man1/streammap.1.gz" | grep -q "^\.SH STREAMMAP map$" || fail "streammap.1 lacks map"
  mv "$work/root/usr" "$work/dispar"
else
  cmake --install "$build" --prefix "$work/staged" > "$work/install.log" || { cat "$work/install.log"; fail "install failed"; }
  mv "$work/staged" "$work/dispar"   # relocated: nothing may point back into the staging prefix or the build tree
fi
prefix=$work/dispar
for f in bin/disparcc bin/streammap include/dispar/dispar.h lib/dispar/libdispar_runtime.a \
         lib/cmake/Dispar/DisparConfig.cmake share/doc/dispar/streammap.md lib/systemd/system/streammap-daemon.service; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done

cp -r "$source/tests/install/project" "$work/project"
cmake -S "$work/project" -B "$work/project/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" \
  || { cat "$work/configure.log"; fail "configure failed"; }
cmake --build "$work/project/build" -- -v > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build failed"; }
# The installed disparcc builds against the installed runtime, never the build tree's.
grep -q -- "-o $work/project/build/bin/squares" "$work/build.log" || { cat "$work/build.log"; fail "disparcc did not run"; }
"$prefix/bin/disparcc" -v "$work/project/squares.dsp" -I "$work/project/include" -DOFFSET=1 -o "$work/verbose" \
  > "$work/verbose.log" 2>&1 || { cat "$work/verbose.log"; fail "disparcc -v failed"; }
grep -q "$prefix/lib/dispar/libdispar_runtime.a" "$work/verbose.log" || { cat "$work/verbose.log"; fail "not the installed runtime"; }
for tree in "$(cd "$build" && pwd)" "$(cd "$source" && pwd)"; do
  if grep -q "$tree" "$work/verbose.log"; then cat "$work/verbose.log"; fail "$tree is used by the installed disparcc"; fi
done

expected() {  # sum of scale * (i + 1)^2, i in [0, 100): computed here, independently of the program
  local scale=$1 sum=0 i
  for ((i = 1; i <= 100; ++i)); do sum=$((sum + scale * i * i)); done
  echo "sum=$sum"
}
run() { (cd "$work/project/build/bin" && "$mpiexec" -launcher fork -n 4 ./squares); }
[ -f "$work/project/build/bin/squares.rtg.json" ] || fail "no RTG written"
out=$(run) || fail "the program failed: $out"
[ "$out" = "$(expected 2)" ] || fail "expected $(expected 2), got: $out"

# Editors: the build directory's compile_commands.json has the .dsp, and clangd opens it without errors.
database=$work/project/build/compile_commands.json
[ -f "$database" ] || fail "no compile_commands.json"
grep -Eq "\"file\" *: *\"$work/project/squares.dsp\"" "$database" || { cat "$database"; fail "the .dsp is not in compile_commands.json"; }
clangd=$(command -v clangd-19 || true)
[ -n "$clangd" ] || fail "clangd-19 missing (scripts/setup.sh installs it)"
"$clangd" --check="$work/project/squares.dsp" --compile-commands-dir="$work/project/build" > "$work/clangd.log" 2>&1 \
  || { tail -40 "$work/clangd.log"; fail "clangd --check failed"; }
grep -q "All checks completed, 0 errors" "$work/clangd.log" || { tail -40 "$work/clangd.log"; fail "clangd reports errors"; }

# Editing the included header rebuilds the program (disparcc -MF and the package's DEPFILE).
sleep 1
echo "#define SCALE 3" > "$work/project/include/scale.h"
cmake --build "$work/project/build" > "$work/rebuild.log" 2>&1 || { cat "$work/rebuild.log"; fail "rebuild failed"; }
grep -q "disparcc squares.dsp" "$work/rebuild.log" || { cat "$work/rebuild.log"; fail "the header change did not rebuild"; }
out=$(run) || fail "the rebuilt program failed: $out"
[ "$out" = "$(expected 3)" ] || fail "after the header change expected $(expected 3), got: $out"
echo "install_test: ok"
