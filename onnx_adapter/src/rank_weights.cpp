// The weights each rank loads, cut from whole weights and merged back
// (procedure: rank_weights.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <shardpoint/io/files.hpp>
#include <shardpoint/onnx/graph.hpp>
#include <shardpoint/onnx/rank_weights.hpp>
#include <shardpoint/onnx/tensor_data.hpp>
#include <shardpoint/tensor_layout.hpp>

namespace shardpoint::onnx {
namespace fs = std::filesystem;
using detail::tuple_text;

// ---- strategy folders -----------------------------------------------------------

std::vector<weights::stage_strategy> read_strategies(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw bad_input_error(io::quote(folder.string()) + ": no such strategy folder");
  }
  // What shardpoint wrote here must still be here: a strategy file missing
  // from a folder it wrote means a stage's weights would be left out.
  for (const auto& [name, print] : io::recorded_fingerprints(folder)) {
    if (!fs::exists(folder / name, ec)) {
      throw bad_input_error(io::quote((folder / name).string()) +
                            ": missing, though shardpoint wrote it into this strategy folder "
                            "(its manifest lists it)");
    }
  }
  std::map<int, weights::stage_strategy> by_stage;
  std::map<int, std::string> file_of;
  std::vector<fs::path> files; // in name order: the same folder, the same message
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string name = e.path().filename().string();
    const auto ext = e.path().extension();
    if (name.front() != '.' && (ext == ".ckpt" || ext == ".json")) {
      io::require_file_in_folder(folder, e.path(), "strategy file");
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    auto s = weights::read_strategy(path);
    if (s.parameters.empty()) {
      continue; // a stage without weights (an older shardpoint wrote such files)
    }
    if (by_stage.count(s.stage)) {
      throw bad_input_error(io::quote(folder.string()) + ": two strategy files for stage " +
                            std::to_string(s.stage) + ", " + io::quote(file_of[s.stage]) + " and " +
                            io::quote(name) +
                            (s.stage_known ? ""
                                           : " (a file without parallel_strategy_item is "
                                             "taken as stage 0)"));
    }
    file_of[s.stage] = name;
    by_stage.emplace(s.stage, std::move(s));
  }
  if (by_stage.empty()) {
    throw bad_input_error(io::quote(folder.string()) +
                          ": no strategy files (*.ckpt or *.json listing parameters) in it");
  }
  std::vector<weights::stage_strategy> out;
  for (auto& [s, strategy] : by_stage) {
    out.push_back(std::move(strategy));
  }
  return out;
}

