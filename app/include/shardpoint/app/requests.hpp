// The parts of an ONNX command's request several commands share -- a model
// with its sharding points (the format-neutral parts are in flags.hpp) --
// and the steps they share: loading a model (confined to what it names),
// sharding it, declaring the inputs no output may touch.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_REQUESTS_HPP
#define SHARDPOINT_APP_REQUESTS_HPP

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardpoint/app/flags.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/onnx/adapter.hpp>

namespace shardpoint::app {

/// What a command reads of a model: its graph (onnx::read_graph, the weights'
/// bytes left in the file and copied verbatim to any output), the graph with
/// its nodes as views into the file where they allow it (for a command that
/// reads the nodes only through the onnx functions taking a loaded_model:
/// `shard` without a report), or all of it.
enum class reading { graph, graph_views, graph_views_measured, whole };

/// A model file, or its serialised bytes already in memory (the Python
/// bindings), which then take the place of the file (and must outlive the
/// model when read as a graph). External-data locations are checked to stay
/// in the model's folder.
onnx::loaded_model load_model(const std::string& path, std::string_view data, reading what);

/// A model and where to cut it: --input-model and the points.
struct model_points : points {
  std::string input;
  /// The bindings' model bytes, instead of reading `input`.
  std::string_view data;
};

/// --input-model (`what` it is, whether required), --manual-sharding-config,
/// --shard, --only-manual-sharding.
/// (`keyword`: the model's name in the command's Python function.)
template <class B>
void options(B& b, model_points& m, std::string_view what = opt::input_model.help,
             bool required = true, std::string_view keyword = opt::input_model.keyword) {
  const auto input = opt::input_model.saying(what).keyed(keyword);
  b(required ? input.needed() : input, m.input);
  b(opt::manual_sharding_config, m.config);
  b(opt::shard, m.shard_flags);
  b(opt::only_manual_sharding, m.strict);
}

/// --input-shape NAME=D0,D1,... (or D0,D1,... for a model with one input)
/// and --dim SYMBOL=N: sizes for the model's free input dimensions, with
/// which the costs, bytes and activations are measured.
struct shape_flags {
  std::vector<std::string> input_shapes;
  std::vector<std::string> dims;

  [[nodiscard]] bool given() const { return !input_shapes.empty() || !dims.empty(); }
  /// The sizes; bad_parameter_error naming the flag for text that is not
  /// NAME=DIMS / SYMBOL=N with dimensions in [1, 2^31).
  [[nodiscard]] onnx::input_sizes sizes() const;
};

template <class B>
void options(B& b, shape_flags& f) {
  b(opt::input_shape, f.input_shapes);
  b(opt::dim, f.dims);
}

/// A model a command measures (simulate, memory, draw): where its points
/// are and the sizes of its free dimensions; --input-model (`what` it is,
/// whether required) and the flags of both.
struct measured_model {
  model_points model;
  shape_flags shapes;
};

template <class B>
void options(B& b, measured_model& m, std::string_view what, bool required) {
  options(b, m.model, what, required);
  options(b, m.shapes);
}

/// A model with the sharding of every node.
struct sharded_model {
  onnx::loaded_model model;
  onnx::node_graph nodes;
  sharding_result result;
  bool from_attributes = false;     ///< read from the model, not from points
  std::vector<std::size_t> renamed; ///< unnamed nodes given names to resolve the config
};

/// Reads the model and shards it by the config then the --shard flags.
/// With neither, the model's own __ipu_number / __pipeline_stage attributes
/// are its sharding when it has any; otherwise a usage error, or with
/// `unsharded_ok` no sharding at all (one stage).
sharded_model load_sharded(const model_points& m, bool unsharded_ok = false,
                           reading what = reading::graph);

/// Declares what a command reads as inputs of `outputs` (io/outputs.hpp), so
/// that none of its outputs can touch them: the model file `path` (unless
/// empty: bytes from Python) with the external data files `model` names, and
/// each of `files` that is given (configs, layouts).
void protect_inputs(
    io::output_set& outputs, const std::string& path, const onnx::loaded_model* model,
    std::initializer_list<std::pair<std::string_view, std::string_view>> files = {});

/// `report` as the ONNX commands draw it: every node laid out by Graphviz
/// (app/graphviz.hpp), the page titled with the model's file name (`path`;
/// "model" for bytes) unless the caller titled it.
report_flag drawn(report_flag report, const std::string& path);

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_REQUESTS_HPP
