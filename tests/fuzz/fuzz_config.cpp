// Fuzzes the config readers: the sharding config (YAML and JSON), the layout
// file, and MindSpore's strategy (protobuf and JSON). The first byte picks
// the reader, the rest is the file. A reader may only accept, or refuse with
// a shardpoint::error (anything else escaping is a crash here); what it
// accepts must come back the same through the matching writer (the
// differential: our writer against our reader, where no second reader of
// the format exists).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <shardpoint/error.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/io/layout_file.hpp>
#include <shardpoint/onnx/weight_files.hpp>

namespace {

[[noreturn]] void disagree(const char* what) {
  std::fprintf(stderr, "fuzz_config: disagreement: %s\n", what);
  std::abort();
}

// The writer's output read back: a refusal there is the writer's fault.
template <class Read>
auto reread(Read read) {
  try {
    return read();
  } catch (const shardpoint::error& e) {
    std::fprintf(stderr, "fuzz_config: %s\n", e.what());
    disagree("the reader refuses what the writer wrote");
  }
}

namespace config = shardpoint::config;
namespace io = shardpoint::io;
namespace weights = shardpoint::weights;

void sharding_config(std::string_view text, bool json) {
  const auto entries = config::parse(text, json ? "fuzz.json" : "fuzz.yaml", json);
  const auto again =
      reread([&] { return config::parse(config::to_shard_yaml(entries), "again.yaml"); });
  if (again.size() != entries.size()) {
    disagree("to_shard_yaml lost or added entries");
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (again[i].node != entries[i].node || again[i].device != entries[i].device ||
        again[i].stage != entries[i].stage) {
      disagree("to_shard_yaml changed an entry");
    }
  }
}

void layout(std::string_view text) {
  const auto choices = io::parse_layout(text, "fuzz.yaml");
  const auto again =
      reread([&] { return io::parse_layout(io::to_layout_yaml(choices), "again.yaml"); });
  if (again.size() != choices.size()) {
    disagree("to_layout_yaml lost or added choices");
  }
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (again[i].name != choices[i].name || again[i].how != choices[i].how ||
        again[i].shard != choices[i].shard) {
      disagree("to_layout_yaml changed a choice");
    }
  }
}

void strategy(std::string_view data, bool json) {
  const auto s = weights::parse_strategy(data, json ? "fuzz.json" : "fuzz.ckpt", json);
  const auto again = reread([&] {
    return json ? weights::parse_strategy(weights::strategy_to_json(s), "again.json", true)
                : weights::parse_strategy(weights::strategy_to_protobuf(s), "again.ckpt", false);
  });
  if (again.stage != s.stage || again.parameters.size() != s.parameters.size()) {
    disagree("the strategy writer changed the stage or the parameters");
  }
  for (std::size_t i = 0; i < s.parameters.size(); ++i) {
    if (again.parameters[i].stage != s.parameters[i].stage ||
        !(again.parameters[i].layout == s.parameters[i].layout)) {
      disagree("the strategy writer changed a parameter");
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 5) {
    case 0:
      sharding_config(text, false);
      break;
    case 1:
      sharding_config(text, true);
      break;
    case 2:
      layout(text);
      break;
    case 3:
      strategy(text, false);
      break;
    default:
      strategy(text, true);
      break;
    }
  } catch (const shardpoint::error&) {
    // A refusal: what the command line prints as one line and exit 2.
  }
  return 0;
}
