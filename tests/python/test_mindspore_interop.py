"""MindSpore files that MindSpore itself reads and writes (issue #27).

Both directions, against references written here and in mindspore_reference.py
(numpy; no MindSpore code):
  * the strategy files `shardpoint weights strategy` writes go through
    emulations of MindSpore's readers (_build_protobuf_strategy,
    _convert_to_list, merge_pipeline_strategys, merge_sliced_parameter), and
    `--layout-form tutorial` is the tutorial's save_strategy_file byte for byte;
  * strategy folders written here the way MindSpore's C++ writer writes them
    (operator-named strategy items, current_stage 1, size-1 device axes removed,
    several TensorMaps, optimizer sharding, per-slice param_split_shape) give
    every rank exactly mindspore_reference.rank_slice;
  * checkpoint folders named as ModelCheckpoint names them merge back to the
    original weights, and re-sharding 8 -> 4 ranks is bit-exact.
The .proto is written from the field numbers (mindspore_files.PROTO)."""
import dataclasses
import json
import os
import shutil

import pytest

onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import helper, numpy_helper  # noqa: E402

import mindspore_files as msf  # noqa: E402
import mindspore_reference as ref  # noqa: E402
from mindspore_files import run  # noqa: E402

# Sharding points of the generated two-layer decoder for 1, 2 and 4 pipeline stages.
STAGE_POINTS = {
    1: [],
    2: ["layer0/mlp_residual=0:0"],
    4: ["layer0/attn_residual=0:0", "layer0/mlp_residual=1:1", "layer1/attn_residual=2:2"],
}
NP_OF_CKPT = {v: k for k, v in msf.CKPT_TYPES.items()}


@pytest.fixture(scope="module")
def pb():
    return msf.messages_or_skip()


# --------------------------------------------------------------------------------------------
# Models, layouts, files


def decoder(tmp, stages):
    """The generated decoder (2 layers, hidden 8), annotated with `stages` pipeline stages."""
    raw = tmp / "decoder.onnx"
    if not raw.exists():
        run("synth", "decoder", "--layers", "2", "--hidden", "8", raw)
    if stages == 1:
        return raw
    out = tmp / f"decoder_{stages}stages.onnx"
    points = [a for p in STAGE_POINTS[stages] for a in ("--shard", p)]
    run("shard", "--input-model", raw, *points, "--output-model", out, "--report", "none")
    return out


def initializers(model):
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(str(model)).graph.initializer}


def weight_stages(model):
    """{initializer: sorted stages of the nodes reading it} from __pipeline_stage."""
    m = onnx.load(str(model))
    names = {t.name for t in m.graph.initializer}
    out = {}
    for node in m.graph.node:
        stage = next((a.i for a in node.attribute if a.name == "__pipeline_stage"), 0)
        for i in node.input:
            if i in names:
                out.setdefault(i, set()).add(stage)
    return {k: sorted(v) for k, v in out.items()}


def decoder_shards(weights, t):
    """The seed's sharded_state_dict for the decoder: Megatron column/row pairs."""
    out = {}
    for name, a in weights.items():
        base = name.split("/")[-1]
        if base in ("q_w", "k_w", "v_w", "mlp_up_w"):
            out[name] = (1, t)
        elif base in ("attn_out_w", "mlp_down_w"):
            out[name] = (t, 1)
        elif base in ("q_b", "k_b", "v_b", "mlp_up_b"):
            out[name] = (t,)
        else:
            out[name] = (1,) * a.ndim
    return out


def write_layout(path, shards):
    with open(path, "w") as f:
        for name, shard in shards.items():
            if all(s == 1 for s in shard):
                f.write(f"{name}: replicated\n")
            else:
                f.write(f"{name}: [{', '.join(str(s) for s in shard)}]\n")
    return path


def strategy(model, out, t, d, shards, *extra, code=0):
    layout = write_layout(out.parent / f"{out.name}.layout.yaml", shards)
    return run("weights", "strategy", "--input-model", model, "--tensor-parallel", t,
               "--devices-per-stage", d, "--layout", layout, "--replicate-shared",
               "--output-dir", out, *extra, code=code)


def strategy_files(folder):
    return sorted(f for f in os.listdir(folder)
                  if not f.startswith(".") and f.endswith((".ckpt", ".json")))


def rank_dirs(folder):
    return sorted(f for f in os.listdir(folder) if f.startswith("rank_"))


def tutorial_layout(shard, d):
    """save_strategy_file's dev_matrix and tensor_map for a shard tuple on d devices."""
    prod = int(np.prod(shard)) if shard else 1
    repeat = d // prod
    return ([repeat] if repeat != 1 else []) + list(shard), list(range(len(shard) - 1, -1, -1))


def cxx_layout(dev, tmap):
    """TensorLayout::Init's RemoveElementEqualToOneInDeviceArrangement: size-1 axes removed,
    the map re-indexed, entries on a removed axis -1; all axes 1 -> [1]."""
    keep = [i for i, x in enumerate(dev) if x != 1]
    new = [dev[i] for i in keep]
    out = []
    for m in tmap:
        i = len(dev) - 1 - m
        out.append(-1 if m == -1 or dev[i] == 1 else len(new) - 1 - keep.index(i))
    return (new or [1]), out


def save_strategy_file(pb, state_dict):
    """The tutorial's save_strategy_file (weight_split.md), statement for statement, with the
    classes protoc generated; returns the bytes it writes."""
    stra = pb.ParallelStrategyMap()
    stage_rank_size = state_dict["stage_rank_size"]
    stage = state_dict["stage"]
    model_param = state_dict["model"]
    optimizer_param = state_dict["optimizer"]
    stra.current_stage = 0
    model_param.update(optimizer_param)
    for name, item in model_param.items():
        if "shard" not in item or "shape" not in item:
            continue
        opt_weight_shard_step = item["opt_weight_shard_step"] \
            if "opt_weight_shard_step" in item.keys() else 0
        opt_weight_shard_size = item["opt_weight_shard_size"] \
            if "opt_weight_shard_size" in item.keys() else 0
        strategy_item = stra.parallel_strategy_item.add()
        strategy_item.node_name = name
        parallel_strategys = strategy_item.parallel_strategys
        parallel_strategys.stage = stage
        shard = item["shard"]
        shape = item["shape"]
        parallel_strategy = parallel_strategys.parallel_strategy.add()
        shard_mul = 1
        for ele in shard:
            parallel_strategy.dim.append(ele)
            shard_mul = shard_mul * ele
        layout_item = stra.parallel_layout_item.add()
        layout_item.param_name = name
        parallel_layouts = layout_item.parallel_layouts
        parallel_layouts.field = 0
        parallel_layouts.opt_weight_shard_step = opt_weight_shard_step
        parallel_layouts.opt_weight_shard_size = opt_weight_shard_size
        dev_matrix = parallel_layouts.dev_matrix.add()
        repeat_calc_num = 1
        if stage_rank_size == shard_mul:
            repeat_calc_num = 1
        elif stage_rank_size % shard_mul == 0:
            repeat_calc_num = stage_rank_size // shard_mul
        else:
            raise ValueError(f"For {name}, the shard{shard} requires {shard_mul} devices, "
                             f"but the device number of this stage is {stage_rank_size}, "
                             f"it can not be divisible by {shard_mul}")
        if repeat_calc_num != 1:
            dev_matrix.dim.append(repeat_calc_num)
        for ele in shard:
            dev_matrix.dim.append(ele)
        tensor_map = parallel_layouts.tensor_map.add()
        shape_len = len(shape)
        index = shape_len - 1
        for _ in range(shape_len):
            tensor_map.dim.append(index)
            index = index - 1
        param_split_shape = parallel_layouts.param_split_shape.add()
        for ele in shape:
            param_split_shape.dim.append(ele)
    return stra.SerializeToString()


