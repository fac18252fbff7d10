#!/usr/bin/python3
# The reference for the ONNX end-to-end benchmark: the seed's manual-sharding
# procedure written the way a user of the Python onnx package would write it
# (python3-onnx from Debian). Same input and output as
#   shardpoint shard --input-model IN --manual-sharding-config CONFIG \
#       --output-model OUT --report none
# for a shard.yaml-style config of {node, device, stage} entries with both
# fields, on a model whose nodes are named and in topological order.
#
# Not a test and not a second implementation of shardpoint: a baseline.
#
# Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
import sys

import onnx
import yaml


def main(model_path, config_path, out_path):
    model = onnx.load(model_path, load_external_data=False)
    with open(config_path) as f:
        points = yaml.safe_load(f)
    nodes = model.graph.node
    index = {n.name: i for i, n in enumerate(nodes)}
    producer = {}
    for i, n in enumerate(nodes):
        for o in n.output:
            producer[o] = i
    preds = [sorted({producer[t] for t in n.input if t in producer}) for n in nodes]

    device = [None] * len(nodes)
    stage = [None] * len(nodes)
    # Points in topological order: the node order of a valid model.
    for p in sorted(points, key=lambda p: index[p["node"]]):
        start = index[p["node"]]
        if device[start] is not None:
            continue
        stack = [start]
        device[start], stage[start] = p["device"], p["stage"]
        while stack:
            v = stack.pop()
            for u in preds[v]:
                if device[u] is None:
                    device[u], stage[u] = p["device"], p["stage"]
                    stack.append(u)
    rest_device = max(p["device"] for p in points) + 1
    rest_stage = max(p["stage"] for p in points) + 1

    for i, n in enumerate(nodes):
        kept = [a for a in n.attribute if a.name not in ("__ipu_number", "__pipeline_stage")]
        del n.attribute[:]
        n.attribute.extend(kept)
        n.attribute.append(onnx.helper.make_attribute(
            "__ipu_number", device[i] if device[i] is not None else rest_device))
        n.attribute.append(onnx.helper.make_attribute(
            "__pipeline_stage", stage[i] if stage[i] is not None else rest_stage))
    onnx.save(model, out_path)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: poprt_reference.py IN.onnx SHARD.yaml OUT.onnx")
    main(*sys.argv[1:])
