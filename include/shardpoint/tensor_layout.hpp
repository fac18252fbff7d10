// shardpoint/tensor_layout.hpp -- tensor parallelism in MindSpore's terms:
// a parameter's shard tuple as a device matrix and tensor map, and the slice
// of it each rank of a stage holds.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE LAYOUT (MindSpore's save_strategy_file, weight-sharding seed)
//
//   A parameter of shape (s_0, ..., s_{k-1}) with shard tuple (c_0, ...,
//   c_{k-1}) on a stage of D devices: P = c_0 * ... * c_{k-1} devices hold
//   distinct slices, and D must be a multiple of P; repeat = D / P copies of
//   each slice exist (data-parallel replication). Then
//       device matrix  [repeat,] c_0, ..., c_{k-1}   (repeat only when not 1)
//       tensor map     k-1, k-2, ..., 0
//   Local rank r (0 <= r < D) has the coordinate unravel(r, device matrix),
//   row-major, last dimension fastest. Tensor dimension i with tensor_map[i]
//   = m >= 0 is cut into dev_matrix[len - 1 - m] equal, contiguous parts, and
//   the rank holds the part given by its coordinate in that device-matrix
//   dimension; m = -1 means the dimension is not cut. So rank r and r + D /
//   repeat hold the same slice.
//
//   Worked example: shape [1024, 4096], shard (4, 1), 8 devices: device
//   matrix [2, 4, 1], tensor map [1, 0]; rank 5 has coordinate (1, 1, 0):
//   rows 256-511, all columns; ranks 0..7 hold row blocks 0,1,2,3,0,1,2,3.
//
// WHAT MINDSPORE ALSO WRITES (read, never written; docs/formats.md)
//
//   * Nested maps (MindSpore's Layout API): a dimension's entry may name
//     several device axes, [[2, 1], 0]; the dimension is cut into the
//     product of their sizes and the rank's part is the mixed-radix number
//     of its coordinates on them, the first-listed axis outermost
//     (_expand_layout).
//   * Optimizer weight sharding (opt_weight_shard_size z > 0, or -1 for all
//     replicas; step t): dimension 0 is cut further, inside its
//     model-parallel part, over the innermost replicated axes (axes no
//     dimension uses, of size > 1) whose sizes multiply to z -- an axis
//     larger than what is still needed is split and its inner factor taken
//     (_construct_tensor_layout_for_opt_shard). With a classic map and one
//     replicated axis i, t must be the product of the axes inside i.
//   * param_split_shape: empty, the full shape (the tutorial), or the sizes
//     of the slices of dimension 0 when only dimension 0 is cut and its
//     parts are uneven (manual embedding splits; indices_offset, when given,
//     their offsets). field > 0 (an interleave of field rows) is refused:
//     shardpoint never slices what it cannot slice as MindSpore does.
//
//   place() turns all of this into one normal form -- per tensor dimension,
//   the device axes that cut it, outermost first, on a device matrix where
//   split axes are two -- and slice_of() reads a rank's box off it.
//
// Independent of ONNX and protobuf; the ONNX adapter and `shardpoint weights`
// use it, and so can any other format.
#ifndef SHARDPOINT_TENSOR_LAYOUT_HPP
#define SHARDPOINT_TENSOR_LAYOUT_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "detail/checked.hpp"
#include "detail/text.hpp"
#include "error.hpp"

