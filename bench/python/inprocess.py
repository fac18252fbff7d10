"""Manual sharding from Python, in one interpreter: shardpoint's API against
the same procedure written with the onnx package (bench/poprt_reference.py),
file to file, the interpreter and its imports already paid for. Best of
REPS runs each; prints one JSON object (seconds). Not a test.

    PYTHONPATH=build/gcc/python /usr/bin/python3 bench/python/inprocess.py \
        MODEL.onnx SHARD.yaml OUT_DIR [REPS]

- "api": the model's bytes read, Sharder(sharding_info, pipelining_info)
  .run(bytes), the result written: what `shard --report none` does.
- "api_report": shardpoint.shard_file(model, config, output), which also
  measures the report (shape inference), as `shard` does by default.
- "api_file": shardpoint.shard_file(model, config, output, report=False):
  file to file without the report, as `shard --report none` (the model
  mapped, not read into a bytes object; the output synced before renamed).
- "onnx": poprt_reference.main, onnx.load to onnx.save.

And what bounds the API from below, to read the targets against:
- "run": Sharder.run on the bytes already in memory (no file);
- "read", "write": the model's bytes read, and written to OUT_DIR (no
  fsync): the floor of any file-to-file tool, ours or the onnx package's;
- "onnx_load": onnx.load alone.
"""
import json
import os
import sys
import time
import warnings

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import onnx  # noqa: E402
import poprt_reference  # noqa: E402  (bench/, beside this folder)
import shardpoint  # noqa: E402


def best(reps, run):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main(model, config, out_dir, reps=1):
    # The decoders' shared initializers: one warning each, not what is timed.
    warnings.simplefilter("ignore", shardpoint.ShardingWarning)
    with open(config) as f:
        points = yaml.safe_load(f)
    sharder = shardpoint.Sharder(
        {p["node"]: p["device"] for p in points}, {p["node"]: p["stage"] for p in points}
    )
    out = os.path.join(out_dir, "inprocess.onnx")

    def api():
        with open(model, "rb") as f:
            data = f.read()
        sharded = sharder.run(data)
        with open(out, "wb") as f:
            f.write(sharded)

    def api_report():
        if os.path.exists(out):
            os.remove(out)  # shard_file writes over no file it did not write
        shardpoint.shard_file(model, config, out)

    def api_file():
        if os.path.exists(out):
            os.remove(out)
        shardpoint.shard_file(model, config, out, report=False)

    def reference():
        poprt_reference.main(model, config, out)

    with open(model, "rb") as f:
        data = f.read()

    def read():
        with open(model, "rb") as f:
            f.read()

    def write():
        with open(out, "wb") as f:
            f.write(data)

    result = {
        "api": best(reps, api),
        "api_report": best(reps, api_report),
        "api_file": best(reps, api_file),
        "onnx": best(reps, reference),
        "run": best(reps, lambda: sharder.run(data)),
        "read": best(reps, read),
        "write": best(reps, write),
        "onnx_load": best(reps, lambda: onnx.load(model)),
    }
    os.remove(out)
    print(json.dumps(result))


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: inprocess.py MODEL.onnx SHARD.yaml OUT_DIR [REPS]")
    main(*sys.argv[1:4], *(int(r) for r in sys.argv[4:]))
