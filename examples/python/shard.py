# The seed's shard.py (PopRT manual sharding, "Configuring manual sharding
# with the Python API") with shardpoint: one import changed. The download
# is a file read here, and the IPU compile and run steps are left out (they
# need Graphcore's SDK and an IPU); manual_sharding() is the seed's, line
# for line.
#
#   build/gcc/onnx_adapter/shardpoint synth resnet50 resnet50.onnx  # the seed's model
#   PYTHONPATH=build/gcc/python /usr/bin/python3 examples/python/shard.py resnet50.onnx sharded.onnx
import sys

import onnx

from shardpoint import Sharder  # was: from poprt.converter import Sharder


def load_model(path):
    # The seed downloads resnet50-v1-7.onnx from the ONNX model zoo.
    return onnx.load(path)


def manual_sharding(model):
    # Fix the batch size to 1
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1

    # Sharding and pipelining info
    sharding_info = {
        "resnetv17_stage1__plus0": 0,
        "resnetv17_stage4_batchnorm2_fwd": 1,
        "resnetv17_stage4__plus0": 2,
    }
    pipelining_info = {
        "resnetv17_stage1__plus0": 0,
        "resnetv17_stage4_batchnorm2_fwd": 1,
        "resnetv17_stage4__plus0": 2,
    }
    model = Sharder(sharding_info=sharding_info, pipelining_info=pipelining_info).run(
        model
    )

    return model


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: shard.py INPUT.onnx OUTPUT.onnx")
    model = manual_sharding(load_model(sys.argv[1]))
    onnx.save(model, sys.argv[2])
    print(f"wrote {sys.argv[2]}: {len(model.graph.node)} nodes on 3 devices and stages")
