#!/usr/bin/env bash
# The main job: installs what is missing, builds, and shards a generated
# 48-layer transformer-like graph into 4 pipeline stages, then validates it.
# Arguments are passed to the example: scripts/demo.sh [LAYERS] [STAGES]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build/demo -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDPOINT_BUILD_TESTS=OFF \
  "${launcher[@]}" >/dev/null
cmake --build build/demo -j "${SHARDPOINT_JOBS:-2}" --target example_layered >/dev/null
exec build/demo/examples/example_layered "$@"
