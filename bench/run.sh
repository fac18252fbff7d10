#!/usr/bin/env bash
# Builds the benchmarks in Release and runs them all, printing the tables,
# writing JSON to build/bench-results/ and plotting time per edge against graph
# size (build/bench-results/time_per_edge.png). About 10 minutes on 2 cores.
# Not part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --bench
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDPOINT_BUILD_BENCH=ON \
  -DSHARDPOINT_BUILD_ONNX=ON -DSHARDPOINT_BUILD_TESTS=OFF -DSHARDPOINT_BUILD_EXAMPLES=OFF \
  "${launcher[@]}" >/dev/null
cmake --build build/bench -j "${SHARDPOINT_JOBS:-2}" --target bench_manual_shard bench_ring_buffer \
  bench_pipeline bench_balanced bench_node_view partition_quality onnx_roundtrip shardpoint_cli
out=build/bench-results
mkdir -p "$out"

echo "== core: manual_shard vs boost::topological_sort"
build/bench/bench/bench_manual_shard --benchmark_out="$out/manual_shard.json" \
  --benchmark_out_format=json
echo "== balanced_shard: speed against manual_shard, with communication, the DAG search"
build/bench/bench/bench_balanced --benchmark_out="$out/balanced.json" --benchmark_out_format=json
echo "== split quality against DeepSpeed's and PiPPy's splits"
models=../shared/models
[ -d "$models" ] || models=
build/bench/bench/partition_quality $models | tee "$out/partition_quality.md"
echo "== ring_buffer vs boost::lockfree::spsc_queue"
build/bench/bench/bench_ring_buffer --benchmark_repetitions=6 --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/ring_buffer.json" --benchmark_out_format=json
bench/ring_ratios.py "$out/ring_buffer.json"
echo "== pipeline emulation"
build/bench/bench/bench_pipeline --benchmark_out="$out/pipeline.json" --benchmark_out_format=json
echo "== node views against protobuf's parse of the same nodes"
build/bench/bench/bench_node_view --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/node_view.json" --benchmark_out_format=json
echo "== ONNX end to end"
bench/onnx_e2e.sh build/bench "$out"

# The plot: ns per edge by size, one column per (benchmark, labelling).
python3 - "$out/manual_shard.json" >"$out/time_per_edge.dat" <<'PY'
import json, sys
rows = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    name, v, random = b["name"].split("/")[:3]
    column = (name == "topological_sort") * 2 + (random.endswith("1"))
    rows.setdefault(int(b["vertices"]), [None] * 4)[column] = b["ns_per_edge"]
print("# vertices manual_topo manual_random toposort_topo toposort_random (ns per edge)")
for v in sorted(rows):
    print(v, *("%.3f" % x if x is not None else "NaN" for x in rows[v]))
PY
gnuplot -e "data='$out/time_per_edge.dat'; out='$out/time_per_edge.png'" bench/time_per_edge.gp
echo "JSON and time_per_edge.png in $out/"
