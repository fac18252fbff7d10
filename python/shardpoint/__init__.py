"""shardpoint: cut computation graphs into devices and pipeline stages.

PopRT's Python API, and the rest of shardpoint, from Python. A PopRT script
changes one import::

    from shardpoint import Sharder          # was: from poprt.converter import Sharder

    model = Sharder(sharding_info={"conv1": 0, "fc": 1},
                    pipelining_info={"conv1": 0, "fc": 1}).run(model)

Every function here calls the C++ function the ``shardpoint`` command line
calls for the same work, so the results are the same, byte for byte:

- ``Sharder(...).run(model)``: ``shardpoint shard`` on a model in memory
- ``shard_file``: ``shardpoint shard`` on files
- ``validate``, ``inspect``, ``simulate``, ``suggest``, ``memory_plan``,
  ``weights_strategy``, ``draw``: the commands of the same names
- in a notebook, what ``suggest``, ``simulate`` and ``memory_plan`` return
  (a ``Report``, a dict) shows as the picture of the plan, and ``draw``
  returns a ``Picture``
- ``manual_shard``, ``balanced_shard``: the core algorithms on an edge list,
  for graphs that are not ONNX

A model argument is a path, serialised bytes, or an ``onnx.ModelProto``.
Errors are ``shardpoint.Error`` subclasses carrying the command line's
one-line message: ``BadInputError`` and ``BadParameterError`` (also
``ValueError``), ``UnsupportedError``, ``InternalError`` (a bug: please
report it), ``InvalidShardingError`` (validation failed; a
``BadInputError``).
"""

from __future__ import annotations

import json as _json
import os as _os
import warnings as _warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import operator as _operator

from . import _core
from ._core import (
    BadInputError,
    BadParameterError,
    Error,
    InternalError,
    InvalidShardingError,
    UnsupportedError,
    __version__,
)

__all__ = [
    "Sharder",
    "shard_file",
    "validate",
    "inspect",
    "simulate",
    "suggest",
    "plan",
    "memory_plan",
    "weights_strategy",
    "draw",
    "Picture",
    "Report",
    "manual_shard",
    "balanced_shard",
    "Diagnostic",
    "ShardingWarning",
    "EstimateWarning",
    "Error",
    "BadInputError",
    "BadParameterError",
    "UnsupportedError",
    "InternalError",
    "InvalidShardingError",
    "__version__",
]


def __dir__() -> List[str]:
    """What the package offers (PEP 562): its API, not the names it
    imports for itself (typing's, dataclasses')."""
    return sorted(__all__)