namespace shardpoint {

/// A layout MindSpore cannot hold: thrown with MindSpore's own wording where
/// it has one.
class layout_error : public bad_parameter_error {
  using bad_parameter_error::bad_parameter_error;
};

/// A parameter's layout on one pipeline stage.
struct tensor_layout {
  std::string name;
  std::vector<std::int64_t> shape;         ///< the full shape (meaningful when shape_known)
  bool shape_known = true;                 ///< false: the file gives none (MindSpore's C++ writer)
  std::vector<std::int64_t> shard;         ///< the shard tuple, one entry a dimension
  std::vector<std::int64_t> device_matrix; ///< [repeat,] shard
  /// Per tensor dimension, the map values of the device axes cutting it
  /// (value m names axis len - 1 - m), outermost first; {-1}: not cut.
  std::vector<std::vector<std::int32_t>> tensor_map;
  std::int64_t devices = 1; ///< devices of the stage
  std::int64_t repeat = 1;  ///< copies of each slice
  std::int64_t opt_shard_step = 0;
  std::int64_t opt_shard_size = 0;          ///< -1: over every replica
  std::vector<std::int64_t> split_shape;    ///< param_split_shape as read
  std::vector<std::int64_t> indices_offset; ///< as read
  std::int64_t field = 0;

  friend bool operator==(const tensor_layout&, const tensor_layout&) = default;
};

/// The part of a tensor a rank holds: per dimension [begin, end).
struct tensor_slice {
  std::vector<std::int64_t> begin;
  std::vector<std::int64_t> end;

  [[nodiscard]] std::int64_t elements() const {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < begin.size(); ++i) {
      n *= end[i] - begin[i];
    }
    return n;
  }
  [[nodiscard]] std::vector<std::int64_t> extent() const {
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < begin.size(); ++i) {
      out.push_back(end[i] - begin[i]);
    }
    return out;
  }
  friend bool operator==(const tensor_slice&, const tensor_slice&) = default;
};

namespace detail {
inline std::string tuple_text(const std::vector<std::int64_t>& v, bool tuple = true) {
  std::string s = tuple ? "(" : "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    s.append(i ? ", " : "").append(std::to_string(v[i]));
  }
  return s + (tuple ? (v.size() == 1 ? ",)" : ")") : "]");
}
} // namespace detail

/// Whether `shard` can cut a parameter `name` of `shape` over a stage of
/// `devices` devices; layout_error when: devices is not a multiple of the
/// product of the shard ("For NAME, the shard (4, 1) requires 4 devices, but
/// the device number of this stage is 6, it can not be divisible by 4", the
/// seed's words; a product past 2^62 "requires more than 2^62 devices");
/// the shard tuple has not one entry per dimension; an entry is below 1; a
/// dimension is not divisible by its entry. Every consumer of a shard tuple
/// (strategy files, the memory planner) holds it to this. Returns the
/// product of the shard, the devices one copy of the parameter spans.
inline std::int64_t check_shard(std::string_view name, const std::vector<std::int64_t>& shape,
                                const std::vector<std::int64_t>& shard, std::int64_t devices) {
  using detail::cat;
  using detail::tuple_text;
  if (devices < 1) {
    throw layout_error(cat("For ", name, ", a stage needs at least one device, not ", devices));
  }
  if (shard.size() != shape.size()) {
    throw layout_error(cat("For ", name, ", the shard ", tuple_text(shard), " has ", shard.size(),
                           " entries but the parameter has ", shape.size(), " dimensions ",
                           tuple_text(shape)));
  }
  std::optional<std::int64_t> product = 1; // none once past 2^62
  for (const auto c : shard) {
    if (c < 1) {
      throw layout_error(
          cat("For ", name, ", the shard ", tuple_text(shard), " has an entry below 1"));
    }
    product = product ? detail::checked_mul(*product, c) : std::nullopt;
  }
  if (!product) {
    throw layout_error(cat("For ", name, ", the shard ", tuple_text(shard),
                           " requires more than 2^62 devices, but the device number of this "
                           "stage is ",
                           devices));
  }
  if (devices % *product != 0) { // first, as MindSpore checks it
    throw layout_error(cat("For ", name, ", the shard ", tuple_text(shard), " requires ", *product,
                           " devices, but the device number of this stage is ", devices,
                           ", it can not be divisible by ", *product));
  }
  for (std::size_t i = 0; i < shard.size(); ++i) {
    if (shape[i] % shard[i] != 0) {
      // (it read "dimension 1 of (8, 8) (8) is not divisible ...")
      throw layout_error(cat("For ", name, ", dimension ", i, " of shape ", tuple_text(shape),
                             " is ", shape[i], ", not divisible by its shard ", shard[i]));
    }
  }
  return *product;
}

