# Type stubs of shardpoint._core, the C++ extension. The public API is
# shardpoint/__init__.py; these are what it calls.
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy

__version__: str

class Error(Exception): ...
class BadInputError(Error, ValueError): ...
class BadParameterError(Error, ValueError): ...
class UnsupportedError(Error, NotImplementedError): ...
class InternalError(Error, RuntimeError): ...
class InvalidShardingError(BadInputError): ...

# (severity, rule, message, node names, node indices)
_Finding = Tuple[str, str, str, List[str], List[int]]
# {"html": page, "fragment": for a notebook, "svgs": {file name: SVG}}
_Picture = Dict[str, Any]

def shard_bytes(
    data: bytes,
    sharding_info: Sequence[Tuple[str, int]],
    pipelining_info: Sequence[Tuple[str, int]],
    strict: bool,
    num_ipus: Optional[int],
    batches_per_step: Optional[int],
    enable_pipelining: bool,
) -> Tuple[bytes, List[_Finding], bool]: ...
def shard_file(
    input: str,
    config: str,
    shard: Sequence[str],
    output: str,
    output_dir: str,
    num_ipus: Optional[int],
    batches_per_step: Optional[int],
    enable_pipelining: bool,
    only_manual_sharding: bool,
    force: bool,
    in_place: bool,
    input_shapes: Sequence[str],
    dims: Sequence[str],
) -> Tuple[str, List[_Finding], bool, str, bool]: ...
def validate(
    model: Union[str, bytes],
    num_ipus: Optional[int],
    batches_per_step: Optional[int],
    enable_pipelining: bool,
) -> Tuple[str, List[_Finding]]: ...
def inspect(model: Union[str, bytes], grep: str) -> str: ...
def simulate(
    model: Union[None, str, bytes],
    config: str,
    shard: Sequence[str],
    batches_per_step: int,
    num_ipus: Optional[int],
    mode: str,
    cost: str,
    unit_us: int,
    queue_depth: int,
    trace: str,
    input_shapes: Sequence[str],
    dims: Sequence[str],
    training: Dict[str, Any],
    report: str,
) -> Union[str, _Picture]: ...
def plan(
    model: Union[None, str, bytes],
    settings: Dict[str, Any],
    input_shapes: Sequence[str],
    dims: Sequence[str],
) -> Tuple[str, List[str]]: ...
def suggest(
    model: Union[str, bytes],
    stages: int,
    num_ipus: Optional[int],
    memory_per_device: str,
    cost: str,
    communication_weight: float,
    output_config: str,
    output_model: str,
    only_manual_sharding: bool,
    force: bool,
    memory: Dict[str, Any],
    input_shapes: Sequence[str],
    dims: Sequence[str],
    report: str,
) -> Tuple[Union[str, _Picture], List[_Finding], List[str], bool]: ...
def memory_plan(
    model: Optional[Union[str, bytes]],
    config: str,
    shard: Sequence[str],
    parameters: str,
    largest_layer: str,
    device_memory: str,
    compare_stages: bool,
    pipeline_parallel: str,
    compare_deepspeed: bool,
    gpus_per_node: str,
    options: Dict[str, Any],
    input_shapes: Sequence[str],
    dims: Sequence[str],
    report: str,
) -> Tuple[Union[str, _Picture], str]: ...
def draw(
    model: Union[str, bytes],
    config: str,
    shard: Sequence[str],
    settings: Dict[str, Any],
    memory: Dict[str, Any],
    input_shapes: Sequence[str],
    dims: Sequence[str],
) -> Tuple[_Picture, List[str], List[str], List[_Finding]]: ...
def weights_strategy(
    model: Union[str, bytes],
    config: str,
    shard: Sequence[str],
    tensor_parallel: int,
    output_dir: str,
    devices_per_stage: Optional[int],
    layout: str,
    layout_out: str,
    format: str,
    layout_form: str,
    replicate_shared: bool,
    force: bool,
) -> List[Dict[str, Any]]: ...
def manual_shard(
    num_vertices: int, edges: Any, points: Any
) -> Tuple[numpy.ndarray, numpy.ndarray]: ...
def balanced_shard(
    num_vertices: int,
    edges: Any,
    stages: int,
    cost: Any,
    memory: Any,
    memory_capacity: Optional[float],
    output_bytes: Any,
    communication_weight: float,
) -> Dict[str, Any]: ...
def _raise_error(category: str, message: str) -> None: ...
