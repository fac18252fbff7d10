#!/usr/bin/env bash
# Builds the benchmarks in Release and runs them, printing the tables and
# writing JSON to build/bench-results/. Not part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --bench
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDPOINT_BUILD_BENCH=ON \
  -DSHARDPOINT_BUILD_TESTS=OFF -DSHARDPOINT_BUILD_EXAMPLES=OFF "${launcher[@]}" >/dev/null
cmake --build build/bench -j "${SHARDPOINT_JOBS:-2}" --target bench_manual_shard bench_ring_buffer
out=build/bench-results
mkdir -p "$out"
build/bench/bench/bench_manual_shard --benchmark_out="$out/manual_shard.json" --benchmark_out_format=json
build/bench/bench/bench_ring_buffer --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/ring_buffer.json" --benchmark_out_format=json
echo "JSON in $out/"