namespace {

// place(l) of a layout of strategy `s`; one it refuses (MindSpore's own
// words, "For <parameter>, ...") names the file it came from.
placement placed(const weights::stage_strategy& s, const tensor_layout& l) {
  try {
    return place(l);
  } catch (const layout_error& e) {
    if (s.file.empty()) {
      throw;
    }
    throw layout_error(io::quote(s.file.string()) + ": " + e.what());
  }
}

// The devices of a stage, the same for every parameter of every stage; at
// most most_ranks in all.
std::int64_t devices_of(const std::vector<weights::stage_strategy>& strategies) {
  const weights::strategy_entry* first = nullptr;
  for (const auto& s : strategies) {
    for (const auto& p : s.parameters) {
      if (first == nullptr) {
        first = &p;
      } else if (p.layout.devices != first->layout.devices) {
        throw bad_input_error("the strategies give " + io::quote(first->layout.name) + " (stage " +
                              std::to_string(first->stage) + ") a device matrix of " +
                              std::to_string(first->layout.devices) + " devices and " +
                              io::quote(p.layout.name) + " (stage " + std::to_string(p.stage) +
                              ") one of " + std::to_string(p.layout.devices) +
                              "; every stage has the same devices");
      }
    }
  }
  const std::int64_t D = first == nullptr ? 0 : first->layout.devices;
  const auto S = static_cast<std::int64_t>(strategies.size());
  if (!within_most_ranks(D, S)) {
    throw bad_input_error("the strategies give " + std::to_string(D * S) + " ranks (" +
                          std::to_string(D) + " devices a stage x " + std::to_string(S) +
                          " stages), more than shardpoint splits or merges (" +
                          std::to_string(most_ranks) + ")");
  }
  return D;
}

std::string stages_text(const std::vector<weights::stage_strategy>& strategies) {
  std::string stages;
  for (std::size_t k = 0; k < strategies.size(); ++k) {
    stages += (k == 0 ? "" : ", ") + std::to_string(strategies[k].stage);
  }
  return stages;
}

std::string rank_file(std::int64_t rank, bool safetensors) {
  return "rank_" + std::to_string(rank) + "/" +
         (safetensors ? "model.safetensors" : "checkpoint_" + std::to_string(rank) + ".ckpt");
}

// Passes on, of a stream of the tensor's bytes, those inside `runs`.
class run_filter {
public:
  run_filter(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs,
             const std::function<void(const char*, std::size_t)>& sink)
      : runs_(runs), sink_(sink) {}
  void operator()(const char* data, std::size_t size) {
    const std::uint64_t chunk_end = at_ + size;
    while (next_ < runs_.size() && runs_[next_].first < chunk_end) {
      const auto [offset, length] = runs_[next_];
      const std::uint64_t from = std::max(offset, at_);
      const std::uint64_t to = std::min(offset + length, chunk_end);
      if (from < to) {
        sink_(data + (from - at_), static_cast<std::size_t>(to - from));
      }
      if (offset + length <= chunk_end) {
        ++next_;
      } else {
        break;
      }
    }
    at_ = chunk_end;
  }

private:
  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs_;
  const std::function<void(const char*, std::size_t)>& sink_;
  std::size_t next_ = 0;
  std::uint64_t at_ = 0;
};

// The layout of `p` with the whole shape of its source tensor.
tensor_layout with_source_shape(const weights::strategy_entry& p, const source_tensor& t,
                                const std::string& what) {
  tensor_layout l = p.layout;
  if (l.shape_known && l.shape != t.shape) {
    throw bad_input_error("the strategy of stage " + std::to_string(p.stage) + " gives '" + l.name +
                          "' the shape " + tuple_text(l.shape) + "; " + what + " holds " +
                          tuple_text(t.shape));
  }
  l.shape = t.shape;
  l.shape_known = true;
  return l;
}

} // namespace

// ---- sources --------------------------------------------------------------------

namespace {

// model_weight_source, each initializer k of `g` (the graph, or a
// skeleton's holding the initializers) streamed by `chunks(k, t, base,
// sink)`; `nodes` the node graph and `names(reads)` the names of the nodes
// reads[i].second, for each i (the first reader of each weight).
template <class Chunks, class Names>
weight_source initializers_of(const ::onnx::GraphProto& g, const node_graph& nodes,
                              const fs::path& model_path, Chunks chunks, Names names) {
  weight_source source;
  source.what = "the model";
  const fs::path base = model_path.has_parent_path() ? model_path.parent_path() : ".";
  for (int k = 0; k < g.initializer_size(); ++k) {
    const auto& t = g.initializer(k);
    source.tensors[t.name()] = {
        std::vector<std::int64_t>(t.dims().begin(), t.dims().end()), t.data_type(),
        [&t, k, base, chunks](const auto& sink) { chunks(k, t, base, sink); }};
  }
  std::set<std::string_view> named;
  std::vector<std::pair<std::string_view, std::size_t>> first_readers;
  for (std::size_t v = 0; v + 1 < nodes.read_offsets.size(); ++v) {
    for (const auto t : nodes.reads(v)) {
      const auto& name = nodes.tensors[t];
      if (source.tensors.count(name) > 0 && named.insert(name).second) {
        first_readers.emplace_back(name, v);
      }
    }
  }
  const std::vector<std::string> readers = names(first_readers);
  for (std::size_t i = 0; i < first_readers.size(); ++i) {
    source.required.emplace_back(first_readers[i].first, "read by node " + io::quote(readers[i]));
  }
  return source;
}

} // namespace

weight_source model_weight_source(const ::onnx::ModelProto& model, const fs::path& model_path) {
  const auto& g = model.graph();
  return initializers_of(
      g, build_graph(g), model_path,
      [](int, const ::onnx::TensorProto& t, const fs::path& base, const auto& sink) {
        for_each_chunk(t, base, sink);
      },
      [&](const auto& reads) {
        std::vector<std::string> out;
        for (const auto& [weight, v] : reads) {
          out.push_back(g.node(static_cast<int>(v)).name());
        }
        return out;
      });
}

