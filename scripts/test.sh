#!/usr/bin/env bash
# The test command: installs what is missing, then builds and runs every test
#   1. with g++     -Wall -Wextra -Wpedantic -Werror (with the Python module)
#   2. with clang++ -Wall -Wextra -Wpedantic -Werror (with the Python module)
#   3. with clang++ under AddressSanitizer + UndefinedBehaviorSanitizer, and
#      the libFuzzer targets (tests/fuzz) run side by side on a fixed seed
#      (the same tree, the same verdict); every input they once failed on is
#      a ctest in all three builds (tests/fuzz/regressions)
#   3b. the runtime's concurrent tests, and the ONNX adapter's tests of its
#      passes in chunks and beside shape inference and of its wire reader
#      (nodes read as views, parsed on first use from any thread), with clang++ under
#      ThreadSanitizer (the ONNX adapter and the command line included in
#      all three builds above)
#      and a smoke run of each benchmark binary at a tiny size
#   4. a downstream project, built against the installed package in Release
#      -O3 -Werror with g++ and with clang++: the README's quick-start example
#      exactly as written, every installed header, every exported target;
#      and the Python package as installed, running the seed's script;
#   5. pip install ./python in a fresh virtual environment
# and ends with one line "total: N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

scripts/setup.sh

# A fresh run puts about 6 GB under build/ (five builds, the installed tree,
# two virtual environments); on a fuller disk it fails as a linker's "No
# space left on device" somewhere in the middle, so say so first.
free_kb=$(df -Pk . | awk 'NR == 2 { print $4 }')
if [ "${free_kb:-0}" -lt $((6 * 1024 * 1024)) ]; then
  echo "scripts/test.sh: warning: $((${free_kb:-0} / 1024)) MB free on this disk; a fresh run needs about 6 GB" >&2
fi

jobs=${SHARDPOINT_JOBS:-2}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # clones of the same tree share the cache: paths below the clone are hashed
  # relative to it, and the working directory is not hashed
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi

passed=0
failed=0
count() { # parses ctest's summary line out of a log
  local line
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$1" | tail -n 1)
  local bad total
  bad=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/' <<<"$line")
  passed=$((passed + total - bad))
  failed=$((failed + bad))
}

suite() { # suite NAME CMAKE-ARGS...
  local name=$1
  shift
  echo "== $name"
  cmake -S . -B "build/$name" -G Ninja -DSHARDPOINT_WERROR=ON -DSHARDPOINT_BUILD_ONNX=ON "${launcher[@]}" "$@" >"build/$name.configure.log" 2>&1 ||
    { cat "build/$name.configure.log"; exit 1; }
  cmake --build "build/$name" -j "$jobs" || { echo "$name: build failed"; failed=$((failed + 1)); return 1; }
  local log="build/$name.ctest.log"
  local rc=0
  ctest --test-dir "build/$name" --output-on-failure -j "$jobs" 2>&1 | tee "$log" || rc=$?
  count "$log"
  return $rc
}

mkdir -p build
status=0
if [ ! -d ../shared/models ]; then
  echo "note: ../shared/models not found: the tests that need the shared ONNX models skip"
fi
suite gcc -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDPOINT_BUILD_BENCH=ON -DSHARDPOINT_BUILD_PYTHON=ON || status=1

echo "== bench smoke: each benchmark binary once at a tiny size (no timing is checked)"
for smoke in "build/gcc/bench/bench_manual_shard --benchmark_filter=/vertices:10000/" \
  "build/gcc/bench/bench_ring_buffer --benchmark_min_time=0.001" \
  "build/gcc/bench/bench_pipeline --benchmark_filter=4/64 --benchmark_min_time=0.001" \
  "build/gcc/bench/bench_balanced --benchmark_filter=balanced_search/vertices:10000" \
  "build/gcc/bench/bench_node_view --benchmark_filter=/345 --benchmark_min_time=0.001" \
  "bench/onnx_e2e.sh build/gcc build/e2e-smoke --smoke"; do
  if $smoke >build/bench-smoke.log 2>&1; then
    passed=$((passed + 1))
  else
    cat build/bench-smoke.log
    echo "bench smoke failed: $smoke"
    failed=$((failed + 1))
    status=1
  fi
done
suite clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDPOINT_BUILD_BENCH=ON -DSHARDPOINT_BUILD_PYTHON=ON || status=1
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
  suite asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSHARDPOINT_SANITIZE=address,undefined -DSHARDPOINT_BUILD_FUZZERS=ON || status=1

echo "== fuzz: the three libFuzzer targets side by side, fixed seed and executions (bench/fuzz.sh --ci; the long runs are in bench/README.md)"
if bench/fuzz.sh build/asan --ci; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  status=1
fi