def tutorial_state_dict(weights, wst, shards, stage, d, total):
    return {"total_rank": total, "stage_rank_size": d, "stage": stage, "optimizer": {},
            "model": {n: {"shape": tuple(int(x) for x in weights[n].shape), "shard": shards[n]}
                      for n in weights if stage in wst[n]}}


def read_rank(pb, folder, r, fmt="ckpt"):
    """{name: (dims, type name, bytes)} of rank r's file."""
    if fmt == "ckpt":
        return msf.read_checkpoint(pb, folder / f"rank_{r}" / f"checkpoint_{r}.ckpt")
    return msf.read_safetensors(folder / f"rank_{r}" / "model.safetensors")


def as_array(entry):
    dims, ty, content = entry
    return np.frombuffer(content, dtype=NP_OF_CKPT[ty]).reshape(dims)


def assert_holds(entry, expected, where, fmt="ckpt"):
    dims, ty, content = entry
    types = msf.CKPT_TYPES if fmt == "ckpt" else msf.SAFETENSORS_TYPES
    assert list(dims) == list(expected.shape), f"{where}: dims {dims}, expected {expected.shape}"
    assert ty == types[expected.dtype], f"{where}: type {ty}"
    assert content == msf.tensor_bytes(expected), f"{where}: wrong values"


def assert_original(merged, weights):
    """A merged safetensors file holds every weight, byte for byte."""
    assert set(merged) == set(weights)
    for name, a in weights.items():
        assert_holds(merged[name], a, f"merged {name}", "safetensors")


def assert_refused(r, out, *names):
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {r.stderr!r}"
    for n in names:
        assert n in lines[0], f"{n!r} not named in: {lines[0]}"
    assert not os.path.exists(out), f"{out} written although refused"


# --------------------------------------------------------------------------------------------
# MindSpore's readers, emulated from their sources (mindspore/python/mindspore/parallel/
# _parallel_serialization.py, checkpoint_transform.py, serialization.py)


def ms_load_protobuf_strategy(pb, path):
    """_check_strategy_file + _load_protobuf_strategy (required fields checked by ParseFromString)."""
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise ValueError(f"The strategy file {path} should not be empty")
    m = pb.ParallelStrategyMap()
    try:
        m.ParseFromString(data)
    except Exception as e:
        raise TypeError("The strategy file type should be one of json or protobuf.") from e
    return m


def ms_build_protobuf_strategy(m):
    if not m.parallel_layout_item:
        raise ValueError("The strategy file has no sliced parameter")
    return {i.param_name: i.parallel_layouts for i in m.parallel_layout_item}


def ms_convert_to_list(layouts):
    out = {}
    for name, layout in layouts.items():
        try:
            dev = list(layout.dev_matrix[0].dim)
            tmap = list(layout.tensor_map[0].dim)
            split = list(layout.param_split_shape[0].dim)
            stage, origin = 0, name
            if "-" in name:
                prefix, origin = name.split("-")
                stage = int(prefix)
        except (IndexError, ValueError) as e:
            raise ValueError(f"{e}. Convert layout strategy to list failed") from e
        if origin in out:
            out[origin][6].append(stage)
        else:
            out[origin] = [dev, tmap, split, layout.field, layout.opt_weight_shard_step,
                           layout.opt_weight_shard_size, [stage]]
    return out


def ms_merge_pipeline_strategys(pb, folder):
    """merge_pipeline_strategys + _merge_protobuf_strategy: stage = item 0's stage per file."""
    names = [f for f in os.listdir(folder) if not f.startswith(".")]
    ckpts = [f for f in names if f.endswith(".ckpt")]
    jsons = [f for f in names if f.endswith(".json")]
    if ckpts and jsons:
        raise ValueError("The strategys format should be all '.ckpt' or all '.json'")
    merged = pb.ParallelStrategyMap()
    merged.current_stage = 1
    done = []
    for f in ckpts:
        m = ms_load_protobuf_strategy(pb, os.path.join(folder, f))
        if not m.parallel_strategy_item or not m.parallel_layout_item:
            raise ValueError(f"The strategy file {f} is empty")
        stage = m.parallel_strategy_item[0].parallel_strategys.stage
        if stage in done:
            continue
        done.append(stage)
        for item in m.parallel_strategy_item:
            merged.parallel_strategy_item.add().CopyFrom(item)
        for item in m.parallel_layout_item:
            new = merged.parallel_layout_item.add()
            new.CopyFrom(item)
            new.param_name = f"{stage}-{item.param_name}"
    return merged


def ms_pipeline_stage_num(converted):
    stages = set()
    for v in converted.values():
        stages |= set(v[6])
    if stages != set(range(len(stages))):
        raise ValueError("The strategy file for pipeline parallel dose not contains all stages.")
    return len(stages)


def ms_merge_sliced_parameter(slices, layout):
    """merge_sliced_parameter(slices, strategy) -> _merge_param_with_strategy (field 0)."""
    dev = list(layout.dev_matrix[0].dim)
    tmap = list(layout.tensor_map[0].dim)
    split = list(layout.param_split_shape[0].dim)
    if len(slices) != int(np.prod(dev)):
        raise ValueError("the length of 'sliced_parameters' should be equal to device_count")
    if not split:
        if any(s.shape != slices[0].shape for s in slices):
            raise ValueError("uneven slices need param_split_shape")
        assert layout.field == 0
        shape = [s * (1 if m == -1 else dev[len(dev) - 1 - m])
                 for s, m in zip(slices[0].shape, tmap)]
        return ref.merge(dict(enumerate(slices)), dev, tmap, shape)
    tensor_strategy = [1 if m == -1 else dev[len(dev) - 1 - m] for m in tmap]
    count = int(np.prod(tensor_strategy))
    if len(split) != count:
        raise ValueError(f"For 'merge_sliced_parameter', the param_split_shape length in "
                         f"'strategy' should be {count}, but got {len(split)}.")
    for i, s in enumerate(slices):
        blocks = [b for b, _ in ref.rank_bounds(tensor_strategy, dev, tmap, i)]
        index = int(np.ravel_multi_index(blocks, tensor_strategy)) if tensor_strategy else 0
        if s.shape[0] != split[index]:
            raise ValueError(f"For 'merge_sliced_parameter', the slice {index} should be "
                             f"{split[index]} in 0 axis, but got {s.shape[0]}.")
    raise AssertionError("not reached for the layouts of these tests")


# --------------------------------------------------------------------------------------------
# a. The default files pass MindSpore's readers


@pytest.mark.parametrize("stages,t,d", [(2, 2, 4), (2, 4, 8), (2, 8, 16), (4, 2, 4), (4, 4, 8),
                                        (4, 8, 16), (1, 4, 4), (2, 1, 2), (1, 1, 1)])