weight_source model_weight_source(const loaded_model& model, const fs::path& model_path) {
  // A weight the skeleton left out is read again from the input each time
  // it is streamed (once for each rank of its stage): one tensor in memory
  // at a time, never the model's. Nodes read as views stay views: the
  // skeleton holds the initializers where they are (views_with_initializers).
  return initializers_of(
      graph_with_initializers(model), build_graph(model), model_path,
      [&model](int k, const ::onnx::TensorProto& t, const fs::path& base, const auto& sink) {
        if (const auto whole = initializer_with_data(model, k)) {
          for_each_chunk(*whole, base, sink);
        } else {
          for_each_chunk(t, base, sink);
        }
      },
      [&](const auto& reads) { // the names, in one pass over the nodes
        std::vector<std::string> out(reads.size());
        std::vector<std::size_t> order(reads.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
          order[i] = i;
        }
        std::sort(order.begin(), order.end(),
                  [&](std::size_t a, std::size_t b) { return reads[a].second < reads[b].second; });
        std::size_t next = 0;
        for_each_node(model, [&](std::size_t v, const node_fields& fields) {
          for (; next < order.size() && reads[order[next]].second == v; ++next) {
            out[order[next]] = std::string(fields.name);
          }
        });
        return out;
      });
}

weight_source file_weight_source(const fs::path& file) {
  auto stored =
      std::make_shared<std::map<std::string, weights::stored_tensor>>(weights::read_weights(file));
  if (stored->empty()) {
    throw bad_input_error(io::quote(file.string()) + ": holds no tensor");
  }
  weight_source source;
  source.what = io::quote(file.string());
  source.name_left_out = true;
  for (const auto& [name, t] : *stored) {
    const weights::stored_tensor* data = &t;
    source.tensors[name] = {t.shape, t.onnx_type, [data](const auto& sink) {
                              sink(data->data.data(), data->data.size());
                            }};
  }
  source.owner = stored;
  return source;
}

std::vector<std::string> write_rank_weights(const weight_source& source,
                                            const std::vector<weights::stage_strategy>& strategies,
                                            io::staged_folder& out, bool safetensors) {
  std::unordered_set<std::string_view> listed;
  for (const auto& s : strategies) {
    for (const auto& p : s.parameters) {
      listed.insert(p.layout.name);
    }
  }
  for (const auto& [name, why] : source.required) {
    if (listed.count(name) == 0) {
      throw bad_input_error("weight " + io::quote(name) + ", " + why +
                            ", is in no strategy file (the folder has stages " +
                            stages_text(strategies) + "; is a strategy file missing?)");
    }
  }
  const std::int64_t D = devices_of(strategies);
  for (const auto& s : strategies) {
    // Each parameter's layout on its whole shape, placed once.
    std::vector<std::pair<tensor_layout, placement>> layouts;
    for (const auto& p : s.parameters) {
      const auto it = source.tensors.find(p.layout.name);
      if (it == source.tensors.end()) {
        throw bad_input_error("the strategy of stage " + std::to_string(s.stage) + " names '" +
                              p.layout.name + "', which " + source.what + " does not hold");
      }
      auto l = with_source_shape(p, it->second, source.what);
      auto at = placed(s, l);
      layouts.emplace_back(std::move(l), std::move(at));
    }
    for (std::int64_t r = 0; r < D; ++r) {
      const std::int64_t rank = s.stage * D + r;
      std::vector<weights::tensor_source> tensors;
      for (const auto& [l, placed] : layouts) {
        const auto& t = source.tensors.at(l.name);
        const auto size = element_bytes(t.onnx_type);
        if (!size) {
          throw unsupported_error("weight " + io::quote(l.name) + " has no fixed element size");
        }
        const tensor_slice slice = slice_of(placed, l.shape, r);
        auto runs = std::make_shared<std::vector<std::pair<std::uint64_t, std::uint64_t>>>(
            byte_runs(l.shape, slice, *size));
        const auto bytes = static_cast<std::uint64_t>(slice.elements()) * *size;
        tensors.push_back(
            {l.name, slice.extent(), t.onnx_type, bytes, [&t, runs](const auto& sink) {
               run_filter filter(*runs, sink);
               t.chunks([&](const char* d, std::size_t n) { filter(d, n); });
             }});
      }
      const fs::path file = out.file(rank_file(rank, safetensors));
      if (safetensors) {
        weights::write_safetensors(file, tensors);
      } else {
        weights::write_checkpoint(file, tensors);
      }
    }
  }
  std::set<std::string> left_out(source.left_out.begin(), source.left_out.end());
  if (source.name_left_out) {
    for (const auto& [name, t] : source.tensors) {
      if (listed.count(name) == 0) {
        left_out.insert(name);
      }
    }
  }
  return {left_out.begin(), left_out.end()};
}