/// The layout of parameter `name` of `shape` cut by `shard` over a stage of
/// `devices` devices, as MindSpore's save_strategy_file builds it. Throws
/// layout_error where check_shard does, and when the name contains '-'
/// (MindSpore splits names on it).
inline tensor_layout make_layout(std::string_view name, const std::vector<std::int64_t>& shape,
                                 const std::vector<std::int64_t>& shard, std::int64_t devices) {
  using detail::cat;
  if (name.find('-') != std::string_view::npos) {
    throw layout_error(cat("For ", name,
                           ", the name contains '-', which MindSpore's strategy files cannot "
                           "carry (they split parameter names on it)"));
  }
  const std::int64_t product = check_shard(name, shape, shard, devices);
  tensor_layout out;
  out.name = std::string(name);
  out.shape = shape;
  out.shard = shard;
  out.devices = devices;
  out.repeat = devices / product;
  if (out.repeat != 1) {
    out.device_matrix.push_back(out.repeat);
  }
  out.device_matrix.insert(out.device_matrix.end(), shard.begin(), shard.end());
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out.tensor_map.push_back({static_cast<std::int32_t>(shape.size() - 1 - i)});
  }
  return out;
}

/// A layout in one normal form: per tensor dimension the device axes that
/// cut it (indices into `device_matrix`, outermost first, optimizer axes
/// included), and for an uneven split of dimension 0 the bounds of its
/// parts.
struct placement {
  std::vector<std::int64_t> device_matrix; ///< the file's, an axis split for optimizer sharding
  std::vector<std::vector<std::size_t>> axes;
  std::vector<std::int64_t> dim0_bounds; ///< parts + 1 offsets when uneven; empty when even

  /// Parts dimension `d` is cut into.
  [[nodiscard]] std::int64_t parts(std::size_t d) const {
    std::int64_t n = 1;
    for (const auto a : axes[d]) {
      n *= device_matrix[a];
    }
    return n;
  }
};

/// "For NAME, what": how a layout's refusal reads.
inline layout_error layout_failure(const tensor_layout& layout, const std::string& what) {
  return layout_error(detail::cat("For ", layout.name, ", ", what));
}

