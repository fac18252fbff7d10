# Copyright 2026 The shardpoint authors.
# SPDX-License-Identifier: Apache-2.0
"""Independent numpy reference for the slice of a parameter that each rank
holds under MindSpore's layout rules (re-expressed from reading MindSpore's
Python sources; no MindSpore code is used or copied).

Conventions (all as in MindSpore):
  * dev_matrix is row-major over the stage-local rank: the LAST axis varies
    fastest (mindspore.parallel._tensor._rank_to_coordinate,
    mindspore.parallel._utils._infer_rank_list uses np.arange(n).reshape(dev)).
  * A tensor-map value m names device axis len(dev_matrix) - 1 - m; -1 = not split
    (_tensor._get_tensor_strategy).
  * A tensor dimension may be split over several axes, e.g. [[2, 1], 0]; the
    first-listed axis is the outer one (_tensor._expand_layout).
  * Optimizer sharding splits dimension 0 further, inner to its model-parallel
    split, over the innermost replicated device axes
    (_tensor._construct_tensor_layout_for_opt_shard and its helper).
The internal normal form is: (dev_matrix', per-dim list of device-axis INDICES
(0 = outermost), outer to inner). Each rank's slice along a dimension is the
block numbered by its mixed-radix coordinate on those axes, of equal blocks.
"""
import numpy as np


def _per_dim(dev_matrix, tensor_maps):
    """Classic flat map or nested per-dim map -> per-dim lists of axis indices."""
    n = len(dev_matrix)
    dims, seen = [], set()
    for entry in tensor_maps:
        vals = list(entry) if isinstance(entry, (list, tuple)) else [entry]
        axes = []
        for m in vals:
            if m == -1:
                continue
            if not 0 <= m < n:
                raise ValueError(f"tensor map value {m} out of range for dev_matrix {dev_matrix}")
            if m in seen:
                raise ValueError(f"device axis (map value {m}) used twice")
            seen.add(m)
            axes.append(n - 1 - m)
        dims.append(axes)
    return dims


def from_strategy_messages(messages):
    """ParallelLayouts.tensor_map (a list of TensorMap.dim lists) -> tensor_maps.

    Mirrors the writer StrategyCheckpointInfo::to_protobuf (strategy_checkpoint_info.cc,
    2023-2025 version): ONE message = classic map (one value per tensor dim);
    SEVERAL messages = one message per tensor dim, plus one trailing EMPTY message
    when the tensor has a single dim.  The Python reader for the several-message
    form was not found in the sources; this is inferred from the writer."""
    if len(messages) == 1:
        return list(messages[0])
    return [list(m) for m in messages if len(m) > 0]