def test_default_strategy_files_pass_mindspore_readers_and_merge(pb, tmp_path, stages, t, d):
    """D = 2T (data-parallel repeats) for 2 and 4 stages, TP 2/4/8; and D = T, T = 1."""
    model = decoder(tmp_path, stages)
    weights, wst = initializers(model), weight_stages(model)
    shards = decoder_shards(weights, t)
    s_dir = tmp_path / "strategy"
    strategy(model, s_dir, t, d, shards)
    assert strategy_files(s_dir) == sorted(f"stage{s}.ckpt" for s in range(stages))

    for s in range(stages):
        m = ms_load_protobuf_strategy(pb, s_dir / f"stage{s}.ckpt")
        assert m.current_stage == 1  # what MindSpore's C++ writer writes on its first save
        expected = sorted(n for n in weights if s in wst[n])
        layouts = ms_build_protobuf_strategy(m)
        assert sorted(i.param_name for i in m.parallel_layout_item) == expected
        assert sorted(i.node_name for i in m.parallel_strategy_item) == expected
        for item in m.parallel_strategy_item:
            assert item.parallel_strategys.stage == s, item.node_name
            assert [list(p.dim) for p in item.parallel_strategys.parallel_strategy] == \
                [list(shards[item.node_name])], item.node_name
        ms_convert_to_list(layouts)  # indexes [0] of dev_matrix, tensor_map, param_split_shape
        for name, lay in layouts.items():
            shape = list(weights[name].shape)
            dev_t, map_t = tutorial_layout(shards[name], d)
            dev_c, map_c = cxx_layout(dev_t, map_t)
            assert [list(x.dim) for x in lay.dev_matrix] == [dev_c], name
            assert [list(x.dim) for x in lay.tensor_map] == [map_c], name
            assert [list(x.dim) for x in lay.param_split_shape] == [[]], name
            assert [list(x.dim) for x in lay.indices_offset] == [[]], name
            assert (lay.field, lay.opt_weight_shard_step, lay.opt_weight_shard_size) == (0, 0, 0)
            assert int(np.prod(dev_c)) == d  # MindSpore's stage device number
            for r in range(d):  # the same slices as the tutorial's layout
                assert ref.rank_bounds(shape, dev_c, map_c, r) == ref.rank_bounds(shape, dev_t, map_t, r)

    # merge_pipeline_strategys, then what transform_checkpoints reads from the merged file.
    merged = ms_merge_pipeline_strategys(pb, s_dir)
    converted = ms_convert_to_list(ms_build_protobuf_strategy(merged))
    assert ms_pipeline_stage_num(converted) == stages
    assert {n: sorted(v[6]) for n, v in converted.items()} == wst
    first = merged.parallel_layout_item[0].parallel_layouts.dev_matrix[0].dim
    assert int(np.prod(first)) == d

    # The ranks' slices, and merge_sliced_parameter with the default form: accepted, and
    # it gives back the weight.  With the tutorial form (full-shape param_split_shape) the
    # same slices of a row-split 2-D weight are refused by MindSpore's check.
    r_dir = tmp_path / "ranks"
    run("weights", "split", "--input-model", model, "--strategy-dir", s_dir, "--output-dir", r_dir)
    assert rank_dirs(r_dir) == sorted(f"rank_{r}" for r in range(stages * d))
    t_dir = tmp_path / "tutorial"
    strategy(model, t_dir, t, d, shards, "--layout-form", "tutorial")
    rt_dir = tmp_path / "ranks_tutorial"
    run("weights", "split", "--input-model", model, "--strategy-dir", t_dir, "--output-dir", rt_dir)
    refused = 0
    for s in range(stages):
        ranks = {r: read_rank(pb, r_dir, r) for r in range(s * d, s * d + d)}
        assert all(read_rank(pb, rt_dir, r) == ranks[r] for r in ranks)  # same slices either form
        layouts = ms_build_protobuf_strategy(ms_load_protobuf_strategy(pb, s_dir / f"stage{s}.ckpt"))
        tutorial = ms_build_protobuf_strategy(ms_load_protobuf_strategy(pb, t_dir / f"stage{s}.ckpt"))
        for name, lay in layouts.items():
            dev = list(lay.dev_matrix[0].dim)
            tmap = list(lay.tensor_map[0].dim)
            for r, got in ranks.items():
                assert set(got) == set(layouts), f"rank {r}"
                assert_holds(got[name], ref.rank_slice(weights[name], dev, tmap, r - s * d),
                             f"rank {r} {name}")
            slices = [as_array(ranks[r][name]) for r in sorted(ranks)]
            assert msf.tensor_bytes(ms_merge_sliced_parameter(slices, lay)) == \
                msf.tensor_bytes(weights[name]), name
            if weights[name].ndim == 2 and shards[name][0] > 1:
                with pytest.raises(ValueError, match="merge_sliced_parameter"):
                    ms_merge_sliced_parameter(slices, tutorial[name])
                refused += 1
    assert refused >= (stages if t > 1 else 0)  # every stage has a row-parallel weight


def test_default_json_form_is_the_cxx_writers_to_json(pb, tmp_path):
    t, d, stages = 2, 4, 2
    model = decoder(tmp_path, stages)
    weights, wst = initializers(model), weight_stages(model)
    shards = decoder_shards(weights, t)
    j_dir, c_dir = tmp_path / "json", tmp_path / "ckpt"
    strategy(model, j_dir, t, d, shards, "--format", "json")
    strategy(model, c_dir, t, d, shards)
    assert strategy_files(j_dir) == ["stage0.json", "stage1.json"]
    layout_keys = {"dev_matrix", "field", "opt_weight_shard_size", "opt_weight_shard_step",
                   "tensor_map", "tensor_shape"}
    for s in range(stages):
        with open(j_dir / f"stage{s}.json") as f:
            j = json.load(f)
        assert set(j) == {"current_stage", "parallel_layout_item", "parallel_strategy_item"}
        assert j["current_stage"] == 1
        expected = sorted(n for n in weights if s in wst[n])
        assert sorted(j["parallel_layout_item"]) == expected
        assert sorted(j["parallel_strategy_item"]) == expected
        # _merge_json_strategy takes the stage of the first strategy item.
        assert next(iter(j["parallel_strategy_item"].values()))["stage"] == s
        for name, item in j["parallel_strategy_item"].items():
            assert item == {"parallel_strategy": [list(shards[name])], "stage": s}, name
        for name, lay in j["parallel_layout_item"].items():
            assert set(lay) == layout_keys, name  # no param_split_shape / indices_offset keys
            dev_c, map_c = cxx_layout(*tutorial_layout(shards[name], d))
            assert lay["dev_matrix"] == dev_c and lay["tensor_map"] == map_c, name
            assert lay["tensor_shape"] == list(weights[name].shape), name
            assert (lay["field"], lay["opt_weight_shard_step"], lay["opt_weight_shard_size"]) == (0, 0, 0)
    # The JSON folder cuts the same slices as the protobuf one.
    rj, rc = tmp_path / "ranks_json", tmp_path / "ranks_ckpt"
    run("weights", "split", "--input-model", model, "--strategy-dir", j_dir, "--output-dir", rj)
    run("weights", "split", "--input-model", model, "--strategy-dir", c_dir, "--output-dir", rc)
    assert rank_dirs(rj) == rank_dirs(rc) == sorted(f"rank_{r}" for r in range(stages * d))
    for r in range(stages * d):
        assert read_rank(pb, rj, r) == read_rank(pb, rc, r), f"rank {r}"


# --------------------------------------------------------------------------------------------
# b. The tutorial's form, byte for byte


