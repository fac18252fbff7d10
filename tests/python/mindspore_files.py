"""Helpers for the tests of MindSpore's files (not a test itself): the .proto
written from the field numbers in docs/formats.md, compiled with protoc, and
readers/writers of the files `shardpoint weights` reads and writes
(Checkpoint protobuf, safetensors), plus the command-line runner.

The .proto text is the same as test_mindspore_files.py's, so both tests can
run in one Python process (one descriptor pool, one `mindspore_files_pb2`)."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

from cli_support import run  # noqa: F401  (the tests import it from here)

CLI = os.environ.get("SHARDPOINT_CLI", "shardpoint")

# Written from docs/formats.md (proto2; MindSpore's own files are not used).
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

# MindSpore's tensor_type names (str(dtype)) and safetensors' dtype names.
CKPT_TYPES = {np.dtype(np.float32): "Float32", np.dtype(np.float16): "Float16",
              np.dtype(np.float64): "Float64", np.dtype(np.int32): "Int32",
              np.dtype(np.int64): "Int64", np.dtype(np.int8): "Int8", np.dtype(np.uint8): "UInt8"}
SAFETENSORS_TYPES = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
                     np.dtype(np.float64): "F64", np.dtype(np.int32): "I32",
                     np.dtype(np.int64): "I64", np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8"}


def compile_messages():
    """The protoc-generated module, or None when protoc is not installed."""
    if "mindspore_files_pb2" in sys.modules:
        return sys.modules["mindspore_files_pb2"]
    if shutil.which("protoc") is None:
        return None
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "mindspore_files.proto"), "w") as f:
        f.write(PROTO)
    subprocess.run(["protoc", "--python_out=" + folder, "mindspore_files.proto"], cwd=folder,
                   check=True)
    sys.path.insert(0, folder)
    import mindspore_files_pb2  # noqa: E402
    return mindspore_files_pb2


def messages_or_skip():
    """compile_messages(), or the calling test skipped when protoc is missing."""
    import pytest
    pb = compile_messages()
    if pb is None:
        pytest.skip("protoc (Debian's protobuf-compiler) is not installed")
    return pb




def read_checkpoint(pb, path):
    """{tag: (dims, tensor_type, content)} as MindSpore's load_checkpoint joins
    consecutive values of one tag."""
    ckpt = pb.Checkpoint()
    with open(path, "rb") as f:
        ckpt.ParseFromString(f.read())
    out, last = {}, None
    for v in ckpt.value:
        t = v.tensor
        if v.tag == last:
            dims, ty, content = out[v.tag]
            out[v.tag] = (list(t.dims), t.tensor_type, content + t.tensor_content)
        else:
            assert v.tag not in out, f"{path}: tag {v.tag} written twice, not consecutively"
            out[v.tag] = (list(t.dims), t.tensor_type, t.tensor_content)
        last = v.tag
    return out


def checkpoint_bytes(pb, arrays):
    """A Checkpoint as MindSpore's save_checkpoint writes it, {name: array} in order."""
    ckpt = pb.Checkpoint()
    for name, a in arrays.items():
        v = ckpt.value.add()
        v.tag = name
        v.tensor.dims.extend(a.shape)
        v.tensor.tensor_type = CKPT_TYPES[a.dtype]
        v.tensor.tensor_content = np.ascontiguousarray(a).tobytes()
    return ckpt.SerializeToString()


def read_safetensors(path):
    """{name: (shape, dtype name, content)}, in read_checkpoint's order."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    header.pop("__metadata__", None)
    body = data[8 + n:]
    return {name: (list(h["shape"]), h["dtype"], body[h["data_offsets"][0]:h["data_offsets"][1]])
            for name, h in header.items()}


def tensor_bytes(a):
    return np.ascontiguousarray(a).tobytes()


def safetensors_bytes(arrays):
    """A safetensors file holding {name: array}, in order."""
    header, offset, blobs = {}, 0, []
    for name, a in arrays.items():
        blob = tensor_bytes(a)
        header[name] = {"dtype": SAFETENSORS_TYPES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)