def _opt_shard(dev, dims, step, size, nested):
    """Add optimizer-shard axes to dim 0 (mirrors _construct_tensor_layout_for_opt_shard,
    _construct_tensor_layout_helper and _extract_layout_item in mindspore.parallel._tensor)."""
    if step == 0 or size == 0 or not dims:
        return dev, dims
    used = {a for axes in dims for a in axes}
    if size == -1:  # _extract_layout_item: "full" optimizer shard
        size = int(np.prod(dev)) // int(np.prod([dev[a] for a in used] or [1]))
    repeated = [i for i, d in enumerate(dev) if i not in used and d > 1]
    if not repeated:
        raise ValueError(f"dev_matrix {dev} and tensor map leave no replicated axis for opt shard")
    if not nested and len(repeated) == 1 and int(np.prod(dev[repeated[0] + 1:])) != step:
        raise ValueError(f"opt_weight_shard_step {step} is not equal to the model parallel "
                         f"size {int(np.prod(dev[repeated[0] + 1:]))} inner to the replicated axis")
    dev, dims, rem, taken = list(dev), [list(a) for a in dims], size, []
    for i in reversed(repeated):  # innermost replicated axis first
        d = dev[i]
        if rem >= d:
            if rem % d:
                raise ValueError(f"remaining opt shard size {rem} not divisible by axis size {d}")
            taken.append(i)
            rem //= d
        else:
            if d % rem:
                raise ValueError(f"axis size {d} not divisible by remaining opt shard size {rem}")
            dev[i:i + 1] = [d // rem, rem]  # inner factor becomes the opt-shard axis
            dims = [[a + 1 if a > i else a for a in axes] for axes in dims]
            taken = [a + 1 for a in taken] + [i + 1]
            rem = 1
        if rem == 1:
            break
    if rem != 1:
        raise ValueError(f"opt_weight_shard_size {size} exceeds the replicated devices")
    dims[0] = dims[0] + sorted(taken)  # model-parallel axes outer, opt axes inner
    return dev, dims


def _normal_form(dev_matrix, tensor_maps, opt_shard_step=0, opt_shard_size=0):
    nested = any(isinstance(e, (list, tuple)) for e in tensor_maps)  # MindSpore's "has_layout"
    dims = _per_dim(dev_matrix, tensor_maps)
    return _opt_shard(list(dev_matrix), dims, opt_shard_step, opt_shard_size, nested)


def expand_layout(dev_matrix, tensor_maps, shape=None, opt_shard_step=0, opt_shard_size=0):
    """-> (dev_matrix', flat tensor_map', expanded shape or None).

    Same normal form as _tensor._expand_layout (nested entry [a, b] becomes two
    tensor sub-dims of sizes dev(a) and N/dev(a)); with opt shard, also as
    _construct_tensor_layout_for_opt_shard(+_by_layout) followed by _expand_layout."""
    dev, dims = _normal_form(dev_matrix, tensor_maps, opt_shard_step, opt_shard_size)
    n = len(dev)
    flat, eshape = [], []
    for k, axes in enumerate(dims):
        flat.extend([n - 1 - a for a in axes] or [-1])
        if shape is not None:
            outer = [dev[a] for a in axes[:-1]]
            if shape[k] % int(np.prod(outer or [1])):
                raise ValueError(f"dim {k} of size {shape[k]} not divisible by {outer}")
            eshape.extend(outer + [shape[k] // int(np.prod(outer or [1]))])
    return dev, flat, (eshape if shape is not None else None)


def rank_bounds(shape, dev_matrix, tensor_maps, local_rank, opt_shard_step=0, opt_shard_size=0):
    """[(start, stop)] per tensor dim of the block held by a stage-local rank."""
    dev, dims = _normal_form(dev_matrix, tensor_maps, opt_shard_step, opt_shard_size)
    if len(dims) != len(shape):
        raise ValueError(f"tensor map has {len(dims)} dims, shape {list(shape)} has {len(shape)}")
    if not 0 <= local_rank < int(np.prod(dev)):
        raise ValueError(f"rank {local_rank} outside dev_matrix {dev}")
    coord = np.unravel_index(local_rank, dev)  # row-major, last axis fastest
    bounds = []
    for k, axes in enumerate(dims):
        nblk = int(np.prod([dev[a] for a in axes] or [1]))
        if shape[k] % nblk:
            raise ValueError(f"dim {k} of size {shape[k]} not divisible into {nblk} slices")
        blk = int(np.ravel_multi_index([coord[a] for a in axes], [dev[a] for a in axes])) if axes else 0
        chunk = shape[k] // nblk
        bounds.append((blk * chunk, blk * chunk + chunk))
    return bounds


def rank_slice(full, dev_matrix, tensor_maps, local_rank, opt_shard_step=0, opt_shard_size=0):
    """The array MindSpore holds for `full` on stage-local rank `local_rank`
    (mirrors _tensor._load_tensor / _load_tensor_by_layout, and the slice that
    _parallel_serialization._transform_parallel_checkpoint assumes per rank)."""
    b = rank_bounds(full.shape, dev_matrix, tensor_maps, local_rank, opt_shard_step, opt_shard_size)
    return full[tuple(slice(s, e) for s, e in b)].copy()


def merge(slices_by_rank, dev_matrix, tensor_maps, shape, opt_shard_step=0, opt_shard_size=0):
    """Inverse of rank_slice (what merge_sliced_parameter / _reshape_param_data and
    transform_checkpoints reassemble).  Replicas must agree; every element must be covered."""
    out = np.zeros(tuple(shape), dtype=next(iter(slices_by_rank.values())).dtype)
    covered = np.zeros(tuple(shape), dtype=bool)
    for r, data in slices_by_rank.items():
        idx = tuple(slice(s, e) for s, e in
                    rank_bounds(shape, dev_matrix, tensor_maps, r, opt_shard_step, opt_shard_size))
        if out[idx].shape != data.shape:
            raise ValueError(f"rank {r}: slice shape {data.shape}, expected {out[idx].shape}")
        if covered[idx].any() and not np.array_equal(out[idx][covered[idx]], data[covered[idx]]):
            raise ValueError(f"rank {r} disagrees with a replica")
        out[idx], covered[idx] = data, True
    if not covered.all():
        raise ValueError("some elements are held by no given rank")
    return out


def stage_local_rank(global_rank, dev_matrix):
    """(stage id, stage-local rank); stage size = prod(dev_matrix)
    (checkpoint_transform.transform_checkpoint_by_rank: rank % stage_device_num)."""
    return divmod(global_rank, int(np.prod(dev_matrix)))


if __name__ == "__main__":
    rng = np.random.default_rng(0)

    def ms_style(full, dev, maps, r, step=0, size=0):
        """Second formulation: expand, chunk every sub-dim, reshape (as MindSpore's transform)."""
        d, flat, es = expand_layout(dev, maps, list(full.shape), step, size)
        c = np.unravel_index(r, d)
        sl = []
        for m, n in zip(flat, es):
            parts = 1 if m == -1 else d[len(d) - 1 - m]
            i = 0 if m == -1 else c[len(d) - 1 - m]
            sl.append(slice(i * (n // parts), (i + 1) * (n // parts)))
        local = [e - s for s, e in rank_bounds(full.shape, dev, maps, r, step, size)]
        return full.reshape(es)[tuple(sl)].reshape(local)

    def raises(fn, *args):
        try:
            fn(*args)
        except ValueError:
            return True
        return False

    # MindSpore's own _expand_layout docstring example.
    assert expand_layout([4, 2, 2], [[2, 1], 0], [8, 8]) == ([4, 2, 2], [2, 1, 0], [4, 2, 8])
    # 1b: dev [2,4,1], map [1,0], shape [1024,4096], opt size 2, step 4: rank r = o*4 + m.
    full = np.arange(1024 * 4096, dtype=np.int64).reshape(1024, 4096)
    for r in range(8):
        o, m = r // 4, r % 4
        assert np.array_equal(rank_slice(full, [2, 4, 1], [1, 0], r, 4, 2),
                              full[m * 256 + o * 128: m * 256 + o * 128 + 128])
    assert rank_slice(full, [2, 4, 1], [1, 0], 5, 4, -1).shape == (128, 4096)  # -1 = full = 2
    for bad in [(2, 2), (4, 3), (4, 4)]:  # wrong step; size not dividing; size too big
        assert raises(rank_bounds, full.shape, [2, 4, 1], [1, 0], 0, *bad), bad
    # 1b: dev [8,1], map [-1,-1]: size 8 step 1; size 4 step 1; size 4 step 2 (error).
    w = np.arange(64 * 3).reshape(64, 3)
    for r in range(8):
        assert np.array_equal(rank_slice(w, [8, 1], [-1, -1], r, 1, 8), w[8 * r: 8 * r + 8])
        assert np.array_equal(rank_slice(w, [8, 1], [-1, -1], r, 1, 4), w[16 * (r % 4): 16 * (r % 4) + 16])
    assert raises(rank_bounds, w.shape, [8, 1], [-1, -1], 0, 2, 4)
    # Replicated axis not outermost: dev [2(mp),4(dp)], map [1,-1], size 2 -> dp axis split (2,2),
    # inner factor shards: o = r % 2.  Two replicated axes dev [2,4,2], map [1,-1], size 4: o = a*2+b.
    for r in range(8):
        mp, o = r // 4, r % 2
        assert rank_bounds((8, 2), [2, 4], [1, -1], r, 1, 2) == [(mp * 4 + o * 2, mp * 4 + o * 2 + 2), (0, 2)]
    for r in range(16):
        a, mp, b = np.unravel_index(r, (2, 4, 2))
        blk = mp * 4 + a * 2 + b
        assert rank_bounds((16, 1), [2, 4, 2], [1, -1], r, 1, 4)[0] == (blk, blk + 1)
    # Nested map: Layout((2,2,2), ("dp","sp","mp"))(("dp","sp"), "mp") -> [[2,1],0].
    t = np.arange(8 * 4).reshape(8, 4)
    for r in range(8):
        dp, sp, mp = np.unravel_index(r, (2, 2, 2))
        b0 = dp * 2 + sp
        assert np.array_equal(rank_slice(t, [2, 2, 2], [[2, 1], 0], r), t[2 * b0:2 * b0 + 2, 2 * mp:2 * mp + 2])
    # Several TensorMap messages, incl. the 1-D padding message.
    assert from_strategy_messages([[2, 1], [0]]) == [[2, 1], [0]]
    assert from_strategy_messages([[1, 0]]) == [1, 0]
    assert from_strategy_messages([[0, 1], []]) == [[0, 1]]
    assert stage_local_rank(13, [2, 4]) == (1, 5)
    # Random layouts: round trip, and agreement with the expand/chunk formulation.
    checked = 0
    for trial in range(400):
        dev = [int(x) for x in rng.choice([1, 2, 3, 4], size=rng.integers(1, 4))]
        ndim = int(rng.integers(1, 4))
        owner = rng.integers(-1, ndim, size=len(dev))  # tensor dim using each axis, -1 = none
        maps, splits = [], []
        for k in range(ndim):
            axes = [len(dev) - 1 - i for i in rng.permutation(len(dev)) if owner[i] == k]
            maps.append(-1 if not axes else axes[0] if len(axes) == 1 and rng.random() < 0.5 else axes)
            splits.append(int(np.prod([dev[len(dev) - 1 - a] for a in axes] or [1])))
        free = [i for i in range(len(dev)) if owner[i] == -1 and dev[i] > 1]
        step = size = 0
        if free and rng.random() < 0.6:
            n_free = int(np.prod([dev[i] for i in free]))
            size = int(rng.choice([s for s in range(2, n_free + 1) if n_free % s == 0]))
            step = int(np.prod(dev[free[0] + 1:])) if len(free) == 1 else 1
        shape = [s * int(rng.integers(1, 3)) for s in splits]
        shape[0] *= max(size, 1)
        full = rng.standard_normal(shape)
        try:
            parts = {r: rank_slice(full, dev, maps, r, step, size) for r in range(int(np.prod(dev)))}
        except ValueError:
            continue  # opt size not realisable on these axes (MindSpore raises too)
        assert np.array_equal(merge(parts, dev, maps, shape, step, size), full)
        for r, part in parts.items():
            assert np.array_equal(part, ms_style(full, dev, maps, r, step, size))
        checked += 1
    assert checked > 300, checked
    print("mindspore_reference: all checks passed")
