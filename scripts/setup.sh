#!/usr/bin/env bash
# Installs, from Debian's packages, whatever shardpoint needs to build and
# test that is missing. Idempotent, and silent when everything is there.
#
set -euo pipefail

packages=(
  # toolchain
  cmake ninja-build g++ clang libclang-rt-14-dev ccache clang-format
  # core
  libboost-graph-dev librange-v3-dev
  # tests and benchmarks (GNU time: the ONNX end-to-end benchmark's smoke run)
  doctest-dev libbenchmark-dev time
  # the ONNX adapter and the command line
  libonnx-dev libprotobuf-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libmimalloc-dev
  libre2-dev pkg-config libxxhash-dev
  # the pictures: Graphviz lays out every node; Chromium renders the pages
  # in the browser tests (they skip visibly without it)
  libgraphviz-dev chromium
  # the trace-format test (JSON Schema)
  python3-jsonschema
  # Python: the tests that decode MindSpore files with protoc's Python code,
  # and the shardpoint module (pybind11) with its pytest suite
  protobuf-compiler python3-protobuf python3-onnx python3-numpy python3-pytest pybind11-dev
  python3-dev
)
# bench/run.sh also needs these (the Python reference, the plot)
if [ "${1:-}" = --bench ]; then
  packages+=(python3-onnx python3-yaml gnuplot-nox)
fi

# ONNX Runtime for the split tests, from the npm registry with the machine's
# Node.js (docs/formats.md, ONNX Runtime): --ignore-scripts, as its install script would fetch
# extra binaries from a host this machine cannot reach. Kept out of the
# repository, in a cache shared by clones; the tests skip visibly without it.
install_onnxruntime() {
  local dir=${SHARDPOINT_ORT_DIR:-$HOME/.cache/shardpoint/onnxruntime}
  [ -d "$dir/node_modules/onnxruntime-node" ] && return 0
  command -v npm >/dev/null || { echo "setup: no npm: ONNX Runtime tests will skip"; return 0; }
  mkdir -p "$dir"
  echo "setup: installing onnxruntime-node into $dir"
  (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund --silent onnxruntime-node@1.30 \
    >/dev/null 2>&1) || echo "setup: npm install onnxruntime-node failed: ONNX Runtime tests will skip"
}
install_onnxruntime

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  sudo=sudo
else
  sudo=
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
