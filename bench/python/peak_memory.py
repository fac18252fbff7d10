"""Peak memory of Sharder.run on a large model, in multiples of the model
file's size: what the README's Python section states (not a test).

    PYTHONPATH=build/gcc/python /usr/bin/python3 bench/python/peak_memory.py \
        ../shared/models/resnet50-v1-7-replica.onnx

Each case runs in a fresh interpreter: the peak resident set size
(ru_maxrss) after the model is loaded, and after Sharder.run, minus the
resident size before the model was loaded."""
import json
import os
import subprocess
import sys

CASE = r"""
import json, resource, sys
import onnx, shardpoint

def rss():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * 4096

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

path, kind, first = sys.argv[1], sys.argv[2], sys.argv[3]
start = rss()
if kind == 'bytes':
    with open(path, 'rb') as f:
        model = f.read()
else:
    model = onnx.load(path)
loaded = rss() - start
out = shardpoint.Sharder({first: 0}, {first: 0}).run(model)
print(json.dumps({'loaded': loaded, 'peak': peak() - start, 'after': rss() - start}))
"""


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: peak_memory.py MODEL.onnx")
    path = sys.argv[1]
    size = os.path.getsize(path)
    # The first named node, found here: loading the model in the measured
    # process would count a second copy that the run never makes.
    import onnx

    first = next(n.name for n in onnx.load(path, load_external_data=False).graph.node if n.name)
    print(f"{os.path.basename(path)}: {size / 2**20:.1f} MiB")
    for kind in ("bytes", "proto"):
        r = subprocess.run(
            [sys.executable, "-c", CASE, path, kind, first], capture_output=True, text=True, check=True
        )
        m = json.loads(r.stdout)
        print(
            f"  run({'bytes' if kind == 'bytes' else 'ModelProto'}): model held "
            f"{m['loaded'] / size:.2f}x, peak during run {m['peak'] / size:.2f}x, "
            f"after (input + result) {m['after'] / size:.2f}x the file size"
        )


if __name__ == "__main__":
    main()
