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
  CHECK(l.tensor_map == std::vector<std::vector<std::int32_t>>{{1}, {0}});
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
      // (0 too: a trial's [0, 8] weight cut [1, 2] gave ranks of 16 bytes
      // to merge, where its slices hold none.)
      shape[i] = shard[i] * static_cast<std::int64_t>(rng.below(4));
      product *= shard[i];
    }
    const std::int64_t devices = product * static_cast<std::int64_t>(1 + rng.below(3));
    const auto l = make_layout("p", shape, shard, devices);
    std::vector<std::int64_t> union_of_ranks;
    for (std::int64_t r = 0; r < devices; ++r) {
      const auto s = slice_of(l, r);
      std::vector<std::int32_t> map;
      for (const auto& entry : l.tensor_map) {
        map.push_back(entry.front());
      }
      const auto want = reference_elements(shape, l.device_matrix, map, r);
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
                       "For b, dimension 0 of shape (10,) is 10, not divisible by its shard 4",
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

namespace {

// A layout as a strategy file gives it: device matrix, one map entry list a
// dimension, optimizer sharding.
shardpoint::tensor_layout read_layout(std::vector<std::int64_t> dev,
                                      std::vector<std::vector<std::int32_t>> map,
                                      std::vector<std::int64_t> shape, std::int64_t step = 0,
                                      std::int64_t size = 0) {
  shardpoint::tensor_layout l;
  l.name = "w";
  l.devices = 1;
  for (auto d : dev) {
    l.devices *= d;
  }
  l.device_matrix = std::move(dev);
  l.tensor_map = std::move(map);
  l.shape = std::move(shape);
  l.opt_shard_step = step;
  l.opt_shard_size = size;
  return l;
}

std::pair<std::int64_t, std::int64_t> rows(const shardpoint::tensor_layout& l, std::int64_t r) {
  const auto s = slice_of(l, r);
  return {s.begin[0], s.end[0]};
}

} // namespace

TEST_CASE("nested maps: a dimension cut over several axes, the first listed outermost") {
  // Layout((2, 2, 2), ("dp", "sp", "mp"))(("dp", "sp"), "mp"): [[2, 1], [0]],
  // an [8, 4] tensor: rows in blocks of 2 numbered dp * 2 + sp, columns by mp.
  const auto l = read_layout({2, 2, 2}, {{2, 1}, {0}}, {8, 4});
  for (std::int64_t r = 0; r < 8; ++r) {
    const std::int64_t dp = r / 4, sp = r / 2 % 2, mp = r % 2;
    const auto s = slice_of(l, r);
    CHECK(s.begin == std::vector<std::int64_t>{(dp * 2 + sp) * 2, mp * 2});
    CHECK(s.end == std::vector<std::int64_t>{(dp * 2 + sp) * 2 + 2, mp * 2 + 2});
  }
  // The other order: sp outermost.
  const auto swapped = read_layout({2, 2, 2}, {{1, 2}, {0}}, {8, 4});
  CHECK(slice_of(swapped, 2).begin[0] == 4); // sp 1, dp 0: block 1 * 2 + 0, rows 4-5
  CHECK(slice_of(swapped, 4).begin[0] == 2); // dp 1, sp 0: block 0 * 2 + 1, rows 2-3
  CHECK_THROWS_AS(slice_of(read_layout({2, 2}, {{1, 1}}, {8}), 0), layout_error);
}

TEST_CASE("optimizer sharding cuts dimension 0 inside its model-parallel part") {
  // dev [2, 4, 1], map [1, 0], [1024, 4096], step 4, size 2: rank o * 4 + m
  // holds rows m * 256 + o * 128, 128 of them.
  const auto l = read_layout({2, 4, 1}, {{1}, {0}}, {1024, 4096}, 4, 2);
  for (std::int64_t r = 0; r < 8; ++r) {
    const std::int64_t o = r / 4, m = r % 4;
    CHECK(rows(l, r) ==
          std::pair<std::int64_t, std::int64_t>{m * 256 + o * 128, m * 256 + o * 128 + 128});
  }
  CHECK(rows(read_layout({2, 4, 1}, {{1}, {0}}, {1024, 4096}, 4, -1), 5) == rows(l, 5)); // all
  CHECK_THROWS_AS(slice_of(read_layout({2, 4, 1}, {{1}, {0}}, {1024, 4096}, 2, 2), 0),
                  layout_error); // the step is the model-parallel size inside the replicas
  CHECK_THROWS_AS(slice_of(read_layout({2, 4, 1}, {{1}, {0}}, {1024, 4096}, 4, 4), 0),
                  layout_error); // more than the replicas
  // dev [8, 1], nothing cut: size 8 gives each rank an eighth; size 4 a
  // quarter, ranks r and r + 4 replicas; step 2 is refused.
  for (std::int64_t r = 0; r < 8; ++r) {
    CHECK(rows(read_layout({8, 1}, {{-1}, {-1}}, {64, 3}, 1, 8), r) ==
          std::pair<std::int64_t, std::int64_t>{8 * r, 8 * r + 8});
    CHECK(rows(read_layout({8, 1}, {{-1}, {-1}}, {64, 3}, 1, 4), r) ==
          std::pair<std::int64_t, std::int64_t>{16 * (r % 4), 16 * (r % 4) + 16});
  }
  CHECK_THROWS_AS(slice_of(read_layout({8, 1}, {{-1}, {-1}}, {64, 3}, 2, 4), 0), layout_error);
  // Two replicated axes around the model-parallel one: dev [2, 4, 2], map
  // [1, -1], size 4 takes both, the outer one first: block mp * 4 + a * 2 + b.
  const auto two = read_layout({2, 4, 2}, {{1}, {-1}}, {16, 1}, 1, 4);
  for (std::int64_t r = 0; r < 16; ++r) {
    const std::int64_t a = r / 8, mp = r / 2 % 4, b = r % 2;
    CHECK(rows(two, r).first == mp * 4 + a * 2 + b);
  }
  // A replicated axis larger than the size: split, its inner factor shards.
  const auto split = read_layout({2, 4}, {{1}, {-1}}, {8, 2}, 1, 2);
  for (std::int64_t r = 0; r < 8; ++r) {
    const std::int64_t mp = r / 4, o = r % 2;
    CHECK(rows(split, r).first == mp * 4 + o * 2);
  }
}

TEST_CASE("param_split_shape: the whole shape, or uneven parts of dimension 0") {
  auto l = read_layout({4}, {{0}, {-1}}, {10, 3});
  l.split_shape = {10, 3};                       // the tutorial's form: the whole shape
  CHECK_THROWS_AS(slice_of(l, 0), layout_error); // 10 rows do not cut into 4 even parts
  l.split_shape = {1, 2, 3, 4};
  const std::vector<std::pair<std::int64_t, std::int64_t>> want{{0, 1}, {1, 3}, {3, 6}, {6, 10}};
  for (std::int64_t r = 0; r < 4; ++r) {
    CHECK(rows(l, r) == want[static_cast<std::size_t>(r)]);
  }
  l.indices_offset = {0, 1, 3, 6};
  CHECK(rows(l, 3) == want[3]);
  l.indices_offset = {0, 1, 4, 6}; // parts out of order: not something shardpoint places
  CHECK_THROWS_WITH_AS(slice_of(l, 0),
                       "For w, param_split_shape [1, 2, 3, 4] (the shape is [10, 3]) as the sizes "
                       "of the parts of dimension 0: indices_offset [0, 1, 4, 6] is not where the "
                       "parts begin, in order (part 2 begins at 3)",
                       layout_error);
  l.indices_offset = {};
  l.split_shape = {1, 2, 3, 5}; // 11 rows
  CHECK_THROWS_WITH_AS(slice_of(l, 0),
                       "For w, param_split_shape [1, 2, 3, 5] (the shape is [10, 3]) as the sizes "
                       "of the parts of dimension 0: they add up to 11, not 10",
                       layout_error);
  auto columns = read_layout({2}, {{-1}, {0}}, {4, 6}); // only dimension 1 cut
  columns.split_shape = {2, 2};
  CHECK_THROWS_WITH_AS(slice_of(columns, 0),
                       "For w, param_split_shape [2, 2] (the shape is [4, 6]) as the sizes of the "
                       "parts of dimension 0: the layout cuts dimension 1 too",
                       layout_error);
  auto field = read_layout({2}, {{0}}, {8});
  field.field = 2;
  CHECK_THROWS_WITH_AS(slice_of(field, 0),
                       "For w, field 2 (MindSpore's interleave of field rows) is not something "
                       "shardpoint slices; it refuses rather than cut other slices than "
                       "MindSpore would",
                       layout_error);
}
