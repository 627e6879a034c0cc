#!/usr/bin/env bash
# The main job on a fresh machine: installs what the build needs, builds cubot, and runs
# it end to end on the built-in simulated MindCub3r: scan with the colour sensor, resolve,
# solve, plan, execute, verify. Ends with the simulator's cube at the target (exit 0).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release
bin=target/release/cubot
seed=${SEED:-2026}
echo "== cubot run --sim (simulated MindCub3r, seed $seed, 20x real time)"
"$bin" run --sim --seed "$seed" --speed 20
echo "== the same cube into a chosen state (a checkerboard), in any whole-cube orientation"
target=$("$bin" apply solved "U2 D2 R2 L2 F2 B2" | head -1)
"$bin" run --sim --seed "$seed" --speed 50 --target "$target"
