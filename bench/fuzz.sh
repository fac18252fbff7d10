#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz): fuzz_wire (the wire-level model
# reader against protobuf's parser) and fuzz_config (the config readers
# against their writers), side by side, from seed corpora made of
# ../shared/models and the configs (tests/fuzz/make_seeds.py).
#
#   bench/fuzz.sh BUILD_DIR [--seconds S | --runs N | --ci]
#
# --ci is scripts/test.sh's run: a fixed seed (-seed=1), a fixed number of
# executions per target and a fresh corpus, so that the same tree always
# gives the same verdict (a finding in CI is then a bug the tree has, never
# the luck of the draw); the long runs before a reader change are
# `--runs 10000000` (bench/README.md).
# BUILD_DIR is configured with clang++, -DSHARDPOINT_BUILD_ONNX=ON
# -DSHARDPOINT_SANITIZE=address,undefined -DSHARDPOINT_BUILD_FUZZERS=ON.
# Default: --seconds 60 each. The corpora grow in BUILD_DIR/fuzz-corpus;
# crashes and disagreements are written to BUILD_DIR/fuzz-artifacts and
# make the script fail. Prints each target's executions.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: bench/fuzz.sh BUILD_DIR [--seconds S | --runs N]}
limit=(-max_total_time=60)
ci=false
case "${2:-}" in
--seconds) limit=(-max_total_time="${3:?--seconds needs a number}") ;;
--runs) limit=(-runs="${3:?--runs needs a number}") ;;
--ci) ci=true ;;
"") ;;
*) echo "fuzz.sh: unknown option '$2' (--seconds S, --runs N or --ci)" >&2; exit 1 ;;
esac
for t in fuzz_wire fuzz_config; do
  [ -x "$build/tests/fuzz/$t" ] || { echo "fuzz.sh: $build/tests/fuzz/$t not built (see the header)" >&2; exit 1; }
done
models=${SHARDPOINT_MODELS_DIR:-../shared/models}
seeds=$build/fuzz-seeds
rm -rf "$seeds"
mkdir -p "$seeds/wire" "$seeds/config"
if [ -d "$models" ]; then
  /usr/bin/python3 tests/fuzz/make_seeds.py "$models" "$build/onnx_adapter/shardpoint" "$seeds"
else
  echo "fuzz.sh: $models not found: fuzzing from empty corpora"
fi
mkdir -p "$build/fuzz-artifacts"
pids=()
for t in fuzz_wire fuzz_config; do
  corpus=$build/fuzz-corpus/$t
  run=("${limit[@]}")
  if $ci; then
    # About a minute each on a 2-core machine (2026-11-25: fuzz_wire
    # ~5,000 executions/s, fuzz_config ~25,000/s, side by side).
    corpus=$build/fuzz-corpus-ci/$t
    rm -rf "$corpus"
    run=(-seed=1 -runs="$([ $t = fuzz_wire ] && echo 250000 || echo 1200000)")
  fi
  mkdir -p "$corpus"
  seed=$seeds/${t#fuzz_}
  # -max_len: the seeds (models cut to a dozen nodes); -rss_limit_mb: a leak or a runaway
  # allocation fails the run. malloc_context_size=0: ASan keeps no allocation
  # stacks, whose depot otherwise grows by ~200 bytes an execution (1 GB by
  # 3 million); run the target on a saved input to see them.
  ASAN_OPTIONS=detect_leaks=1:malloc_context_size=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz/$t" "${run[@]}" -max_len=4096 -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t-" "$corpus" "$seed" \
    >"$build/$t.log" 2>&1 &
  pids+=($!)
done
status=0
for i in 0 1; do
  t=$([ "$i" = 0 ] && echo fuzz_wire || echo fuzz_config)
  if wait "${pids[$i]}"; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$t.log" | tail -n 1)
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$build/$t.log" | tail -n 1)
    echo "$t: ${runs:-?} executions in ${secs:-?} s, no crash, leak or disagreement"
  else
    tail -n 40 "$build/$t.log"
    echo "$t: FAILED (input in $build/fuzz-artifacts)"
    status=1
  fi
done
exit $status
