// A flat table of names to ids (internal to the adapter).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_SRC_NAME_IDS_HPP
#define SHARDPOINT_ONNX_SRC_NAME_IDS_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace shardpoint::onnx {

// Names (of tensors, of nodes) to their ids (0, 1, 2, ... in the order
// first seen), by open addressing with linear probing over a power-of-two
// table kept at most half full, 8 bytes a slot. std::unordered_map
// allocated a node per name and chased a pointer per probe: in a profile of
// `Sharder.run` on a 10^6-node decoder, hash-table lookups and glibc's
// malloc and free were the two largest items (bench/README.md, "Time
// against node count"). The names are views the caller keeps alive.
class name_ids {
public:
  explicit name_ids(std::size_t expected) {
    std::size_t size = 16;
    while (size < 2 * expected) {
      size *= 2;
    }
    slots_.assign(size, slot{});
    names_.reserve(expected);
  }

  // The id of `name`, and whether it was added with id `fresh` (below
  // UINT32_MAX).
  std::pair<std::uint32_t, bool> add(std::string_view name, std::uint32_t fresh) {
    return add(name, fresh, std::hash<std::string_view>{}(name));
  }
  /// The same with `hash`, which hash() returned for `name`.
  std::pair<std::uint32_t, bool> add(std::string_view name, std::uint32_t fresh, std::size_t hash) {
    slot& at = slots_[probe(name, hash)];
    if (at.id != empty) {
      return {at.id, false};
    }
    at = {tag_of(hash), fresh};
    names_.push_back(name);
    if (2 * names_.size() > slots_.size()) {
      grow();
    }
    return {fresh, true};
  }

  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view name) const {
    return find(name, std::hash<std::string_view>{}(name));
  }
  /// The same with `hash`, which hash() returned for `name`.
  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view name, std::size_t hash) const {
    const slot& at = slots_[probe(name, hash)];
    return at.id == empty ? std::nullopt : std::optional(at.id);
  }

  /// The hash alone: safe from several threads at once.
  [[nodiscard]] static std::size_t hash_only(std::string_view name) {
    return std::hash<std::string_view>{}(name);
  }
  /// Fetches the slot a name of hash `h` starts from into the cache.
  void prefetch(std::size_t h) const { __builtin_prefetch(&slots_[h & (slots_.size() - 1)]); }

  /// How many names there are: the id the next new name must get.
  [[nodiscard]] std::size_t size() const { return names_.size(); }

  /// The names, by id.
  [[nodiscard]] std::span<const std::string_view> names() const { return names_; }

  /// Frees the table but not the names: nothing may be added or found after.
  void release_slots() { slots_ = {}; }
  /// Frees both.
  void release() {
    slots_ = {};
    names_ = {};
  }

private:
  static constexpr std::uint32_t empty = UINT32_MAX;
  // 8 bytes: the hash's high half, to skip most unequal names unread.
  struct slot {
    std::uint32_t tag = 0;
    std::uint32_t id = empty;
  };
  static std::uint32_t tag_of(std::size_t hash) {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(hash) >> 32);
  }

  // The index of the slot holding `name`, or of the empty one where it
  // would go.
  [[nodiscard]] std::size_t probe(std::string_view name, std::size_t hash) const {
    const std::size_t mask = slots_.size() - 1;
    const std::uint32_t tag = tag_of(hash);
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      const slot& s = slots_[i];
      if (s.id == empty || (s.tag == tag && names_[s.id] == name)) {
        return i;
      }
    }
  }

  void grow() { // rare: `expected` too small
    slots_.assign(2 * slots_.size(), slot{});
    const std::size_t mask = slots_.size() - 1;
    for (std::uint32_t id = 0; id < names_.size(); ++id) {
      const std::size_t hash = std::hash<std::string_view>{}(names_[id]);
      std::size_t i = hash & mask;
      while (slots_[i].id != empty) {
        i = (i + 1) & mask;
      }
      slots_[i] = {tag_of(hash), id};
    }
  }

  std::vector<slot> slots_;
  std::vector<std::string_view> names_; // by id
};

/// How many names ahead of the one added its slot is fetched (name_ids::
/// prefetch): a table of 10^6 names outgrows the cache, and a miss a name,
/// one after the other, was most of interning them; a few in flight at once
/// hide most of it.
inline constexpr std::size_t prefetch_ahead = 16;

/// A name to intern, hashed beforehand (name_ids::hash_only), and the node
/// it is of: 24 bytes, a few for each node of a model. Hashing the names of
/// a model's nodes side by side first (chunks.hpp), then adding them in
/// order, is how the adapter interns them: first touching each name,
/// scattered over the model's arena, to hash it was most of the cost.
struct hashed_name {
  hashed_name(std::string_view name, std::size_t v)
      : data(name.data()), size(static_cast<std::uint32_t>(name.size())),
        node(static_cast<std::uint32_t>(v)), hash(name_ids::hash_only(name)) {}
  [[nodiscard]] std::string_view name() const { return {data, size}; }

  const char* data;   // a name is under protobuf's 2 GiB
  std::uint32_t size; // and so are the nodes
  std::uint32_t node;
  std::size_t hash;
};

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_SRC_NAME_IDS_HPP