@pytest.mark.parametrize("stages,t,d", [(2, 2, 4), (4, 4, 4), (1, 8, 16)])
def test_tutorial_form_is_save_strategy_file_byte_for_byte(pb, tmp_path, stages, t, d):
    model = decoder(tmp_path, stages)
    weights, wst = initializers(model), weight_stages(model)
    shards = decoder_shards(weights, t)
    s_dir = tmp_path / "strategy"
    strategy(model, s_dir, t, d, shards, "--layout-form", "tutorial")
    assert strategy_files(s_dir) == sorted(f"stage{s}.ckpt" for s in range(stages))
    for s in range(stages):
        expected = save_strategy_file(pb, tutorial_state_dict(weights, wst, shards, s, d, d * stages))
        got = (s_dir / f"stage{s}.ckpt").read_bytes()
        assert got == expected, f"stage {s}: {got.hex()} != {expected.hex()}"


def test_tutorial_form_has_no_json_form(tmp_path):
    model = decoder(tmp_path, 1)
    out = tmp_path / "strategy"
    r = run("weights", "strategy", "--input-model", model, "--tensor-parallel", 2,
            "--output-dir", out, "--format", "json", "--layout-form", "tutorial", code=1)
    assert_refused(r, out)


@pytest.mark.parametrize("t,d", [(2, 4), (1, 1)])
def test_split_reads_a_two_stage_folder_written_by_the_tutorial(pb, tmp_path, t, d):
    """current_stage 0 in both files: the stage is the items' stage.  On one device a stage
    the tutorial writes a scalar's dev_matrix as an empty DevMatrix (repeat 1, shard ())."""
    stages = 2
    model = decoder(tmp_path, stages)
    weights, wst = initializers(model), weight_stages(model)
    shards = decoder_shards(weights, t)
    s_dir = tmp_path / "strategy"
    s_dir.mkdir()
    for s in range(stages):  # names as a user might choose them
        (s_dir / f"infer_strategy_{s}.ckpt").write_bytes(
            save_strategy_file(pb, tutorial_state_dict(weights, wst, shards, s, d, d * stages)))
    r_dir = tmp_path / "ranks"
    run("weights", "split", "--input-model", model, "--strategy-dir", s_dir, "--output-dir", r_dir)
    assert rank_dirs(r_dir) == sorted(f"rank_{r}" for r in range(stages * d))
    for r in range(stages * d):
        s, local = divmod(r, d)
        got = read_rank(pb, r_dir, r)
        assert sorted(got) == sorted(n for n in weights if s in wst[n]), f"rank {r}"
        for name in got:
            dev, tmap = tutorial_layout(shards[name], d)
            assert_holds(got[name], ref.rank_slice(weights[name], dev, tmap, local), f"rank {r} {name}")
    out = tmp_path / "merged.safetensors"
    run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", r_dir, "--output", out)
    assert_original(msf.read_safetensors(out), weights)


# --------------------------------------------------------------------------------------------
# c. A stage that reads no weight gets no file


def weightless_middle_model(path):
    """Stage 0: MatMul + Add (w0, b0); stage 1: Relu, Sigmoid (no weights); stage 2: MatMul +
    Add (w2, b2)."""
    rng = np.random.default_rng(3)
    w = {"w0": rng.standard_normal((8, 16)).astype(np.float32),
         "b0": rng.standard_normal(16).astype(np.float32),
         "w2": rng.standard_normal((16, 8)).astype(np.float32),
         "b2": rng.standard_normal(8).astype(np.float32)}
    spec = [("MatMul", ["x", "w0"], "a", 0), ("Add", ["a", "b0"], "b", 0),
            ("Relu", ["b"], "c", 1), ("Sigmoid", ["c"], "e", 1),
            ("MatMul", ["e", "w2"], "f", 2), ("Add", ["f", "b2"], "y", 2)]
    nodes = []
    for op, ins, out, stage in spec:
        n = helper.make_node(op, ins, [out], name=f"{out}_node")
        n.attribute.extend([helper.make_attribute("__ipu_number", stage),
                            helper.make_attribute("__pipeline_stage", stage)])
        nodes.append(n)
    graph = helper.make_graph(
        nodes, "weightless_middle",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4, 8])],
        initializer=[numpy_helper.from_array(a, n) for n, a in w.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return w


def test_no_strategy_file_for_a_weightless_stage_and_split_merge_take_the_folder(pb, tmp_path):
    model = tmp_path / "three_stages.onnx"
    weights = weightless_middle_model(model)
    t, d = 2, 4
    shards = {"w0": (1, t), "b0": (t,), "w2": (t, 1), "b2": (1,)}
    for form, fmt in [("mindspore", "ckpt"), ("mindspore", "json"), ("tutorial", "ckpt")]:
        out = tmp_path / f"strategy_{form}_{fmt}"
        strategy(model, out, t, d, shards, "--format", fmt, "--layout-form", form)
        assert strategy_files(out) == [f"stage0.{fmt}", f"stage2.{fmt}"], (form, fmt)
    s_dir = tmp_path / "strategy_mindspore_ckpt"
    stage_names = {0: ["b0", "w0"], 2: ["b2", "w2"]}
    for s, names in stage_names.items():
        m = ms_load_protobuf_strategy(pb, s_dir / f"stage{s}.ckpt")
        assert sorted(i.param_name for i in m.parallel_layout_item) == names
        assert [i.parallel_strategys.stage for i in m.parallel_strategy_item] == [s, s]
    r_dir = tmp_path / "ranks"
    run("weights", "split", "--input-model", model, "--strategy-dir", s_dir, "--output-dir", r_dir)
    assert rank_dirs(r_dir) == sorted(f"rank_{r}" for r in [0, 1, 2, 3, 8, 9, 10, 11])
    for s, names in stage_names.items():
        for local in range(d):
            got = read_rank(pb, r_dir, s * d + local)
            assert sorted(got) == names
            for name in names:
                dev, tmap = cxx_layout(*tutorial_layout(shards[name], d))
                assert_holds(got[name], ref.rank_slice(weights[name], dev, tmap, local),
                             f"rank {s * d + local} {name}")
    out = tmp_path / "merged.safetensors"
    run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", r_dir, "--output", out)
    assert_original(msf.read_safetensors(out), weights)


# --------------------------------------------------------------------------------------------
# d. Folders written the way MindSpore writes them


@dataclasses.dataclass
class P:
    """A parameter and its layout as MindSpore's C++ writer stores it."""
    name: str
    shape: tuple
    stage: int
    dev: list
    maps: list  # the TensorMap messages
    op: tuple = None  # (operator, its input strategies): the strategy item "<op>_<name>"
    dtype: object = np.float32
    split: list = ()  # param_split_shape
    offsets: list = ()  # indices_offset
    field: int = 0
    step: int = 0
    size: int = 0
    array: object = None


def fill(params, seed):
    rng = np.random.default_rng(seed)
    for p in params:
        if np.issubdtype(p.dtype, np.integer):
            p.array = rng.integers(-1000, 1000, size=p.shape).astype(p.dtype)
        else:
            p.array = rng.standard_normal(p.shape).astype(p.dtype)
    return params


def params_model(params, path):
    """Each parameter read by an Identity node of its stage."""
    nodes, outputs = [], []
    for i, p in enumerate(sorted(params, key=lambda p: p.stage)):
        n = helper.make_node("Identity", [p.name], [f"out{i}"], name=f"read{i}")
        n.attribute.extend([helper.make_attribute("__ipu_number", p.stage),
                            helper.make_attribute("__pipeline_stage", p.stage)])
        nodes.append(n)
        outputs.append(helper.make_tensor_value_info(
            f"out{i}", onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(p.dtype)], list(p.shape)))
    graph = helper.make_graph(nodes, "params", [], outputs,
                              initializer=[numpy_helper.from_array(p.array, p.name) for p in params])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return path


