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
#include <utility>
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

/// "line:column" (1-based) of the byte before each offset in `text` it is
/// given, offsets that never decrease, each found from the last: O(text)
/// for all of them.
class json_placer {
public:
  explicit json_placer(std::string_view text) : text_(text) {}
  std::string operator()(std::size_t offset) {
    for (; i_ + 1 < offset && i_ < text_.size(); ++i_) {
      if (text_[i_] == '\n') {
        ++line_;
        column_ = 1;
      } else {
        ++column_;
      }
    }
    return std::to_string(line_) + ":" + std::to_string(column_);
  }

private:
  std::string_view text_;
  std::size_t i_ = 0, line_ = 1, column_ = 1;
};

/// "line:column" of the byte before `offset` in `text` (1-based).
inline std::string json_place(std::string_view text, std::size_t offset) {
  return json_placer(text)(offset);
}

/// Where parse_json found what a later message may name, as "line:column"
/// (json_place): each key of an object that is a value of the root object,
/// by that value's key and its own (a sharding_info's node names), and each
/// value of a root array, by index (a list's entries).
struct json_places {
  std::map<std::pair<std::string, std::string>, std::string> inner_keys;
  std::vector<std::string> root_items;
};

/// parse_json's SAX handler (nlohmann's SAX interface): builds the document
/// as nlohmann's own DOM parser would, notes each open object's keys to
/// find one given twice, and where `places` asks. Linear in the document:
/// nlohmann's callback parser, which this replaces, walks an object's
/// members at the end of each member that is an object, and its
/// ordered_json looks each key up among those before it -- quadratic in
/// the members of one object, minutes for a MindSpore strategy of 10^5
/// weights. A key is appended without that lookup (a key given twice is an
/// error anyway).
template <class Json>
class json_reader {
public:
  using number_integer_t = typename Json::number_integer_t;
  using number_unsigned_t = typename Json::number_unsigned_t;
  using number_float_t = typename Json::number_float_t;
  using string_t = typename Json::string_t;
  using binary_t = typename Json::binary_t;

  json_reader(std::string_view text, const std::string& source, const std::size_t& read,
              json_places* places)
      : text_(text), source_(source), read_(read), places_(places), placer_(text) {}

  Json root;
  std::string duplicate; ///< the first key given twice, said

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(number_integer_t v) { return value(v); }
  bool number_unsigned(number_unsigned_t v) { return value(v); }
  bool number_float(number_float_t v, const string_t&) { return value(v); }
  bool string(string_t& v) { return value(std::move(v)); }
  bool binary(binary_t& v) { return value(Json::binary(std::move(v))); }
  bool start_object(std::size_t) {
    open(Json::value_t::object);
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) {
    const std::size_t depth = stack_.size();
    if (places_ != nullptr) {
      if (depth == 1 && !root_array_) {
        root_key_ = k;
      } else if (depth == 2 && !root_array_) {
        places_->inner_keys.emplace(std::pair{root_key_, k}, placer_(read_));
      }
    }
    if (const auto [first, fresh] = keys_.back().emplace(k, read_); !fresh && duplicate.empty()) {
      duplicate = source_ + ":" + json_place(text_, read_) + ": key " + quote(k) +
                  " appears twice in one object (first at " + source_ + ":" +
                  json_place(text_, first->second) + ")";
    }
    auto& object = stack_.back()->template get_ref<typename Json::object_t&>();
    if constexpr (requires { typename Json::object_t::Container; }) { // ordered_json
      auto& members = static_cast<typename Json::object_t::Container&>(object);
      members.emplace_back(std::move(k), nullptr);
      member_ = &members.back().second;
    } else {
      member_ = &object[std::move(k)];
    }
    return true;
  }
  bool end_object() {
    keys_.pop_back();
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    if (stack_.empty()) {
      root_array_ = true;
    }
    open(Json::value_t::array);
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e; // (as nlohmann's DOM parser does)
  }

private:
  // Where the next value goes: the root, the open array's end, or the
  // member the last key made.
  Json* place(Json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    if (stack_.back()->is_array()) {
      if (places_ != nullptr && root_array_ && stack_.size() == 1) {
        places_->root_items.push_back(placer_(read_));
      }
      auto& items = stack_.back()->template get_ref<typename Json::array_t&>();
      items.push_back(std::move(v));
      return &items.back();
    }
    *member_ = std::move(v);
    return member_;
  }
  template <class V>
  bool value(V&& v) {
    place(Json(std::forward<V>(v)));
    return true;
  }
  void open(typename Json::value_t type) { stack_.push_back(place(Json(type))); }

  std::string_view text_;
  const std::string& source_;
  const std::size_t& read_;
  json_places* places_;
  json_placer placer_;
  std::vector<Json*> stack_; // the open objects and arrays (a parent grows only once they close)
  std::vector<std::map<string_t, std::size_t>> keys_; // of each open object: where read
  Json* member_ = nullptr;
  std::string root_key_;
  bool root_array_ = false;
};

/// `text` parsed as JSON of type `Json` (nlohmann::json or ordered_json).
/// bad_input_error "source: JSON <what>" for a syntax error or a number out
/// of range, "source:line:column: key 'k' appears twice in one object" for
/// a duplicate key. With `places`, where its keys and items are. Linear in
/// the text (json_reader).
template <class Json>
Json parse_json(std::string_view text, const std::string& source, json_places* places = nullptr) {
  std::size_t read = 0;
  json_reader<Json> reader(text, source, read, places);
  try {
    Json::sax_parse(counting_iterator(text.data(), &read),
                    counting_iterator(text.data() + text.size(), &read), &reader);
  } catch (const typename Json::exception& e) { // syntax, or a number out of range
    std::string msg = e.what();
    if (const auto p = msg.find("] "); p != std::string::npos) {
      msg = msg.substr(p + 2); // drop "[json.exception.parse_error.101] "
    }
    throw bad_input_error(source + ": JSON " + printable(msg));
  }
  if (!reader.duplicate.empty()) {
    throw bad_input_error(reader.duplicate);
  }
  return std::move(reader.root);
}

} // namespace shardpoint::io::detail

#endif // SHARDPOINT_IO_DETAIL_JSON_INPUT_HPP