// ---- merging ----------------------------------------------------------------------

namespace {

// A whole tensor being merged from its ranks' slices.
struct merged_tensor {
  tensor_layout layout; ///< its whole shape known
  placement placed;
  int onnx_type = -1;
  std::string data;
  std::map<std::vector<std::int64_t>, std::int64_t> filled; ///< slices placed: begin -> rank
};

// What split wrote, by fingerprint: a file whose bytes are another rank's
// file was moved or copied (two rank files swapped merge into a model with
// wrong weights); one edited in place (trained further) matches none.
class rank_file_identity {
public:
  explicit rank_file_identity(const fs::path& ranks_dir)
      : recorded_(io::recorded_fingerprints(ranks_dir)) {
    for (const auto& [name, print] : recorded_) {
      written_as_.emplace(print, name);
    }
  }

  /// Throws bad_input_error when `file` (`relative` to the ranks folder)
  /// holds what split wrote under another name.
  void check(const fs::path& file, const std::string& relative) const {
    if (recorded_.empty()) {
      return;
    }
    const auto it = recorded_.find(relative);
    const auto print = io::fingerprint(file);
    if (it != recorded_.end() && print == it->second) {
      return;
    }
    // Renamed in its own rank folder (ModelCheckpoint's names) is the same
    // file; what split wrote for another rank is not.
    const auto folder = relative.substr(0, relative.find('/') + 1);
    const auto [from, to] = written_as_.equal_range(print);
    bool own = false; // what split wrote for this rank (or a replica of it)
    for (auto i = from; i != to; ++i) {
      own = own || i->second.rfind(folder, 0) == 0;
    }
    if (from != to && !own) {
      throw bad_input_error(io::quote(file.string()) + ": holds what shardpoint wrote as " +
                            io::quote(from->second) +
                            " (rank files swapped or copied?); a rank file changed in place, "
                            "e.g. trained further, is taken as it is");
    }
  }

private:
  std::map<std::string, std::string> recorded_; ///< file -> fingerprint, as split wrote them
  std::multimap<std::string, std::string> written_as_;
};

// The rank's file: the last *.ckpt of rank_<g>/ in name order (as
// transform_checkpoints chooses), else the last *.safetensors.
fs::path rank_file_in(const fs::path& ranks_dir, std::int64_t rank) {
  const fs::path folder = ranks_dir / ("rank_" + std::to_string(rank));
  std::error_code ec;
  fs::path ckpt;
  fs::path safetensors;
  if (fs::is_directory(folder, ec)) {
    for (const auto& e : fs::directory_iterator(folder)) {
      const auto& path = e.path();
      if (path.filename().string().front() == '.') {
        continue;
      }
      const auto ext = path.extension();
      fs::path* last = ext == ".ckpt" ? &ckpt : ext == ".safetensors" ? &safetensors : nullptr;
      if (last != nullptr) {
        io::require_file_in_folder(ranks_dir, path, "rank file");
      }
      if (last != nullptr && (last->empty() || last->filename() < path.filename())) {
        *last = path;
      }
    }
  }
  if (!ckpt.empty() && !safetensors.empty()) {
    throw bad_input_error(io::quote(folder.string()) + ": holds both " +
                          io::quote(ckpt.filename().string()) + " and " +
                          io::quote(safetensors.filename().string()) +
                          "; a rank's folder holds .ckpt or .safetensors files, not both");
  }
  if (ckpt.empty() && safetensors.empty()) {
    throw bad_input_error(io::quote(folder.string()) +
                          ": no *.ckpt or *.safetensors file for rank " + std::to_string(rank));
  }
  return ckpt.empty() ? safetensors : ckpt;
}

// The whole shape of `l` from local rank 0's `piece`: the file's own when it
// gives one; else param_split_shape when it is a whole shape that gives this
// slice; else the uneven parts of dimension 0; else the slice times its parts.
tensor_layout whole_layout(tensor_layout l, const std::vector<std::int64_t>& piece,
                           const fs::path& file) {
  if (l.shape_known) {
    return l;
  }
  std::vector<std::vector<std::int64_t>> candidates;
  if (l.split_shape.size() == piece.size()) {
    candidates.push_back(l.split_shape);
  }
  if (piece.size() == l.tensor_map.size()) {
    const placement axes = axes_of(l);
    auto even = piece;
    for (std::size_t d = 0; d < even.size(); ++d) {
      even[d] *= axes.parts(d);
    }
    if (!l.split_shape.empty() && !even.empty()) {
      auto uneven = even;
      uneven[0] = 0;
      for (const auto x : l.split_shape) {
        uneven[0] += x;
      }
      candidates.push_back(uneven);
    }
    candidates.push_back(even);
  }
  for (const auto& shape : candidates) {
    l.shape = shape;
    try {
      if (slice_of(place(l), shape, 0).extent() == piece) {
        l.shape_known = true;
        return l;
      }
    } catch (const layout_error&) {
      // not this reading
    }
  }
  axes_of(l); // a layout no shape can hold says why
  throw bad_input_error(io::quote(file.string()) + ": tensor " + io::quote(l.name) + " has shape " +
                        tuple_text(piece) +
                        ", which no whole shape cut by its layout gives rank 0");
}

// Places rank `rank`'s `piece` of tensor `name` (read from `file`) into `f`
// as `slice`; a replica of a slice already placed must hold the same bytes.
void place_slice(merged_tensor& f, const weights::stored_tensor& piece, const tensor_slice& slice,
                 const fs::path& file, std::int64_t rank) {
  const std::string& name = f.layout.name;
  const auto& shape = f.layout.shape;
  const auto size = element_bytes(piece.onnx_type).value_or(0);
  if (const auto placed = f.filled.find(slice.begin); placed != f.filled.end()) {
    std::uint64_t at = 0;
    bool same = piece.onnx_type == f.onnx_type;
    for (const auto& [offset, length] : byte_runs(shape, slice, size)) {
      same = same && at + length <= piece.data.size() &&
             std::equal(piece.data.data() + at, piece.data.data() + at + length,
                        f.data.data() + offset);
      at += length;
    }
    if (!same || at != piece.data.size()) {
      throw bad_input_error(io::quote(file.string()) + ": tensor " + io::quote(name) + " of rank " +
                            std::to_string(rank) + " differs from its replica in rank " +
                            std::to_string(placed->second) +
                            "; replicas of one slice must hold the same values");
    }
    return;
  }
  if (f.onnx_type < 0) {
    f.onnx_type = piece.onnx_type;
    std::uint64_t count = 1;
    for (auto d : shape) {
      count *= static_cast<std::uint64_t>(d);
    }
    f.data.assign(count * size, '\0');
  } else if (f.onnx_type != piece.onnx_type) {
    throw bad_input_error(io::quote(file.string()) + ": tensor '" + name +
                          "' has another type than in the other ranks");
  }
  const auto runs = byte_runs(shape, slice, size);
  std::uint64_t total = 0;
  for (const auto& [offset, length] : runs) {
    total += length;
  }
  if (piece.data.size() != total) {
    throw bad_input_error(io::quote(file.string()) + ": tensor " + io::quote(name) + " holds " +
                          std::to_string(piece.data.size()) + " bytes; its slice needs " +
                          std::to_string(total));
  }
  std::uint64_t at = 0;
  for (const auto& [offset, length] : runs) {
    std::copy_n(piece.data.data() + at, length, f.data.data() + offset);
    at += length;
  }
  f.filled.emplace(slice.begin, rank);
}

// Refuses a ranks folder with a rank_<g>/ no stage of `strategies` has: the
// ranks of another strategy (a protobuf strategy in MindSpore's form gives
// no whole shapes, so they would be read as whole tensors of other shapes).
void check_rank_folders(const std::vector<weights::stage_strategy>& strategies, std::int64_t D,
                        const fs::path& ranks_dir) {
  std::set<std::int64_t> expected;
  for (const auto& s : strategies) {
    for (std::int64_t r = 0; r < D; ++r) {
      expected.insert(s.stage * D + r);
    }
  }
  std::error_code ec;
  if (!fs::is_directory(ranks_dir, ec)) {
    throw bad_input_error(io::quote(ranks_dir.string()) + ": no such rank folder");
  }
  std::set<std::int64_t> foreign;
  for (const auto& e : fs::directory_iterator(ranks_dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("rank_", 0) != 0 || name.size() == 5 || name.size() > 15 ||
        name.find_first_not_of("0123456789", 5) != std::string::npos) {
      continue;
    }
    if (const auto g = std::stoll(name.substr(5)); expected.count(g) == 0) {
      foreign.insert(g);
    }
  }
  if (!foreign.empty()) {
    throw bad_input_error(
        io::quote((ranks_dir / ("rank_" + std::to_string(*foreign.begin()))).string()) +
        ": no stage of the strategies (" + std::to_string(D) + " devices a stage, stages " +
        stages_text(strategies) + ") has this rank; ranks cut by another strategy?");
  }
}

// Every tensor of `strategies`, whole again, in the order first met.
struct merged {
  std::vector<std::shared_ptr<merged_tensor>> tensors; ///< in the order first met
  std::set<std::string> left_out; ///< tensors of the rank files no strategy lists
};

merged merge_ranks(const std::vector<weights::stage_strategy>& strategies,
                   const fs::path& ranks_dir) {
  const std::int64_t D = devices_of(strategies);
  check_rank_folders(strategies, D, ranks_dir);
  std::map<std::string, std::shared_ptr<merged_tensor>> tensors;
  merged out;
  std::set<std::string_view> listed;
  for (const auto& s : strategies) {
    for (const auto& p : s.parameters) {
      listed.insert(p.layout.name);
    }
  }
  const rank_file_identity identity(ranks_dir);
  for (const auto& s : strategies) {
    for (std::int64_t r = 0; r < D; ++r) {
      const std::int64_t rank = s.stage * D + r;
      const fs::path file = rank_file_in(ranks_dir, rank);
      identity.check(file, fs::relative(file, ranks_dir).generic_string());
      auto stored = weights::read_weights(file);
      for (const auto& [name, t] : stored) {
        if (listed.count(name) == 0) {
          out.left_out.insert(name);
        }
      }
      for (const auto& p : s.parameters) {
        const auto found = stored.find(p.layout.name);
        if (found == stored.end()) {
          throw bad_input_error(io::quote(file.string()) + ": no tensor " +
                                io::quote(p.layout.name) + ", which the strategy of stage " +
                                std::to_string(s.stage) + " gives rank " + std::to_string(rank) +
                                " (ranks cut by another strategy?)");
        }
        auto& f = tensors[p.layout.name];
        if (!f) {
          f = std::make_shared<merged_tensor>();
          f->layout = whole_layout(p.layout, found->second.shape, file);
          f->placed = placed(s, f->layout);
          out.tensors.push_back(f);
        }
        const tensor_slice slice = slice_of(f->placed, f->layout.shape, r);
        if (found->second.shape != slice.extent()) {
          throw bad_input_error(io::quote(file.string()) + ": tensor " + io::quote(p.layout.name) +
                                " has shape " + tuple_text(found->second.shape) + "; rank " +
                                std::to_string(rank) + "'s slice of it is " +
                                tuple_text(slice.extent()));
        }
        place_slice(*f, found->second, slice, file, rank);
      }
    }
  }
  return out;
}

} // namespace