def cxx_strategy_bytes(pb, stage, params, seed, extra_items=()):
    """StrategyCheckpointInfo::to_protobuf: current_stage 1 (first save), operator-keyed strategy
    items, one DevMatrix, the TensorMap message(s), always one ParamSplitShape and one
    IndicesOffset; items in a shuffled (hash map) order."""
    rng = np.random.default_rng(seed)
    m = pb.ParallelStrategyMap()
    m.current_stage = 1
    items = [(f"{p.op[0]}_{p.name}", p.op[1], stage) for p in params if p.op] + list(extra_items)
    for k in rng.permutation(len(items)):
        node, strategies, st = items[k]
        item = m.parallel_strategy_item.add()
        item.node_name = node
        item.parallel_strategys.stage = st
        for s in strategies:
            item.parallel_strategys.parallel_strategy.add().dim.extend(s)
    for k in rng.permutation(len(params)):
        p = params[k]
        item = m.parallel_layout_item.add()
        item.param_name = p.name
        lay = item.parallel_layouts
        lay.dev_matrix.add().dim.extend(p.dev)
        for msg in p.maps:
            lay.tensor_map.add().dim.extend(msg)
        lay.param_split_shape.add().dim.extend(p.split)
        lay.indices_offset.add().dim.extend(p.offsets)
        lay.field, lay.opt_weight_shard_step, lay.opt_weight_shard_size = p.field, p.step, p.size
    return m.SerializeToString()


def cxx_strategy_json(stage, params):
    """StrategyCheckpointInfo::to_json (nlohmann: sorted keys, compact); param_split_shape and
    indices_offset keys only for manually split parameters."""
    layouts = {}
    for p in params:
        assert len(p.maps) == 1, "JSON holds one flat tensor_map"
        lay = {"dev_matrix": list(p.dev), "tensor_map": list(p.maps[0]),
               "tensor_shape": list(p.shape), "field": p.field,
               "opt_weight_shard_step": p.step, "opt_weight_shard_size": p.size}
        if p.split:
            lay["param_split_shape"] = list(p.split)
            lay["indices_offset"] = list(p.offsets) or list(np.cumsum([0] + list(p.split[:-1])))
            lay["indices_offset"] = [int(x) for x in lay["indices_offset"]]
        layouts[p.name] = lay
    items = {f"{p.op[0]}_{p.name}": {"stage": stage, "parallel_strategy": [list(s) for s in p.op[1]]}
             for p in params if p.op}
    return json.dumps({"current_stage": 1, "parallel_layout_item": layouts,
                       "parallel_strategy_item": items}, sort_keys=True, separators=(",", ":"))


def write_mindspore_folder(pb, folder, params, d, fmt="ckpt", seed=0):
    """One file per stage, named as MindSpore's pipeline ranks save them, plus files
    merge_pipeline_strategys does not read (hidden, other extensions, in a subfolder) holding
    a conflicting strategy."""
    folder.mkdir()
    stages = sorted({p.stage for p in params})
    for s in stages:
        ps = [p for p in params if p.stage == s]
        name = folder / f"strategy_rank_{s * d}.{fmt}"
        if fmt == "ckpt":
            name.write_bytes(cxx_strategy_bytes(pb, s, ps, seed + s))
        else:
            name.write_text(cxx_strategy_json(s, ps))
    decoy = [dataclasses.replace(p, dev=[int(np.prod(p.dev))], maps=[[-1] * len(p.shape)],
                                 split=(), offsets=(), step=0, size=0, field=0)
             for p in params if p.stage == stages[0]]
    (folder / f".old_strategy.{fmt}").write_bytes(cxx_strategy_bytes(pb, stages[0], decoy, 99))
    (folder / "strategy.pb").write_bytes(cxx_strategy_bytes(pb, stages[0], decoy, 98))
    (folder / "notes.txt").write_text("strategies of the training run\n")
    (folder / "backup").mkdir()  # not top level
    (folder / "backup" / f"strategy_rank_0.{fmt}").write_bytes(
        cxx_strategy_bytes(pb, stages[0], decoy, 97))


def expected_slice(p, local):
    """mindspore_reference.rank_slice; a per-slice param_split_shape cuts dim 0 unevenly at the
    reference's block numbering."""
    maps = ref.from_strategy_messages(p.maps)
    if p.split and list(p.split) != list(p.shape):
        blocks = len(p.split)
        bounds = ref.rank_bounds([blocks] + list(p.shape[1:]), p.dev, maps, local, p.step, p.size)
        b = bounds[0][0]
        start = int(np.sum(p.split[:b]))
        index = (slice(start, start + p.split[b]),) + tuple(slice(x, y) for x, y in bounds[1:])
        return p.array[index].copy()
    return ref.rank_slice(p.array, p.dev, maps, local, p.step, p.size)


def classic_params(stages, t):
    """Megatron weights in the C++ form on d = 2t devices: 1s removed, -1 in the map."""
    params = []
    for s in range(stages):
        pre = f"model.layers.{s}"
        params += [
            P(f"{pre}.attention.wq.weight", (8, 2 * t), s, [2, t], [[-1, 0]], ("MatMul", [[2, 1], [1, t]])),
            P(f"{pre}.attention.wq.bias", (2 * t,), s, [2, t], [[0]], ("Add", [[2, t], [t]]), np.float16),
            P(f"{pre}.attention.wo.weight", (2 * t, 8), s, [2, t], [[0, -1]], ("MatMul", [[2, t], [t, 1]])),
            P(f"{pre}.attention.wo.bias", (8,), s, [2 * t], [[-1]], ("Add", [[2 * t, 1], [1]])),
            P(f"{pre}.feed_forward.w1.weight", (2 * t, 8), s, [2, t], [[0, -1]],
              ("MatMul", [[2, 1], [t, 1]])),  # transposed column-parallel
            P(f"{pre}.tok_embeddings.embedding_table", (4 * t, 4), s, [2, t], [[0, -1]],
              ("Gather", [[t, 1], [2, 1]])),
            P(f"{pre}.attention_norm.weight", (8,), s, [2 * t], [[-1]], ("Mul", [])),  # no strategy
            P(f"{pre}.scale", (), s, [2 * t], [[]]),
            P(f"{pre}.global_step", (1,), s, [2 * t], [[-1]], dtype=np.int32),
        ]
    return params


def nested_params():
    """Layout-API parameters: one TensorMap per tensor dim (+ an empty one for 1-D), dev [2,2,2]."""
    dev = [2, 2, 2]
    return [
        P("n0.a", (8, 4), 0, dev, [[2, 1], [0]], ("MatMul", [[2, 2], [4, 2]])),
        P("n0.b", (8,), 0, dev, [[0, 1], []], ("Add", [[8], [4]])),
        P("n0.c", (4, 8), 0, dev, [[1], [2, 0]], ("MatMul", [[2, 2], [2, 4]])),
        P("n0.d", (4, 3, 8), 0, dev, [[2], [-1], [1, 0]], ("BatchMatMul", [[2, 1, 4]])),
        P("n1.e", (3, 16), 1, dev, [[-1], [2, 1, 0]], ("MatMul", [[1, 8]])),
        P("n1.f", (8, 4), 1, dev, [[1, 0]], ("MatMul", [[2, 2]])),  # one classic message
        P("n1.g", (4, 8), 1, dev, [[0], [2, 1]], ("MatMul", [[2, 4]])),
        P("n1.h", (8,), 1, dev, [[2, 0], []], ("Add", [[4]])),
    ]