echo "== tsan: the runtime's tests and the adapter's passes side by side under ThreadSanitizer"
if cmake -S . -B build/tsan -G Ninja -DSHARDPOINT_WERROR=ON "${launcher[@]}" -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDPOINT_SANITIZE=thread -DSHARDPOINT_BUILD_ONNX=ON \
  >build/tsan.configure.log 2>&1 &&
  cmake --build build/tsan -j "$jobs" --target test_ring_buffer test_queue_manager test_pipeline \
    test_schedules test_infer test_onnx_models test_wire; then
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir build/tsan -R 'test_(ring_buffer|queue_manager|pipeline|schedules|infer|onnx_models|wire)$' \
    --output-on-failure 2>&1 |
    tee build/tsan.ctest.log || status=1
  count build/tsan.ctest.log
else
  cat build/tsan.configure.log
  echo "tsan: build failed"
  failed=$((failed + 1))
  status=1
fi

echo "== downstream: find_package(shardpoint) from the installed tree, Release -O3 -Werror"
rm -rf build/install build/downstream
cmake --install build/gcc --prefix build/install >/dev/null
mkdir -p build/downstream/src
# The README's quick-start block, exactly as written.
sed -n '/<!-- quickstart:begin -->/,/<!-- quickstart:end -->/p' README.md |
  sed '1,/^```cpp$/d;/^```$/,$d' >build/downstream/src/main.cpp
if [ ! -s build/downstream/src/main.cpp ]; then
  echo "downstream: no quick-start block found in README.md"
  failed=$((failed + 1))
  status=1
else
  for cxx in g++ clang++; do
    dir=build/downstream/$cxx
    if cmake -S tests/downstream -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=$cxx \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O3 -DNDEBUG" "${launcher[@]}" \
      -DCMAKE_PREFIX_PATH="$root/build/install" -DQUICKSTART_SOURCE="$root/build/downstream/src/main.cpp" \
      -DCUSTOM_FORMAT_DIR="$root/examples/custom_format" >"$dir.log" 2>&1 &&
      cmake --build "$dir" -j "$jobs" >>"$dir.log" 2>&1 &&
      "$dir/quickstart" >"$dir.out" && "$dir/uses_everything" >>"$dir.out" &&
      "$dir/custom_format" suggest 2 >>"$dir.out"; then
      echo "downstream ($cxx):"
      cat "$dir.out"
      passed=$((passed + 1))
    else
      cat "$dir.log"
      echo "downstream ($cxx) failed"
      failed=$((failed + 1))
      status=1
    fi
  done
fi

echo "== python: the package as cmake --install put it, and docs/python.md's seed script on it"
site=$(find build/install -path '*-packages/shardpoint/__init__.py' -printf '%h\n' | head -n 1)
if [ -z "$site" ]; then
  echo "python: cmake --install put no shardpoint package under build/install"
  failed=$((failed + 1))
  status=1
elif (
  cd build && PYTHONPATH="$root/$(dirname "$site")" /usr/bin/python3 -c \
    'import shardpoint; d, s = shardpoint.manual_shard(3, [(0, 1), (1, 2)], [(1, 0, 0)]); assert d.tolist() == [0, 0, 1], d; print("python (installed):", shardpoint.__file__)'
) && { [ ! -d ../shared/models ] || (
  # docs/python.md's seed script, as written (it runs from the source tree
  # with PYTHONPATH=build/gcc/python; here on the installed package).
  sed -n '/<!-- python:begin -->/,/<!-- python:end -->/p' docs/python.md | sed '1,/^```python$/d;/^```$/,$d' |
    diff - examples/python/shard.py &&
    PYTHONPATH="$root/$(dirname "$site")" /usr/bin/python3 examples/python/shard.py \
      ../shared/models/resnet50-v1-7-replica.onnx build/python-seed.onnx
); }; then
  passed=$((passed + 1))
else
  echo "python: the installed package failed"
  failed=$((failed + 1))
  status=1
fi

echo "== pip: pip install ./python into a fresh virtual environment, as docs/python.md says"
# The gcc suite's flags and a build folder as deep as build/gcc, so that
# ccache serves what that suite compiled.
rm -rf build/venv build/pip
if /usr/bin/python3 -m venv --system-site-packages build/venv &&
  SHARDPOINT_BUILD_DIR="$root/build/pip" SHARDPOINT_JOBS="$jobs" \
    SHARDPOINT_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=g++ -DSHARDPOINT_WERROR=ON ${launcher[*]}" \
    build/venv/bin/pip install --no-build-isolation --no-deps ./python >build/pip.log 2>&1 &&
  (cd build && venv/bin/python -c 'import shardpoint, sys; assert shardpoint.__file__.startswith(sys.prefix), shardpoint.__file__; d, s = shardpoint.manual_shard(3, [(0, 1), (1, 2)], [(1, 0, 0)]); assert d.tolist() == [0, 0, 1]; print("python (pip):", shardpoint.__version__, shardpoint.__file__)') &&
  { [ ! -d ../shared/models ] || build/venv/bin/python examples/python/shard.py \
    ../shared/models/resnet50-v1-7-replica.onnx build/pip-seed.onnx; }; then
  passed=$((passed + 1))
else
  tail -n 30 build/pip.log
  echo "pip: pip install ./python failed"
  failed=$((failed + 1))
  status=1
fi

echo "total: $passed passed, $failed failed"
exit $status
