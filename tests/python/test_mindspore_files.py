"""The strategy and checkpoint files `shardpoint weights` writes decode with
Python's protobuf against a .proto written here from the field numbers in
FORMATS.md, and hold what they should: the layouts MindSpore's
save_strategy_file would write, and each rank's slice (numpy slicing of the
original initializer is the reference)."""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import numpy_helper  # noqa: E402

CLI = os.environ.get("SHARDPOINT_CLI", "shardpoint")

# Written from FORMATS.md (proto2; MindSpore's own files are not used).
PROTO = """
syntax = "proto2";
package mindspore.straspb;
message ParallelStrategy { repeated uint32 dim = 1; }
message ParallelStrategys { required uint32 stage = 1; repeated ParallelStrategy parallel_strategy = 2; }
message ParallelStrategyItem { required string node_name = 1; required ParallelStrategys parallel_strategys = 2; }
message DevMatrix { repeated uint32 dim = 1; }
message TensorMap { repeated int32 dim = 1; }
message ParamSplitShape { repeated int64 dim = 1; }
message IndicesOffset { repeated int64 dim = 1; }
message ParallelLayouts {
  repeated DevMatrix dev_matrix = 1;
  repeated TensorMap tensor_map = 2;
  repeated ParamSplitShape param_split_shape = 3;
  repeated IndicesOffset indices_offset = 4;
  required int32 field = 5;
  required int32 opt_weight_shard_step = 6;
  required int32 opt_weight_shard_size = 7;
}
message ParallelLayoutItem { required string param_name = 1; required ParallelLayouts parallel_layouts = 2; }
message ParallelStrategyMap {
  required uint32 current_stage = 1;
  repeated ParallelStrategyItem parallel_strategy_item = 2;
  repeated ParallelLayoutItem parallel_layout_item = 3;
}
message TensorProto { repeated int64 dims = 1; required string tensor_type = 2; required bytes tensor_content = 3; }
message Checkpoint {
  message Value { required string tag = 1; oneof value { TensorProto tensor = 2; bytes maptensor = 3; } }
  repeated Value value = 1;
}
"""

NUMPY = {"Float32": np.float32, "Float16": np.float16, "Int64": np.int64, "Int32": np.int32}


@pytest.fixture(scope="module")
def messages():
    if shutil.which("protoc") is None:
        pytest.skip("protoc (Debian's protobuf-compiler) is not installed")
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "mindspore_files.proto"), "w") as f:
        f.write(PROTO)
    subprocess.run(["protoc", "--python_out=" + folder, "mindspore_files.proto"], cwd=folder,
                   check=True)
    sys.path.insert(0, folder)
    import mindspore_files_pb2  # noqa: E402
    return mindspore_files_pb2


def run(*args):
    r = subprocess.run([CLI, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def test_strategy_and_checkpoints_decode_and_hold_the_slices(messages, tmp_path):
    model = tmp_path / "decoder.onnx"
    run("synth", "decoder", "--layers", "2", "--hidden", "8", str(model))
    run("weights", "strategy", "--input-model", str(model), "--tensor-parallel", "4",
        "--devices-per-stage", "8", "--output-dir", str(tmp_path / "strategy"))
    run("weights", "split", "--input-model", str(model), "--strategy-dir",
        str(tmp_path / "strategy"), "--output-dir", str(tmp_path / "ranks"))

    strategy = messages.ParallelStrategyMap()
    strategy.ParseFromString((tmp_path / "strategy" / "stage0.ckpt").read_bytes())
    assert strategy.current_stage == 0
    layouts = {i.param_name: i.parallel_layouts for i in strategy.parallel_layout_item}
    shards = {i.node_name: list(i.parallel_strategys.parallel_strategy[0].dim)
              for i in strategy.parallel_strategy_item}
    weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(model)).graph.initializer}
    assert set(layouts) == set(weights)

    # The seed's save_strategy_file, for 8 devices of a stage.
    q = layouts["layer0/q_w"]
    assert shards["layer0/q_w"] == [1, 4]  # column, not transposed
    assert list(q.dev_matrix[0].dim) == [2, 1, 4]  # repeat_calc_num 2 first
    assert list(q.tensor_map[0].dim) == [1, 0]
    assert list(q.param_split_shape[0].dim) == [8, 8]
    assert (q.field, q.opt_weight_shard_step, q.opt_weight_shard_size) == (0, 0, 0)
    assert shards["layer0/attn_out_w"] == [4, 1]  # row
    assert shards["layer0/q_b"] == [4]
    assert shards["layer0/attn_out_b"] == [1]
    assert shards["eps"] == []  # a scalar: replicated

    # Every rank's checkpoint: each weight the numpy slice of the original.
    for rank in range(8):
        ckpt = messages.Checkpoint()
        ckpt.ParseFromString(
            (tmp_path / "ranks" / f"rank_{rank}" / f"checkpoint_{rank}.ckpt").read_bytes())
        got = {v.tag: v.tensor for v in ckpt.value}
        assert set(got) == set(weights)
        for name, full in weights.items():
            layout = layouts[name]
            dev = list(layout.dev_matrix[0].dim)
            tmap = list(layout.tensor_map[0].dim)
            coord = np.unravel_index(rank, dev) if dev else ()
            index = []
            for axis, m in enumerate(tmap):
                if m < 0:
                    index.append(slice(None))
                    continue
                k = len(dev) - 1 - m
                size = full.shape[axis] // dev[k]
                index.append(slice(coord[k] * size, (coord[k] + 1) * size))
            expected = full[tuple(index)]
            t = got[name]
            assert list(t.dims) == list(expected.shape)
            assert t.tensor_type == "Float32"
            assert t.tensor_content == np.ascontiguousarray(expected).tobytes()
