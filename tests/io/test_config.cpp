// shardpoint::config on its own: no graph format, names through a lookup.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardpoint/error.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/io/detail/json_input.hpp>
#include <shardpoint/io/files.hpp>

#include "io_support.hpp"
#include <shardpoint/io/layout_file.hpp>

namespace config = shardpoint::config;
using entries = std::vector<config::entry>;

namespace {

const std::vector<std::string> names{"embed", "attn", "add1", "mlp", "add2"};

std::string_view name_of(std::size_t i) {
  return names[i];
}

using io_test::error_of;

} // namespace

TEST_CASE("shard.yaml list, mapping in YAML and JSON: the same entries") {
  const auto list = config::parse("- {node: add1, device: 0, stage: 0}\n"
                                  "- node: add2\n  device: 1\n  stage: 1\n",
                                  "list.yaml");
  REQUIRE(list.size() == 2);
  CHECK(list[0].node == "add1");
  CHECK(list[0].device == 0);
  CHECK(list[1].stage == 1);
  CHECK(list[1].where == "list.yaml:2:3");
  const auto yaml = config::parse("sharding_info: {add1: 0, add2: 1}\n"
                                  "pipelining_info: {add1: 0, add2: 1}\n",
                                  "map.yaml");
  const auto json = config::parse(R"({"sharding_info": {"add1": 0, "add2": 1},
                                      "pipelining_info": {"add1": 0, "add2": 1}})",
                                  "map.json", true);
  for (const auto* e : {&yaml, &json}) {
    REQUIRE(e->size() == 2);
    for (std::size_t k = 0; k < 2; ++k) {
      CHECK((*e)[k].node == list[k].node);
      CHECK((*e)[k].device == list[k].device);
      CHECK((*e)[k].stage == list[k].stage);
    }
  }
  const auto python = config::from_mappings({{"add1", 0}, {"add2", 1}}, {{"add2", 1}});
  REQUIRE(python.size() == 2);
  CHECK(python[0].device == 0);
  CHECK_FALSE(python[0].stage.has_value());
  CHECK(python[1].stage == 1);
}

TEST_CASE("--shard flags split at the last '='") {
  const auto e = config::parse_shard_flag("a=b=3:2");
  CHECK(e.node == "a=b");
  CHECK(e.device == 3);
  CHECK(e.stage == 2);
  CHECK(error_of([] { config::parse_shard_flag("x"); }) ==
        "--shard x: expected NODE=DEVICE[:STAGE]");
  CHECK(error_of([] { config::parse_shard_flag("a=1:-2"); }) ==
        "--shard a=1:-2: stage '-2' is not an integer in 0..65535");
  CHECK(error_of([] { config::parse_shard_flag("a=65536"); }) ==
        "--shard a=65536: device '65536' is not an integer in 0..65535");
  CHECK(config::parse_shard_flag("a=65535:65535").stage == 65535);
}

TEST_CASE("resolve through the caller's lookup, with suggestions") {
  const auto points =
      config::resolve(config::parse("- {node: mlp, device: 1}\n", "c.yaml"), names.size(), name_of);
  REQUIRE(points.size() == 1);
  CHECK(points[0].vertex == 3);
  CHECK(points[0].device == 1);
  CHECK(error_of([] {
          config::resolve(config::parse("- {node: ad1, device: 0}\n", "c.yaml"), names.size(),
                          name_of);
        }) == "c.yaml:1:3: no node is named 'ad1'; closest: 'add1', 'add2'");
  // Nothing near it: no hint (a trial's "no_such_node" was offered three
  // Constants, 9 edits away).
  CHECK(error_of([] {
          config::resolve(config::parse("- {node: no_such_node, device: 0}\n", "c.yaml"),
                          names.size(), name_of);
        }) == "c.yaml:1:3: no node is named 'no_such_node'");
  // A suggested name is escaped as every name is: a NUL in one cut the
  // message there (a trial's model had a node named "n\0" "6").
  const std::vector<std::string> odd{std::string("n\0"
                                                 "6",
                                                 3)};
  CHECK(error_of([&] {
          config::resolve({{"n6", 0, {}, "here"}}, 1,
                          [&](std::size_t i) -> std::string_view { return odd[i]; });
        }) == "here: no node is named 'n6'; closest: 'n\\x006'");
  const std::vector<std::string> twice{"a", "a"};
  CHECK(error_of([&] {
          config::resolve({{"a", 0, {}, "here"}}, 2,
                          [&](std::size_t i) -> std::string_view { return twice[i]; });
        }) == "here: node name 'a' belongs to 2 nodes");
  CHECK(error_of([] {
          config::resolve({{"mlp", 0, {}, "one"}, {"mlp", 1, {}, "two"}}, names.size(), name_of);
        }) == "two: node 'mlp' is listed twice (first at one)");
  CHECK(config::closest("mpl", {"mlp", "attn", ""}, 5) == std::vector<std::string>{"mlp", "attn"});
}

