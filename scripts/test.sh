#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the build needs, then runs
# every test (unit, property, integration, CLI, simulator over real ptys).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --all-targets "$@"