namespace detail {

/// The axes `layout`'s tensor map cuts each dimension by, into `p` (whose
/// device matrix is the layout's); `used`: the device axes cut; returns
/// whether a dimension is cut by more than one axis (a nested map).
inline bool map_axes(const tensor_layout& layout, placement& p, std::vector<bool>& used) {
  const std::size_t n = p.device_matrix.size();
  used.assign(n, false);
  bool nested = false;
  for (const auto& entry : layout.tensor_map) {
    nested = nested || entry.size() > 1;
    auto& axes = p.axes.emplace_back();
    for (const auto m : entry) {
      if (m == -1) {
        continue;
      }
      if (m < 0 || static_cast<std::size_t>(m) >= n) {
        throw layout_failure(
            layout, cat("tensor map entry ", m, " names no dimension of a device matrix of ", n));
      }
      const std::size_t axis = n - 1 - static_cast<std::size_t>(m);
      if (used[axis]) {
        throw layout_failure(layout, cat("tensor map entry ", m, " cuts two dimensions"));
      }
      used[axis] = true;
      axes.push_back(axis);
    }
  }
  return nested;
}

/// Optimizer sharding: the replicated axes (splitting one where the size
/// asks for part of it) that also cut `p`'s first dimension, as MindSpore's
/// opt_weight_shard_size and opt_weight_shard_step say.
inline void optimizer_axes(const tensor_layout& layout, placement& p, const std::vector<bool>& used,
                           bool nested) {
  const auto fail = [&](const std::string& what) { return layout_failure(layout, what); };
  const std::size_t n = p.device_matrix.size();
  std::int64_t size = layout.opt_shard_size;
  std::vector<std::size_t> replicated;
  std::int64_t cut = 1;
  for (std::size_t a = 0; a < n; ++a) {
    if (used[a]) {
      cut *= p.device_matrix[a];
    } else if (p.device_matrix[a] > 1) {
      replicated.push_back(a);
    }
  }
  if (size == -1) {
    size = layout.devices / cut;
  }
  const std::string what = cat("opt_weight_shard_size ", layout.opt_shard_size,
                               " with opt_weight_shard_step ", layout.opt_shard_step);
  if (size < 1 || replicated.empty()) {
    throw fail(cat(what, ": the device matrix ", tuple_text(p.device_matrix, false),
                   " leaves no replicated axis to shard the optimizer over"));
  }
  if (!nested && replicated.size() == 1) {
    std::int64_t inner = 1;
    for (std::size_t a = replicated[0] + 1; a < n; ++a) {
      inner *= p.device_matrix[a];
    }
    if (inner != layout.opt_shard_step) {
      throw fail(cat(what, ": the step must be ", inner,
                     ", the model-parallel size inside the replicated axis"));
    }
  }
  std::int64_t rest = size;
  std::vector<std::size_t> taken;
  for (std::size_t k = replicated.size(); k-- > 0 && rest > 1;) {
    const std::size_t a = replicated[k];
    const std::int64_t d = p.device_matrix[a];
    if (rest >= d) {
      if (rest % d != 0) {
        throw fail(cat(what, ": ", rest, " is not a multiple of the replicated axis ", d));
      }
      taken.push_back(a);
      rest /= d;
      continue;
    }
    if (d % rest != 0) {
      throw fail(cat(what, ": the replicated axis ", d, " is not a multiple of ", rest));
    }
    // Split axis a into (d / rest, rest); the inner factor shards.
    p.device_matrix[a] = d / rest;
    p.device_matrix.insert(p.device_matrix.begin() + static_cast<std::ptrdiff_t>(a) + 1, rest);
    for (auto& axes : p.axes) {
      for (auto& x : axes) {
        x += x > a ? 1 : 0;
      }
    }
    for (auto& x : taken) {
      x += x > a ? 1 : 0;
    }
    taken.push_back(a + 1);
    rest = 1;
  }
  if (rest != 1) {
    throw fail(cat(what, ": more than the ", layout.devices / cut, " replicas of each slice"));
  }
  std::sort(taken.begin(), taken.end());
  p.axes[0].insert(p.axes[0].end(), taken.begin(), taken.end());
}

} // namespace detail

/// The axes of `layout` (its map and optimizer sharding), without its shape:
/// what place() checks first.
inline placement axes_of(const tensor_layout& layout) {
  placement p;
  p.device_matrix = layout.device_matrix;
  std::vector<bool> used;
  const bool nested = detail::map_axes(layout, p, used);
  if (layout.field != 0) {
    throw layout_failure(
        layout, detail::cat("field ", layout.field,
                            " (MindSpore's interleave of field rows) is not something shardpoint "
                            "slices; it refuses rather than cut other slices than MindSpore "
                            "would"));
  }
  if (layout.opt_shard_step != 0 && layout.opt_shard_size != 0 && !p.axes.empty()) {
    detail::optimizer_axes(layout, p, used, nested);
  }
  return p;
}

