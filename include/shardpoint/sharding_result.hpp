// shardpoint/sharding_result.hpp -- the device and stage of every vertex.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_SHARDING_RESULT_HPP
#define SHARDPOINT_SHARDING_RESULT_HPP

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <range/v3/view/filter.hpp>
#include <range/v3/view/iota.hpp>

#include "error.hpp"
#include "sharding_point.hpp"

namespace shardpoint {

/// The device and pipeline stage of every vertex, addressed by vertex index.
///
/// Each attribute is either set on every vertex (some sharding point carried
/// it) or on none (no point carried it). A result built by hand, e.g. from
/// the attributes already stored in a model, may also leave single vertices
/// unset.
class sharding_result {
  // Defined before its users: they deduce their return type from it.
  auto indices_where(const std::vector<int>& values, int wanted) const {
    const std::size_t n = values.empty() ? 0 : size_;
    const int* data = values.data();
    return ranges::views::iota(std::size_t{0}, n) |
           ranges::views::filter([data, wanted](std::size_t i) { return data[i] == wanted; });
  }

public:
  /// Marks a vertex without a value in the vectors given to the constructor.
  static constexpr int unset = -1;

  sharding_result() = default;

  /// Builds a result from per-vertex values. Each vector is either empty (the
  /// attribute is unset everywhere) or holds one value per vertex, `unset` for
  /// a vertex without one. Throws `size_mismatch_error` when both are
  /// non-empty and their sizes differ, `invalid_value_error` for a value
  /// below `unset` or above `max_group_id + 1` (sharding_point.hpp).
  sharding_result(std::size_t num_vertices, std::vector<int> devices, std::vector<int> stages)
      : size_(num_vertices), devices_(std::move(devices)), stages_(std::move(stages)) {
    max_device_ = check(devices_, "device");
    max_stage_ = check(stages_, "stage");
  }

  /// Number of vertices.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// Device of the vertex of index `i`, if it has one. Precondition: i < size().
  [[nodiscard]] std::optional<int> device(std::size_t i) const noexcept {
    return value(devices_, i);
  }

  /// Pipeline stage of the vertex of index `i`, if it has one.
  [[nodiscard]] std::optional<int> stage(std::size_t i) const noexcept { return value(stages_, i); }

  /// Whether any vertex has a device (resp. a stage).
  [[nodiscard]] bool has_devices() const noexcept { return max_device_ >= 0; }
  [[nodiscard]] bool has_stages() const noexcept { return max_stage_ >= 0; }

  /// 1 + the largest device used: the devices a run needs are numbered
  /// 0 .. num_devices() - 1. Zero when no vertex has a device.
  [[nodiscard]] int num_devices() const noexcept { return max_device_ + 1; }

  /// 1 + the largest stage used; zero when no vertex has a stage.
  [[nodiscard]] int num_stages() const noexcept { return max_stage_ + 1; }

  /// The per-vertex values, `unset` where there is none; empty when the
  /// attribute is unset everywhere.
  [[nodiscard]] std::span<const int> devices() const noexcept { return devices_; }
  [[nodiscard]] std::span<const int> stages() const noexcept { return stages_; }

  /// Lazy range-v3 view of the indices of the vertices on device `d`, in
  /// increasing order. It refers to this result, which must outlive it.
  [[nodiscard]] auto vertices_on_device(int d) const { return indices_where(devices_, d); }

  /// Lazy range-v3 view of the indices of the vertices in stage `s`.
  [[nodiscard]] auto vertices_in_stage(int s) const { return indices_where(stages_, s); }

  friend bool operator==(const sharding_result&, const sharding_result&) = default;

private:
  static std::optional<int> value(const std::vector<int>& values, std::size_t i) noexcept {
    if (values.empty() || values[i] == unset) {
      return std::nullopt;
    }
    return values[i];
  }

  // Checks the values and returns the largest (unset for none), in one pass.
  int check(const std::vector<int>& values, const char* what) const {
    if (!values.empty() && values.size() != size_) {
      std::string msg = "shardpoint: sharding_result given ";
      msg.append(std::to_string(values.size())).append(" ").append(what).append(" values for ");
      msg.append(std::to_string(size_)).append(" vertices");
      throw size_mismatch_error(msg);
    }
    int low = unset;
    int high = unset;
    for (int x : values) {
      low = std::min(low, x);
      high = std::max(high, x);
    }
    if (low < unset || high > max_group_id + 1) {
      const auto bad = std::find_if(values.begin(), values.end(),
                                    [](int x) { return x < unset || x > max_group_id + 1; });
      const auto i = static_cast<std::size_t>(bad - values.begin());
      std::string msg = "shardpoint: ";
      msg.append(*bad < 0 ? "negative " : "too large a ").append(what).append(" ");
      msg.append(std::to_string(*bad)).append(" for vertex ").append(std::to_string(i));
      msg.append(*bad < 0 ? "" : " (devices and stages are at most 65535)");
      throw invalid_value_error(msg, i);
    }
    return high;
  }

  std::size_t size_ = 0;
  std::vector<int> devices_;
  std::vector<int> stages_;
  int max_device_ = unset;
  int max_stage_ = unset;
};

} // namespace shardpoint

#endif // SHARDPOINT_SHARDING_RESULT_HPP