namespace {

// The textbook Levenshtein table, whole, as the reference for closest()'s
// banded and bounded search.
std::size_t full_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> t(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) {
    for (std::size_t j = 0; j <= b.size(); ++j) {
      t[i][j] = i == 0   ? j
                : j == 0 ? i
                         : std::min({t[i - 1][j] + 1, t[i][j - 1] + 1,
                                     t[i - 1][j - 1] + (a[i - 1] != b[j - 1] ? 1U : 0U)});
    }
  }
  return t[a.size()][b.size()];
}

} // namespace

TEST_CASE("closest: the same names as a whole Levenshtein table sorted, on random names") {
  std::mt19937 rng(20261126);
  const auto word = [&](std::size_t longest) {
    std::string w(std::uniform_int_distribution<std::size_t>(0, longest)(rng), 'a');
    for (auto& ch : w) {
      ch = static_cast<char>('a' + std::uniform_int_distribution<int>(0, 2)(rng));
    }
    return w;
  };
  for (int round = 0; round < 400; ++round) {
    const auto name = word(12);
    std::vector<std::string> pool;
    for (int k = std::uniform_int_distribution<int>(0, 12)(rng); k > 0; --k) {
      pool.push_back(word(14));
    }
    const std::vector<std::string_view> views(pool.begin(), pool.end());
    std::vector<std::pair<std::size_t, std::string>> reference;
    for (const auto& c : pool) {
      if (!c.empty()) {
        reference.emplace_back(full_distance(name, c), c);
      }
    }
    std::sort(reference.begin(), reference.end());
    for (std::size_t most : {0U, 1U, 3U, 20U}) {
      std::vector<std::string> expected;
      for (std::size_t i = 0; i < std::min(most, reference.size()); ++i) {
        expected.push_back(reference[i].second);
      }
      INFO("name '", name, "', most ", most);
      CHECK(config::closest(name, views, most) == expected);
      for (std::size_t within : {0U, 1U, 4U, 8U}) {
        std::vector<std::string> near;
        for (std::size_t i = 0; i < reference.size() && near.size() < most; ++i) {
          if (reference[i].first <= within) {
            near.push_back(reference[i].second);
          }
        }
        INFO("within ", within);
        CHECK(config::closest(name, views, most, within) == near);
      }
    }
  }
  // A near match of 100,000 characters in O(d * length), not O(length^2).
  const std::string huge(100'000, 'n');
  const std::string near = huge + "x";
  CHECK(config::closest(near, {"b", huge, "nnn"}, 2) == std::vector<std::string>{huge, "nnn"});
}

TEST_CASE("shard.yaml written back reads as the same points, odd names quoted") {
  const entries in{{"resnetv17_stage1__plus0", 0, 0, ""},
                   {"a: b", 1, std::nullopt, ""},
                   {"- dash", std::nullopt, 2, ""}};
  const std::string text = config::to_shard_yaml(in);
  CHECK(text.rfind("- node: resnetv17_stage1__plus0\n  device: 0\n  stage: 0\n", 0) == 0);
  const auto back = config::parse(text, "out.yaml");
  REQUIRE(back.size() == in.size());
  for (std::size_t k = 0; k < in.size(); ++k) {
    CHECK(back[k].node == in[k].node);
    CHECK(back[k].device == in[k].device);
    CHECK(back[k].stage == in[k].stage);
  }
}

TEST_CASE("line breaks are read as YAML reads them; names with controls are written escaped") {
  // Found by fuzz_config (tests/fuzz/regressions/fuzz_config): yaml-cpp took
  // a lone CR as part of a name, and wrote that name back as a plain scalar
  // whose last CR, before the line feed, it then read as a line break.
  const auto one = [](const std::string& text) {
    const auto e = config::parse(text, "c.yaml");
    REQUIRE(e.size() == 1);
    return e.front().node;
  };
  CHECK(one("- {node: a\r\r\r, device: 0}\n") == "a");    // CRs end the plain scalar
  CHECK(one("- {node: a\rb, device: 0}\n") == "a b");     // a line break folds to a space
  CHECK(one("- node: ab\r  device: 0\r") == "ab");        // old Mac line ends
  CHECK(one("- node: ab\r\n  device: 0\r\n") == "ab");    // Windows line ends
  CHECK(one("- {node: \"a\\rb\", device: 0}") == "a\rb"); // an escaped CR is content
  // Every control, DEL, C1, the separators and the BOM come back exactly,
  // double-quoted with escapes; ordinary names stay plain.
  const entries in{{"a\rb", 0, std::nullopt, ""},
                   {"ab\r", 1, std::nullopt, ""},
                   {"a\tb", 2, std::nullopt, ""},
                   {"a\x7f", 3, std::nullopt, ""},
                   {"a\xc2\x85", 4, std::nullopt, ""},
                   {"a\xe2\x80\xa8", 5, std::nullopt, ""},
                   {"\xef\xbb\xbf"
                    "a",
                    6, std::nullopt, ""},
                   {"plain/name_1", 7, std::nullopt, ""}};
  const std::string text = config::to_shard_yaml(in);
  CHECK(text.find("node: \"a\\rb\"") != std::string::npos);
  CHECK(text.find("node: plain/name_1\n") != std::string::npos);
  for (const std::string ends : {"\n", "\r\n"}) {
    std::string again = text;
    for (std::size_t p = 0; (p = again.find('\n', p)) != std::string::npos; p += ends.size()) {
      again.replace(p, 1, ends);
    }
    const auto back = config::parse(again, "out.yaml");
    REQUIRE(back.size() == in.size());
    for (std::size_t k = 0; k < in.size(); ++k) {
      CHECK(back[k].node == in[k].node);
      CHECK(back[k].device == in[k].device);
    }
  }
  std::vector<shardpoint::io::layout_choice> layout(2);
  layout[0].name = "w\r";
  layout[0].how = shardpoint::io::layout_choice::kind::row;
  layout[1].name = "w\x7f";
  layout[1].how = shardpoint::io::layout_choice::kind::column;
  const auto back = shardpoint::io::parse_layout(shardpoint::io::to_layout_yaml(layout), "l.yaml");
  REQUIRE(back.size() == 2);
  CHECK(back[0].name == "w\r");
  CHECK(back[1].name == "w\x7f");
}

TEST_CASE("a layout's long names come back, however long their escaped form") {
  // Found by the CI's fuzz_config: yaml-cpp's emitter wrote a name of
  // control characters as an implicit key longer than the 1,024 characters
  // YAML allows one, and its parser refused the file ("illegal map value").
  using shardpoint::io::layout_choice;
  std::vector<layout_choice> layout;
  for (const std::string& name :
       {std::string(700, '\t'), std::string(700, '"'), std::string(300, '\x01'),
        std::string(251, '\x7f'), std::string(1100, 'a'), std::string(250, '\t') + "w"}) {
    layout.push_back({});
    layout.back().name = name;
    layout.back().how = layout_choice::kind::tuple;
    layout.back().shard = {2, 1};
  }
  const auto back = shardpoint::io::parse_layout(shardpoint::io::to_layout_yaml(layout), "l.yaml");
  REQUIRE(back.size() == layout.size());
  for (std::size_t k = 0; k < layout.size(); ++k) {
    CHECK(back[k].name == layout[k].name);
    CHECK(back[k].shard == layout[k].shard);
  }
}

TEST_CASE("bad configs: one line naming the place") {
  CHECK(error_of([] { config::parse("   \n", "e.yaml"); }) ==
        "'e.yaml': the sharding config is empty");
  // Found by fuzz_config: a number JSON cannot hold escaped as a crash.
  CHECK(error_of([] { config::parse("{\"sharding_info\": {\"a\": 1e999}}", "c.json", true); }) ==
        "c.json: JSON number overflow parsing '1e999'");
  CHECK(error_of([] { config::parse("- {node: a}\n", "c.yaml"); }) ==
        "c.yaml:1:3: entry for node 'a' has neither device nor stage");
  CHECK(error_of([] {
          config::from_mappings({{"a", -1}}, {});
        }) == "sharding_info/pipelining_info: sharding_info['a']: device '-1' is not an integer in "
              "0..65535");
  // A name is quoted as every name: escaped, and cut at 200 characters (a
  // trial's 10^6-character name came back whole, twice, controls raw).
  const std::string error = error_of([] {
    config::from_mappings({{"a\x07\u202e" + std::string(1000000, 'x'), -1}}, {});
  });
  CHECK(error.size() < 1000);
  CHECK(error.find("sharding_info['a\\x07\\u202exxx") != std::string::npos);
  CHECK(error.find('\x07') == std::string::npos);
}

TEST_CASE("YAML that is not UTF-8, or has control characters, is refused where they are") {
  // Found by fuzz_config: yaml-cpp reads such bytes (a NUL it even turns
  // into a stray 0xA0), and its writer gives back U+FFFD in their place, so
  // a name would not survive a round trip.
  CHECK(error_of([] {
          config::parse("- {node: a, device: 0}\n- {node: b\xfe, device: 1}\n", "c.yaml");
        }) == "c.yaml:2:11: not UTF-8 text");
  CHECK(error_of([] { shardpoint::io::parse_layout("w1: column\nw2\xc0\xaf: row\n", "l.yaml"); }) ==
        "l.yaml:2:3: not UTF-8 text"); // an overlong '/'
  const auto check = [](const std::string& text) {
    return error_of([&] { shardpoint::io::check_yaml_text(text, "t"); });
  };
  CHECK(check("plain ascii\n") == "no error");
  CHECK(check("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == "no error"); // é € 😀
  CHECK(check("\xed\xa0\x80") == "t:1:1: not UTF-8 text");            // a surrogate
  CHECK(check("\xf4\x90\x80\x80") == "t:1:1: not UTF-8 text");        // past U+10FFFF
  CHECK(check("ab\xe2\x82") == "t:1:3: not UTF-8 text");              // cut short
  CHECK(check("\x80") == "t:1:1: not UTF-8 text");                    // a lone continuation
  CHECK(check(std::string("a\n b\0c", 6)) ==
        "t:2:3: control character U+0000, which YAML does not allow");
  CHECK(check("\x01") == "t:1:1: control character U+0001, which YAML does not allow");
  // Found by fuzz_config: names holding noncharacters, which yaml-cpp writes
  // back as U+FFFD, from JSON escapes or YAML's.
  CHECK(error_of([] { config::parse("{\"sharding_info\": {\"a\\uFFFF\": 1}}", "c.json", true); }) ==
        "c.json:1:28: sharding_info['a\xEF\xBF\xBF']: the name 'a\xEF\xBF\xBF' holds U+FFFF, a "
        "noncharacter a YAML file cannot hold");
  // JSON configs are placed by line and column too, as YAML ones (a trial:
  // "c5.json: pipelining_info['layer9/x']: no node is named ..." said no line).
  const auto placed = config::parse("{\"sharding_info\": {\"a\": 0},\n \"pipelining_info\": "
                                    "{\"a\": 0,\n  \"b\": 1}}",
                                    "c.json", true);
  std::map<std::string, std::set<std::string>> where;
  for (const auto& e : placed) {
    where[e.node].insert(e.where);
  }
  CHECK(where["b"] == std::set<std::string>{"c.json:3:5: pipelining_info['b']"});
  const auto listed = config::parse("[{\"node\": \"a\", \"stage\": 0},\n {\"node\": \"b\", "
                                    "\"stage\": 1}]",
                                    "l.json", true);
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].where == "l.json:1:2: entry 1");
  CHECK(listed[1].where == "l.json:2:2: entry 2");
  // A NUL in a JSON name: escaped where the line says where, so nothing
  // cuts the line (a trial: "c.json: pipelining_info.lay" and no reason).
  const auto nul = config::parse("{\"sharding_info\": {\"lay\\u0000er\": 0}}", "c.json", true);
  REQUIRE(nul.size() == 1);
  CHECK(nul[0].node == std::string("lay\0er", 6));
  CHECK(nul[0].where == "c.json:1:32: sharding_info['lay\\x00er']");
  CHECK(
      error_of([] { shardpoint::io::parse_layout("\"w\\uFFFE\": row\n", "l.yaml"); }) ==
      "l.yaml:1:1: the name 'w\xEF\xBF\xBE' holds U+FFFE, a noncharacter a YAML file cannot hold");
  // DEL and C1 controls yaml-cpp reads and writes as they are (fuzz_config).
  CHECK(check("\x7f\xc2\x9b") == "no error");
  CHECK(check("a\tb\r\n\xc2\x85\xc2\xa0") == "no error"); // tab, CR LF, NEL, NBSP
}

TEST_CASE("a key twice, or a second document, is refused where it is, not read as the last one") {
  // yaml-cpp and nlohmann::json both keep one of two equal keys silently; a
  // config that says two things must not be read as one of them.
  CHECK(error_of([] {
          config::parse("sharding_info: {a: 0}\nsharding_info: {b: 1}\n", "c.yaml");
        }) == "c.yaml:2:1: key 'sharding_info' appears twice in one mapping (first at c.yaml:1:1)");
  CHECK(error_of([] { config::parse("- {node: a, device: 0, device: 1}\n", "c.yaml"); }) ==
        "c.yaml:1:24: key 'device' appears twice in one mapping (first at c.yaml:1:13)");
  CHECK(error_of([] {
          config::parse("- {node: a, device: 0}\n---\n- {node: b, device: 0}\n", "c.yaml");
        }) == "c.yaml:2:1: a second YAML document; the file must hold one (no '---' after it)");
  CHECK(error_of([] {
          config::parse("{\"sharding_info\": {\"a\": 0, \"a\": 1}}", "c.json", true);
        }) == "c.json:1:30: key 'a' appears twice in one object (first at c.json:1:22)");
  CHECK(error_of([] { shardpoint::io::parse_layout("w: row\nw: column\n", "l.yaml"); }) ==
        "l.yaml:2:1: key 'w' appears twice in one mapping (first at l.yaml:1:1)");
  // Found by fuzz_config: yaml-cpp's LoadAll never ends on an anchor before a
  // flow entry at the top (empty documents without end, 2 GB in seconds).
  CHECK(error_of([] { config::parse("&sh0,_b", "c.yaml"); }) ==
        "c.yaml:1:5: a second YAML document; the file must hold one (no '---' after it)");
  // One document, and the same key in different mappings, are fine.
  CHECK(error_of([] {
          config::parse("---\n- {node: a, device: 0}\n- {node: b, device: 0}\n", "c.yaml");
        }) == "no error");
}

TEST_CASE("aliases that repeat nodes without end are refused before anything walks them") {
  // "Billion laughs": each level's anchor aliased ten times by the next, a
  // few hundred bytes standing for 10^12 nodes; every reader walked them
  // all (days for this file), to say at the end the key a0 is unknown.
  std::string bomb = "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n";
  for (int level = 1; level <= 11; ++level) {
    const std::string below = "*a" + std::to_string(level - 1);
    bomb += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int k = 0; k < 10; ++k) {
      bomb += (k > 0 ? "," : "") + below;
    }
    bomb += "]\n";
  }
  bomb += "sharding_info: *a11\n";
  const auto refused = error_of([&] { config::parse(bomb, "c.yaml"); });
  CHECK(refused.starts_with("c.yaml:"));
  CHECK(refused.ends_with(": its aliases repeat nodes more than 1000000 times (an alias bomb?)"));
  CHECK(error_of([&] { shardpoint::io::parse_layout(bomb, "l.yaml"); }) ==
        "l.yaml" + refused.substr(6));
  // Aliases a file could mean are read as ever, and a few levels of them.
  CHECK(error_of([] {
          config::parse("- {node: a, device: &d 0, stage: &s 0}\n- {node: b, device: *d, "
                        "stage: *s}\n",
                        "c.yaml");
        }) == "no error");
  CHECK(error_of([&] { config::parse(bomb.substr(0, bomb.find("a5:")), "c.yaml"); }) ==
        "c.yaml:1:1: unknown key 'a0' (expected sharding_info, pipelining_info)");
}

