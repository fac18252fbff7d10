#!/usr/bin/env bash
# ONNX end to end: `shardpoint shard` against a bare protobuf parse and
# serialise of the same file (bench/onnx_roundtrip) and against the same
# procedure written with the Python onnx package (bench/poprt_reference.py),
# on generated decoders of ~10^5 and ~10^6 nodes and on the 100 MB ResNet-50
# of ../shared/models. Wall time (best of N runs) and peak RSS, from GNU time.
#
#   bench/onnx_e2e.sh BUILD_DIR OUT_DIR [--smoke | --scaling [MOST_NODES]]
#
# BUILD_DIR has SHARDPOINT_BUILD_ONNX and SHARDPOINT_BUILD_BENCH on. --smoke
# runs a 10-layer decoder once, to keep the script working (scripts/test.sh).
# --scaling runs decoders of 10^4 nodes up to MOST_NODES (default 4*10^6),
# also timing `suggest` and `inspect` and, in one interpreter, shardpoint's
# Python API against the onnx package (bench/python/inprocess.py; BUILD_DIR
# built with SHARDPOINT_BUILD_PYTHON), then fits each tool's time to nodes^k
# on the decoders of 10^5 nodes and more (OUT_DIR/onnx_scaling.txt) and
# plots them (OUT_DIR/onnx_scaling.svg, with gnuplot). Writes
# OUT_DIR/onnx_e2e.json and prints a table.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bench/onnx_e2e.sh BUILD_DIR OUT_DIR [--smoke | --scaling [MOST_NODES]]"
build=${1:?$usage}
out=${2:?$usage}
mode=${3:-}
most_nodes=${4:-4000000}
shardpoint=$build/onnx_adapter/shardpoint
roundtrip=$build/bench/onnx_roundtrip
for f in "$shardpoint" "$roundtrip"; do
  [ -x "$f" ] || { echo "onnx_e2e: $f not built (configure with ONNX and BENCH on)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "onnx_e2e: GNU time (/usr/bin/time) is missing" >&2; exit 1; }
python=
if /usr/bin/python3 -c 'import onnx, yaml' 2>/dev/null; then
  python=/usr/bin/python3
else
  echo "onnx_e2e: python3-onnx or python3-yaml missing: the Python reference is skipped"
fi
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

json=()
printf '%-14s %10s %-22s %9s %9s %7s\n' model "size MB" tool "wall s" "RSS MB" "x rt"

# measure NAME MODEL REPS TOOL-LABEL COMMAND...: best wall time, largest RSS.
rt_wall=
measure() {
  local name=$1 model=$2 reps=$3 label=$4
  shift 4
  local best= rss=0
  for _ in $(seq "$reps"); do
    rm -f "$work/out.onnx"
    if ! /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/stdout" 2>"$work/stderr"; then
      cat "$work/stderr" >&2
      echo "onnx_e2e: $label failed on $name" >&2
      exit 1
    fi
    [ "$label" = inspect ] || [ -s "$work/out.onnx" ] ||
      { echo "onnx_e2e: $label wrote nothing on $name" >&2; exit 1; }
    read -r wall kb <"$work/time"
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; fi
    [ "$kb" -gt "$rss" ] && rss=$kb
  done
  [ "$label" = roundtrip ] && rt_wall=$best
  local size ratio
  size=$(stat -c %s "$model")
  ratio=$(awk "BEGIN{printf \"%.2f\", $best / ($rt_wall > 0 ? $rt_wall : 0.01)}")
  printf '%-14s %10.1f %-22s %9.2f %9.1f %7s\n' "$name" "$(awk "BEGIN{print $size / 1e6}")" \
    "$label" "$best" "$(awk "BEGIN{print $rss / 1024}")" "$ratio"
  json+=("{\"model\": \"$name\", \"bytes\": $size, \"tool\": \"$label\", \"wall_seconds\": $best, \"peak_rss_kib\": $rss, \"vs_roundtrip\": $ratio}")
}

run_model() {
  local name=$1 model=$2 config=$3 reps=$4
  measure "$name" "$model" "$reps" roundtrip "$roundtrip" "$model" "$work/out.onnx"
  measure "$name" "$model" "$reps" "shard --report none" "$shardpoint" shard --input-model "$model" \
    --manual-sharding-config "$config" --output-model "$work/out.onnx" --report none
  measure "$name" "$model" "$reps" "shard (table report)" "$shardpoint" shard --input-model "$model" \
    --manual-sharding-config "$config" --output-model "$work/out.onnx"
  if [ "$mode" = --scaling ]; then
    measure "$name" "$model" "$reps" "suggest" "$shardpoint" suggest --input-model "$model" \
      --stages 4 --output-model "$work/out.onnx"
    measure "$name" "$model" "$reps" "inspect" "$shardpoint" inspect "$model"
  fi
  if [ -n "$python" ]; then
    measure "$name" "$model" "$reps" "python onnx" "$python" bench/poprt_reference.py "$model" \
      "$config" "$work/out.onnx"
  fi
  if [ "$mode" = --scaling ] && [ -n "$python" ]; then
    inprocess "$name" "$model" "$config" "$reps"
  fi
}

# inprocess NAME MODEL CONFIG REPS: shardpoint's Python API and the onnx
# package in one interpreter (seconds, best of REPS; no RSS: one process).
inprocess() {
  local name=$1 model=$2 config=$3 reps=$4 times
  times=$(PYTHONPATH="$build/python" "$python" bench/python/inprocess.py "$model" "$config" \
    "$work" "$reps") || { echo "onnx_e2e: inprocess.py failed on $name" >&2; exit 1; }
  local size tool
  size=$(stat -c %s "$model")
  for tool in api api_file api_report onnx; do
    local t
    t=$("$python" -c "import json,sys; print(json.loads(sys.argv[1])['$tool'])" "$times")
    printf '%-14s %10.1f %-22s %9.2f %9s %7s\n' "$name" "$(awk "BEGIN{print $size / 1e6}")" \
      "in-process $tool" "$t" - "$(awk "BEGIN{printf \"%.2f\", $t / $rt_wall}")"
    json+=("{\"model\": \"$name\", \"bytes\": $size, \"tool\": \"in-process $tool\", \"wall_seconds\": $t}")
  done
}

# A decoder of `layers` layers, cut into four stages at its quarter points.
decoder() {
  local layers=$1 reps=$2 name=$3
  "$shardpoint" synth decoder --layers "$layers" "$work/$name.onnx"
  : >"$work/$name.yaml"
  for k in 1 2 3; do
    echo "- {node: layer$((layers * k / 4 - 1))/mlp_residual, device: $((k - 1)), stage: $((k - 1))}" \
      >>"$work/$name.yaml"
  done
  run_model "$name" "$work/$name.onnx" "$work/$name.yaml" "$reps"
  rm -f "$work/$name.onnx"
}

if [ "$mode" = --smoke ]; then
  decoder 10 1 decoder-290
elif [ "$mode" = --scaling ]; then
  # 29 nodes a layer: 10^4, 3*10^4, 10^5, 3*10^5, 10^6, 2*10^6, 4*10^6 nodes.
  for nodes in 10000 30000 100000 300000 1000000 2000000 4000000; do
    [ "$nodes" -le "$most_nodes" ] || break
    decoder $((nodes / 29)) "$([ "$nodes" -le 100000 ] && echo 3 || echo 1)" "decoder-$nodes"
  done
else
  decoder 4000 3 decoder-116k
  decoder 34483 1 decoder-1m
  resnet=../shared/models/resnet50-v1-7-replica.onnx
  if [ -f "$resnet" ]; then
    run_model resnet50-v1-7 "$resnet" examples/resnet50/shard.yaml 3
  else
    echo "onnx_e2e: $resnet not found: the ResNet-50 row is skipped"
  fi
fi

{
  echo "["
  for i in "${!json[@]}"; do
    echo "  ${json[$i]}$([ "$i" -lt $((${#json[@]} - 1)) ] && echo ,)"
  done
  echo "]"
} >"$out/onnx_e2e.json"
echo "JSON in $out/onnx_e2e.json"

if [ "$mode" = --scaling ]; then
  # Seconds by nodes, one column a tool; the exponent k of a least-squares
  # fit of log(time) to log(nodes) over the decoders of 10^5 nodes and more
  # (below, a process's start is a large part of the time).
  /usr/bin/python3 - "$out/onnx_e2e.json" "$out/onnx_scaling.dat" "$out/onnx_scaling.txt" <<'PY'
import json, math, sys
rows = json.load(open(sys.argv[1]))
tools = []
for r in rows:
    if r["tool"] not in tools:
        tools.append(r["tool"])
by = {}
for r in rows:
    by.setdefault(int(r["model"].split("-")[1]), {})[r["tool"]] = r["wall_seconds"]
with open(sys.argv[2], "w") as f:
    f.write(" ".join(['"nodes"'] + ['"%s"' % t for t in tools]) + "\n")
    for n in sorted(by):
        f.write(" ".join([str(n)] + [str(by[n].get(t, "NaN")) for t in tools]) + "\n")
with open(sys.argv[3], "w") as f:
    for t in tools:
        pts = [(math.log(n), math.log(by[n][t])) for n in by if n >= 100000 and by[n].get(t)]
        if len(pts) < 2:
            continue
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        k = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
        f.write(f"{t}: time ~ nodes^{k:.2f} ({len(pts)} sizes from 10^5)\n")
PY
  cat "$out/onnx_scaling.txt"
  if command -v gnuplot >/dev/null; then
    columns=$(head -n 1 "$out/onnx_scaling.dat" | grep -o '"[^"]*"' | wc -l)
    gnuplot -e "data='$out/onnx_scaling.dat'; out='$out/onnx_scaling.svg'; columns=$columns" \
      bench/onnx_scaling.gp
    echo "plot in $out/onnx_scaling.svg"
  else
    echo "onnx_e2e: gnuplot missing: no plot (data in $out/onnx_scaling.dat)"
  fi
fi
