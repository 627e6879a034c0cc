#!/usr/bin/env bash
# Installs, idempotently, the Debian packages the default `cubot` build needs.
#   build-essential pkg-config  - C toolchain for -sys crates
#   libopencv-dev clang libclang-dev - the `opencv` crate (vision feature) and its binding generator
#   libudev-dev                 - serialport's port enumeration (serial feature) and
#                                 hidapi's hidraw backend, the EV3 over USB (usb feature)
#   nasm                        - SIMD for nokhwa's MJPEG decoder (camera feature)
#   gcc-multilib libbluetooth-dev libdbus-1-dev libx11-dev libxpm-dev
#                               - the firmware brick (scripts/firmware-brick.sh): LEGO's EV3 VM
#                                 is built for 32 bits; the four header packages let its
#                                 Bluetooth, D-Bus and X11 code compile (it links against
#                                 cubot's own "no device" stand-ins, not these libraries)
#   default-jre-headless        - LEGO's bundled bytecode assembler (Java), only if no java
# Packages already present are not touched; nothing runs when all are installed.
set -euo pipefail
pkgs=(build-essential pkg-config libopencv-dev clang libclang-dev libudev-dev nasm
  gcc-multilib libbluetooth-dev libdbus-1-dev libx11-dev libxpm-dev)
command -v java >/dev/null || pkgs+=(default-jre-headless)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust (rustup) first" >&2; exit 2; }