class _Guarded:
    """The extension's functions, with pybind11's "incompatible function
    arguments" TypeError cut before its "Invoked with:" part, which would
    echo every argument -- a whole model's bytes among them."""

    def __getattr__(self, name: str) -> Any:
        function = getattr(_core, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except TypeError as e:
                text = str(e)
                cut = text.find("\nInvoked with")
                if cut < 0:
                    raise
                raise TypeError(text[:cut].rstrip()) from None

        return call


_calls = _Guarded()


def _integer(name: str, value: Any) -> int:
    """``value`` as an int: ints and numpy integers, never a float (1.9 is
    not silently 1) nor a bool."""
    if isinstance(value, bool):
        raise TypeError(f"shardpoint: {name} must be an integer, not a bool")
    try:
        return _operator.index(value)
    except TypeError:
        raise TypeError(
            f"shardpoint: {name} must be an integer, not {type(value).__name__}"
        ) from None


def _flag(name: str, value: Any) -> bool:
    """``value`` as a bool: True or False (numpy's too), never a string or
    a number ("no" is not silently True)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise TypeError(f"shardpoint: {name} must be a bool, not {type(value).__name__}")


PathLike = Union[str, "_os.PathLike[str]"]
Model = Union[PathLike, bytes, Any]  # Any: an onnx.ModelProto


@dataclass(frozen=True)
class Diagnostic:
    """One validation finding, as ``shardpoint validate`` reports it.

    ``severity`` is "error" or "warning"; ``rule`` the rule's name (e.g.
    "backward-edge"); ``message`` the one line the command line prints;
    ``nodes`` the names of the nodes involved (a representative few) and
    ``vertices`` their indices in the graph's node list.
    """

    severity: str
    rule: str
    message: str
    nodes: List[str] = field(default_factory=list)
    vertices: List[int] = field(default_factory=list)


class ShardingWarning(UserWarning):
    """A validation warning (e.g. a graph input copied to several devices)."""


class EstimateWarning(UserWarning):
    """A figure rests on a guess (unknown or symbolic shapes, weights not
    counted): the report's ``estimates`` say which; the command line prints
    them as ``shardpoint: warning: ...``."""


def _diagnostics(raw: Iterable[Tuple[str, str, str, List[str], List[int]]]) -> List[Diagnostic]:
    return [Diagnostic(s, r, m, list(n), list(v)) for s, r, m, n, v in raw]


def _model(model: Model) -> Union[str, bytes]:
    """A path (str) or serialised bytes for the C++ side."""
    if isinstance(model, bytes):
        return model
    if isinstance(model, (bytearray, memoryview)):
        return bytes(model)
    if isinstance(model, (str, _os.PathLike)):
        return _os.fspath(model)
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    raise TypeError(
        "shardpoint: a model must be a path, bytes or an onnx.ModelProto, not "
        + type(model).__name__
    )


def _mapping(name: str, info: Optional[Mapping[str, int]]) -> List[Tuple[str, str]]:
    """The mapping's (node, id) pairs, each id as its decimal text: the C++
    side checks its range and says so as for a config, whatever its size
    (2**70 was pybind11's conversion error)."""
    if info is None:
        return []
    if not isinstance(info, Mapping):
        raise TypeError(f"shardpoint: {name} must be a dict of node name -> int, not {type(info).__name__}")
    out = []
    for k, v in info.items():
        if not isinstance(k, str):  # a node's name: 5 is not the node "5"
            raise TypeError(
                f"shardpoint: {name}'s keys must be node names (str), not {type(k).__name__}"
            )
        out.append((k, str(_integer(f"{name}[{k[:200]!r}]", v))))
    return out


def _fail_on_errors(found: List[Diagnostic], rule_broken: bool, what: str) -> None:
    """Warnings become ShardingWarning; a broken rule (the verdict the C++
    application gives, as for the command line's exit 3) raises
    InvalidShardingError naming the first error."""
    errors = [d for d in found if d.severity == "error"]
    for d in found:
        if d.severity == "warning":
            _warnings.warn(f"[{d.rule}] {d.message}", ShardingWarning, stacklevel=3)
    if rule_broken and not errors:
        raise InvalidShardingError(f"validation failed; {what}")
    if rule_broken:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InvalidShardingError(f"validation failed; {what}: [{errors[0].rule}] {errors[0].message}{more}")


def _shapes(
    input_shapes: Union[None, Sequence[int], Mapping[str, Sequence[int]]],
    dims: Optional[Mapping[str, int]],
) -> Tuple[List[str], List[str]]:
    """``input_shapes`` ({name: dims}, or one input's dims) and ``dims``
    ({symbol: size}) as the command line's --input-shape / --dim texts."""

    def sizes(what: str, values: Any) -> str:
        return ",".join(str(_integer(what, v)) for v in values)

    shapes: List[str] = []
    if isinstance(input_shapes, Mapping):
        shapes = [f"{name}={sizes(f'input_shapes[{name!r}]', d)}" for name, d in input_shapes.items()]
    elif input_shapes is not None:
        shapes = [sizes("input_shapes", input_shapes)]
    named = [f"{symbol}={_integer(f'dims[{symbol!r}]', n)}" for symbol, n in (dims or {}).items()]
    return shapes, named


def _shape_settings(
    input_shapes: Union[None, Sequence[int], Mapping[str, Sequence[int]]],
    dims: Optional[Mapping[str, int]],
) -> Dict[str, List[str]]:
    shapes, named = _shapes(input_shapes, dims)
    return {"input_shapes": shapes, "dims": named}


def _settings(**values: Any) -> Dict[str, Any]:
    """A command's settings for the C++ side: its options by their Python
    keywords (app/option_schema.hpp), which checks them as the command line
    does; None leaves an option's default."""
    return {k: _os.fspath(v) if isinstance(v, _os.PathLike) else v
            for k, v in values.items() if v is not None}


def _file_path(what: str, value: Any) -> str:
    """A file's path -- a str or an os.PathLike of one -- as a str; anything
    else (bytes, a model, a number) a TypeError, never turned into a name."""
    path = _os.fspath(value) if isinstance(value, _os.PathLike) else value
    if isinstance(path, str):
        return path
    raise TypeError(
        f"shardpoint: {what} must be a file's path (str or os.PathLike), not {type(value).__name__}"
    )


def _points(shard: Sequence[str]) -> List[str]:
    """``shard=[...]``: the "NODE=DEVICE[:STAGE]" texts; one text alone is a
    TypeError, not its characters taken as points."""
    if isinstance(shard, (str, bytes)):
        raise TypeError(
            "shardpoint: shard must be a list of 'NODE=DEVICE[:STAGE]' texts, not one text: "
            "shard=[...]"
        )
    return [str(s) for s in shard]


class Picture:
    """A plan drawn (``shardpoint draw``, ``--report html``): ``html`` (one
    self-contained page), ``svgs`` ({file name: SVG document}: stages.svg,
    bars.svg, timeline.svg, candidates.svg, nodes.svg where they apply).
    A notebook shows it (``_repr_html_``; ``_repr_svg_`` gives the stages)."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.html: str = raw["html"]
        self.svgs: Dict[str, str] = dict(raw["svgs"])
        self._fragment: str = raw["fragment"]

    def _repr_html_(self) -> str:
        return self._fragment

    def _repr_svg_(self) -> Optional[str]:
        return self.svgs.get("stages.svg") or next(iter(self.svgs.values()), None)

    def save(self, path: PathLike) -> None:
        """Writes the page to ``path``, which must not exist yet (use
        ``draw(..., output=...)`` to replace an earlier one)."""
        with open(_os.fspath(path), "x", encoding="utf-8") as f:
            f.write(self.html)

    def __repr__(self) -> str:
        return f"<shardpoint.Picture: {', '.join(self.svgs)}>"


class Report(Dict[str, Any]):
    """A command's JSON report (a dict, as before) that a notebook shows as
    its picture, drawn on first display by the same command with the same
    arguments (reading the model again, writing nothing). ``picture()``
    returns it, raising the command's error; None when the report has none
    (a plan from counts alone)."""

    def __init__(self, data: Mapping[str, Any], draw: Any) -> None:
        super().__init__(data)
        self._draw = draw  # None: nothing to draw
        self._picture: Optional[Picture] = None

    def picture(self) -> Optional[Picture]:
        if self._picture is None and self._draw is not None:
            self._picture = Picture(self._draw())
        return self._picture

    def _shown(self) -> Optional[Picture]:
        try:
            return self.picture()
        except Error:  # the notebook shows the dict instead
            return None

    def _repr_html_(self) -> Optional[str]:
        p = self._shown()
        return None if p is None else p._repr_html_()

    def _repr_svg_(self) -> Optional[str]:
        p = self._shown()
        return None if p is None else p._repr_svg_()


class Sharder:
    """PopRT's ``poprt.converter.Sharder``: annotates every node of a model
    with its device (``__ipu_number``) and pipeline stage
    (``__pipeline_stage``), exactly as ``shardpoint shard`` does.

    ``sharding_info`` maps a node name to its device, ``pipelining_info`` a
    node name to its pipeline stage: the sharding points. Each point takes
    the nodes it depends on that no earlier point took (points in
    topological order); the rest go to the largest device and stage + 1.
    With ``only_manual_sharding`` every node must have a unique name;
    without, unnamed nodes are named ``<op_type>_<index>`` first, as
    PopRT's convert step does.

    ``run(model)`` takes an ``onnx.ModelProto`` (returns a new one) or
    serialised bytes (returns bytes). Validation errors raise
    ``InvalidShardingError``; warnings are issued as ``ShardingWarning``.
    """

    def __init__(
        self,
        sharding_info: Optional[Mapping[str, int]] = None,
        pipelining_info: Optional[Mapping[str, int]] = None,
        only_manual_sharding: bool = False,
    ) -> None:
        self.sharding_info = dict(sharding_info or {})
        self.pipelining_info = dict(pipelining_info or {})
        self.only_manual_sharding = _flag("only_manual_sharding", only_manual_sharding)
        _mapping("sharding_info", sharding_info)
        _mapping("pipelining_info", pipelining_info)

    def run(self, model: Any) -> Any:
        """The model sharded: bytes for bytes, else a new onnx.ModelProto."""
        as_bytes = isinstance(model, (bytes, bytearray, memoryview))
        if isinstance(model, bytes):
            data = model
        elif as_bytes:
            data = bytes(model)
        elif hasattr(model, "SerializeToString"):
            data = model.SerializeToString()
        else:
            raise TypeError(
                "shardpoint: Sharder.run takes an onnx.ModelProto or its serialised bytes, not "
                + type(model).__name__
            )
        out, found, rule_broken = _calls.shard_bytes(
            data,
            _mapping("sharding_info", self.sharding_info),
            _mapping("pipelining_info", self.pipelining_info),
            self.only_manual_sharding,
            None,
            None,
            False,
        )
        del data  # the caller's model and the result are all that remain
        _fail_on_errors(_diagnostics(found), rule_broken, "the sharding is not usable")
        if as_bytes:
            return out
        result = type(model)()
        result.ParseFromString(out)
        return result

    def __repr__(self) -> str:
        return (
            f"Sharder(sharding_info={self.sharding_info!r}, "
            f"pipelining_info={self.pipelining_info!r}, "
            f"only_manual_sharding={self.only_manual_sharding!r})"
        )


def shard_file(
    input: PathLike,
    config: Optional[PathLike] = None,
    output: Optional[PathLike] = None,
    *,
    shard: Sequence[str] = (),
    output_dir: Optional[PathLike] = None,
    num_ipus: Optional[int] = None,
    batches_per_step: Optional[int] = None,
    enable_pipelining: bool = False,
    only_manual_sharding: bool = False,
    force: bool = False,
    in_place: bool = False,
    input_shapes: Union[None, Sequence[int], Mapping[str, Sequence[int]]] = None,
    dims: Optional[Mapping[str, int]] = None,
    report: bool = True,
) -> Optional[Dict[str, Any]]:
    """``shardpoint shard``: shards the model file ``input`` by ``config``
    (a shard.yaml, or a sharding_info / pipelining_info mapping in YAML or
    JSON) and ``shard`` points ("NODE=DEVICE[:STAGE]"), and writes
    ``output`` atomically. Returns the report, as ``shard --report json``
    (its crossing tensors sized by ``input_shapes`` / ``dims`` when given);
    with ``report=False``, None, as ``shard --report none`` makes none: the
    same model written, without the shape inference that sizes the report
    (and the findings, which the report would hold, as ShardingWarning).
    Raises InvalidShardingError, writing nothing, when validation fails
    (``force=True`` writes anyway)."""
    text, found, written, _, rule_broken = _calls.shard_file(
        _file_path("shard_file's input (Sharder.run takes a model's bytes or ModelProto)", input),
        _settings(
            config=config, shard=_points(shard), output=output, output_dir=output_dir,
            num_ipus=num_ipus, batches_per_step=batches_per_step,
            enable_pipelining=enable_pipelining, only_manual_sharding=only_manual_sharding,
            force=force, in_place=in_place, **_shape_settings(input_shapes, dims),
        ),
        _flag("report", report),
    )
    if not written:
        _fail_on_errors(
            _diagnostics(found), rule_broken, "nothing written (force=True writes anyway)"
        )
    if report:
        return _json.loads(text)
    # No report to hold the findings: each one a ShardingWarning (an error
    # too, said so, where force=True wrote the model anyway).
    for d in _diagnostics(found):
        what = "error [" if d.severity == "error" else "["
        _warnings.warn(f"{what}{d.rule}] {d.message}", ShardingWarning, stacklevel=2)
    return None


def validate(
    model: Model,
    num_ipus: Optional[int] = None,
    batches_per_step: Optional[int] = None,
    enable_pipelining: bool = False,
) -> List[Diagnostic]:
    """``shardpoint validate``: the findings on the sharding attributes
    already in ``model`` (PopRT's rules; ``batches_per_step`` alone turns
    the pipelining checks on, as the command does). An empty list: no
    problems. ``BadInputError`` where the command exits 2: a model that
    cannot be read, a sharding attribute that is not an INT in range or
    appears twice on a node, nodes that form a cycle."""
    _, found = _calls.validate(
        _model(model), num_ipus, batches_per_step, _flag("enable_pipelining", enable_pipelining)
    )
    return _diagnostics(found)


def inspect(model: Model, grep: Optional[str] = None) -> List[Dict[str, Any]]:
    """``shardpoint inspect --report json``: every node (or those whose name
    or op type matches the regular expression ``grep``) as a dict of index,
    name, op_type, device, stage (None when unset), inputs, outputs; an
    unnamed node's also shard_name, the name shard gives it
    (``<op_type>_<index>``)."""
    return _json.loads(_calls.inspect(_model(model), grep or ""))


def simulate(
    model: Optional[Model] = None,
    config: Optional[PathLike] = None,
    batches_per_step: int = 1,
    mode: str = "virtual",
    cost: str = "unit",
    *,
    shard: Sequence[str] = (),
    only_manual_sharding: bool = False,
    num_ipus: Optional[int] = None,
    unit_us: int = 100,
    queue_depth: int = 4,
    trace: Optional[PathLike] = None,
    force: bool = False,
    input_shapes: Union[None, Sequence[int], Mapping[str, Sequence[int]]] = None,
    dims: Optional[Mapping[str, int]] = None,
    schedule: Optional[str] = None,
    virtual_stages: int = 1,
    backward_ratio: Optional[float] = None,
    weight_share: Optional[float] = None,
    recompute: bool = False,
    micro_batch_size: int = 1,
    stage_times: Optional[Sequence[float]] = None,
    activation_bytes: Union[None, int, str, Sequence[Union[int, str]]] = None,
    backward_times: Optional[Sequence[float]] = None,
    weight_times: Optional[Sequence[float]] = None,
    batch_dim: Optional[str] = None,
) -> Dict[str, Any]:
    """``shardpoint simulate --report json``: runs the sharded model through
    the pipeline emulator (``mode`` "virtual" or "threads"; ``cost`` "unit"
    or "flops") and returns its metrics. The sharding comes from ``config``
    and ``shard`` points, or the model's own attributes. Raises
    InvalidShardingError when it cannot run as a pipeline.

    With ``schedule`` ("gpipe", "1f1b", "interleaved", "zb-h1") it runs a
    training step instead (``simulate --schedule``): ``virtual_stages``,
    ``backward_ratio``, ``weight_share``, ``recompute`` and
    ``micro_batch_size`` as their flags; without a model, ``stage_times``
    (each stage's forward time) and ``activation_bytes`` (one value or one a
    stage: bytes, or a size as the flag takes it, "1.5MiB") give the stages; ``backward_times`` and ``weight_times``, one a
    stage, replace the ratio (default 2) and the share (default 0.5) with
    measured times; giving both is a BadParameterError, as the flags exclude
    each other."""
    settings = _settings(
        config=config, shard=_points(shard), only_manual_sharding=only_manual_sharding,
        batches_per_step=batches_per_step,
        mode=mode, cost=cost, num_ipus=num_ipus, unit_us=unit_us, queue_depth=queue_depth,
        force=force, stage_times=stage_times, backward_times=backward_times, weight_times=weight_times,
        batch_dim=batch_dim,
        activation_bytes=(
            [activation_bytes] if isinstance(activation_bytes, (int, str)) else activation_bytes),
        **_shape_settings(input_shapes, dims),
    )
    # The training options go through even without a schedule, so that one
    # given there is refused as the command line refuses it, not ignored.
    settings.update(
        virtual_stages=virtual_stages, recompute=recompute, micro_batch_size=micro_batch_size,
    )
    settings.update(_settings(
        schedule=schedule, backward_ratio=backward_ratio, weight_share=weight_share))
    arg = None if model is None else _model(model)

    def call(report: str, trace_file: Optional[PathLike]) -> Any:
        return _calls.simulate(arg, dict(settings, trace=trace_file), report)[0]

    result = Report(_json.loads(call("json", trace)), lambda: call("picture", None))
    for e in result.get("estimates", []):
        _warnings.warn(e, EstimateWarning, stacklevel=2)
    return result


def plan(
    model: Optional[Model] = None,
    *,
    global_batch: int,
    devices: Optional[int] = None,
    device_memory: Union[None, int, str] = None,
    device_flops: Union[None, float, str] = None,
    devices_per_node: Optional[int] = None,
    intra_node_bandwidth: Union[None, float, str] = None,
    inter_node_bandwidth: Union[None, float, str] = None,
    cluster: Optional[PathLike] = None,
    layers: Optional[int] = None,
    hidden: Optional[int] = None,
    sequence: Optional[int] = None,
    vocabulary: Optional[int] = None,
    heads: Optional[int] = None,
    dtype: str = "fp16",
    optimizer: str = "adam",
    max_micro_batch_size: int = 64,
    schedules: Optional[Sequence[str]] = None,
    virtual_stages: int = 2,
    backward_ratio: float = 2.0,
    weight_share: float = 0.5,
    top_k: Union[int, str] = 10,
    emit: Optional[PathLike] = None,
    force: bool = False,
    input_shapes: Union[None, Sequence[int], Mapping[str, Sequence[int]]] = None,
    dims: Optional[Mapping[str, int]] = None,
    batch_dim: Optional[str] = None,
) -> Dict[str, Any]:
    """``shardpoint plan --report json``: the training layouts of ``model``
    (or, without one, of the transformer ``layers``, ``hidden``,
    ``sequence``, ``vocabulary``, ``heads`` count) on the cluster --
    ``devices``, ``device_memory``, ``device_flops``, ``devices_per_node``,
    the two bandwidths, or a ``cluster`` YAML file -- best first. Sizes take
    numbers or the command line's text ("80GiB", "312T", "300GB/s"). With
    ``emit`` it writes the files that run the best layout; the report's
    ``"written"`` lists them. Nothing fitting is ``"feasible": 0`` (the
    command exits 3), not raised."""
    if isinstance(schedules, str):  # "1f1b" or "gpipe,1f1b", as the flag takes it
        schedules = schedules.split(",")
    settings = _settings(
        global_batch=global_batch, devices=devices, device_memory=device_memory,
        device_flops=device_flops, devices_per_node=devices_per_node,
        intra_node_bandwidth=intra_node_bandwidth, inter_node_bandwidth=inter_node_bandwidth,
        cluster=cluster, layers=layers, hidden=hidden, sequence=sequence, vocabulary=vocabulary,
        heads=heads, dtype=dtype, optimizer=optimizer, max_micro_batch_size=max_micro_batch_size,
        schedules=None if schedules is None else [str(s) for s in schedules],
        virtual_stages=virtual_stages, backward_ratio=backward_ratio, weight_share=weight_share,
        top_k=top_k, emit=emit, force=force, batch_dim=batch_dim,
        **_shape_settings(input_shapes, dims),
    )
    report, written = _calls.plan(None if model is None else _model(model), settings)
    result = _json.loads(report)
    result["written"] = list(written)
    for e in result.get("estimates", []):
        _warnings.warn(e, EstimateWarning, stacklevel=2)
    return result


def suggest(
    model: Model,
    stages: int,
    *,
    num_ipus: Optional[int] = None,
    memory_per_device: Optional[Union[str, int]] = None,
    cost: str = "flops",
    communication_weight: float = 0.0,
    output_config: Optional[PathLike] = None,
    output_model: Optional[PathLike] = None,
    only_manual_sharding: bool = False,
    force: bool = False,
    input_shapes: Union[None, Sequence[int], Mapping[str, Sequence[int]]] = None,
    dims: Optional[Mapping[str, int]] = None,
    **memory_options: Any,
) -> Dict[str, Any]:
    """``shardpoint suggest --report json``: the balanced split of ``model``
    into ``stages`` pipeline stages (smallest bottleneck, under the memory
    cap), against DeepSpeed's and PiPPy's splits. ``memory_per_device`` is
    a size ("900MiB", "16GB" or bytes); with any of ``memory_plan``'s
    options (``training=True``, ``tensor_parallel=2``, ...) the cap holds on
    the memory planner's totals. Writes ``output_config`` (a PopRT
    shard.yaml) and ``output_model`` when given; raises
    InvalidShardingError, writing nothing, when validation fails.
    ``device_memory`` is taken for ``memory_per_device``, as the command
    line takes ``--device-memory`` for ``--memory-per-device``."""
    alias = memory_options.pop("device_memory", None)
    if alias is not None:
        if memory_per_device is not None:
            raise BadParameterError(
                "memory_per_device and device_memory are the same option; give one")
        memory_per_device = alias
    arg = _model(model)
    settings = _settings(
        stages=stages, num_ipus=num_ipus, memory_per_device=memory_per_device, cost=cost,
        communication_weight=communication_weight, only_manual_sharding=only_manual_sharding,
        force=force, **_shape_settings(input_shapes, dims), **memory_options,
    )

    def call(report: str, config_file: Any, model_file: Any) -> Any:
        return _calls.suggest(
            arg, dict(settings, output_config=config_file, output_model=model_file), report
        )

    report, found, _, rule_broken = call("json", output_config, output_model)
    result = Report(_json.loads(report), lambda: call("picture", None, None)[0])
    for e in result.get("estimates", []):
        _warnings.warn(e, EstimateWarning, stacklevel=2)
    if not force and rule_broken:
        _fail_on_errors(_diagnostics(found), True, "nothing written (force=True writes anyway)")
    return result


def memory_plan(
    model: Optional[Model] = None,
    *,
    parameters: Optional[Union[int, float, str]] = None,
    largest_layer_parameters: Optional[Union[int, float, str]] = None,
    config: Optional[PathLike] = None,
    shard: Sequence[str] = (),
    only_manual_sharding: bool = False,
    device_memory: Optional[Union[str, int]] = None,
    compare_stages: bool = False,
    pipeline_parallel: Optional[int] = None,
    compare_deepspeed: bool = False,
    gpus_per_node: Optional[int] = None,
    force: bool = False,
    input_shapes: Union[None, Sequence[int], Mapping[str, Sequence[int]]] = None,
    dims: Optional[Mapping[str, int]] = None,
    **options: Any,
) -> Dict[str, Any]:
    """``shardpoint memory --report json``: the bytes every device holds
    (pipeline stages x tensor-parallel ranks x sharded data parallelism)
    for ``model``, or from counts alone (``parameters=7.5e9``). Options as
    the command's, with underscores: ``training`` (default True),
    ``tensor_parallel``, ``layout``, ``data_parallel``,
    ``sharded_data_parallel`` (a number or "auto"), ``optimizer``,
    ``precision``, ``fp16``, ``bf16``, ``shard_optimizer_states``,
    ``param_persistence_threshold``, ``max_live_parameters``,
    ``micro_batch_size``, ``batch_dim`` (where the batch is: a symbolic
    dimension's name or "INPUT:AXIS"), ``batches_per_step``, ``schedule``,
    ``queue_depth``. From counts, ``pipeline_parallel=P`` splits the
    parameters evenly over P stages. ``compare_deepspeed=True`` adds
    DeepSpeed's own estimator for the same counts (``"deepspeed"``, on
    ``gpus_per_node`` GPUs a node). A plan that does not fit
    ``device_memory`` is returned with ``"fits": False`` (the command exits
    3), not raised."""
    arg = None if model is None else _model(model)
    settings = _settings(
        config=config, shard=_points(shard), only_manual_sharding=only_manual_sharding,
        parameters=parameters,
        largest_layer_parameters=largest_layer_parameters, device_memory=device_memory,
        compare_stages=compare_stages, compare_deepspeed=compare_deepspeed,
        pipeline_parallel=None if pipeline_parallel is None
        else _integer("pipeline_parallel", pipeline_parallel),
        gpus_per_node=None if gpus_per_node is None else _integer("gpus_per_node", gpus_per_node),
        force=force, **_shape_settings(input_shapes, dims), **options,
    )

    def call(report: str) -> Any:
        return _calls.memory_plan(arg, settings, report)[0]

    result = Report(_json.loads(call("json")), None if arg is None else lambda: call("picture"))
    for e in result.get("estimates", []):
        _warnings.warn(e, EstimateWarning, stacklevel=2)
    return result


def draw(
    model: Model,
    config: Optional[PathLike] = None,
    *,
    shard: Sequence[str] = (),
    only_manual_sharding: bool = False,
    cost: str = "flops",
    batches_per_step: int = 0,
    schedule: Optional[str] = None,
    virtual_stages: int = 1,
    backward_ratio: float = 2.0,
    weight_share: float = 0.5,
    device_memory: Optional[Union[str, int]] = None,
    output: Optional[PathLike] = None,
    format: str = "html",
    force: bool = False,
    input_shapes: Union[None, Sequence[int], Mapping[str, Sequence[int]]] = None,
    dims: Optional[Mapping[str, int]] = None,
    **memory_options: Any,
) -> Picture:
    """``shardpoint draw``: the sharded model (``config`` and ``shard``
    points, or its own attributes) drawn -- the graph condensed to stages,
    what crosses, per-stage cost, parameters, activations and memory (the
    planner's, with ``memory_plan``'s options; ``device_memory`` draws the
    capacity), the emulator's timeline of ``batches_per_step`` micro-batches
    (0: twice the stages; ``schedule`` for a training step). Returns the
    ``Picture``; with ``output`` also writes it (``format`` "html": a page,
    "svg": a new folder of SVG files; ``force`` replaces an earlier one).
    What breaks PopRT's rules is drawn too, and warned of
    (``ShardingWarning``)."""
    settings = _settings(
        config=config, shard=_points(shard), only_manual_sharding=only_manual_sharding,
        cost=cost,
        batches_per_step=batches_per_step or None,  # 0: twice the stages
        schedule=schedule, virtual_stages=virtual_stages,
        backward_ratio=backward_ratio, weight_share=weight_share, device_memory=device_memory,
        format=format, output=output, force=force, **_shape_settings(input_shapes, dims),
        **memory_options,
    )
    raw, found_warnings, _, found = _calls.draw(_model(model), settings)
    for e in found_warnings:
        _warnings.warn(e, EstimateWarning, stacklevel=2)
    for d in _diagnostics(found):  # drawn anyway; on the page too
        _warnings.warn(f"[{d.rule}] {d.message}", ShardingWarning, stacklevel=2)
    return Picture(raw)


def weights_strategy(
    model: Model,
    tensor_parallel: int,
    output_dir: PathLike,
    *,
    config: Optional[PathLike] = None,
    shard: Sequence[str] = (),
    only_manual_sharding: bool = False,
    devices_per_stage: Optional[int] = None,
    layout: Optional[PathLike] = None,
    layout_out: Optional[PathLike] = None,
    format: str = "ckpt",
    layout_form: str = "mindspore",
    replicate_shared: bool = False,
    force: bool = False,
) -> List[Dict[str, Any]]:
    """``shardpoint weights strategy``: decides how every weight is split
    over ``tensor_parallel`` ranks (Megatron pairs from the graph, or the
    ``layout`` file) and writes one MindSpore strategy file per pipeline
    stage that reads a weight into ``output_dir``, as MindSpore's own writer
    writes it (``layout_form="tutorial"``: as the tutorial's
    save_strategy_file, protobuf only). Returns the decisions: name, shape,
    stages, layout (column, row, vocab, replicated), shard and the reason;
    a ``tensor_parallel`` above 1 that splits no weight is said with a
    UserWarning, as the command line says it."""
    decisions, warned = _calls.weights_strategy(
        _model(model),
        _settings(
            config=config, shard=_points(shard),
            only_manual_sharding=only_manual_sharding, tensor_parallel=tensor_parallel,
            output_dir=output_dir, devices_per_stage=devices_per_stage, layout=layout,
            layout_out=layout_out, format=format, layout_form=layout_form,
            replicate_shared=replicate_shared, force=force,
        ),
    )
    for w in warned:
        _warnings.warn(w, UserWarning, stacklevel=2)
    return decisions


def manual_shard(num_vertices: int, edges: Any, points: Any) -> Tuple[Any, Any]:
    """PopRT's manual sharding on any graph: ``edges`` an (E, 2) array (or
    list of pairs) of vertex indices, producer first; ``points`` a (P, 2)
    array of (vertex, device) or (P, 3) of (vertex, device, stage). Returns
    numpy arrays (device, stage) of every vertex, -1 where unset. Arrays of
    int64 in C order are read where they lie; others are converted once."""
    return _calls.manual_shard(_integer("num_vertices", num_vertices), edges, points)


def balanced_shard(
    num_vertices: int,
    edges: Any,
    stages: int,
    *,
    cost: Any = None,
    memory: Any = None,
    memory_capacity: Optional[float] = None,
    output_bytes: Any = None,
    communication_weight: float = 0.0,
) -> Dict[str, Any]:
    """The provably best split of a graph into ``stages`` pipeline stages:
    the smallest bottleneck (largest stage cost, plus
    ``communication_weight`` per byte a stage receives) with every stage's
    ``memory`` within ``memory_capacity``. ``cost``, ``memory`` and
    ``output_bytes`` are per-vertex arrays (default 1, 0, 0). Returns a dict
    of "device" and "stage" (numpy arrays), "points" (vertex, device,
    stage) for manual_shard, "stage_cost", "stage_memory", "bottleneck",
    "lower_bound", "exact", "exact_intervals" and "method"."""
    return _calls.balanced_shard(
        _integer("num_vertices", num_vertices),
        edges,
        _integer("stages", stages),
        cost,
        memory,
        memory_capacity,
        output_bytes,
        float(communication_weight),
    )