/// The normal form of `layout` (see the top), its shape known. Throws
/// layout_error, naming the parameter, for a map naming no axis of the
/// device matrix or one axis twice, optimizer sharding MindSpore would
/// refuse, a dimension not divisible into its parts, a param_split_shape
/// that is neither form, or field > 0.
inline placement place(const tensor_layout& layout) {
  using detail::cat;
  using detail::tuple_text;
  const auto fail = [&](const std::string& what) { return layout_failure(layout, what); };
  if (layout.tensor_map.size() != layout.shape.size()) {
    throw fail(cat("a tensor map of ", layout.tensor_map.size(), " dimensions for a tensor of ",
                   layout.shape.size(), " ", tuple_text(layout.shape, false)));
  }
  placement p = axes_of(layout);
  const bool opt = layout.opt_shard_step != 0 && layout.opt_shard_size != 0 && !p.axes.empty();
  // param_split_shape: empty or the full shape (even parts), or the sizes
  // of uneven parts of dimension 0.
  const auto& split = layout.split_shape;
  if (!split.empty() && split != layout.shape) {
    const std::string what =
        cat("param_split_shape ", tuple_text(split, false), " (the shape is ",
            tuple_text(layout.shape, false), ") as the sizes of the parts of dimension 0: ");
    if (opt) {
      throw fail(what + "not with optimizer sharding");
    }
    for (std::size_t d = 1; d < p.axes.size(); ++d) {
      if (p.parts(d) != 1) {
        throw fail(cat(what, "the layout cuts dimension ", d, " too"));
      }
    }
    if (p.axes.empty() || static_cast<std::int64_t>(split.size()) != p.parts(0)) {
      throw fail(cat(what, "the layout cuts it into ", p.axes.empty() ? 1 : p.parts(0),
                     " parts, not ", split.size()));
    }
    if (!layout.indices_offset.empty() && layout.indices_offset.size() != split.size()) {
      throw fail(cat(what, "indices_offset ", tuple_text(layout.indices_offset, false), " has ",
                     layout.indices_offset.size(), " entries"));
    }
    std::int64_t at = 0;
    p.dim0_bounds.push_back(0);
    for (std::size_t k = 0; k < split.size(); ++k) {
      if (split[k] < 0) {
        throw fail(what + "a size is negative");
      }
      if (!layout.indices_offset.empty() && layout.indices_offset[k] != at) {
        throw fail(cat(what, "indices_offset ", tuple_text(layout.indices_offset, false),
                       " is not where the parts begin, in order (part ", k, " begins at ", at,
                       ")"));
      }
      at += split[k];
      p.dim0_bounds.push_back(at);
    }
    if (at != layout.shape[0]) {
      throw fail(cat(what, "they add up to ", at, ", not ", layout.shape[0]));
    }
    return p;
  }
  for (std::size_t d = 0; d < p.axes.size(); ++d) {
    if (layout.shape[d] % p.parts(d) != 0) {
      throw fail(cat("dimension ", d, " of shape ", tuple_text(layout.shape, false), " is ",
                     layout.shape[d], ", not divisible into ", p.parts(d), " parts"));
    }
  }
  return p;
}

/// The slice local rank `rank` holds of a tensor of `shape` placed as `p`.
/// Throws layout_error for a rank outside the device matrix.
inline tensor_slice slice_of(const placement& p, const std::vector<std::int64_t>& shape,
                             std::int64_t rank) {
  using detail::cat;
  std::int64_t devices = 1;
  for (auto d : p.device_matrix) {
    devices *= d;
  }
  if (rank < 0 || rank >= devices) {
    throw layout_error(cat("rank ", rank, " is outside a device matrix of ", devices, " devices"));
  }
  // The rank's coordinate: row-major, the last dimension varying fastest.
  std::vector<std::int64_t> coordinate(p.device_matrix.size());
  std::int64_t rest = rank;
  for (std::size_t k = p.device_matrix.size(); k-- > 0;) {
    coordinate[k] = rest % p.device_matrix[k];
    rest /= p.device_matrix[k];
  }
  tensor_slice s;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::int64_t part = 0;
    for (const auto a : p.axes[d]) {
      part = part * p.device_matrix[a] + coordinate[a];
    }
    if (d == 0 && !p.dim0_bounds.empty()) {
      s.begin.push_back(p.dim0_bounds[static_cast<std::size_t>(part)]);
      s.end.push_back(p.dim0_bounds[static_cast<std::size_t>(part) + 1]);
      continue;
    }
    const std::int64_t size = shape[d] / p.parts(d);
    s.begin.push_back(part * size);
    s.end.push_back((part + 1) * size);
  }
  return s;
}

