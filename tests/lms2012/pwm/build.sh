#!/usr/bin/env bash
# build.sh FWDIR BUILDDIR: LEGO's EV3 motor driver d_pwm.c (lms2012 V1.04H), unmodified,
# compiled for a 32-bit user-space process behind tests/lms2012/compat, plus the host glue
# (pwm_host.c) and a self-test that drives it against a motor model.
#
#   FWDIR     a checkout of the EV3 firmware sources (https://github.com/mindboards/ev3sources,
#             lms2012 V1.04H): FWDIR/lms2012/d_pwm/Linuxmod_AM1808/d_pwm.c must exist
#   BUILDDIR  where everything goes (keep it under target/): a copy of d_pwm.c and the
#             lms2012 headers it includes (src/, compared byte for byte with FWDIR), the
#             objects (obj/), BUILDDIR/libpwmhost.a (glue + compat + d_pwm) and
#             BUILDDIR/pwm-selftest
#
# Link libpwmhost.a with -m32 into a -fPIC shared object or program; it needs -lm only for
# the self-test. Everything in it has hidden visibility: nothing of d_pwm (names like Hw,
# SetPower, MuxRegMap) leaks out of a shared object it is linked into.
# Exit: 0 built; 1 a compile or link step failed; 2 a tool is missing (gcc with 32-bit
# support: Debian package gcc-multilib); 3 the firmware sources are missing.
set -euo pipefail

usage() { echo "usage: $0 FWDIR BUILDDIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
FWDIR=$1
BUILDDIR=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
COMPAT=$(cd "$HERE/../compat" && pwd)
CC=${CC:-gcc}

DPWM_REL=lms2012/d_pwm/Linuxmod_AM1808/d_pwm.c
HDR_REL=lms2012/lms2012/source
HEADERS="lms2012.h am1808.h lmstypes.h bytecodes.h"

if [ ! -f "$FWDIR/$DPWM_REL" ]; then
  echo "build.sh: no $DPWM_REL under '$FWDIR'." >&2
  echo "  The EV3 firmware sources (GPL, not part of this repository) are at" >&2
  echo "  https://github.com/mindboards/ev3sources (lms2012 V1.04H); pass the checkout as FWDIR." >&2
  exit 3
fi
for h in $HEADERS; do
  if [ ! -f "$FWDIR/$HDR_REL/$h" ]; then
    echo "build.sh: $HDR_REL/$h missing under '$FWDIR' (an incomplete ev3sources checkout?)" >&2
    exit 3
  fi
done

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int main(void){return 0;}\n' > "$probe/t.c"
if ! "$CC" -m32 "$probe/t.c" -o "$probe/t" 2>/dev/null; then
  echo "build.sh: '$CC -m32' cannot build a 32-bit program; install the Debian package gcc-multilib" >&2
  exit 2
fi

mkdir -p "$BUILDDIR"
BUILDDIR=$(cd "$BUILDDIR" && pwd)
SRC=$BUILDDIR/src
OBJ=$BUILDDIR/obj
mkdir -p "$SRC/lms2012/d_pwm/Linuxmod_AM1808" "$SRC/$HDR_REL" "$OBJ"

# The build copy keeps d_pwm.c's relative include path (../../lms2012/source/lms2012.h).
# It is a copy, never an edit: cmp proves it equals the original.
copy() {
  if ! cmp -s "$1" "$2"; then cp "$1" "$2"; fi
  cmp -s "$1" "$2" || { echo "build.sh: copy of $1 differs" >&2; exit 1; }
}
copy "$FWDIR/$DPWM_REL" "$SRC/$DPWM_REL"
for h in $HEADERS; do copy "$FWDIR/$HDR_REL/$h" "$SRC/$HDR_REL/$h"; done

# stale OUT IN...: OUT is missing or older than one of IN
stale() {
  local out=$1; shift
  [ -e "$out" ] || return 0
  local f
  for f in "$@"; do [ "$f" -nt "$out" ] && return 0; done
  return 1
}

COMMON=(-m32 -fPIC -O2 -g -fvisibility=hidden -fno-strict-aliasing -fno-strict-overflow)
COMPAT_DEPS=("$COMPAT"/compat.h "$COMPAT"/compat_runtime.h "$HERE/build.sh")
LEGO_HDRS=()
for h in $HEADERS; do LEGO_HDRS+=("$SRC/$HDR_REL/$h"); done

compile() { # OUT SRC DEPS... -- FLAGS...
  local out=$1 src=$2; shift 2
  local deps=()
  while [ "$1" != "--" ]; do deps+=("$1"); shift; done
  shift
  if stale "$out" "$src" "${deps[@]}"; then
    echo "  CC $(basename "$out")"
    "$CC" "${COMMON[@]}" "$@" -c "$src" -o "$out" || exit 1
  fi
}

# LEGO's driver: kernel headers from compat (force-included), ARM's unsigned char,
# -finstrument-functions for the glue's pin hooks (see pwm_host.c). Its own three
# set-but-unused variables are not ours to fix.
compile "$OBJ/d_pwm.o" "$SRC/$DPWM_REL" "${COMPAT_DEPS[@]}" "${LEGO_HDRS[@]}" -- \
  -include "$COMPAT/compat.h" -I"$COMPAT" -funsigned-char -finstrument-functions \
  -Wall -Wno-unused-but-set-variable
compile "$OBJ/compat.o" "$COMPAT/compat.c" "${COMPAT_DEPS[@]}" -- -Wall -Wextra
compile "$OBJ/pwm_host.o" "$HERE/pwm_host.c" "$HERE/pwm_host.h" "${COMPAT_DEPS[@]}" "${LEGO_HDRS[@]}" -- \
  -I"$COMPAT" -I"$SRC/$HDR_REL" -Wall -Wextra
compile "$OBJ/selftest.o" "$HERE/selftest.c" "$HERE/pwm_host.h" "${COMPAT_DEPS[@]}" "${LEGO_HDRS[@]}" -- \
  -I"$COMPAT" -I"$SRC/$HDR_REL" -Wall -Wextra

LIB=$BUILDDIR/libpwmhost.a
if stale "$LIB" "$OBJ/d_pwm.o" "$OBJ/compat.o" "$OBJ/pwm_host.o"; then
  echo "  AR $(basename "$LIB")"
  rm -f "$LIB"
  ar rcs "$LIB" "$OBJ/pwm_host.o" "$OBJ/compat.o" "$OBJ/d_pwm.o" || exit 1
fi
if stale "$BUILDDIR/pwm-selftest" "$OBJ/selftest.o" "$LIB"; then
  echo "  LD pwm-selftest"
  "$CC" -m32 -o "$BUILDDIR/pwm-selftest" "$OBJ/selftest.o" "$LIB" -lm || exit 1
fi
echo "build.sh: $LIB and $BUILDDIR/pwm-selftest ready"