def opt_params():
    """Optimizer weight sharding (parallel_optimizer), 8 devices a stage."""
    return [
        P("o0.a", (16, 8), 0, [2, 4, 1], [[1, 0]], ("MatMul", [[4, 1]]), step=4, size=2),
        P("o0.b", (16, 8), 0, [2, 4, 1], [[1, 0]], ("MatMul", [[4, 1]]), step=4, size=-1),
        P("o0.c", (16, 4), 0, [8, 1], [[-1, -1]], ("MatMul", [[1, 1]]), step=1, size=4),
        P("o0.d", (16, 8), 0, [2, 4], [[0, -1]], ("MatMul", [[4, 1]]), step=4, size=2),
        P("o1.e", (32,), 1, [8], [[-1]], ("Add", [[1]]), step=1, size=8),
        P("o1.f", (8, 12), 1, [2, 4], [[-1, 0]], ("MatMul", [[1, 4]]), step=4, size=2),
        P("o1.g", (8, 4), 1, [2, 2, 2], [[2, 1], [-1]], ("MatMul", [[4, 1]]), step=1, size=2),
        P("o1.h", (16, 4), 1, [2, 2, 2], [[1, -1]], ("MatMul", [[2, 1]]), step=1, size=2),
        P("o1.i", (8, 8), 1, [2, 4], [[0, -1]], ("MatMul", [[4, 1]])),  # no optimizer sharding
    ]


def uneven_params(json_form=False):
    """param_split_shape: per-slice sizes along dim 0 (manual split), full shape (tutorial), empty."""
    params = [
        P("u.a", (10, 4), 0, [2, 2], [[1, -1]], ("Gather", [[2, 1]]), split=[6, 4], offsets=[0, 6]),
        P("u.b", (10, 3), 0, [4], [[0, -1]], ("Gather", [[4, 1]]), split=[1, 2, 3, 4]),
        P("u.d", (6,), 0, [4], [[-1]], ("Add", [[1]]), split=[6], offsets=[0]),
        P("u.e", (8, 8), 0, [2, 2], [[1, 0]], ("MatMul", [[2, 2]])),
    ]
    if not json_form:
        params.append(P("u.c", (8, 4), 0, [2, 2], [[1, 0]], ("MatMul", [[2, 2]]), split=[8, 4]))
    return params


def check_split(pb, tmp_path, params, d, fmt="ckpt"):
    model = params_model(params, tmp_path / "model.onnx")
    s_dir = tmp_path / "strategy"
    write_mindspore_folder(pb, s_dir, params, d, fmt)
    r_dir = tmp_path / "ranks"
    run("weights", "split", "--input-model", model, "--strategy-dir", s_dir, "--output-dir", r_dir)
    stages = sorted({p.stage for p in params})
    assert rank_dirs(r_dir) == sorted(f"rank_{s * d + i}" for s in stages for i in range(d))
    for s in stages:
        ps = [p for p in params if p.stage == s]
        for local in range(d):
            r = s * d + local
            got = read_rank(pb, r_dir, r)
            assert sorted(got) == sorted(p.name for p in ps), f"rank {r}"
            for p in ps:
                assert_holds(got[p.name], expected_slice(p, local), f"rank {r} {p.name}")
    return model, s_dir, r_dir


@pytest.mark.parametrize("fmt", ["ckpt", "json"])
@pytest.mark.parametrize("stages,t", [(2, 2), (2, 4), (2, 8), (4, 2), (4, 4), (4, 8)])
def test_split_cuts_mindspore_written_classic_layouts(pb, tmp_path, stages, t, fmt):
    params = fill(classic_params(stages, t), seed=10 * stages + t)
    _, s_dir, r_dir = check_split(pb, tmp_path, params, 2 * t, fmt)
    out = tmp_path / "merged.safetensors"
    run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", r_dir, "--output", out)
    assert_original(msf.read_safetensors(out), {p.name: p.array for p in params})


def test_split_cuts_nested_tensor_maps_as_the_reference(pb, tmp_path):
    check_split(pb, tmp_path, fill(nested_params(), seed=5), 8)


@pytest.mark.parametrize("fmt", ["ckpt", "json"])
def test_split_cuts_optimizer_sharded_weights_as_the_reference(pb, tmp_path, fmt):
    params = [p for p in opt_params() if fmt == "ckpt" or len(p.maps) == 1]  # JSON: flat maps
    check_split(pb, tmp_path, fill(params, seed=6), 8, fmt)


@pytest.mark.parametrize("fmt", ["ckpt", "json"])
def test_split_cuts_per_slice_param_split_shape_unevenly(pb, tmp_path, fmt):
    params = fill(uneven_params(json_form=fmt == "json"), seed=7)
    model, s_dir, r_dir = check_split(pb, tmp_path, params, 4, fmt)
    out = tmp_path / "merged.safetensors"
    run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", r_dir, "--output", out)
    assert_original(msf.read_safetensors(out), {p.name: p.array for p in params})


def test_split_and_merge_round_trip_mindspore_written_layouts(pb, tmp_path):
    """What split cut from nested and optimizer-sharded layouts merges back to the weights."""
    for name, params in [("nested", nested_params()), ("opt", opt_params())]:
        sub = tmp_path / name
        sub.mkdir()
        params = fill(params, seed=8)
        _, s_dir, r_dir = check_split(pb, sub, params, 8)
        out = sub / "merged.safetensors"
        run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", r_dir, "--output", out)
        assert_original(msf.read_safetensors(out), {p.name: p.array for p in params})


DEV_MATRICES = {
    8: [[8], [1, 8], [8, 1], [2, 4], [4, 2], [2, 2, 2], [2, 4, 1], [1, 2, 4], [2, 1, 4]],
    12: [[12], [3, 4], [4, 3], [2, 6], [6, 2], [2, 2, 3], [3, 2, 2], [2, 3, 2], [3, 4, 1], [1, 3, 4]],
}


def random_params(d, count, seed):
    """Random layouts on d devices, written as MindSpore writes them: classic maps, or one
    TensorMap per dim when a dim is split over several axes; optimizer sharding on the
    replicated axes (step as the classic construction requires); only what the reference
    accepts."""
    rng = np.random.default_rng(seed)
    params = []
    while len(params) < count:
        dev = DEV_MATRICES[d][rng.integers(len(DEV_MATRICES[d]))]
        ndim = int(rng.integers(1, 4))
        owner = rng.integers(-1, ndim, size=len(dev))  # the tensor dim using each axis
        per_dim, splits = [], []
        for k in range(ndim):
            axes = [len(dev) - 1 - i for i in rng.permutation(len(dev)) if owner[i] == k]
            per_dim.append(axes or [-1])
            splits.append(int(np.prod([dev[len(dev) - 1 - a] for a in axes] or [1])))
        if any(len(a) > 1 for a in per_dim):
            maps = per_dim + ([[]] if ndim == 1 else [])
        else:
            maps = [[a[0] for a in per_dim]]
        free = [i for i in range(len(dev)) if owner[i] == -1 and dev[i] > 1]
        step = size = 0
        if free and rng.random() < 0.6:
            n_free = int(np.prod([dev[i] for i in free]))
            size = int(rng.choice([x for x in range(2, n_free + 1) if n_free % x == 0]))
            step = int(np.prod(dev[free[0] + 1:])) if len(free) == 1 else 1
        shape = [x * int(rng.integers(1, 3)) for x in splits]
        shape[0] *= max(size, 1)
        if size and size == int(np.prod([dev[i] for i in free])) and rng.random() < 0.5:
            size = -1  # "all replicas"
        p = P(f"r{len(params)}.w", tuple(shape), 0, list(dev), maps, ("MatMul", [[1]]),
              step=step, size=size)
        p.array = rng.standard_normal(shape).astype(np.float32)
        try:
            for local in range(d):
                expected_slice(p, local)
        except ValueError:
            continue  # an optimizer shard size the axes cannot give: MindSpore raises too
        params.append(p)
    return params


