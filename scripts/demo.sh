#!/usr/bin/env bash
# The main job on a fresh machine: installs what the build needs, builds cubot, and runs
# it end to end on the built-in simulator.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release
bin=target/release/cubot
state=$("$bin" random --seed 2026)
echo "== a scanned state"
"$bin" show "$state"
echo "== validate"
"$bin" validate "$state"
