"""The strategy and checkpoint files `shardpoint weights` writes decode with
Python's protobuf against a .proto written from the field numbers in
docs/formats.md (mindspore_files.PROTO), and hold what they should: the
layouts MindSpore's writer would write, and each rank's slice (numpy slicing of the
original initializer is the reference)."""
import pytest

onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import numpy_helper  # noqa: E402

import mindspore_files as msf  # noqa: E402  (the .proto, compiled with protoc)
from mindspore_files import run  # noqa: E402


@pytest.fixture(scope="module")
def messages():
    return msf.messages_or_skip()


def test_strategy_and_checkpoints_decode_and_hold_the_slices(messages, tmp_path):
    model = tmp_path / "decoder.onnx"
    run("synth", "decoder", "--layers", "2", "--hidden", "8", str(model))
    run("weights", "strategy", "--input-model", str(model), "--tensor-parallel", "4",
        "--devices-per-stage", "8", "--output-dir", str(tmp_path / "strategy"))
    run("weights", "split", "--input-model", str(model), "--strategy-dir",
        str(tmp_path / "strategy"), "--output-dir", str(tmp_path / "ranks"))

    strategy = messages.ParallelStrategyMap()
    strategy.ParseFromString((tmp_path / "strategy" / "stage0.ckpt").read_bytes())
    assert strategy.current_stage == 1  # MindSpore's writer counts saves: 1 on the first
    assert {i.parallel_strategys.stage for i in strategy.parallel_strategy_item} == {0}
    layouts = {i.param_name: i.parallel_layouts for i in strategy.parallel_layout_item}
    shards = {i.node_name: list(i.parallel_strategys.parallel_strategy[0].dim)
              for i in strategy.parallel_strategy_item}
    weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(model)).graph.initializer}
    assert set(layouts) == set(weights)

    # The seed's save_strategy_file's layout, for 8 devices of a stage, as
    # MindSpore's C++ writer writes it: [2, 1, 4] / [1, 0] without the axis
    # of size 1, an empty param_split_shape and indices_offset.
    q = layouts["layer0/q_w"]
    assert shards["layer0/q_w"] == [1, 4]  # column, not transposed
    assert [list(d.dim) for d in q.dev_matrix] == [[2, 4]]  # repeat_calc_num 2 first
    assert [list(m.dim) for m in q.tensor_map] == [[-1, 0]]
    assert [list(p.dim) for p in q.param_split_shape] == [[]]
    assert [list(p.dim) for p in q.indices_offset] == [[]]
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
