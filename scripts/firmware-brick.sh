#!/usr/bin/env bash
# Builds the firmware brick: LEGO's EV3 VM (lms2012 V1.04H) as a 32-bit Linux process with
# cubot's device shim, into target/lms2012/ (or $CUBOT_LMS2012_DIR).
#
#   scripts/firmware-brick.sh [FWDIR]
#
# FWDIR is a checkout of LEGO's sources (https://github.com/mindboards/ev3sources, the folder
# that holds lms2012/); default $CUBOT_FIRMWARE_SRC, else ../shared/ev3-firmware next to the
# repository. LEGO's code is GPL and never enters the repository: it is copied into
# target/lms2012/build/ and built there; the two one-line changes it needs are made by sed on
# that copy (see patch_build_copy). Our own parts (tests/lms2012/) are built beside it.
#
# Products: bin/lms2012 (the VM), lib/ (its libraries, the "no device" stand-ins, the shim
# libcubot_brick.so), root/ (the tree the VM runs in: cwd = a private copy of it),
# bin/brick-check (a test client that boots the brick and checks a few direct commands),
# VERSION (firmware version and FWDIR).
#
# Nothing here is rewritten in place: every product is made beside its place and renamed
# onto it (replace_file, root/ swapped whole). A running VM maps lib/ (a process started from
# this folder, or brick-check's), and a library rewritten under its mappings kills it
# (SIGBUS, SIGSEGV); target/ trees seeded with hard links share these files, so a write in
# place would also reach every other tree. cubot runs private copies (process.rs); this
# keeps the build folder itself safe to use while it is rebuilt.
#
# Exit: 0 built (or already up to date), 2 a tool is missing (the message names the Debian
# package; scripts/setup.sh installs them), 3 the firmware sources are missing, 1 the build
# failed (the log's tail is shown).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
harness=$repo/tests/lms2012
fwdir=${1:-${CUBOT_FIRMWARE_SRC:-$repo/../shared/ev3-firmware}}
out=${CUBOT_LMS2012_DIR:-$repo/target/lms2012}

say() { echo "firmware-brick: $*" >&2; }

# ---- sources ----
if [ ! -f "$fwdir/lms2012/lms2012/source/lms2012.h" ] || [ ! -f "$fwdir/lms2012/lms2012/Linux_X86/Makefile" ]; then
  say "LEGO's EV3 firmware sources (lms2012 V1.04H) are not at '$fwdir'."
  say "Get them from the public repository https://github.com/mindboards/ev3sources"
  say "(git clone https://github.com/mindboards/ev3sources) and point at the checkout:"
  say "  scripts/firmware-brick.sh /path/to/ev3sources   or   CUBOT_FIRMWARE_SRC=/path/to/ev3sources"
  exit 3
fi
fwdir=$(cd "$fwdir" && pwd)

# ---- tools ----
need_pkg() { say "$1 is missing: install the Debian package $2 (scripts/setup.sh does)"; exit 2; }
command -v make >/dev/null || need_pkg "make" make
command -v gcc >/dev/null || need_pkg "gcc" build-essential
command -v pkg-config >/dev/null || need_pkg "pkg-config" pkg-config
command -v java >/dev/null || need_pkg "java (for LEGO's bundled lmsasm assembler)" default-jre-headless
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'int main(void) { return 0; }' > "$probe/m32.c"
gcc -m32 -o "$probe/m32" "$probe/m32.c" 2>/dev/null || need_pkg "gcc -m32 (32-bit libc and libgcc)" gcc-multilib
header_pkg() { # header package [cflags]
  echo "#include <$1>" > "$probe/h.c"
  # shellcheck disable=SC2086 # $3 is a list of flags
  gcc -m32 -fsyntax-only ${3:-} "$probe/h.c" 2>/dev/null || need_pkg "the header $1" "$2"
}
header_pkg bluetooth/bluetooth.h libbluetooth-dev
pkg-config --exists dbus-1 || need_pkg "dbus-1 (headers)" libdbus-1-dev
header_pkg dbus/dbus.h libdbus-1-dev "$(pkg-config --cflags dbus-1)"
header_pkg X11/Xlib.h libx11-dev
header_pkg X11/xpm.h libxpm-dev

