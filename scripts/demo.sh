#!/usr/bin/env bash
# The main job: the seed example of PopRT's manual sharding, end to end.
#   1. installs what is missing and builds the shardpoint command line (and
#      the two examples the README's tour runs);
#   2. generates ResNet-50 v1 (the model zoo's resnet50-v1-7 structure);
#   3. shards it with the seed's shard.yaml (three points plus the default
#      group: 4 IPUs, 4 pipeline stages) and prints the report;
#   4. validates the written model for num_ipus 4 and batches_per_step 16;
#   5. asks `suggest` for the balanced split into 4 stages (estimated flops),
#      next to DeepSpeed's and PiPPy's, and runs the pipeline emulator with
#      the seed's shard.yaml and with the suggested one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
mkdir -p build
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
echo "== building the shardpoint program in Release (build/demo; the first build takes about"
echo "   8 minutes on 2 cores, SHARDPOINT_JOBS sets the parallel jobs)"
cmake -S . -B build/demo -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDPOINT_BUILD_TESTS=OFF \
  -DSHARDPOINT_BUILD_EXAMPLES=ON -DSHARDPOINT_BUILD_ONNX=ON "${launcher[@]}" >build/demo.configure.log 2>&1 ||
  { cat build/demo.configure.log; exit 1; }
cmake --build build/demo -j "${SHARDPOINT_JOBS:-2}" \
  --target shardpoint_cli example_custom_format example_partition_metrics
shardpoint=build/demo/onnx_adapter/shardpoint
echo "== the program is $shardpoint"
echo
out=build/demo/out
mkdir -p "$out"

echo "== shardpoint synth resnet50 $out/resnet50-v1-7.onnx"
"$shardpoint" synth resnet50 "$out/resnet50-v1-7.onnx"
echo
echo "== shardpoint shard (the seed's command line, with shardpoint for poprt)"
"$shardpoint" shard \
  --input_model "$out/resnet50-v1-7.onnx" \
  --manual_sharding_config examples/resnet50/shard.yaml \
  --output_model resnet50-v1-7.sharded.onnx --output_dir "$out" \
  --num-ipus 4 --enable-pipelining --batches-per-step 16
echo
echo "== shardpoint validate --num-ipus 4 --batches-per-step 16"
"$shardpoint" validate "$out/resnet50-v1-7.sharded.onnx" --num-ipus 4 --batches-per-step 16 |
  sed -n '/^validation:/,$p'
echo
echo "== shardpoint suggest --stages 4: the balanced split, next to DeepSpeed's and PiPPy's"
"$shardpoint" suggest --input-model "$out/resnet50-v1-7.onnx" --stages 4 --num-ipus 4 \
  --output-config "$out/suggested.yaml"
echo
for config in examples/resnet50/shard.yaml "$out/suggested.yaml"; do
  echo "== simulate --cost flops --batches-per-step 16 with $config"
  "$shardpoint" simulate --input-model "$out/resnet50-v1-7.onnx" --manual-sharding-config "$config" \
    --cost flops --batches-per-step 16 | sed -n '/^makespan/,/^bottleneck/p'
done
echo
echo "== done. The program is $shardpoint; to call it shardpoint:"
echo "   export PATH=\"$PWD/build/demo/onnx_adapter:$PWD/build/demo/examples:\$PATH\""
echo "   (build/demo/examples: the two examples of the README's tour)"
echo "   The outputs are in $out."