@pytest.mark.parametrize("d", [8, 12])
def test_split_and_merge_match_the_reference_on_random_layouts(pb, tmp_path, d):
    params = random_params(d, 40, seed=d)
    assert any(len(p.maps) > 1 for p in params) and any(p.size for p in params)
    _, s_dir, r_dir = check_split(pb, tmp_path, params, d)
    out = tmp_path / "merged.safetensors"
    run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", r_dir, "--output", out)
    assert_original(msf.read_safetensors(out), {p.name: p.array for p in params})


BAD = {
    "field": P("bad.emb", (16, 4), 0, [8], [[0, -1]], ("Gather", [[8, 1]]), field=1),
    "opt_step": P("bad.w", (16, 8), 0, [2, 4, 1], [[1, 0]], ("MatMul", [[4, 1]]), step=2, size=2),
    "opt_size_too_big": P("bad.w", (16, 8), 0, [2, 4, 1], [[1, 0]], ("MatMul", [[4, 1]]), step=4, size=4),
    "opt_size_not_dividing": P("bad.w", (24, 8), 0, [2, 4, 1], [[1, 0]], ("MatMul", [[4, 1]]),
                               step=4, size=3),
    "axis_used_twice": P("bad.w", (8, 4), 0, [2, 2, 2], [[2, 1], [1]], ("MatMul", [[4, 2]])),
    "axis_used_twice_classic": P("bad.w", (8, 4), 0, [4, 2], [[1, 1]], ("MatMul", [[4, 4]])),
    "nested_map_for_too_few_dims": P("bad.w", (8, 4), 0, [2, 2, 2], [[2, 1], []], ("MatMul", [[4, 1]])),
    "map_out_of_range": P("bad.w", (8, 4), 0, [2, 4], [[2, -1]], ("MatMul", [[2, 1]])),
    "map_too_short": P("bad.w", (8, 4), 0, [2, 4], [[0]], ("MatMul", [[4, 1]])),
    "not_divisible": P("bad.w", (6, 4), 0, [2, 4], [[0, -1]], ("MatMul", [[4, 1]])),
    "split_sum": P("bad.w", (10, 4), 0, [2, 4], [[1, -1]], ("Gather", [[2, 1]]),
                   split=[6, 5], offsets=[0, 6]),
    "split_count": P("bad.w", (10, 4), 0, [2, 4], [[1, -1]], ("Gather", [[2, 1]]),
                     split=[3, 3, 4], offsets=[0, 3, 6]),
    "offsets": P("bad.w", (10, 4), 0, [2, 4], [[1, -1]], ("Gather", [[2, 1]]),
                 split=[6, 4], offsets=[0, 5]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_split_refuses_what_it_cannot_slice_as_mindspore(pb, tmp_path, case):
    good = P("ok.w", (8, 8), 0, [2, 4], [[0, -1]], ("MatMul", [[4, 1]]))
    params = fill([good, dataclasses.replace(BAD[case])], seed=9)
    model = params_model(params, tmp_path / "model.onnx")
    s_dir = tmp_path / "strategy"
    s_dir.mkdir()
    (s_dir / "strategy.ckpt").write_bytes(cxx_strategy_bytes(pb, 0, params, 1))
    out = tmp_path / "ranks"
    r = run("weights", "split", "--input-model", model, "--strategy-dir", s_dir, "--output-dir", out,
            code=2)
    assert_refused(r, out, params[1].name)


def test_split_refuses_a_file_whose_items_name_two_stages(pb, tmp_path):
    params = fill([P("a.w", (8, 8), 0, [2, 4], [[0, -1]], ("MatMul", [[4, 1]])),
                   P("b.w", (8, 8), 0, [2, 4], [[-1, 0]], ("MatMul", [[1, 4]]))], seed=4)
    model = params_model(params, tmp_path / "model.onnx")
    s_dir = tmp_path / "strategy"
    s_dir.mkdir()
    (s_dir / "strategy.ckpt").write_bytes(cxx_strategy_bytes(
        pb, 0, [params[0], dataclasses.replace(params[1], op=None)], 1,
        extra_items=[("MatMul_b.w", [[1, 4]], 1)]))
    out = tmp_path / "ranks"
    r = run("weights", "split", "--input-model", model, "--strategy-dir", s_dir, "--output-dir", out,
            code=2)
    assert_refused(r, out, "MatMul_a.w", "MatMul_b.w")


# --------------------------------------------------------------------------------------------
# e. Checkpoint folders as ModelCheckpoint names them


def split_decoder(pb, tmp_path, stages, t, d, fmt="ckpt"):
    model = decoder(tmp_path, stages)
    weights = initializers(model)
    s_dir = tmp_path / f"strategy_t{t}"
    strategy(model, s_dir, t, d, decoder_shards(weights, t))
    r_dir = tmp_path / f"ranks_t{t}_{fmt}"
    run("weights", "split", "--input-model", model, "--strategy-dir", s_dir, "--output-dir", r_dir,
        "--format", fmt)
    return model, weights, s_dir, r_dir


def test_merge_takes_the_lexicographically_last_ckpt_of_each_rank_folder(pb, tmp_path):
    stages, t, d = 2, 2, 4
    model, weights, s_dir, r_dir = split_decoder(pb, tmp_path, stages, t, d)
    train = tmp_path / "train"
    for r in range(stages * d):
        folder = train / f"rank_{r}"
        folder.mkdir(parents=True)
        shutil.copy(r_dir / f"rank_{r}" / f"checkpoint_{r}.ckpt", folder / "CKP-1_4.ckpt")
        current = {n: as_array(e) for n, e in read_rank(pb, r_dir, r).items()}
        # Other, consistent checkpoints of the same run: an earlier step, and epoch 10
        # (before "CKP-1_4" in lexicographic order although later, and newest on disk).
        (folder / "CKP-1_2.ckpt").write_bytes(
            msf.checkpoint_bytes(pb, {n: (-a - 1).astype(a.dtype) for n, a in current.items()}))
        (folder / "CKP-10_1.ckpt").write_bytes(
            msf.checkpoint_bytes(pb, {n: (a * 2).astype(a.dtype) for n, a in current.items()}))
        (folder / "CKP-graph.meta").write_bytes(b"\x0a\x04meta graph, not a checkpoint")
        st = os.stat(folder / "CKP-1_4.ckpt")
        os.utime(folder / "CKP-10_1.ckpt", (st.st_atime + 100, st.st_mtime + 100))
    out = tmp_path / "merged.safetensors"
    run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", train, "--output", out)
    assert_original(msf.read_safetensors(out), weights)


def test_merge_takes_the_last_safetensors_when_a_rank_folder_has_no_ckpt(pb, tmp_path):
    stages, t, d = 2, 2, 4
    model, weights, s_dir, r_dir = split_decoder(pb, tmp_path, stages, t, d, "safetensors")
    train = tmp_path / "train"
    for r in range(stages * d):
        folder = train / f"rank_{r}"
        folder.mkdir(parents=True)
        shutil.copy(r_dir / f"rank_{r}" / "model.safetensors", folder / "weights-step2.safetensors")
        current = msf.read_safetensors(folder / "weights-step2.safetensors")
        older = {n: (-np.frombuffer(c, np.float32).reshape(s) - 1).astype(np.float32)
                 for n, (s, ty, c) in current.items()}
        (folder / "weights-step1.safetensors").write_bytes(msf.safetensors_bytes(older))
    out = tmp_path / "merged.safetensors"
    run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", train, "--output", out)
    assert_original(msf.read_safetensors(out), weights)


# --------------------------------------------------------------------------------------------
# f. Re-shard 8 -> 4 ranks


@pytest.mark.parametrize("stages", [1, 2])
def test_reshard_8_to_4_ranks_is_bit_exact(pb, tmp_path, stages):
    model, weights, s8, r8 = split_decoder(pb, tmp_path, stages, 8, 8)
    merged = tmp_path / "merged.safetensors"
    run("weights", "merge", "--strategy-dir", s8, "--ranks-dir", r8, "--output", merged)
    assert_original(msf.read_safetensors(merged), weights)

    s4 = tmp_path / "strategy_t4"
    strategy(model, s4, 4, 4, decoder_shards(weights, 4))
    full_ckpt = tmp_path / "full.ckpt"
    full_ckpt.write_bytes(msf.checkpoint_bytes(pb, weights))
    sources = {
        "from_safetensors": ["--from-weights", merged],
        "from_ckpt": ["--from-weights", full_ckpt],
        "from_ranks": ["--from-ranks", r8, "--from-strategy-dir", s8],
    }
    layouts = {}
    for s in range(stages):
        m = ms_load_protobuf_strategy(pb, s4 / f"stage{s}.ckpt")
        layouts[s] = {i.param_name: (list(i.parallel_layouts.dev_matrix[0].dim),
                                     list(i.parallel_layouts.tensor_map[0].dim))
                      for i in m.parallel_layout_item}
    for what, source in sources.items():
        r4 = tmp_path / f"ranks4_{what}"
        run("weights", "split", *source, "--strategy-dir", s4, "--output-dir", r4)
        assert rank_dirs(r4) == sorted(f"rank_{r}" for r in range(stages * 4)), what
        for r in range(stages * 4):
            s, local = divmod(r, 4)
            got = read_rank(pb, r4, r)
            assert sorted(got) == sorted(layouts[s]), (what, r)
            for name, (dev, tmap) in layouts[s].items():
                assert_holds(got[name], ref.rank_slice(weights[name], dev, tmap, local),
                             f"{what}: rank {r} {name}")
        back = tmp_path / f"merged4_{what}.safetensors"
        run("weights", "merge", "--strategy-dir", s4, "--ranks-dir", r4, "--output", back)
        assert_original(msf.read_safetensors(back), weights)


def test_reshard_mindspore_training_ranks_to_a_shardpoint_strategy(pb, tmp_path):
    """Training folders as MindSpore leaves them (nested maps and optimizer sharding, 8 devices
    a stage, ModelCheckpoint names) re-sharded with --from-ranks to T = 2."""
    params = fill([dataclasses.replace(p, stage=0) for p in nested_params()[:4]] +
                  [dataclasses.replace(p, stage=1) for p in opt_params()], seed=12)
    model, s_train, r_split = check_split(pb, tmp_path, params, 8)
    train = tmp_path / "train"
    for r in range(16):
        folder = train / f"rank_{r}"
        folder.mkdir(parents=True)
        shutil.copy(r_split / f"rank_{r}" / f"checkpoint_{r}.ckpt", folder / "CKP-2_4.ckpt")
        current = {n: as_array(e) for n, e in read_rank(pb, r_split, r).items()}
        (folder / "CKP-1_4.ckpt").write_bytes(
            msf.checkpoint_bytes(pb, {n: (a + 1).astype(a.dtype) for n, a in current.items()}))
        (folder / "CKP-graph.meta").write_bytes(b"graph")
    shards = {p.name: ((2,) + (1,) * (len(p.shape) - 1)) if p.shape[0] % 2 == 0 else (1,) * len(p.shape)
              for p in params}
    s_dir = tmp_path / "strategy_t2"
    strategy(model, s_dir, 2, 2, shards)
    r_dir = tmp_path / "ranks_t2"
    run("weights", "split", "--from-ranks", train, "--from-strategy-dir", s_train,
        "--strategy-dir", s_dir, "--output-dir", r_dir)
    assert rank_dirs(r_dir) == ["rank_0", "rank_1", "rank_2", "rank_3"]
    for r in range(4):
        s, local = divmod(r, 2)
        got = read_rank(pb, r_dir, r)
        ps = [p for p in params if p.stage == s]
        assert sorted(got) == sorted(p.name for p in ps), f"rank {r}"
        for p in ps:
            dev, tmap = cxx_layout(*tutorial_layout(shards[p.name], 2))
            assert_holds(got[p.name], ref.rank_slice(p.array, dev, tmap, local), f"rank {r} {p.name}")


def test_reshard_refuses_incomplete_sources(pb, tmp_path):
    model, weights, s_dir, r_dir = split_decoder(pb, tmp_path, 1, 4, 4)
    s2 = tmp_path / "strategy_t2"
    strategy(model, s2, 2, 2, decoder_shards(weights, 2))
    partial = tmp_path / "partial.safetensors"  # merged weights without one of them
    partial.write_bytes(msf.safetensors_bytes(
        {n: a for n, a in weights.items() if n != "layer1/mlp_down_w"}))
    out = tmp_path / "out"
    r = run("weights", "split", "--from-weights", partial, "--strategy-dir", s2, "--output-dir", out,
            code=2)
    assert_refused(r, out, "layer1/mlp_down_w")
    shutil.rmtree(r_dir / "rank_2")  # a rank's folder missing
    r = run("weights", "split", "--from-ranks", r_dir, "--from-strategy-dir", s_dir,
            "--strategy-dir", s2, "--output-dir", out, code=2)
    assert_refused(r, out, "rank_2")


def test_split_takes_exactly_one_source(pb, tmp_path):
    model, weights, s_dir, r_dir = split_decoder(pb, tmp_path, 1, 2, 2)
    merged = tmp_path / "merged.safetensors"
    run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", r_dir, "--output", merged)
    out = tmp_path / "out"
    for source in [[],
                   ["--input-model", model, "--from-weights", merged],
                   ["--input-model", model, "--from-ranks", r_dir, "--from-strategy-dir", s_dir],
                   ["--from-ranks", r_dir]]:
        r = run("weights", "split", *source, "--strategy-dir", s_dir, "--output-dir", out, code=1)
        assert_refused(r, out)


# --------------------------------------------------------------------------------------------
# g. merge never replaces its output silently


def test_merge_refuses_an_existing_output_without_force(pb, tmp_path):
    model, weights, s_dir, r_dir = split_decoder(pb, tmp_path, 2, 2, 4)
    out = tmp_path / "weights.safetensors"
    out.write_bytes(b"a file the user keeps")
    r = run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", r_dir, "--output", out,
            code=2)
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert out.read_bytes() == b"a file the user keeps"
    run("weights", "merge", "--strategy-dir", s_dir, "--ranks-dir", r_dir, "--output", out, "--force")
    assert_original(msf.read_safetensors(out), weights)