# ---- nothing changed since the last build? ----
stamp=$out/.built
if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$fwdir" ] &&
   [ -z "$(find "$fwdir/lms2012" "$harness" "${BASH_SOURCE[0]}" -newer "$stamp" -print -quit)" ]; then
  say "up to date ($out)"
  exit 0
fi

started=$(date +%s)
build=$out/build
log=$out/build.log
mkdir -p "$out"
rm -f "$log" # a new file, not the old one emptied (see "rewritten in place" above)
: > "$log"
# Puts a file in place by renaming a fresh copy onto it: a process that maps the old file
# keeps it whole, and a hard link of it elsewhere keeps the old contents.
replace_file() { # source destination
  local tmp
  tmp=$(dirname "$2")/.$(basename "$2").new.$$
  cp -p "$1" "$tmp" && mv -f "$tmp" "$2"
}
run() { # run a build step, its output in the log; on failure show the log's tail
  if ! "$@" >>"$log" 2>&1; then
    say "failed: $*"
    tail -n 40 "$log" >&2
    say "whole log: $log"
    exit 1
  fi
}

# ---- the build copy of LEGO's tree ----
# Another FWDIR than last time: start over. Otherwise copy only what is newer, keeping
# timestamps, so make rebuilds only what changed.
if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" != "$fwdir" ]; then
  rm -rf "$build"
fi
mkdir -p "$build"
cp -R -u --remove-destination --preserve=timestamps "$fwdir/lms2012" "$build/"
chmod -R u+w "$build"

# The two one-line changes the PC build needs, made on the copy only (never committed):
#  - c_input's x86 "simulation" writes sweeping fake sensor values and tacho counts into the
#    port memories every 10 ms (cInputUpdate, under #ifdef Linux_X86); a firmware brick's
#    ports are the world's, so that call is switched off;
#  - c_ui computes the battery voltage from the analog memory only #ifndef Linux_X86 (on x86
#    Vbatt stays 9.0 V); the shim fills that memory, so the computation is switched on.
patch_build_copy() {
  # LEGO's files end their lines with CRLF: every pattern allows the CR ($cr).
  local input=$build/lms2012/c_input/source/c_input.c ui=$build/lms2012/c_ui/source/c_ui.c
  local cr=$'\r'
  if grep -A1 "^#ifdef Linux_X86$cr\?\$" "$input" | grep -q 'cInputSimulate(Time,0,'; then
    sed -i "/^#ifdef Linux_X86$cr\?\$/{N;s/^#ifdef Linux_X86\($cr\?\)\n\(  cInputSimulate(Time,0,\)/#ifdef CUBOT_X86_INPUT_SIMULATION\1\n\2/}" "$input"
  fi
  grep -q "^#ifdef CUBOT_X86_INPUT_SIMULATION$cr\?\$" "$input" || { say "c_input.c: the x86 simulation guard was not found"; exit 1; }
  if grep -A2 "^void      cUiUpdatePower(void)$cr\?\$" "$ui" | grep -q "^#ifndef Linux_X86$cr\?\$"; then
    sed -i "/^void      cUiUpdatePower(void)$cr\?\$/,/^#ifndef Linux_X86$cr\?\$/{s/^#ifndef Linux_X86\($cr\?\)\$/#if 1 \/\/ cubot: battery from the analog memory\1/}" "$ui"
  fi
  grep -q "^#if 1 // cubot: battery from the analog memory$cr\?\$" "$ui" || { say "c_ui.c: the battery guard was not found"; exit 1; }
}
patch_build_copy

mkdir -p "$out/bin" "$out/lib" "$out/stubs"

# ---- our tools and link stand-ins ----
newer_than() { # output input... : true when the output is missing or older than an input
  local output=$1 input; shift
  [ -f "$output" ] || return 0
  for input in "$@"; do [ "$input" -nt "$output" ] && return 0; done
  return 1
}
cc_if_newer() { # output source... -- flags... : compile when a source is newer than the output
  local output=$1; shift
  local sources=()
  while [ "$1" != -- ]; do sources+=("$1"); shift; done
  shift
  if newer_than "$output" "${sources[@]}"; then run gcc "$@" -o "$output" "${sources[@]}"; fi
}
cc_if_newer "$out/bin/bmp2xbm" "$harness/tools/bmp2xbm.c" -- -O2 -Wall -Wextra
cc_if_newer "$out/lib/libcubot_nodevice.so" "$harness/stubs/nodevice.c" -- \
  -m32 -O2 -Wall -fPIC -shared -Wl,-soname,libcubot_nodevice.so
