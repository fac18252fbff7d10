// shardpoint/io/detail/json_input.hpp -- reading JSON files the way every
// shardpoint reader does: one syntax-error line, and a key given twice in one
// object refused with its line and column (nlohmann keeps the last silently).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// For shardpoint's own readers (configs, MindSpore strategies): include it
// only where nlohmann/json is available.
#ifndef SHARDPOINT_IO_DETAIL_JSON_INPUT_HPP
#define SHARDPOINT_IO_DETAIL_JSON_INPUT_HPP

#include <cstddef>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <shardpoint/error.hpp>
#include <shardpoint/io/text.hpp>

namespace shardpoint::io::detail {

/// A pointer that counts how far the parser has read, so that a key can be
/// placed by line and column.
class counting_iterator {
public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  counting_iterator(const char* p, std::size_t* read) : p_(p), read_(read) {}
  reference operator*() const { return *p_; }
  counting_iterator& operator++() {
    ++p_;
    ++*read_;
    return *this;
  }
  counting_iterator operator++(int) {
    auto old = *this;
    ++*this;
    return old;
  }
  friend bool operator==(const counting_iterator& a, const counting_iterator& b) {
    return a.p_ == b.p_;
  }
  friend bool operator!=(const counting_iterator& a, const counting_iterator& b) {
    return a.p_ != b.p_;
  }

private:
  const char* p_;
  std::size_t* read_;
};

/// "line:column" of the byte before `offset` in `text` (1-based).
inline std::string json_place(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i + 1 < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

/// Where parse_json found what a later message may name, as "line:column"
/// (json_place): each key of an object that is a value of the root object,
/// by that value's key and its own (a sharding_info's node names), and each
/// value of a root array, by index (a list's entries).
struct json_places {
  std::map<std::pair<std::string, std::string>, std::string> inner_keys;
  std::vector<std::string> root_items;
};

/// `text` parsed as JSON of type `Json` (nlohmann::json or ordered_json).
/// bad_input_error "source: JSON <what>" for a syntax error or a number out
/// of range, "source:line:column: key 'k' appears twice in one object" for
/// a duplicate key. With `places`, where its keys and items are.
template <class Json>
Json parse_json(std::string_view text, const std::string& source, json_places* places = nullptr) {
  std::size_t read = 0;
  std::vector<std::map<std::string, std::size_t>> keys; // of each open object: where read
  std::string duplicate;
  std::string root_key;    // the root object's key being read
  bool root_array = false; // the root is an array
  const auto check = [&](int depth, typename Json::parse_event_t event, Json& parsed) {
    using E = typename Json::parse_event_t;
    if (places != nullptr) {
      if (depth == 0 && event == E::array_start) {
        root_array = true;
      } else if (root_array && depth == 1 &&
                 (event == E::object_start || event == E::array_start || event == E::value)) {
        places->root_items.push_back(json_place(text, read));
      } else if (event == E::key && depth == 1) {
        root_key = parsed.template get_ref<const std::string&>();
      } else if (event == E::key && depth == 2 && !root_array) {
        places->inner_keys.emplace(
            std::pair{root_key, parsed.template get_ref<const std::string&>()},
            json_place(text, read));
      }
    }
    if (event == E::object_start) {
      keys.emplace_back();
    } else if (event == E::object_end && !keys.empty()) {
      keys.pop_back();
    } else if (event == E::key && !keys.empty() && duplicate.empty()) {
      const auto& key = parsed.template get_ref<const std::string&>();
      if (const auto [first, fresh] = keys.back().emplace(key, read); !fresh) {
        duplicate = source + ":" + json_place(text, read) + ": key " + quote(key) +
                    " appears twice in one object (first at " + source + ":" +
                    json_place(text, first->second) + ")";
      }
    }
    return true;
  };
  Json root;
  try {
    root = Json::parse(counting_iterator(text.data(), &read),
                       counting_iterator(text.data() + text.size(), &read), check);
  } catch (const typename Json::exception& e) { // syntax, or a number out of range
    std::string msg = e.what();
    if (const auto p = msg.find("] "); p != std::string::npos) {
      msg = msg.substr(p + 2); // drop "[json.exception.parse_error.101] "
    }
    throw bad_input_error(source + ": JSON " + printable(msg));
  }
  if (!duplicate.empty()) {
    throw bad_input_error(duplicate);
  }
  return root;
}

} // namespace shardpoint::io::detail

#endif // SHARDPOINT_IO_DETAIL_JSON_INPUT_HPP
