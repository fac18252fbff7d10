// Fuzzes the config readers: the sharding config (YAML and JSON), the layout
// file, MindSpore's strategy (protobuf and JSON), and the weight files
// (safetensors and MindSpore checkpoints: read_weights). The first byte picks
// the reader, the rest is the file. A reader may only accept, or refuse with
// a shardpoint::error (anything else escaping is a crash here); what it
// accepts must come back the same through the matching writer (the
// differential: our writer against our reader, where no second reader of
// the format exists) -- for a strategy, the same slice on every rank.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <shardpoint/error.hpp>
#include <shardpoint/io/config.hpp>
#include <shardpoint/io/layout_file.hpp>
#include <shardpoint/onnx/weight_files.hpp>
#include <shardpoint/tensor_layout.hpp>

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

// The layouts shardpoint writes: one device axis a dimension at most, no
// optimizer sharding, no param_split_shape, field 0 (MindSpore's other forms
// are read, never written).
bool writable(const shardpoint::tensor_layout& l) {
  for (const auto& entry : l.tensor_map) {
    if (entry.size() != 1) {
      return false;
    }
  }
  return l.opt_shard_step == 0 && l.opt_shard_size == 0 && l.split_shape.empty() &&
         l.indices_offset.empty() && l.field == 0 && l.devices <= 4096;
}

// The slices every rank holds of a tensor whose dimensions are `l`'s parts
// (or its whole shape when known): what a layout means.
std::vector<shardpoint::tensor_slice> meaning(shardpoint::tensor_layout l,
                                              const std::vector<std::int64_t>& shape) {
  l.shape = shape;
  l.split_shape.clear();
  std::vector<shardpoint::tensor_slice> out;
  const auto placed = shardpoint::place(l);
  for (std::int64_t r = 0; r < l.devices; ++r) {
    out.push_back(shardpoint::slice_of(placed, shape, r));
  }
  return out;
}

void strategy(std::string_view data, bool json) {
  const auto s = weights::parse_strategy(data, json ? "fuzz.json" : "fuzz.ckpt", json);
  weights::stage_strategy kept{s.stage, true, {}, s.file};
  for (const auto& p : s.parameters) {
    if (writable(p.layout) && (!json || p.layout.shape_known)) {
      kept.parameters.push_back(p);
    }
  }
  if (kept.parameters.empty()) {
    return;
  }
  std::vector<weights::stage_strategy> written;
  written.push_back(reread([&] {
    return json ? weights::parse_strategy(weights::strategy_to_json(kept), "again.json", true)
                : weights::parse_strategy(weights::strategy_to_protobuf(kept), "again.ckpt", false);
  }));
  if (!json) {
    written.push_back(reread([&] {
      return weights::parse_strategy(
          weights::strategy_to_protobuf(kept, weights::layout_form::tutorial), "again.ckpt", false);
    }));
  }
  for (const auto& again : written) {
    if (again.stage != kept.stage || again.parameters.size() != kept.parameters.size()) {
      disagree("the strategy writer changed the stage or the parameters");
    }
    std::map<std::string, const weights::strategy_entry*> by_name;
    for (const auto& p : again.parameters) {
      by_name[p.layout.name] = &p;
    }
    for (const auto& p : kept.parameters) {
      const auto it = by_name.find(p.layout.name);
      if (it == by_name.end() || it->second->stage != p.stage ||
          it->second->layout.devices != p.layout.devices) {
        disagree("the strategy writer lost or moved a parameter");
      }
      // The same slices for every rank, on the whole shape or on the parts.
      std::vector<std::int64_t> shape = p.layout.shape;
      if (!p.layout.shape_known) {
        shape = p.layout.shard;
      }
      std::int64_t elements = 1;
      bool small = true;
      for (const auto d : shape) {
        small = small && d >= 0 && d <= 4096 && !__builtin_mul_overflow(elements, d, &elements) &&
                elements <= (1 << 20);
      }
      if (!small) {
        continue;
      }
      try {
        const auto want = meaning(p.layout, shape);
        if (meaning(it->second->layout, shape) != want) {
          disagree("the strategy writer changed which slice a rank holds");
        }
      } catch (const shardpoint::layout_error&) {
        // a shape the layout cannot cut (read, never placed): nothing to compare
      }
    }
  }
}

// Whole weights as read_weights reads them, written back as safetensors and
// as a MindSpore checkpoint (in $TMPDIR) and read again: the same tensors,
// shapes, types and bytes.
void weight_file(std::string_view bytes) {
  const auto tensors = weights::parse_weights(std::string(bytes), "fuzz.weights");
  std::vector<weights::tensor_source> sources;
  for (const auto& [name, t] : tensors) {
    sources.push_back({name, t.shape, t.onnx_type, t.data.size(),
                       [&t = t](const auto& sink) { sink(t.data.data(), t.data.size()); }});
  }
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto d = std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
             ("shardpoint-fuzz-config-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] { // a normal exit (the replay ctest); bench/fuzz.sh removes its TMPDIR
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    });
    return d;
  }();
  for (const bool safetensors : {true, false}) {
    const auto file = dir / (safetensors ? "w.safetensors" : "w.ckpt");
    try {
      if (safetensors) {
        weights::write_safetensors(file, sources);
      } else {
        weights::write_checkpoint(file, sources);
      }
    } catch (const shardpoint::unsupported_error&) {
      continue; // a type the other format has no name for, or a name safetensors cannot hold
    }
    const auto again = reread([&] { return weights::read_weights(file); });
    std::filesystem::remove(file);
    if (again.size() != tensors.size()) {
      disagree("a weight file's writer lost or added tensors");
    }
    for (const auto& [name, t] : tensors) {
      const auto it = again.find(name);
      if (it == again.end() || it->second.shape != t.shape || it->second.onnx_type != t.onnx_type ||
          it->second.data != t.data) {
        disagree("a weight file's writer changed a tensor");
      }
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
    switch (data[0] % 6) {
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
    case 4:
      strategy(text, true);
      break;
    default:
      weight_file(text);
      break;
    }
  } catch (const shardpoint::error&) {
    // A refusal: what the command line prints as one line and exit 2.
  }
  return 0;
}
