// tensor_layout: MindSpore's layout maths against a reference written here
// (a plain nested loop over coordinates), the seed's worked example, and
// every refusal in MindSpore's words.
#include <doctest/doctest.h>

#include <numeric>

#include "support.hpp"

using shardpoint::layout_error;
using shardpoint::make_layout;
using shardpoint::slice_of;

namespace {

// The reference: which elements (flat indices) rank r holds, by enumerating
// every element and asking, per dimension, which part it falls in.
std::vector<std::int64_t> reference_elements(const std::vector<std::int64_t>& shape,
                                             const std::vector<std::int64_t>& dev,
                                             const std::vector<std::int32_t>& map,
                                             std::int64_t rank) {
  std::vector<std::int64_t> coord(dev.size());
  std::int64_t rest = rank;
  for (std::size_t k = dev.size(); k-- > 0;) {
    coord[k] = rest % dev[k];
    rest /= dev[k];
  }
  std::int64_t total = 1;
  for (auto d : shape) {
    total *= d;
  }
  std::vector<std::int64_t> out;
  for (std::int64_t flat = 0; flat < total; ++flat) {
    std::int64_t f = flat;
    bool mine = true;
    for (std::size_t i = shape.size(); i-- > 0;) {
      const std::int64_t x = f % shape[i];
      f /= shape[i];
      if (map[i] >= 0) {
        const std::int64_t parts = dev[dev.size() - 1 - static_cast<std::size_t>(map[i])];
        const std::int64_t part = x / (shape[i] / parts);
        mine = mine && part == coord[dev.size() - 1 - static_cast<std::size_t>(map[i])];
      }
    }
    if (mine) {
      out.push_back(flat);
    }
  }
  return out;
}

// The elements byte_runs covers, for 1-byte elements.
std::vector<std::int64_t> run_elements(const std::vector<std::int64_t>& shape,
                                       const shardpoint::tensor_slice& s) {
  std::vector<std::int64_t> out;
  for (auto [offset, length] : shardpoint::byte_runs(shape, s, 1)) {
    for (std::uint64_t k = 0; k < length; ++k) {
      out.push_back(static_cast<std::int64_t>(offset + k));
    }
  }
  return out;
}

} // namespace

TEST_CASE("the seed's worked example: [1024, 4096], shard (4, 1), 8 devices") {
  const auto l = make_layout("w", {1024, 4096}, {4, 1}, 8);
  CHECK(l.device_matrix == std::vector<std::int64_t>{2, 4, 1});
  CHECK(l.tensor_map == std::vector<std::int32_t>{1, 0});
  CHECK(l.repeat == 2);
  const auto s = slice_of(l, 5);
  CHECK(s.begin == std::vector<std::int64_t>{256, 0});
  CHECK(s.end == std::vector<std::int64_t>{512, 4096});
  std::vector<std::int64_t> blocks;
  for (int r = 0; r < 8; ++r) {
    blocks.push_back(slice_of(l, r).begin[0] / 256);
  }
  CHECK(blocks == std::vector<std::int64_t>{0, 1, 2, 3, 0, 1, 2, 3});
  // Without replication the device matrix is the shard itself.
  CHECK(make_layout("w", {8, 8}, {1, 4}, 4).device_matrix == std::vector<std::int64_t>{1, 4});
}

TEST_CASE("every rank's slice, on random shapes, shards and replication") {
  shardpoint::synthetic::splitmix64 rng(5);
  int cases = 0;
  for (int round = 0; round < 400; ++round) {
    const auto rank = static_cast<std::size_t>(rng.below(4));
    std::vector<std::int64_t> shard(rank);
    std::vector<std::int64_t> shape(rank);
    std::int64_t product = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      shard[i] = std::int64_t{1} << rng.below(3); // 1, 2 or 4
      shape[i] = shard[i] * static_cast<std::int64_t>(1 + rng.below(3));
      product *= shard[i];
    }
    const std::int64_t devices = product * static_cast<std::int64_t>(1 + rng.below(3));
    const auto l = make_layout("p", shape, shard, devices);
    std::vector<std::int64_t> union_of_ranks;
    for (std::int64_t r = 0; r < devices; ++r) {
      const auto s = slice_of(l, r);
      const auto want = reference_elements(shape, l.device_matrix, l.tensor_map, r);
      CHECK(run_elements(shape, s) == want);
      CHECK(s.elements() == static_cast<std::int64_t>(want.size()));
      union_of_ranks.insert(union_of_ranks.end(), want.begin(), want.end());
    }
    // Every element held, each by exactly `repeat` ranks.
    std::int64_t total = 1;
    for (auto d : shape) {
      total *= d;
    }
    CHECK(static_cast<std::int64_t>(union_of_ranks.size()) == total * l.repeat);
    ++cases;
  }
  CHECK(cases == 400);
}

TEST_CASE("a device matrix and tensor map from a file: -1 leaves a dimension whole") {
  const auto s = slice_of({2, 2}, {-1, 0}, {6, 8}, 3);
  CHECK(s.begin == std::vector<std::int64_t>{0, 4});
  CHECK(s.end == std::vector<std::int64_t>{6, 8});
  CHECK_THROWS_AS(slice_of({2, 2}, {-1, 0}, {6, 8}, 4), layout_error);
  CHECK_THROWS_AS(slice_of({2, 2}, {5, 0}, {6, 8}, 0), layout_error);
}

TEST_CASE("refusals, in MindSpore's words where it has them") {
  CHECK_THROWS_WITH_AS(make_layout("layer.w", {1024, 4096}, {4, 1}, 6),
                       "For layer.w, the shard (4, 1) requires 4 devices, but the device number "
                       "of this stage is 6, it can not be divisible by 4",
                       layout_error);
  CHECK_THROWS_WITH_AS(make_layout("b", {10}, {4}, 4),
                       "For b, dimension 0 of (10,) (10) is not divisible by its shard 4",
                       layout_error);
  CHECK_THROWS_WITH_AS(make_layout("w", {8, 8}, {4}, 4),
                       "For w, the shard (4,) has 1 entries but the parameter has 2 dimensions "
                       "(8, 8)",
                       layout_error);
  CHECK_THROWS_WITH_AS(make_layout("a-b", {8}, {1}, 1),
                       "For a-b, the name contains '-', which MindSpore's strategy files cannot "
                       "carry (they split parameter names on it)",
                       layout_error);
  CHECK_THROWS_AS(make_layout("w", {8}, {0}, 1), layout_error);
  CHECK(shardpoint::layout_error("x").category() == shardpoint::error_category::bad_parameter);
}
