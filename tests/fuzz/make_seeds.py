#!/usr/bin/env python3
"""Seed corpora for the fuzzers, built from ../shared/models and the configs.

    make_seeds.py MODELS_DIR SHARDPOINT_CLI OUT_DIR

OUT_DIR/wire: each shared model made small (initializer data cut to at most
32 bytes, the first 12 nodes, 4 in subgraphs), and the same with an unknown
field, with the graph field first, with the graph's length padded to five and
six bytes, with sharding attributes on its nodes; a model with unpacked float
data, one with sharding attributes, and one whose weight lies in an external
file. OUT_DIR/config: the first byte picks the reader (see
fuzz_config.cpp): the shard.yaml files, a JSON config, a layout file,
the strategy files `shardpoint weights strategy` writes for a small decoder,
and a rank's checkpoint and the merged safetensors of its weights.
OUT_DIR/commands (see fuzz_commands.cpp): byte 0 picks the command, bytes
1-2 the config's length, then a config naming the model's nodes (as
`shardpoint inspect` spells them) over two or three stages, or a layout
file, then the model: each shared model made small and two tiny decoders
(synth decoder, hidden 4), whose weights are whole so that `weights` gets
to split and merge.
Nothing here is written into the source tree.
"""
import glob
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import helper, TensorProto


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def padded(n, width):
    """n as a varint of exactly `width` bytes (past its shortest form)."""
    out = bytearray()
    for _ in range(width - 1):
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n & 0x7F)
    return bytes(out)


def field(number, wire_type, payload):
    return varint(number << 3 | wire_type) + payload


def shrink_graph(g, nodes):
    del g.node[nodes:]
    for n in g.node:
        for a in n.attribute:
            if a.HasField("g"):
                shrink_graph(a.g, 4)
            for sub in a.graphs:
                shrink_graph(sub, 4)
    for t in g.initializer:
        if t.HasField("raw_data") and len(t.raw_data) > 32:
            t.raw_data = t.raw_data[:32]
        for name in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            values = getattr(t, name)
            if len(values) > 8:
                del values[8:]


def shrink(model):
    shrink_graph(model.graph, 12)
    return model


def unpacked_float(values):
    """A TensorProto's float_data (field 4) as fixed32 fields, one a value."""
    import struct
    return b"".join(field(4, 5, struct.pack("<f", v)) for v in values)


def runnable(model, nodes=12):
    """The model's first `nodes` nodes as a model shardpoint takes: the graph
    outputs are what the last node produces, the initializers those the nodes
    use, with data cut to 64 bytes only where that keeps the seed small."""
    g = model.graph
    del g.node[nodes:]
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    g.ClearField("value_info")
    del g.output[:]
    for name in g.node[-1].output if len(g.node) else []:
        g.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    if len(model.SerializeToString()) > 16384:
        cut_data(g)
    return model


def cut_data(g):
    """Initializer and Constant data cut to 64 bytes, in subgraphs too."""
    tensors = list(g.initializer)
    for n in g.node:
        for a in n.attribute:
            if a.HasField("t"):
                tensors.append(a.t)
            if a.HasField("g"):
                cut_data(a.g)
            for sub in a.graphs:
                cut_data(sub)
    for t in tensors:
        if t.HasField("raw_data") and len(t.raw_data) > 64:
            t.raw_data = t.raw_data[:64]