/// The slice local rank `rank` of the layout's stage holds (its shape known).
inline tensor_slice slice_of(const tensor_layout& layout, std::int64_t rank) {
  return slice_of(place(layout), layout.shape, rank);
}

/// The slice of a classic layout: one map value a dimension.
inline tensor_slice slice_of(const std::vector<std::int64_t>& device_matrix,
                             const std::vector<std::int32_t>& tensor_map,
                             const std::vector<std::int64_t>& shape, std::int64_t rank) {
  tensor_layout l;
  l.name = "the tensor";
  l.shape = shape;
  l.device_matrix = device_matrix;
  l.devices = 1;
  for (auto d : device_matrix) {
    l.devices *= d;
  }
  for (auto m : tensor_map) {
    l.tensor_map.push_back({m});
  }
  return slice_of(l, rank);
}

/// The slice's bytes in the row-major tensor, as runs (offset, length) in
/// increasing order, for elements of `element_size` bytes: one run per
/// contiguous block, so that a tensor read once in order can be cut for
/// every rank on the way.
inline std::vector<std::pair<std::uint64_t, std::uint64_t>>
byte_runs(const std::vector<std::int64_t>& shape, const tensor_slice& s,
          std::uint64_t element_size) {
  const std::size_t k = shape.size();
  if (k == 0) {
    return {{0, element_size}};
  }
  for (std::size_t d = 0; d < k; ++d) {
    if (s.end[d] <= s.begin[d]) {
      return {}; // an empty slice: no bytes (a cut of a [0, 8] tensor, say)
    }
  }
  // The innermost dimensions taken whole form one contiguous block.
  std::size_t inner = k;
  std::uint64_t block = element_size;
  while (inner > 0 && s.begin[inner - 1] == 0 && s.end[inner - 1] == shape[inner - 1]) {
    block *= static_cast<std::uint64_t>(shape[inner - 1]);
    --inner;
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
  if (inner == 0) {
    runs.emplace_back(0, block);
    return runs;
  }
  // Dimension inner - 1 is cut: each run is (end - begin) blocks there.
  const std::uint64_t run =
      block * static_cast<std::uint64_t>(s.end[inner - 1] - s.begin[inner - 1]);
  std::vector<std::int64_t> index(s.begin.begin(),
                                  s.begin.begin() + static_cast<std::ptrdiff_t>(inner));
  std::vector<std::uint64_t> stride(k, 0); // bytes per step in each dimension
  std::uint64_t step = element_size;
  for (std::size_t d = k; d-- > 0;) {
    stride[d] = step;
    step *= static_cast<std::uint64_t>(shape[d]);
  }
  while (true) {
    std::uint64_t offset = 0;
    for (std::size_t d = 0; d < inner; ++d) {
      offset += static_cast<std::uint64_t>(index[d]) * stride[d];
    }
    if (run > 0) {
      runs.emplace_back(offset, run);
    }
    // Next index over dimensions 0 .. inner-2 (the last one is the run).
    std::size_t d = inner - 1;
    while (d-- > 0) {
      if (++index[d] < s.end[d]) {
        break;
      }
      index[d] = s.begin[d];
    }
    if (d == static_cast<std::size_t>(-1)) {
      return runs;
    }
  }
}

} // namespace shardpoint

#endif // SHARDPOINT_TENSOR_LAYOUT_HPP