weight_source ranks_weight_source(const std::vector<weights::stage_strategy>& strategies,
                                  const fs::path& ranks_dir) {
  auto whole = std::make_shared<merged>(merge_ranks(strategies, ranks_dir));
  weight_source source;
  source.what = "the ranks in " + io::quote(ranks_dir.string());
  source.name_left_out = true;
  source.left_out.assign(whole->left_out.begin(), whole->left_out.end());
  for (const auto& f : whole->tensors) {
    const merged_tensor* t = f.get();
    source.tensors[t->layout.name] = {t->layout.shape, t->onnx_type, [t](const auto& sink) {
                                        sink(t->data.data(), t->data.size());
                                      }};
  }
  source.owner = whole;
  return source;
}

std::vector<std::string> merge_rank_weights(const std::vector<weights::stage_strategy>& strategies,
                                            const fs::path& ranks_dir, const fs::path& output,
                                            bool checkpoint) {
  const auto whole = merge_ranks(strategies, ranks_dir);
  std::vector<weights::tensor_source> sources;
  for (const auto& f : whole.tensors) {
    const merged_tensor* t = f.get();
    sources.push_back({t->layout.name, t->layout.shape, t->onnx_type, t->data.size(),
                       [t](const auto& sink) { sink(t->data.data(), t->data.size()); }});
  }
  if (checkpoint) {
    weights::write_checkpoint(output, sources);
  } else {
    weights::write_safetensors(output, sources);
  }
  return {whole.left_out.begin(), whole.left_out.end()};
}

} // namespace shardpoint::onnx
