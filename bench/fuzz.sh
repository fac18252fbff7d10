#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz) side by side: fuzz_wire (the
# wire-level model reader against protobuf's parser), fuzz_config (the config
# readers against their writers) and fuzz_commands (split, suggest, weights,
# memory and shard as the program runs them: never exit 4, and each accepts
# what the one before it wrote), from seed corpora made of ../shared/models
# and the configs (tests/fuzz/make_seeds.py).
#
#   bench/fuzz.sh BUILD_DIR [--seconds S | --runs N | --ci] [--only TARGET]
#
# --ci is scripts/test.sh's run: a fixed seed (-seed=1), a fixed number of
# executions per target and a fresh corpus. That fixes the budget, not the
# path: libFuzzer takes the seeds in the order the file system lists them,
# which differs between machines, so a CI run can find what a run here
# missed (2026-11-26: a layout key yaml-cpp wrote too long, found by CI at
# 615,774 executions, not here in 1,200,000). A finding is never noise: the
# target aborts only on a crash, a leak or a disagreement, a bug the tree
# has; its input goes to tests/fuzz/regressions. The long runs before a change are
# `--runs 10000000` for the readers and `--runs 1000000` for the commands
# (README, Fuzzing). --only runs one target.
# BUILD_DIR is configured with clang++, -DSHARDPOINT_BUILD_ONNX=ON
# -DSHARDPOINT_SANITIZE=address,undefined -DSHARDPOINT_BUILD_FUZZERS=ON.
# Default: --seconds 60 each. The corpora grow in BUILD_DIR/fuzz-corpus;
# crashes and disagreements are written to BUILD_DIR/fuzz-artifacts and
# make the script fail. Prints each target's executions.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: bench/fuzz.sh BUILD_DIR [--seconds S | --runs N | --ci] [--only TARGET]}
shift
limit=(-max_total_time=60)
ci=false
targets=(fuzz_wire fuzz_config fuzz_commands)
while [ $# -gt 0 ]; do
  case "$1" in
  --seconds) limit=(-max_total_time="${2:?--seconds needs a number}"); shift ;;
  --runs) limit=(-runs="${2:?--runs needs a number}"); shift ;;
  --ci) ci=true ;;
  --only) targets=("${2:?--only needs a target}"); shift ;;
  *) echo "fuzz.sh: unknown option '$1' (--seconds S, --runs N, --ci, --only TARGET)" >&2; exit 1 ;;
  esac
  shift
done
for t in "${targets[@]}"; do
  [ -x "$build/tests/fuzz/$t" ] || { echo "fuzz.sh: $build/tests/fuzz/$t not built (see the header)" >&2; exit 1; }
done
models=${SHARDPOINT_MODELS_DIR:-../shared/models}
seeds=$build/fuzz-seeds
rm -rf "$seeds"
mkdir -p "$seeds/wire" "$seeds/config" "$seeds/commands"
if [ -d "$models" ]; then
  /usr/bin/python3 tests/fuzz/make_seeds.py "$models" "$build/onnx_adapter/shardpoint" "$seeds"
else
  echo "fuzz.sh: $models not found: fuzzing from empty corpora"
fi
mkdir -p "$build/fuzz-artifacts"
# fuzz_commands writes each execution's files under TMPDIR: a folder of this
# run's own, in memory where the machine has /dev/shm, removed at the end.
scratch=$(mktemp -d "$([ -w /dev/shm ] && echo /dev/shm || echo "$build")/shardpoint-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
pids=()
for t in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$t
  run=("${limit[@]}")
  if $ci; then
    # About a minute each on a 2-core machine, three side by side
    # (2026-11-25: fuzz_wire ~5,000 executions/s, fuzz_config ~25,000/s,
    # fuzz_commands ~200/s).
    corpus=$build/fuzz-corpus-ci/$t
    rm -rf "$corpus"
    case $t in
    fuzz_wire) runs=250000 ;;
    fuzz_config) runs=1200000 ;;
    *) runs=10000 ;;
    esac
    run=(-seed=1 -runs="$runs")
  fi
  mkdir -p "$corpus"
  case $t in
  fuzz_wire) seed=$seeds/wire max_len=4096 ;;
  fuzz_config) seed=$seeds/config max_len=8192 ;;
  # the seed models whole enough to run (a dozen nodes; up to ~26 KB)
  *) seed=$seeds/commands max_len=32768 ;;
  esac
  # -rss_limit_mb: a leak or a runaway allocation fails the run.
  # malloc_context_size=0: ASan keeps no allocation stacks, whose depot
  # otherwise grows by ~200 bytes an execution (1 GB by 3 million); run the
  # target on a saved input to see them.
  TMPDIR=$scratch ASAN_OPTIONS=detect_leaks=1:malloc_context_size=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz/$t" "${run[@]}" -max_len="$max_len" -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t-" "$corpus" "$seed" \
    >"$build/$t.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$t.log" | tail -n 1)
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$build/$t.log" | tail -n 1)
    each=$(sed -n 's/^fuzz_commands: executions: //p' "$build/$t.log" | tail -n 1)
    echo "$t: ${runs:-?} executions in ${secs:-?} s${each:+ ($each)}, no crash, leak or disagreement"
  else
    tail -n 40 "$build/$t.log"
    echo "$t: FAILED (input in $build/fuzz-artifacts)"
    status=1
  fi
done
exit $status