for lib in usb-1.0 dbus-1 bluetooth X11 Xpm; do
  echo "INPUT(-lcubot_nodevice)" > "$out/stubs/lib$lib.so"
done
ln -sf ../lib/libcubot_nodevice.so "$out/stubs/libcubot_nodevice.so"

# ---- LEGO's VM, from its own Linux_X86 target ----
# rules.mk takes CFLAGS/LDFLAGS from the environment. -m32: the VM keeps pointers in 32-bit
# bytecode values. -fcommon: c_daisy.h defines globals in every file that includes it.
# --no-as-needed: the libraries' link order. The run path $ORIGIN/../lib lets the VM find its
# libraries (LEGO's c_* and our stand-ins) in lib/ wherever target/ is; it goes to the linker
# in a response file because make and the shell would each expand the $.
x86=$build/lms2012/lms2012/Linux_X86
echo '-rpath=$ORIGIN/../lib' > "$out/stubs/rpath.opt"
export CFLAGS="-m32 -fcommon -Wno-unused-result"
export LDFLAGS="-m32 -Wl,--no-as-needed -L$out/stubs -Wl,@$out/stubs/rpath.opt"
run make -C "$x86" BMP_TO_XBM="$out/bin/bmp2xbm"
install -m 755 "$x86/sys/lms2012" "$out/bin/lms2012"
for lib in "$x86"/sys/lib/libc_*.so; do replace_file "$lib" "$out/lib/$(basename "$lib")"; done

# ---- the stock UI program (the direct-command dispatcher) and its files ----
run make -C "$build/lms2012/lmssrc/ui" install INSTALL_TO=X86 BMP_TO_XBM="$out/bin/bmp2xbm"

# ---- motors: LEGO's d_pwm.c, unmodified, in user space (tests/lms2012/pwm/build.sh) ----
run "$harness/pwm/build.sh" "$fwdir" "$out/pwm"

# ---- the shim, with d_pwm linked in ----
shim_sources=("$harness"/shim/*.c)
if newer_than "$out/lib/libcubot_brick.so" "${shim_sources[@]}" "$harness"/shim/*.h \
     "$out/pwm/libpwmhost.a" "$harness/pwm/pwm_host.h" "$build/lms2012/lms2012/source/lms2012.h"; then
  run gcc -m32 -O2 -g -Wall -Wextra -fPIC -shared -DLinux_X86 -I"$harness/pwm" \
    -I"$build/lms2012/lms2012/source" -Wl,-soname,libcubot_brick.so -Wl,--no-undefined \
    -o "$out/lib/libcubot_brick.so" "${shim_sources[@]}" "$out/pwm/libpwmhost.a" -ldl -lm
fi

# ---- the test client ----
cc_if_newer "$out/bin/brick-check" "$harness/tools/brick_check.c" -- -O2 -Wall -Wextra

# ---- root/: what the VM needs at run time ----
# Made whole beside the old one, then swapped in: a brick starting meanwhile copies the old
# tree or the new one, never half of one.
root=$out/root
rm -rf "$root.new" "$root.old"
mkdir -p "$root.new/sys/ui" "$root.new/sys/settings" "$root.new/prjs" "$root.new/apps" \
  "$root.new/tools" "$root.new/tmp"
cp -p "$x86"/sys/ui/* "$root.new/sys/ui/"
cp -p "$build/lms2012/lms2012/Linux_AM1808/sys/settings/typedata.rcf" "$root.new/sys/settings/"
if [ -d "$root" ]; then mv "$root" "$root.old"; fi
mv "$root.new" "$root"
rm -rf "$root.old"

vers=$(sed -n 's/^#define *VERS  *\([0-9.]*\).*/\1/p' "$build/lms2012/lms2012/source/lms2012.h")
special=$(sed -n "s/^#define *SPECIALVERS *'\(.\)'.*/\1/p" "$build/lms2012/lms2012/source/lms2012.h")
echo "V$vers$special $fwdir" > "$out/.VERSION.new.$$" && mv -f "$out/.VERSION.new.$$" "$out/VERSION"
echo "$fwdir" > "$stamp.new.$$" && mv -f "$stamp.new.$$" "$stamp"
say "built in $(( $(date +%s) - started )) s: $out ($(cat "$out/VERSION"))"
