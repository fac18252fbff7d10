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
    sharding_info: Sequence[Tuple[str, str]],
    pipelining_info: Sequence[Tuple[str, str]],
    strict: bool,
    num_ipus: Optional[int],
    batches_per_step: Optional[int],
    enable_pipelining: bool,
) -> Tuple[bytes, List[_Finding], bool]: ...
def shard_file(
    input: str, settings: Dict[str, Any], report: bool
) -> Tuple[str, List[_Finding], bool, str, bool]: ...
def validate(
    model: Union[str, bytes],
    num_ipus: Optional[int],
    batches_per_step: Optional[int],
    enable_pipelining: bool,
) -> Tuple[str, List[_Finding]]: ...
def inspect(model: Union[str, bytes], grep: str) -> str: ...
# The planning commands: settings are the options by their Python keywords
# (app/option_schema.hpp; docs/options.md lists them).
def simulate(
    model: Union[None, str, bytes], settings: Dict[str, Any], report: str
) -> Tuple[Union[str, _Picture], List[str]]: ...
def plan(model: Union[None, str, bytes], settings: Dict[str, Any]) -> Tuple[str, List[str]]: ...
def suggest(
    model: Union[str, bytes], settings: Dict[str, Any], report: str
) -> Tuple[Union[str, _Picture], List[_Finding], List[str], bool]: ...
def memory_plan(
    model: Optional[Union[str, bytes]], settings: Dict[str, Any], report: str
) -> Tuple[Union[str, _Picture], str]: ...
def draw(
    model: Union[str, bytes], settings: Dict[str, Any]
) -> Tuple[_Picture, List[str], List[str], List[_Finding]]: ...
def keywords(command: str) -> List[str]: ...
def weights_strategy(
    model: Union[str, bytes], settings: Dict[str, Any]
) -> Tuple[List[Dict[str, Any]], List[str]]: ...
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
