"""The Python package against the command line and against references
written here: PopRT's Sharder on the seed's example and on every shared
model (byte-identical to `shardpoint shard`), manual_shard on random edge
lists against the procedure as the seed states it, balanced_shard against
brute force, and every error category as its Python class with the
command line's message.

Run by ctest with PYTHONPATH at <build>/python and SHARDPOINT_CLI the
command line built beside it."""
import ast
import inspect as pyinspect
import itertools
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import warnings

import pytest

onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")

import shardpoint  # noqa: E402
from shardpoint import _core  # noqa: E402

CLI = os.environ.get("SHARDPOINT_CLI", "shardpoint")
SOURCE = os.environ.get(
    "SHARDPOINT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")
)
MODELS = os.environ.get(
    "SHARDPOINT_MODELS_DIR", os.path.join(SOURCE, "..", "shared", "models")
)
SEED_MODEL = os.path.join(MODELS, "resnet50-v1-7-replica.onnx")
SEED_CONFIG = os.path.join(MODELS, "resnet50-v1-7-shard.yaml")

needs_models = pytest.mark.skipif(
    not os.path.isdir(MODELS), reason=f"shared models not found at {MODELS}"
)


def model_files():
    if not os.path.isdir(MODELS):
        return []
    return sorted(f for f in os.listdir(MODELS) if f.endswith(".onnx"))


def cli(*args):
    """(exit code, stdout, stderr) of the command line."""
    r = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def cli_message(stderr):
    """The one line the command line prints for an error, without its
    'shardpoint: ' prefix."""
    lines = [l for l in stderr.splitlines() if l.strip()]
    assert len(lines) >= 1, stderr
    line = lines[0]
    for prefix in ("shardpoint: ", "error: "):
        line = line[len(prefix):] if line.startswith(prefix) else line
    return line


def attributes(model):
    """Per node: its name and the sharding attributes, in order."""
    out = []
    for n in model.graph.node:
        out.append(
            (
                n.name,
                [(a.name, a.i) for a in n.attribute if a.name in ("__ipu_number", "__pipeline_stage")],
            )
        )
    return out


# ---- the seed's example -----------------------------------------------------


@needs_models
def test_seed_script_matches_the_command_line(tmp_path):
    """examples/python/shard.py, the seed's script with one import changed,
    annotates every node as `shardpoint shard` does with the seed's
    shard.yaml."""
    script = os.path.join(SOURCE, "examples", "python", "shard.py")
    ours = tmp_path / "python.onnx"
    r = subprocess.run(
        [sys.executable, script, SEED_MODEL, str(ours)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    theirs = tmp_path / "cli.onnx"
    code, _, err = cli(
        "shard", "--input-model", SEED_MODEL, "--manual-sharding-config", SEED_CONFIG,
        "--output-model", str(theirs), "--report", "none",
    )
    assert code == 0, err
    a = onnx.load(str(ours), load_external_data=False)
    b = onnx.load(str(theirs), load_external_data=False)
    assert attributes(a) == attributes(b)
    # Three devices and stages, as the seed's example has (the rest on 3).
    devices = {dict(attrs)["__ipu_number"] for _, attrs in attributes(a)}
    assert devices == {0, 1, 2, 3}
    # The script's own change (batch fixed to 1) is kept.
    assert a.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 1


# ---- Sharder on every shared model, against the command line ----------------


def node_names(model):
    """The names the command line resolves points against: unnamed nodes
    are <op_type>_<index>."""
    return [n.name or f"{n.op_type or 'node'}_{i}" for i, n in enumerate(model.graph.node)]


def random_config(rng, names):
    """A few points in node order. Mostly a well-formed pipeline (point i
    on device and stage i, or devices alone), sometimes any devices and
    stages, which validation may refuse."""
    k = rng.randint(1, min(4, len(names)))
    chosen = sorted(rng.sample(range(len(names)), k))
    kind = rng.choice(["pipeline", "pipeline", "devices", "any"])
    sharding, pipelining = {}, {}
    for i, v in enumerate(chosen):
        if kind == "any":
            sharding[names[v]] = rng.randint(0, 3)
            pipelining[names[v]] = rng.randint(0, 3)
        else:
            sharding[names[v]] = i
            if kind == "pipeline":
                pipelining[names[v]] = i
    return sharding, pipelining


@needs_models
@pytest.mark.parametrize("name", model_files())
def test_sharder_is_byte_identical_to_the_command_line(tmp_path, name):
    path = os.path.join(MODELS, name)
    with open(path, "rb") as f:
        data = f.read()
    model = onnx.load_model_from_string(data)
    names = node_names(model)
    large = len(data) > 10 << 20
    rng = random.Random(f"sharder-{name}")
    agreed = 0
    for trial in range(2 if large else 6):
        sharding, pipelining = random_config(rng, names)
        config = tmp_path / f"config{trial}.json"
        config.write_text(
            json.dumps({"sharding_info": sharding, "pipelining_info": pipelining})
        )
        out = tmp_path / f"cli{trial}.onnx"
        code, _, err = cli(
            "shard", "--input-model", path, "--manual-sharding-config", str(config),
            "--output-model", str(out), "--report", "none",
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", shardpoint.ShardingWarning)
                ours = shardpoint.Sharder(sharding, pipelining).run(data)
        except shardpoint.InvalidShardingError:
            assert code == 3, f"{sharding} {pipelining}: the command line exited {code}: {err}"
            assert not out.exists()
            continue
        assert code == 0, f"{sharding} {pipelining}: {err}"
        assert ours == out.read_bytes(), f"{name}: {sharding} {pipelining}"
        agreed += 1
    assert agreed >= 1, f"{name}: no random config was valid"


def test_shard_file_without_a_report_writes_and_warns_as_report_none(tmp_path):
    # shard_file(report=False) is `shard --report none`: the same bytes, and
    # its findings -- which it prints, and no report holds -- as warnings.
    model = str(tmp_path / "decoder.onnx")
    code, _, err = cli("synth", "decoder", "--layers", "2", model)
    assert code == 0, err
    assert err == "shardpoint: wrote " + model + "\n"  # as every command that writes
    points = ["layer0/mlp_residual=0:0", "layer1/mlp_residual=1:1"]
    printed_model = str(tmp_path / "printed.onnx")
    code, _, err = cli("shard", "--input-model", model, "--shard", points[0], "--shard", points[1],
                       "--output-model", printed_model, "--report", "none")
    assert code == 0, err
    printed = [line for line in err.splitlines() if line.startswith("shardpoint: warning")]
    assert len(printed) == 2  # the decoder's 'eps' and 'scale' on both devices
    ours = str(tmp_path / "ours.onnx")
    with pytest.warns(shardpoint.ShardingWarning) as caught:
        assert shardpoint.shard_file(model, None, ours, shard=points, report=False) is None
    assert [str(w.message) for w in caught] == [
        line.removeprefix("shardpoint: warning ") for line in printed
    ]
    with open(ours, "rb") as a, open(printed_model, "rb") as b:
        assert a.read() == b.read()
    # An error force=True wrote anyway is a warning that says it is one.
    forced = str(tmp_path / "forced.onnx")
    with pytest.warns(shardpoint.ShardingWarning) as caught:
        shardpoint.shard_file(model, None, forced, shard=points, num_ipus=1, force=True,
                              report=False)
    assert any(str(w.message).startswith("error [too-many-devices]") for w in caught)
    assert os.path.exists(forced)
    # What a report would size is checked without one too; files only;
    # points as a list. Nothing written for any of them.
    refused = str(tmp_path / "refused.onnx")
    with pytest.raises(shardpoint.BadParameterError, match="no input of the model has a dimension"):
        shardpoint.shard_file(model, None, refused, shard=points, dims={"N": 4}, report=False)
    with open(model, "rb") as f:
        data = f.read()
    for not_a_path in (data, model.encode(), 12):
        with pytest.raises(TypeError, match="input .* must be a file's path"):
            shardpoint.shard_file(not_a_path, None, refused, shard=points, report=False)
    with pytest.raises(TypeError, match="shard must be a list"):
        shardpoint.shard_file(model, None, refused, shard=points[0], report=False)
    with pytest.raises(TypeError, match="shard must be a list"):
        shardpoint.simulate(model, None, 4, shard=points[0])
    assert not os.path.exists(refused)


@needs_models
def test_sharder_takes_bytes_and_model_protos_alike():
    model = onnx.load(os.path.join(MODELS, "light_squeezenet.onnx"))
    names = node_names(model)
    sharder = shardpoint.Sharder({names[10]: 0, names[60]: 1}, {names[10]: 0, names[60]: 1})
    as_bytes = sharder.run(model.SerializeToString())
    as_proto = sharder.run(model)
    assert isinstance(as_bytes, bytes)
    assert isinstance(as_proto, onnx.ModelProto)
    assert as_proto is not model
    assert as_proto.SerializeToString() == as_bytes
    # The caller's model is not touched: its unnamed nodes keep no name.
    assert not any(a.name == "__ipu_number" for n in model.graph.node for a in n.attribute)
    assert sharder.run(bytearray(model.SerializeToString())) == as_bytes
    with pytest.raises(TypeError, match="onnx.ModelProto or its serialised bytes"):
        sharder.run(42)


@needs_models
def test_only_manual_sharding_refuses_unnamed_nodes_as_the_command_line_does(tmp_path):
    path = os.path.join(MODELS, "light_bvlc_alexnet.onnx")
    model = onnx.load(path)
    names = node_names(model)
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"sharding_info": {names[-1]: 0}}))
    code, _, err = cli(
        "shard", "--input-model", path, "--manual-sharding-config", str(config),
        "--output-model", str(tmp_path / "o.onnx"), "--only_manual_sharding",
    )
    assert code == 2
    with pytest.raises(shardpoint.BadInputError) as e:
        shardpoint.Sharder({names[-1]: 0}, only_manual_sharding=True).run(model)
    assert cli_message(err).endswith(str(e.value)), (err, str(e.value))