TEST_CASE("JSON read as nlohmann reads it, each key's place found, in one pass however large") {
  namespace d = shardpoint::io::detail;
  // A random document against nlohmann's own parser: the same value, key
  // order kept (ordered_json), keys sorted (json).
  std::mt19937 rng(20261130);
  const auto random_value = [&](auto& self, int depth) -> std::string {
    const int kind = std::uniform_int_distribution<int>(0, depth > 3 ? 4 : 6)(rng);
    switch (kind) {
    case 0:
      return "null";
    case 1:
      return rng() % 2 != 0 ? "true" : "false";
    case 2:
      return std::to_string(static_cast<int>(rng() % 2000) - 1000);
    case 3:
      return std::to_string(rng() % 1000) + ".5e" + std::to_string(rng() % 5);
    case 4:
      return "\"s" + std::to_string(rng() % 100) + "\\u00e9\"";
    case 5: {
      std::string out = "[";
      for (int i = static_cast<int>(rng() % 5); i > 0; --i) {
        out += self(self, depth + 1) + (i > 1 ? ",\n" : "");
      }
      return out + "]";
    }
    default: {
      std::string out = "{";
      const int n = static_cast<int>(rng() % 6);
      for (int i = 0; i < n; ++i) { // distinct keys, in no order
        out += "\"k" + std::to_string(n - i) + "_" + std::to_string(rng() % 7) + std::to_string(i) +
               "\": " + self(self, depth + 1) + (i + 1 < n ? ", " : "");
      }
      return out + "}";
    }
    }
  };
  for (int round = 0; round < 300; ++round) {
    const std::string text = random_value(random_value, 0);
    CAPTURE(text);
    CHECK(d::parse_json<nlohmann::ordered_json>(text, "r.json") ==
          nlohmann::ordered_json::parse(text));
    CHECK(d::parse_json<nlohmann::json>(text, "r.json") == nlohmann::json::parse(text));
  }
  // One object of 50,000 members, objects themselves (a MindSpore strategy
  // of as many weights: nlohmann's callback parser took minutes on 10^5),
  // then the same with its last key given again.
  constexpr int n = 50000;
  std::string big = "{\"items\": {\n";
  for (int i = 0; i < n; ++i) {
    big += "\"w" + std::to_string(n - i) + "\": {\"dev_matrix\": [" + std::to_string(i) + "]}" +
           (i + 1 < n ? ",\n" : "\n");
  }
  d::json_places places;
  const auto j = d::parse_json<nlohmann::ordered_json>(big + "}}", "big.json", &places);
  const auto& items = j.at("items");
  REQUIRE(items.size() == static_cast<std::size_t>(n));
  int i = 0;
  for (const auto& [key, value] : items.items()) { // in the file's order
    REQUIRE(key == "w" + std::to_string(n - i));
    REQUIRE(value.at("dev_matrix").at(0) == i);
    ++i;
  }
  REQUIRE(places.inner_keys.size() == static_cast<std::size_t>(n));
  for (const int k : {0, 1, n / 2, n - 1}) { // member k sits on line k + 2
    const std::string key = "w" + std::to_string(n - k);
    CHECK(places.inner_keys.at({"items", key}) ==
          std::to_string(k + 2) + ":" + std::to_string(key.size() + 2)); // its closing quote
  }
  CHECK(error_of([&] {
          d::parse_json<nlohmann::ordered_json>(big + ",\"w1\": 0}}", "big.json");
        }) == "big.json:" + std::to_string(n + 2) + ":5: key 'w1' appears twice in one object " +
                  "(first at big.json:" + std::to_string(n + 1) + ":4)");
  // A root array's items, placed.
  std::string list = "[\n";
  for (int k = 0; k < n; ++k) {
    list += "  {\"node\": \"n" + std::to_string(k) + "\"}" + (k + 1 < n ? ",\n" : "\n");
  }
  d::json_places at;
  (void)d::parse_json<nlohmann::json>(list + "]", "l.json", &at);
  REQUIRE(at.root_items.size() == static_cast<std::size_t>(n));
  CHECK(at.root_items[0] == "2:3");
  CHECK(at.root_items[n - 1] == std::to_string(n + 1) + ":3");
  // A syntax error and a number out of range, said as before.
  CHECK(error_of([] { d::parse_json<nlohmann::json>("{\"a\": }", "e.json"); }) ==
        "e.json: JSON parse error at line 1, column 7: syntax error while parsing value - "
        "unexpected '}'; expected '[', '{', or a literal");
  CHECK(error_of([] {
          d::parse_json<nlohmann::json>("[1e999]", "e.json");
        }).starts_with("e.json: JSON number overflow parsing '1e999'"));
}
