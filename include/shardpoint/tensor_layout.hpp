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
// Independent of ONNX and protobuf; the ONNX adapter and `shardpoint weights`
// use it, and so can any other format.
#ifndef SHARDPOINT_TENSOR_LAYOUT_HPP
#define SHARDPOINT_TENSOR_LAYOUT_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

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
  std::vector<std::int64_t> shape;         ///< the full shape (param_split_shape)
  std::vector<std::int64_t> shard;         ///< the shard tuple, one entry a dimension
  std::vector<std::int64_t> device_matrix; ///< [repeat,] shard
  std::vector<std::int32_t> tensor_map;    ///< rank-1, ..., 0
  std::int64_t devices = 1;                ///< devices of the stage
  std::int64_t repeat = 1;                 ///< copies of each slice

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
  friend bool operator==(const tensor_slice&, const tensor_slice&) = default;
};

/// The layout of parameter `name` of `shape` cut by `shard` over a stage of
/// `devices` devices, as MindSpore's save_strategy_file builds it. Throws
/// layout_error when: devices is not a multiple of the product of the shard
/// ("For NAME, the shard (4, 1) requires 4 devices, but the device number of
/// this stage is 6, it can not be divisible by 4", the seed's words); the
/// shard tuple has not one entry per dimension; an entry is below 1; a
/// dimension is not divisible by its entry; the name contains '-' (MindSpore
/// splits names on it).
inline tensor_layout make_layout(std::string_view name, const std::vector<std::int64_t>& shape,
                                 const std::vector<std::int64_t>& shard, std::int64_t devices) {
  using detail::cat;
  const auto tuple = [](const std::vector<std::int64_t>& v) {
    std::string s = "(";
    for (std::size_t i = 0; i < v.size(); ++i) {
      s.append(i ? ", " : "").append(std::to_string(v[i]));
    }
    return s + (v.size() == 1 ? ",)" : ")");
  };
  if (name.find('-') != std::string_view::npos) {
    throw layout_error(cat("For ", name,
                           ", the name contains '-', which MindSpore's strategy files cannot "
                           "carry (they split parameter names on it)"));
  }
  if (devices < 1) {
    throw layout_error(cat("For ", name, ", a stage needs at least one device, not ", devices));
  }
  if (shard.size() != shape.size()) {
    throw layout_error(cat("For ", name, ", the shard ", tuple(shard), " has ", shard.size(),
                           " entries but the parameter has ", shape.size(), " dimensions ",
                           tuple(shape)));
  }
  std::int64_t product = 1;
  for (const auto c : shard) {
    if (c < 1) {
      throw layout_error(cat("For ", name, ", the shard ", tuple(shard), " has an entry below 1"));
    }
    product *= c;
  }
  if (devices % product != 0) { // first, as MindSpore checks it
    throw layout_error(cat("For ", name, ", the shard ", tuple(shard), " requires ", product,
                           " devices, but the device number of this stage is ", devices,
                           ", it can not be divisible by ", product));
  }
  for (std::size_t i = 0; i < shard.size(); ++i) {
    if (shape[i] % shard[i] != 0) {
      throw layout_error(cat("For ", name, ", dimension ", i, " of ", tuple(shape), " (", shape[i],
                             ") is not divisible by its shard ", shard[i]));
    }
  }
  tensor_layout out{std::string(name), shape, shard, {}, {}, devices, devices / product};
  if (out.repeat != 1) {
    out.device_matrix.push_back(out.repeat);
  }
  out.device_matrix.insert(out.device_matrix.end(), shard.begin(), shard.end());
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out.tensor_map.push_back(static_cast<std::int32_t>(shape.size() - 1 - i));
  }
  return out;
}

/// The slice local rank `rank` holds, from any device matrix and tensor map
/// (as read from a strategy file). Throws layout_error for a rank outside
/// the device matrix, a tensor map entry naming no dimension of it, or a
/// dimension not divisible by its parts.
inline tensor_slice slice_of(const std::vector<std::int64_t>& device_matrix,
                             const std::vector<std::int32_t>& tensor_map,
                             const std::vector<std::int64_t>& shape, std::int64_t rank) {
  using detail::cat;
  std::int64_t devices = 1;
  for (auto d : device_matrix) {
    devices *= d;
  }
  if (rank < 0 || rank >= devices) {
    throw layout_error(cat("rank ", rank, " is outside a device matrix of ", devices, " devices"));
  }
  if (tensor_map.size() != shape.size()) {
    throw layout_error(cat("a tensor map of ", tensor_map.size(), " entries for a tensor of ",
                           shape.size(), " dimensions"));
  }
  // The rank's coordinate: row-major, the last dimension varying fastest.
  std::vector<std::int64_t> coordinate(device_matrix.size());
  std::int64_t rest = rank;
  for (std::size_t k = device_matrix.size(); k-- > 0;) {
    coordinate[k] = rest % device_matrix[k];
    rest /= device_matrix[k];
  }
  tensor_slice s;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::int32_t m = tensor_map[i];
    if (m == -1) {
      s.begin.push_back(0);
      s.end.push_back(shape[i]);
      continue;
    }
    if (m < 0 || static_cast<std::size_t>(m) >= device_matrix.size()) {
      throw layout_error(cat("tensor map entry ", m, " names no dimension of a device matrix of ",
                             device_matrix.size()));
    }
    const std::size_t k = device_matrix.size() - 1 - static_cast<std::size_t>(m);
    const std::int64_t parts = device_matrix[k];
    if (shape[i] % parts != 0) {
      throw layout_error(
          cat("dimension ", i, " (", shape[i], ") is not divisible into ", parts, " parts"));
    }
    const std::int64_t size = shape[i] / parts;
    s.begin.push_back(coordinate[k] * size);
    s.end.push_back((coordinate[k] + 1) * size);
  }
  return s;
}

/// The slice local rank `rank` of the layout's stage holds.
inline tensor_slice slice_of(const tensor_layout& layout, std::int64_t rank) {
  return slice_of(layout.device_matrix, layout.tensor_map, layout.shape, rank);
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