def node_names(cli, data, work):
    """The model's node names as shardpoint spells them (unnamed ones too)."""
    import json
    path = os.path.join(work, "names.onnx")
    with open(path, "wb") as f:
        f.write(data)
    run = subprocess.run([cli, "inspect", path, "--report", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if run.returncode != 0:
        return []
    # An unnamed node is OpType_<index> to the config (graph.cpp).
    return [n["name"] or "%s_%d" % (n["op_type"] or "node", n["index"])
            for n in json.loads(run.stdout)]


def stage_configs(names):
    """A YAML config cutting `names` into 2 stages, and a JSON one into 3."""
    if len(names) < 2:
        return []
    cut = [names[0], names[len(names) // 2]]
    import json
    yaml = "".join("-\n  node: %s\n  device: %d\n  stage: %d\n" % (json.dumps(n), i, i)
                   for i, n in enumerate(cut))
    three = [names[0], names[len(names) // 3], names[2 * len(names) // 3]]
    js = json.dumps({"sharding_info": {n: i for i, n in enumerate(three)},
                     "pipelining_info": {n: i for i, n in enumerate(three)}})
    return [(yaml.encode(), False), (js.encode(), True)]


def command_seeds(cli, folder, name, model_bytes, work, layout=None):
    """One seed per command for a model: its configs, or the layout for weights."""
    put = lambda n, d: open(os.path.join(folder, n), "wb").write(d)
    configs = stage_configs(node_names(cli, model_bytes, work))
    for command in range(8):
        for k, (config, is_json) in enumerate(configs or [(b"", False)]):
            if command == 2 and layout is not None:
                config, is_json = layout, False
            pick = command | (0x80 if is_json else 0) | (k << 3)
            head = bytes([pick, len(config) & 0xFF, len(config) >> 8])
            put("%s-%d-%d" % (name, command, k), head + config + model_bytes)


def main():
    models, cli, out = sys.argv[1:4]
    wire = os.path.join(out, "wire")
    conf = os.path.join(out, "config")
    commands = os.path.join(out, "commands")
    os.makedirs(wire, exist_ok=True)
    os.makedirs(conf, exist_ok=True)
    os.makedirs(commands, exist_ok=True)
    work_dir = tempfile.TemporaryDirectory()
    work = work_dir.name

    def put(folder, name, data):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)

    for path in sorted(glob.glob(os.path.join(models, "*.onnx"))):
        base = os.path.splitext(os.path.basename(path))[0]
        model = shrink(onnx.load(path, load_external_data=False))
        data = model.SerializeToString()
        put(wire, base + ".onnx", data)
        put(wire, base + "-unknown.onnx", data + field(999, 0, varint(7)))
        sharded = onnx.ModelProto()
        sharded.CopyFrom(model)
        for i, n in enumerate(sharded.graph.node):
            n.attribute.append(helper.make_attribute("__ipu_number", i % 2))
            if i % 3:
                n.attribute.append(helper.make_attribute("__pipeline_stage", i % 2))
        put(wire, base + "-sharded.onnx", sharded.SerializeToString())
        graph = model.graph.SerializeToString()
        rest = onnx.ModelProto()
        rest.CopyFrom(model)
        rest.ClearField("graph")
        put(wire, base + "-graph-first.onnx",
            field(7, 2, varint(len(graph)) + graph) + rest.SerializeToString())
        # The graph's length padded to five bytes (protobuf reads it) and to
        # six (protobuf refuses it): a padding the mutator rarely makes.
        for width in (5, 6):
            put(wire, "%s-padded%d.onnx" % (base, width),
                rest.SerializeToString() + field(7, 2, padded(len(graph), width) + graph))
        small = runnable(onnx.load(path, load_external_data=False)).SerializeToString()
        command_seeds(cli, commands, base, small, work)
    for layers in (1, 2):
        decoder = os.path.join(work, "tiny.onnx")
        subprocess.run([cli, "synth", "decoder", "--layers", str(layers), "--hidden", "4",
                        "--sequence", "2", decoder], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(decoder, "rb") as f:
            data = f.read()
        command_seeds(cli, commands, "decoder%d" % layers, data, work)
        command_seeds(cli, commands, "decoder%d-layout" % layers, data, work,
                      layout=b"layer0/q_w: column\nlayer0/mlp_down_w: row\n")

    # Unpacked float data and an external-data weight, on a one-node model.
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], [w]))
    put(wire, "packed.onnx", model.SerializeToString())
    sharded = onnx.ModelProto()  # (the shared models' first nodes are mostly Constants)
    sharded.CopyFrom(model)
    sharded.graph.node[0].attribute.extend([helper.make_attribute("__ipu_number", 1),
                                            helper.make_attribute("__pipeline_stage", 2)])
    put(wire, "sharded.onnx", sharded.SerializeToString())
    tensor = onnx.TensorProto()
    tensor.CopyFrom(w)
    tensor.ClearField("float_data")
    init = tensor.SerializeToString() + unpacked_float([1.0, 2.0, 3.0, 4.0])
    graph = model.graph
    graph.ClearField("initializer")
    graph_bytes = graph.SerializeToString() + field(5, 2, varint(len(init)) + init)
    model.ClearField("graph")
    put(wire, "unpacked.onnx", model.SerializeToString() + field(7, 2, varint(len(graph_bytes)) + graph_bytes))
    external = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
    external.ClearField("float_data")
    external.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "16")):
        e = external.external_data.add()
        e.key, e.value = k, v
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], [external]))
    put(wire, "external.onnx", model.SerializeToString())

    # Configs: byte 0 = 0 YAML config, 1 JSON config, 2 layout, 3 strategy
    # protobuf, 4 strategy JSON, 5 a weight file (safetensors, checkpoint).
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    for i, path in enumerate([os.path.join(models, "resnet50-v1-7-shard.yaml"),
                              os.path.join(root, "examples", "resnet50", "shard.yaml")]):
        if os.path.exists(path):
            with open(path, "rb") as f:
                put(conf, "shard%d.yaml" % i, b"\x00" + f.read())
    put(conf, "mapping.yaml", b"\x00sharding_info: {a: 0, b: 1}\npipelining_info: {a: 0, b: 1}\n")
    put(conf, "mapping.json", b'\x01{"sharding_info": {"a": 0, "b": 1}, "pipelining_info": {"b": 1}}')
    with tempfile.TemporaryDirectory() as work:
        decoder = os.path.join(work, "d.onnx")
        subprocess.run([cli, "synth", "decoder", "--layers", "1", decoder], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fmt, byte in (("ckpt", b"\x03"), ("json", b"\x04")):
            folder = os.path.join(work, fmt)
            subprocess.run([cli, "weights", "strategy", "--input-model", decoder,
                            "--tensor-parallel", "2", "--format", fmt, "--output-dir", folder,
                            "--layout-out", os.path.join(work, "layout.yaml")],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(os.path.join(folder, "stage0." + fmt), "rb") as f:
                put(conf, "strategy." + fmt, byte + f.read())
        with open(os.path.join(work, "layout.yaml"), "rb") as f:
            put(conf, "layout.yaml", b"\x02" + f.read())
        # A rank's checkpoint and the merged safetensors.
        ranks = os.path.join(work, "ranks")
        merged = os.path.join(work, "w.safetensors")
        for args in (["split", "--input-model", decoder, "--output-dir", ranks],
                     ["merge", "--ranks-dir", ranks, "--output", merged]):
            subprocess.run([cli, "weights"] + args + ["--strategy-dir", os.path.join(work, "ckpt")],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, path in (("rank.ckpt", os.path.join(ranks, "rank_1", "checkpoint_1.ckpt")),
                           ("merged.safetensors", merged)):
            with open(path, "rb") as f:
                put(conf, name, b"\x05" + f.read())
    put(conf, "layout-tuple.yaml", b"\x02w1: [2, 1]\nw2: column\nw3: replicated\n")


if __name__ == "__main__":
    main()
