#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the build needs, then runs
# every test (unit, property, integration, CLI, simulator over real ptys).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The firmware brick (LEGO's EV3 firmware as the brick under test) is built first; without
# LEGO's sources its tests say why they skip (the script names the public repository and
# CUBOT_FIRMWARE_SRC), and every other test runs.
fw=0
bash scripts/firmware-brick.sh || fw=$?
case $fw in
  0) ;;
  3) echo "test: the firmware-brick tests will be skipped (see above)" >&2 ;;
  *) echo "test: building the firmware brick failed (exit $fw)" >&2; exit "$fw" ;;
esac
cargo test --all-targets "$@"