def test_sharder_explains_itself():
    doc = pyinspect.getdoc(shardpoint.Sharder)
    assert "sharding_info" in doc and "pipelining_info" in doc and "__ipu_number" in doc
    assert pyinspect.getdoc(shardpoint.Sharder.run)
    params = list(pyinspect.signature(shardpoint.Sharder).parameters)
    assert params == ["sharding_info", "pipelining_info", "only_manual_sharding"]
    for f in shardpoint.__all__:
        obj = getattr(shardpoint, f)
        if callable(obj):
            assert pyinspect.getdoc(obj), f"{f} has no docstring"
    # dir() shows the API, not what the package imports for itself.
    assert dir(shardpoint) == sorted(shardpoint.__all__)
    assert "Optional" not in dir(shardpoint) and "dataclass" not in dir(shardpoint)


# ---- the other commands -------------------------------------------------------


@needs_models
def test_validate_inspect_and_simulate_return_what_the_command_line_reports(tmp_path):
    path = os.path.join(MODELS, "light_resnet50.onnx")
    names = node_names(onnx.load(path))
    first, second = names[len(names) // 3], names[2 * len(names) // 3]
    sharded = tmp_path / "s.onnx"
    code, _, err = cli(
        "shard", "--input-model", path, "--shard", f"{first}=0", "--shard", f"{second}=1",
        "--output-model", str(sharded), "--report", "none",
    )
    assert code == 0, err
    # inspect: the same nodes as the command line's JSON.
    code, out, err = cli("inspect", str(sharded), "--report", "json")
    assert code == 0, err
    assert shardpoint.inspect(str(sharded)) == json.loads(out)
    assert shardpoint.inspect(sharded.read_bytes()) == json.loads(out)
    # validate: no stages but pipelining asked for: an error per the rules.
    found = shardpoint.validate(str(sharded), num_ipus=2, enable_pipelining=True)
    code, out, err = cli(
        "validate", str(sharded), "--num_ipus", "2",
        "--enable_pipelining", "--report", "json",
    )
    report = json.loads(out)
    assert [(d.severity, d.rule, d.message) for d in found] == [
        (d["severity"], d["rule"], d["message"]) for d in report["diagnostics"]
    ]
    assert any(d.severity == "error" for d in found) and code == 3
    assert all(len(d.nodes) == len(d.vertices) for d in found)
    # Out of the command line's ranges: its words, not a garbled finding
    # (a trial: num_ipus=-1 gave 'devices 0..-1 (0)').
    for bad, words in (({"num_ipus": -1}, "--num-ipus: Value -1 not in range 1 to 65536"),
                       ({"num_ipus": 70000}, "--num-ipus: Value 70000 not in range"),
                       ({"batches_per_step": 0},
                        "--batches-per-step: Value 0 not in range 1 to 1073741824")):
        with pytest.raises(shardpoint.BadParameterError, match=re.escape(words)):
            shardpoint.validate(str(sharded), **bad)
    # Not an int: one short line, as every keyword (was pybind's signature).
    for bad, words in (({"num_ipus": 1.9}, "num_ipus must be an integer, not float"),
                       ({"batches_per_step": "4"}, "batches_per_step must be an integer, not str"),
                       ({"num_ipus": True}, "num_ipus must be an integer, not bool")):
        with pytest.raises(TypeError, match="^shardpoint: " + re.escape(words) + "$"):
            shardpoint.validate(str(sharded), **bad)
    with pytest.raises(shardpoint.BadParameterError,
                       match=re.escape("--num-ipus: a 71-bit integer is beyond 64 bits")):
        shardpoint.validate(str(sharded), num_ipus=2**70)
    # Nodes that form a cycle: the command's exit 2 (a trial found it passed).
    a = onnx.helper.make_node("Add", ["x", "yb"], ["ya"], name="a", __ipu_number=0)
    b = onnx.helper.make_node("Relu", ["ya"], ["yb"], name="b", __ipu_number=1)
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])
    y = onnx.helper.make_tensor_value_info("yb", onnx.TensorProto.FLOAT, [1])
    cyclic = onnx.helper.make_model(onnx.helper.make_graph([a, b], "g", [x], [y]))
    with pytest.raises(shardpoint.BadInputError,
                       match=re.escape("the model's nodes form a cycle through node")):
        shardpoint.validate(cyclic.SerializeToString())
    # simulate: the metrics of --report json.
    code, out, err = cli(
        "simulate", "--input-model", str(sharded), "--shard", f"{first}=0:0",
        "--shard", f"{second}=1:1", "--batches-per-step", "6", "--report", "json",
    )
    assert code == 0, err
    ours = shardpoint.simulate(
        str(sharded), batches_per_step=6,
        shard=[f"{first}=0:0", f"{second}=1:1"],
    )
    assert ours == json.loads(out)


