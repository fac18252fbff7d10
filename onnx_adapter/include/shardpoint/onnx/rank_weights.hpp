// shardpoint/onnx/rank_weights.hpp -- the weights each rank loads: cut from
// whole weights as a folder of strategy files says, and merged back.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// PROCEDURE
//
//   read_strategies: every top-level *.ckpt (protobuf) and *.json file of a
//     folder, whatever its name, as MindSpore's merge_pipeline_strategys
//     takes them; each file is one stage (its items' stage). A stage that
//     reads no weight has no file. Where shardpoint wrote the folder, its
//     manifest says which files there must be.
//
//   write_rank_weights: whole weights from a source -- an ONNX model's
//     initializers (streamed, external data included), a merged .safetensors
//     or .ckpt, or the ranks of another strategy merged in memory (a
//     re-shard) -- and for each stage s with a file and each local rank r of
//     its D devices, rank s * D + r gets rank_<g>/checkpoint_<g>.ckpt (or
//     model.safetensors): every parameter of the stage cut to the rank's
//     slice (tensor_layout.hpp's place(): nested maps, optimizer sharding,
//     uneven parts). A whole shape the file does not give is the source's;
//     one it gives must be the source's. Every weight the source must give
//     away (the model's initializers its nodes read; every tensor of a
//     merged file) must be in some stage's strategy.
//
//   merge_rank_weights: for each rank, its file -- the last *.ckpt of
//     rank_<g>/ in name order, as transform_checkpoints chooses (so
//     ModelCheckpoint's CKP-<epoch>_<step>.ckpt names work), else the last
//     *.safetensors -- and every slice placed into its whole tensor;
//     replicas must hold the same bytes. A whole shape the strategy does not
//     give is read off local rank 0's slice.
//
// Complexity: the bytes of the weights, read once and written once per
// copy; merge and re-shard hold the whole weights in memory.
#ifndef SHARDPOINT_ONNX_RANK_WEIGHTS_HPP
#define SHARDPOINT_ONNX_RANK_WEIGHTS_HPP

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include <shardpoint/io/outputs.hpp>

#include "model.hpp"
#include "weight_files.hpp"

namespace shardpoint::onnx {

/// The most ranks (devices a stage x stages) a strategy folder may give:
/// split writes a folder a rank and merge reads one; a folder giving more is
/// refused (a 63-byte strategy file can name 2^31 devices).
inline constexpr std::int64_t most_ranks = 65536;

/// Whether `stages` strategy files of `devices` devices a stage give at
/// most most_ranks ranks: the rule split and merge read a folder by, and the
/// one `weights strategy` writes by (it writes nothing they would refuse).
[[nodiscard]] constexpr bool within_most_ranks(std::int64_t devices, std::int64_t stages) {
  return devices >= 0 && stages >= 0 && devices <= most_ranks && stages <= most_ranks &&
         devices * stages <= most_ranks;
}

/// The strategies of a folder (see the top), by stage. Throws
/// bad_input_error when there is none, two files are of one stage, or a file
/// the folder's manifest lists is missing.
std::vector<weights::stage_strategy> read_strategies(const std::filesystem::path& folder);

/// One whole tensor of a source: its shape, ONNX type, and its bytes in
/// order, in chunks.
struct source_tensor {
  std::vector<std::int64_t> shape;
  int onnx_type = 0;
  std::function<void(const std::function<void(const char*, std::size_t)>& sink)> chunks;
};

/// Whole weights to cut.
struct weight_source {
  std::string what; ///< names it in messages: "the model", "'w.safetensors'"
  std::map<std::string, source_tensor> tensors;
  /// Tensors that must be in a stage's strategy, with why ("read by node
  /// 'x'"), in the order to name them.
  std::vector<std::pair<std::string, std::string>> required;
  /// Whole weights or ranks: a tensor no strategy lists is left out of the
  /// ranks and named (MindSpore's global_step, learning_rate, ...).
  bool name_left_out = false;
  std::vector<std::string> left_out; ///< already left out (tensors of ranks no strategy lists)
  std::shared_ptr<const void> owner; ///< keeps what the chunks read alive
};

/// The initializers of `model` (which must outlive the source), read from
/// `model_path`'s folder when external.
weight_source model_weight_source(const ::onnx::ModelProto& model,
                                  const std::filesystem::path& model_path);
/// The same for a model read by read_graph() (which must outlive the
/// source): the weights its skeleton left out are read from the input as
/// they are streamed, one tensor at a time.
weight_source model_weight_source(const loaded_model& model,
                                  const std::filesystem::path& model_path);

/// Every tensor of a merged .safetensors or .ckpt file.
weight_source file_weight_source(const std::filesystem::path& file);

/// The whole weights the ranks in `ranks_dir` hold as `strategies` cut
/// them (merge_rank_weights in memory).
weight_source ranks_weight_source(const std::vector<weights::stage_strategy>& strategies,
                                  const std::filesystem::path& ranks_dir);

/// Writes rank_<g>/ into `ranks` (an output folder of the command's
/// io::output_set, committed with it: all or nothing) for every rank of
/// every stage with a strategy (see the top). Returns the tensors of a
/// `name_left_out` source that no strategy lists, left out, in name order.
std::vector<std::string> write_rank_weights(const weight_source& source,
                                            const std::vector<weights::stage_strategy>& strategies,
                                            io::staged_folder& ranks, bool safetensors);

/// Re-assembles the full weights from the per-rank files and the strategies
/// into one file, each weight byte for byte the original: safetensors, or a
/// MindSpore checkpoint with `checkpoint`. Returns the tensors of the rank
/// files that no strategy lists, left out, in name order.
std::vector<std::string> merge_rank_weights(const std::vector<weights::stage_strategy>& strategies,
                                            const std::filesystem::path& ranks_dir,
                                            const std::filesystem::path& output, bool checkpoint);

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_RANK_WEIGHTS_HPP