def test_simulate_schedule_returns_what_the_command_line_reports(tmp_path):
    # From plain stage times: the closed form of 1F1B and the same JSON.
    code, out, err = cli(
        "simulate", "--stage-times", "1,1,1,1", "--schedule", "1f1b",
        "--batches-per-step", "8", "--activation-bytes", "64", "--report", "json",
    )
    assert code == 0, err
    ours = shardpoint.simulate(
        schedule="1f1b", stage_times=[1, 1, 1, 1], batches_per_step=8, activation_bytes=64
    )
    assert ours == json.loads(out)
    assert ours["makespan"] == (8 + 4 - 1) * 3.0
    assert [s["in_flight"] for s in ours["stages"]] == [4, 3, 2, 1]
    # Sizes as the flag takes them: one string, or ints and strings a stage.
    for given, expected in [("1KiB", [1024] * 4), ([64, "1kB", "2KiB", 8], [64, 1000, 2048, 8])]:
        sized = shardpoint.simulate(
            schedule="1f1b", stage_times=[1, 1, 1, 1], batches_per_step=8,
            activation_bytes=given,
        )
        assert [s["activation_bytes"] for s in sized["stages"]] == expected
    with pytest.raises(shardpoint.BadParameterError, match="'1.3' is not a whole number of bytes"):
        shardpoint.simulate(
            schedule="1f1b", stage_times=[1, 1], batches_per_step=2, activation_bytes="1.3"
        )
    # On a sharded model, zero-bubble, with a trace.
    model = tmp_path / "r.onnx"
    assert cli("synth", "resnet50", str(model))[0] == 0
    config = os.path.join(SOURCE, "examples", "resnet50", "shard.yaml")
    code, out, err = cli(
        "simulate", "--input-model", str(model), "--manual-sharding-config", config,
        "--batches-per-step", "8", "--schedule", "zb-h1", "--weight-share", "0.25",
        "--micro-batch-size", "2", "--report", "json",
    )
    assert code == 0, err
    ours = shardpoint.simulate(
        str(model), config, 8, schedule="zb-h1", weight_share=0.25, micro_batch_size=2,
        trace=tmp_path / "t.json",
    )
    assert ours == json.loads(out)
    names = {e["name"][0] for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"]
             if e["ph"] == "X"}
    assert names == {"F", "B", "W"}
    # Bad settings: the command line's messages.
    with pytest.raises(ValueError, match="zb-h1 needs at least as many micro-batches"):
        shardpoint.simulate(schedule="zb-h1", stage_times=[1, 1, 1], batches_per_step=2)
    with pytest.raises(ValueError, match="stage times need a training schedule"):
        shardpoint.simulate(stage_times=[1, 1], batches_per_step=2)
    # A mode or cost outside the choices: the flag's words, as on the command line.
    with pytest.raises(shardpoint.BadParameterError,
                       match="--mode: 'fast' is not one of virtual, threads"):
        shardpoint.simulate(str(model), config, 8, mode="fast")
    with pytest.raises(shardpoint.BadParameterError,
                       match="--cost: 'params' is not one of unit, flops"):
        shardpoint.simulate(str(model), config, 8, cost="params")
    # A training option without a schedule is refused, as its flag is, not
    # ignored; likewise the queue of forward passes with a schedule.
    with pytest.raises(ValueError, match="--micro-batch-size describes a training step"):
        shardpoint.simulate(str(model), config, 8, micro_batch_size=2)
    with pytest.raises(ValueError, match="--recompute describes a training step"):
        shardpoint.simulate(str(model), config, 8, recompute=True)
    with pytest.raises(ValueError, match="--queue-depth is for forward passes"):
        shardpoint.simulate(str(model), config, 8, schedule="1f1b", queue_depth=2)


def test_plan_returns_what_the_command_line_reports(tmp_path):
    counts = ["--layers", "8", "--hidden", "512", "--sequence", "256", "--vocabulary", "8000",
              "--heads", "8"]
    cluster = ["--devices", "8", "--devices-per-node", "4", "--device-memory", "4GiB",
               "--device-flops", "50T", "--intra-node-bandwidth", "100GB/s",
               "--inter-node-bandwidth", "10GB/s"]
    code, out, err = cli("plan", *counts, *cluster, "--global-batch", "32", "--top-k", "all",
                         "--report", "json")
    assert code == 0, err
    ours = shardpoint.plan(
        layers=8, hidden=512, sequence=256, vocabulary=8000, heads=8, devices=8,
        devices_per_node=4, device_memory="4GiB", device_flops=50e12,
        intra_node_bandwidth="100GB/s", inter_node_bandwidth=10e9, global_batch=32, top_k="all",
    )
    assert ours.pop("written") == []
    assert ours == json.loads(out)
    steps = [c["step_time"] for c in ours["candidates"]]
    # Best first (step times within 1e-9 are ties, broken by memory).
    assert all(a <= b * (1 + 1e-9) for a, b in zip(steps, steps[1:]))
    assert len(steps) == ours["feasible"]
    # --emit from a model; the files it names exist.
    model = tmp_path / "d.onnx"
    assert cli("synth", "decoder", "--layers", "2", "--hidden", "64", str(model))[0] == 0
    result = shardpoint.plan(
        str(model), devices=2, device_memory=1 << 30, device_flops="1T",
        intra_node_bandwidth="10GB/s", global_batch=4, emit=tmp_path / "out",
    )
    assert result["written"] and all(os.path.exists(f) for f in result["written"])
    # A schedule as the flag spells it, one name or a comma list.
    one = shardpoint.plan(
        layers=2, hidden=64, sequence=8, vocabulary=100, heads=2, devices=2,
        device_memory="1GiB", device_flops="1T", intra_node_bandwidth="10GB/s",
        global_batch=4, schedules="1f1b", top_k="all",
    )
    assert {c["schedule"] for c in one["candidates"]} == {"1f1b"}
    # Bad settings raise with the command line's message.
    with pytest.raises(ValueError, match="is not a FLOP/s rate"):
        shardpoint.plan(model=str(model), devices=2, device_memory="1GiB", device_flops="lots",
                        global_batch=4)


@needs_models
def test_suggest_and_memory_plan_return_the_command_line_reports(tmp_path):
    path = os.path.join(MODELS, "light_vgg19.onnx")
    code, out, err = cli("suggest", "--input-model", path, "--stages", "3", "--report", "json")
    assert code == 0, err
    assert shardpoint.suggest(path, 3) == json.loads(out)
    code, out, err = cli(
        "memory", "--parameters", "7.5e9", "--data-parallel", "8",
        "--sharded-data-parallel", "auto", "--device-memory", "40GiB", "--report", "json",
    )
    with pytest.warns(shardpoint.EstimateWarning, match="give --largest-layer-parameters"):
        ours = shardpoint.memory_plan(
            parameters=7.5e9, data_parallel=8, sharded_data_parallel="auto", device_memory="40GiB"
        )
    assert ours == json.loads(out)
    # DeepSpeed's estimator beside the plan, as the command has it.
    code, out, err = cli(
        "memory", "--parameters", "13e9", "--largest-layer-parameters", "2e9",
        "--data-parallel", "16", "--sharded-data-parallel", "16", "--pipeline-parallel", "1",
        "--compare-deepspeed", "--gpus-per-node", "8", "--report", "json",
    )
    assert code == 0 and err == "", err
    ours = shardpoint.memory_plan(
        parameters=13e9, largest_layer_parameters=2e9, data_parallel=16,
        sharded_data_parallel=16, pipeline_parallel=1, compare_deepspeed=True, gpus_per_node=8,
    )
    assert ours == json.loads(out)
    assert ours["deepspeed"]["inputs"]["num_nodes"] == 2
    with pytest.raises(TypeError, match="gpus_per_node must be an integer"):
        shardpoint.memory_plan(parameters=1e9, compare_deepspeed=True, gpus_per_node=1.5)
    with pytest.raises(shardpoint.BadParameterError, match="unknown memory plan option 'tensor_paralel'"):
        shardpoint.memory_plan(parameters=1e9, tensor_paralel=2)
    with pytest.raises(shardpoint.BadParameterError, match="--optimizer: 'adamw' is not one of"):
        shardpoint.memory_plan(parameters=1e9, optimizer="adamw")


def test_suggest_warns_once_for_each_figure_that_is_a_guess(tmp_path):
    # Symbolic input dimensions and weights in Constant nodes (a Paddle export).
    path = os.path.join(MODELS, "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    code, out, err = cli("suggest", "--input-model", path, "--stages", "2", "--report", "json")
    assert code == 0, err
    expected = json.loads(out)["estimates"]
    assert expected and err.count("shardpoint: warning: ") == len(expected)
    with pytest.warns(shardpoint.EstimateWarning) as caught:
        result = shardpoint.suggest(path, 2)
    assert [str(w.message) for w in caught] == expected
    assert result["estimated"] is True
    with pytest.warns(shardpoint.EstimateWarning, match="the activations of") as caught:
        plan = shardpoint.memory_plan(path)
    # The activations' free dimensions and which one is the batch; not the weights.
    assert plan["estimated"] is True and plan["devices"][0]["parameter_bytes"] > 0
    assert [str(w.message) for w in caught] == plan["estimates"]
    assert not any("weight" in str(w.message) for w in caught)

    # The free dimension sized, as --dim / --input-shape size it.
    resnet = SEED_MODEL
    code, out, err = cli("suggest", "--input-model", resnet, "--stages", "2", "--report", "json",
                         "--dim", "N=2")
    assert code == 0 and err == "", err
    assert shardpoint.suggest(resnet, 2, dims={"N": 2}) == json.loads(out)

    assert shardpoint.suggest(resnet, 2, input_shapes={"data": [2, 3, 224, 224]}) == json.loads(out)
    # shard's report sizes its crossing tensors with them too.
    config = os.path.join(MODELS, "resnet50-v1-7-shard.yaml")
    staged = os.path.join(str(tmp_path), "staged.onnx")
    code, shard_out, err = cli("shard", "--input-model", resnet, "--manual-sharding-config", config,
                         "--output-model", staged, "--report", "json", "--dim", "N=2")
    assert code == 0, err
    os.remove(staged)
    report = shardpoint.shard_file(resnet, config, staged, dims={"N": 2})
    assert report == json.loads(shard_out)
    assert all(c["per"] == "" for c in report["crossings"])
    # Without the report (--report none): the same bytes written, None back.
    with open(staged, "rb") as f:
        with_report = f.read()
    unreported = os.path.join(str(tmp_path), "unreported.onnx")
    assert shardpoint.shard_file(resnet, config, unreported, report=False) is None
    with open(unreported, "rb") as f:
        assert f.read() == with_report
    with pytest.raises(TypeError, match="report must be a bool"):
        shardpoint.shard_file(resnet, config, unreported + "2", report="none")
    assert not os.path.exists(unreported + "2")
    with pytest.raises(shardpoint.BadParameterError, match="dimension 1 of input 'data' is fixed"):
        shardpoint.suggest(resnet, 2, input_shapes=[2, 4, 224, 224])
    with pytest.raises(TypeError, match="must be an integer"):
        shardpoint.suggest(resnet, 2, dims={"N": 1.5})


# ---- manual_shard against the procedure as the seed states it ---------------


def reference_manual_shard(n, edges, points, column):
    """PopRT's procedure, literally: points in the lexicographically
    smallest order in which a point follows every point that reaches it; a
    walk against the edges from each, stopping at vertices already set; the
    rest to max + 1. `column` picks device (1) or stage (2) from a point."""
    preds = [[] for _ in range(n)]
    succs = [[] for _ in range(n)]
    for u, v in edges:
        preds[v].append(u)
        succs[u].append(v)

    def reaches(a, b):
        seen, todo = {a}, [a]
        while todo:
            x = todo.pop()
            if x == b:
                return True
            for y in succs[x]:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return False

    mine = [p for p in points if len(p) > column]
    if not mine:
        return [-1] * n
    left = sorted(mine, key=lambda p: p[0])
    order = []
    while left:
        for p in left:  # the smallest vertex that no other remaining point reaches
            if not any(q is not p and reaches(q[0], p[0]) for q in left):
                order.append(p)
                left.remove(p)
                break
    value = [None] * n
    for p in order:
        todo = [p[0]]
        while todo:
            x = todo.pop()
            if value[x] is not None:
                continue
            value[x] = p[column]
            todo.extend(preds[x])
    rest = max(p[column] for p in mine) + 1
    return [rest if v is None else v for v in value]


def random_dag(rng, n, density):
    """Edges of a random DAG whose vertex labels are shuffled (so that the
    index order is often not topological)."""
    label = list(range(n))
    rng.shuffle(label)
    edges = []
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < density:
                edges.append((label[a], label[b]))
    return edges


def test_manual_shard_matches_the_seed_procedure_on_random_graphs():
    rng = random.Random(20261123)
    for trial in range(300):
        n = rng.randint(1, 14)
        edges = random_dag(rng, n, rng.choice([0.1, 0.25, 0.5]))
        k = rng.randint(0, n)
        vertices = rng.sample(range(n), k)
        with_stage = rng.random() < 0.5
        points = [
            (v, rng.randint(0, 3), rng.randint(0, 3)) if with_stage else (v, rng.randint(0, 3))
            for v in vertices
        ]
        edge_array = np.array(edges, dtype=np.int64).reshape(-1, 2)
        point_array = np.array(points, dtype=np.int64).reshape(-1, 3 if with_stage else 2)
        device, stage = shardpoint.manual_shard(n, edge_array, point_array)
        assert device.tolist() == reference_manual_shard(n, edges, points, 1), (n, edges, points)
        assert stage.tolist() == reference_manual_shard(n, edges, points, 2), (n, edges, points)


def test_manual_shard_takes_lists_and_other_integer_arrays():
    edges = [(0, 1), (1, 2), (2, 3)]
    device, stage = shardpoint.manual_shard(4, edges, [(1, 0, 0)])
    assert device.tolist() == [0, 0, 1, 1] and stage.tolist() == [0, 0, 1, 1]
    d32, _ = shardpoint.manual_shard(4, np.array(edges, dtype=np.int32), [(1, 0)])
    assert d32.tolist() == [0, 0, 1, 1]
    # A non-contiguous view is converted once, not misread.
    wide = np.array([(0, 9, 1), (1, 9, 2), (2, 9, 3)], dtype=np.int64)[:, ::2]
    assert not wide.flags["C_CONTIGUOUS"]
    assert shardpoint.manual_shard(4, wide, [(1, 0)])[0].tolist() == [0, 0, 1, 1]


# ---- balanced_shard against brute force -------------------------------------


def brute_force_bottleneck(n, edges, cost, stages):
    """The smallest largest-stage cost over every assignment of vertices to
    stages with no empty stage and no edge to an earlier stage."""
    best = None
    for assign in itertools.product(range(stages), repeat=n):
        if len(set(assign)) != stages:
            continue
        if any(assign[u] > assign[v] for u, v in edges):
            continue
        load = max(sum(cost[v] for v in range(n) if assign[v] == s) for s in range(stages))
        best = load if best is None else min(best, load)
    return best


def test_balanced_shard_is_optimal_on_small_random_graphs():
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        n = rng.randint(2, 7)
        edges = random_dag(rng, n, 0.3)
        stages = rng.randint(1, min(3, n))
        cost = [float(rng.randint(0, 9)) for _ in range(n)]
        r = shardpoint.balanced_shard(n, edges, stages, cost=np.array(cost))
        want = brute_force_bottleneck(n, edges, cost, stages)
        assert r["exact"]
        assert r["bottleneck"] == pytest.approx(want), (n, edges, cost, stages)
        stage = r["stage"].tolist()
        assert sorted(set(stage)) == list(range(stages))
        assert all(stage[u] <= stage[v] for u, v in edges)
        # Its points, given back to manual_shard, give the same stages.
        assert shardpoint.manual_shard(n, edges, r["points"])[1].tolist() == stage
        checked += 1
    assert checked == 60


# ---- errors: the C++ categories as Python classes ---------------------------


def test_error_classes_mirror_the_cpp_categories():
    assert issubclass(shardpoint.BadInputError, shardpoint.Error)
    assert issubclass(shardpoint.BadInputError, ValueError)
    assert issubclass(shardpoint.BadParameterError, ValueError)
    assert issubclass(shardpoint.UnsupportedError, NotImplementedError)
    assert issubclass(shardpoint.InternalError, RuntimeError)
    assert issubclass(shardpoint.InvalidShardingError, shardpoint.BadInputError)
    cases = {
        "bad_input": shardpoint.BadInputError,
        "bad_parameter": shardpoint.BadParameterError,
        "unsupported": shardpoint.UnsupportedError,
        "internal": shardpoint.InternalError,
        "invalid_sharding": shardpoint.InvalidShardingError,
    }
    for category, cls in cases.items():
        with pytest.raises(cls) as e:
            _core._raise_error(category, f"shardpoint: a {category} message")
        assert type(e.value) is cls
        # The library's "shardpoint: " prefix is the command line's to print.
        assert str(e.value) == f"a {category} message"
    with pytest.raises(shardpoint.InternalError, match=r"^oops \(a bug in shardpoint"):
        _core._raise_error("something else", "oops")


def test_bad_model_bytes_raise_bad_input_with_the_command_line_message(tmp_path):
    garbage = b"\x08\x07\x12\xff\xff\xff\xff\x0fnot a model"
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(garbage)
    code, _, err = cli("inspect", str(bad))
    assert code == 2
    with pytest.raises(shardpoint.BadInputError) as e:
        shardpoint.inspect(str(bad))
    assert str(e.value) == cli_message(err)
    with pytest.raises(shardpoint.BadInputError, match="not an ONNX model"):
        shardpoint.Sharder({"a": 0}).run(garbage)
    with pytest.raises(shardpoint.BadInputError) as e:
        shardpoint.inspect(str(tmp_path / "missing.onnx"))
    code, _, err = cli("inspect", str(tmp_path / "missing.onnx"))
    assert code == 2 and str(e.value) == cli_message(err)


@needs_models
def test_unknown_node_and_bad_parameter_and_invalid_sharding(tmp_path):
    path = os.path.join(MODELS, "light_vgg19.onnx")
    model = onnx.load(path)
    names = node_names(model)
    # An unknown node: bad input, the command line's "did you mean" line.
    typo = names[5][:-1] + "x"
    code, _, err = cli("shard", "--input-model", path, "--shard", f"{typo}=0",
                       "--output-model", str(tmp_path / "o.onnx"))
    assert code == 2
    with pytest.raises(shardpoint.BadInputError) as e:
        shardpoint.Sharder({typo: 0}).run(model)
    # The same finding; only where the name came from differs.
    where, finding = cli_message(err).split(": ", 1)
    assert where == f"--shard {typo}=0"
    assert str(e.value) == f"Sharder: sharding_info['{typo}']: {finding}"
    # A key that is no name, a flag that is no bool: one TypeError line
    # (5 is not the node "5"; "no" was True).
    for args, kwargs, words in (
        (({5: 0},), {}, "sharding_info's keys must be node names (str), not int"),
        (({names[5]: 0},), {"only_manual_sharding": "no"}, "only_manual_sharding must be a bool, not str"),
    ):
        with pytest.raises(TypeError, match="^shardpoint: " + re.escape(words) + "$"):
            shardpoint.Sharder(*args, **kwargs)
    # An id of any size is bad input, said as a config's id is (2**70 was
    # pybind11's conversion TypeError).
    for device in (2**70, -(2**70), 65536, -1):
        with pytest.raises(shardpoint.BadInputError) as e:
            shardpoint.Sharder({names[5]: device}).run(model)
        assert str(e.value) == (f"Sharder: sharding_info['{names[5]}']: device '{device}' is not "
                                "an integer in 0..65535")
    with pytest.raises(TypeError, match=r"^shardpoint: enable_pipelining must be a bool, not int$"):
        shardpoint.validate(path, enable_pipelining=1)
    with pytest.raises(TypeError, match=r"^shardpoint: training must be a bool, not str$"):
        shardpoint.memory_plan(parameters=1e9, training="no")
    # A bad parameter: a tensor-parallel degree of 0.
    code, _, err = cli("memory", "--parameters", "1e9", "--tensor-parallel", "0")
    assert code == 2
    with pytest.raises(shardpoint.BadParameterError) as e:
        shardpoint.memory_plan(parameters=1e9, tensor_parallel=0)
    assert str(e.value) == cli_message(err)
    # A sharding that cannot run as a pipeline: 3 batches per step over 2
    # stages; 0 batches per step is a bad parameter in both.
    point = f"{names[5]}=0:0"
    code, _, err = cli("simulate", "--input-model", path, "--shard", point, "--batches-per-step", "3")
    assert code == 3
    with pytest.raises(shardpoint.InvalidShardingError) as e:
        shardpoint.simulate(path, batches_per_step=3, shard=[point])
    assert str(e.value) == cli_message(err)
    code, _, err = cli("simulate", "--input-model", path, "--shard", point, "--batches-per-step", "0")
    assert code == 2 and "--batches-per-step: Value 0 not in range 1 to 1073741824" in err
    # The option's range is declared once (app/option_schema.hpp): Python's
    # message is the command line's.
    with pytest.raises(shardpoint.BadParameterError, match=r"^--batches-per-step: Value 0 not in range 1 to 1073741824$"):
        shardpoint.simulate(path, batches_per_step=0, shard=[point])
    # A sharding that breaks a rule: the last node on stage 0, the producer
    # of its input on stage 1 (data flowing back to an earlier stage).
    last = model.graph.node[-1]
    producer = next(
        i for i, n in enumerate(model.graph.node) if last.input[0] in n.output
    )
    late, early = names[producer], names[-1]
    with pytest.raises(shardpoint.InvalidShardingError, match=r"validation failed.*backward"):
        shardpoint.Sharder({late: 1, early: 0}, {late: 1, early: 0}).run(model)
    code, _, _ = cli("shard", "--input-model", path, "--shard", f"{late}=1:1",
                     "--shard", f"{early}=0:0", "--output-model", str(tmp_path / "o.onnx"))
    assert code == 3 and not (tmp_path / "o.onnx").exists()


def test_bad_graphs_raise_bad_input():
    with pytest.raises(shardpoint.BadInputError, match=r"edge 1 \(1, 5\) names vertex 5 of a graph of 3"):
        shardpoint.manual_shard(3, [(0, 1), (1, 5)], [(0, 0)])
    with pytest.raises(shardpoint.BadInputError, match="cycle"):
        shardpoint.manual_shard(3, [(0, 1), (1, 2), (2, 0)], [(0, 0)])
    with pytest.raises(shardpoint.BadInputError, match=r"\(E, 2\) array"):
        shardpoint.manual_shard(3, [(0, 1, 2)], [(0, 0)])
    with pytest.raises(shardpoint.BadInputError, match="points must be"):
        shardpoint.manual_shard(3, [(0, 1)], [0])
    with pytest.raises(shardpoint.BadParameterError, match="num_vertices must be non-negative"):
        shardpoint.manual_shard(-1, [], [])
    with pytest.raises(shardpoint.BadInputError, match="cost must be a 1-D array"):
        shardpoint.balanced_shard(3, [(0, 1)], 2, cost=[1.0, 2.0])
    with pytest.raises(shardpoint.Error):
        shardpoint.balanced_shard(3, [(0, 1)], 5)


def test_a_model_over_protobufs_limit_is_unsupported():
    """2 GiB + 1 byte: refused before any parsing, with the reason."""
    big = bytes((1 << 31))
    with pytest.raises(shardpoint.UnsupportedError, match="protobuf messages are limited to 2 GiB"):
        shardpoint.Sharder({"a": 0}).run(big)


# ---- the stubs ------------------------------------------------------------


def test_stubs_name_what_the_extension_has():
    stub = os.path.join(os.path.dirname(shardpoint.__file__), "_core.pyi")
    tree = ast.parse(open(stub).read())
    functions = {n.name: [a.arg for a in n.args.args] for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    public = {k for k in dir(_core) if not k.startswith("__")}
    assert set(functions) | classes == public
    for name, args in functions.items():
        # pybind11's signature line: name(arg: type, ...) -> type
        first = getattr(_core, name).__doc__.splitlines()[0]
        assert re.findall(r"[(,] ?(\w+): ", first) == args, (name, first)


def test_weights_strategy_writes_mindspores_form_or_the_tutorials_as_the_command_line(tmp_path):
    model = tmp_path / "decoder.onnx"
    code, out, err = cli("synth", "decoder", "--layers", "2", "--hidden", "8", str(model))
    assert code == 0, err
    for form in ("mindspore", "tutorial"):
        code, out, err = cli("weights", "strategy", "--input-model", str(model),
                             "--tensor-parallel", "2", "--output-dir", str(tmp_path / ("cli-" + form)),
                             "--layout-form", form)
        assert code == 0, err
        assert "warning" not in err  # Megatron pairs: weights are split
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            decisions = shardpoint.weights_strategy(str(model), 2, str(tmp_path / ("py-" + form)),
                                                    layout_form=form)
        assert [d["name"] for d in decisions if d["layout"] == "column"]
        cli_file = (tmp_path / ("cli-" + form) / "stage0.ckpt").read_bytes()
        assert (tmp_path / ("py-" + form) / "stage0.ckpt").read_bytes() == cli_file
        assert cli_file[:2] == (b"\x08\x01" if form == "mindspore" else b"\x08\x00")  # current_stage
    with pytest.raises(shardpoint.BadParameterError, match="--layout-form tutorial writes"):
        shardpoint.weights_strategy(str(model), 2, str(tmp_path / "j"), format="json",
                                    layout_form="tutorial")
    assert not (tmp_path / "j").exists()


def test_weights_strategy_says_when_tensor_parallelism_splits_no_weight(tmp_path):
    # ResNet-50 has no Megatron pair: --tensor-parallel 2 replicates every
    # weight, which one line says (a table of 267 rows hides it).
    model = tmp_path / "r.onnx"
    assert cli("synth", "resnet50", str(model))[0] == 0
    code, out, err = cli("weights", "strategy", "--input-model", str(model),
                         "--tensor-parallel", "2", "--output-dir", str(tmp_path / "cli"))
    assert code == 0, err
    # Its table's columns line up past names of more than 32 characters.
    lines = out.splitlines()
    assert max(len(line.split(" ")[0]) for line in lines) > 32
    at = lines[0].index("shape")
    assert all(line[at - 1] == " " and line[at] == "[" for line in lines[1:])
    said = [line for line in err.splitlines() if line.startswith("shardpoint: warning:")]
    assert said == ["shardpoint: warning: --tensor-parallel 2 splits no weight: the graph has no "
                    "Megatron column/row pair (two MatMul or Gemm weights, one feeding the other) "
                    "nor a vocabulary table, so every rank holds every weight whole; give the "
                    "cuts with --layout"]
    with pytest.warns(UserWarning) as caught:
        decisions = shardpoint.weights_strategy(str(model), 2, str(tmp_path / "py"))
    assert [str(w.message) for w in caught] == [said[0][len("shardpoint: warning: "):]]
    assert decisions and all(d["layout"] == "replicated" for d in decisions)
    # One weight cut by a layout file: nothing to say.
    layout = tmp_path / "layout.yaml"
    layout.write_text("resnetv17_dense0_weight: row\n")
    code, out, err = cli("weights", "strategy", "--input-model", str(model),
                         "--tensor-parallel", "2", "--output-dir", str(tmp_path / "cut"),
                         "--layout", str(layout))
    assert code == 0, err
    assert "warning" not in err
    row = [line for line in out.splitlines() if line.startswith("resnetv17_dense0_weight ")]
    assert row and row[0].endswith("as the layout file says (" + str(layout) + ":1:1)")
    # Without tensor parallelism there is nothing to split.
    code, out, err = cli("weights", "strategy", "--input-model", str(model),
                         "--tensor-parallel", "1", "--output-dir", str(tmp_path / "one"))
    assert code == 0, err
    assert "warning" not in err


# ---- pictures: draw, and the reports a notebook shows


def test_draw_returns_the_page_the_command_line_writes(tmp_path):
    import xml.etree.ElementTree as ET

    model = tmp_path / "r.onnx"
    assert cli("synth", "resnet50", str(model))[0] == 0
    config = os.path.join(SOURCE, "examples", "resnet50", "shard.yaml")
    code, _, err = cli("draw", "--input-model", str(model), "--manual-sharding-config", config,
                       "--schedule", "1f1b", "--output", str(tmp_path / "cli.html"))
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", shardpoint.EstimateWarning)  # N counted as 1
        picture = shardpoint.draw(str(model), config, schedule="1f1b")
    assert picture.html == (tmp_path / "cli.html").read_text()
    # A notebook shows the fragment (styles scoped) and, as SVG, the stages.
    fragment = picture._repr_html_()
    assert fragment.startswith('<div class="shardpoint-picture"><style>')
    assert fragment in picture.html and "<html" not in fragment
    assert fragment.count('<g class="block"') == 4
    assert picture._repr_svg_() == picture.svgs["stages.svg"]
    for name, svg in picture.svgs.items():
        ET.fromstring(svg.split("?>", 1)[1])  # each parses
    # Written through the same output policy as the command line's.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", shardpoint.EstimateWarning)
        shardpoint.draw(str(model), config, output=tmp_path / "py.html")
        with pytest.raises(shardpoint.BadInputError, match="py.html'?: exists and is not a folder"):
            shardpoint.draw(str(model), config, output=tmp_path / "py.html", format="svg")
    picture.save(tmp_path / "saved.html")
    with pytest.raises(FileExistsError):
        picture.save(tmp_path / "saved.html")


def test_reports_show_as_their_pictures_and_draw_nothing_else(tmp_path):
    model = tmp_path / "r.onnx"
    assert cli("synth", "resnet50", str(model))[0] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", shardpoint.EstimateWarning)
        s = shardpoint.suggest(str(model), 3, output_config=tmp_path / "s.yaml")
    before = (tmp_path / "s.yaml").stat().st_mtime_ns
    assert isinstance(s, dict) and s["stages"]  # still the JSON report
    html = s._repr_html_()
    assert 'class="candidate chosen" data-stages="3"' in html
    assert html.count('<g class="block"') == 3
    assert s.picture() is s.picture()  # drawn once
    assert sorted(os.listdir(tmp_path)) == ["r.onnx", "s.yaml"]
    assert (tmp_path / "s.yaml").stat().st_mtime_ns == before
    t = shardpoint.simulate(schedule="1f1b", stage_times=[1, 2], batches_per_step=4)
    assert t._repr_html_().count('class="op"') == 2 * 2 * 4
    m = shardpoint.memory_plan(parameters=1e9)
    assert m._repr_html_() is None and m.picture() is None  # counts alone: nothing to draw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", shardpoint.EstimateWarning)
        m = shardpoint.memory_plan(str(model), config=tmp_path / "s.yaml", device_memory="1GiB")
    assert 'data-metric="memory-bytes"' in m._repr_html_()
    # Drawn from the model as it is when first shown: an error is raised by
    # picture(), and leaves a notebook the dict's own display.
    s2 = shardpoint.suggest(str(model), 2)
    os.remove(model)
    with pytest.raises(shardpoint.BadInputError):
        s2.picture()
    assert s2._repr_html_() is None and s2["stages"]


@pytest.mark.parametrize(
    "function,command",
    [
        (shardpoint.simulate, "simulate"),
        (shardpoint.plan, "plan"),
        (shardpoint.suggest, "suggest"),
        (shardpoint.memory_plan, "memory"),
        (shardpoint.draw, "draw"),
        (shardpoint.shard_file, "shard"),
        (shardpoint.weights_strategy, "weights strategy"),
    ],
)
def test_python_keywords_are_the_declared_options(function, command):
    # Each planning function takes the options its command declares
    # (app/option_schema.hpp), by their keywords: none missing, none extra.
    # The memory planner's come through **options.
    declared = set(_core.keywords(command))
    memory = set(_core.keywords("memory")) - {
        "model", "config", "shard", "input_shapes", "dims", "parameters",
        "largest_layer_parameters", "pipeline_parallel", "device_memory", "compare_stages",
        "compare_deepspeed", "gpus_per_node",
    }
    taken = {
        p.name for p in pyinspect.signature(function).parameters.values()
        if p.kind != pyinspect.Parameter.VAR_KEYWORD
    }
    # The model: the first argument; shard_file's report=False: --report none
    # (the other formats are not the function's: it returns the JSON report).
    own = {"model"} | ({"report"} if function is shardpoint.shard_file else set())
    assert taken - own <= declared, taken - declared
    takes_memory = any(
        p.kind == pyinspect.Parameter.VAR_KEYWORD
        for p in pyinspect.signature(function).parameters.values()
    )
    missing = declared - taken - {"model"} - (memory if takes_memory else set())
    assert not missing, missing
    with pytest.raises(shardpoint.BadParameterError, match="no command"):
        _core.keywords("strip")


def test_simulate_refuses_a_ratio_with_measured_times_as_the_flags_do():
    # --backward-ratio excludes --backward-times (exit 1); Python's keywords
    # are the same options, so giving both is refused, not one dropped.
    code, _, err = cli("simulate", "--stage-times", "1,1,2", "--schedule", "gpipe",
                       "--batches-per-step", "3", "--backward-ratio", "3",
                       "--backward-times", "1,1,1")
    assert code == 1 and "excludes" in err
    with pytest.raises(shardpoint.BadParameterError, match="exclude each other"):
        shardpoint.simulate(stage_times=[1, 1, 2], batches_per_step=3, schedule="gpipe",
                            backward_ratio=3, backward_times=[1, 1, 1])
    # Either alone runs, and the default ratio is the command line's.
    ours = shardpoint.simulate(stage_times=[1, 1, 2], batches_per_step=3, schedule="gpipe")
    code, out, _ = cli("simulate", "--stage-times", "1,1,2", "--schedule", "gpipe",
                       "--batches-per-step", "3", "--report", "json")
    assert code == 0 and ours == json.loads(out)


def test_threads_that_cannot_start_are_a_memory_error():
    # Under an address-space limit with room for a few threads' stacks, a
    # step of 2000 devices' threads cannot start: MemoryError (app::
    # out_of_memory's EAGAIN), not an internal error or an abort; two
    # devices run under the same limit.
    script = """
import resource, sys
import shardpoint
pages = int(open("/proc/self/statm").read().split()[0])
most = pages * resource.getpagesize() + (64 << 20)
resource.setrlimit(resource.RLIMIT_AS, (most, most))
small = shardpoint.simulate(stage_times=[1, 1], batches_per_step=2, mode="threads",
                            unit_us=1, schedule="gpipe")
assert small["mode"] == "threads", small
try:
    shardpoint.simulate(stage_times=[1] * 2000, batches_per_step=2, mode="threads",
                        unit_us=1, schedule="gpipe")
except MemoryError as e:
    print(e)
    sys.exit(0)
sys.exit(3)
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert r.stdout.startswith("shardpoint: out of memory ("), r.stdout


def test_suggest_takes_device_memory_as_the_command_line_does():
    # suggest's --device-memory is --memory-per-device; Python's keyword too.
    path = os.path.join(MODELS, "light_squeezenet.onnx")
    if not os.path.exists(path):
        pytest.skip("../shared/models is absent")
    alias = shardpoint.suggest(path, 2, device_memory="3MB")
    assert alias == shardpoint.suggest(path, 2, memory_per_device="3MB")
    code, out, err = cli("suggest", "--input-model", path, "--stages", "2",
                         "--device-memory", "3MB", "--report", "json")
    assert code == 0, err
    assert alias == json.loads(out)
    assert alias["memory_capacity"] == 3e6
    with pytest.raises(shardpoint.BadParameterError, match="the same option"):
        shardpoint.suggest(path, 2, device_memory="64MB", memory_per_device="64MB")
