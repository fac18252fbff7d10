// A transformer-decoder-like model for benchmarks: 29 nodes per layer.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include <shardpoint/error.hpp>
#include <shardpoint/onnx/synth.hpp>

#include "synth_support.hpp"

namespace shardpoint::onnx {

namespace {

class decoder_builder {
public:
  decoder_builder(int hidden, int sequence) : d_(hidden), s_(sequence) {
    g_ = &synth::start_model(model_, 8, "shardpoint synth decoder", 13, "decoder");
    synth::set_value(*g_->add_input(), "tokens", {1, s_, d_});
    constant("eps", {}, 1e-5F);
    constant("scale", {}, 1.0F / std::sqrt(static_cast<float>(d_)));
  }

  std::string layer(int l, const std::string& x) {
    prefix_ = "layer" + std::to_string(l) + "/";
    // LayerNorm, decomposed: 9 nodes.
    const auto mean = reduce("ln_mean", x);
    const auto centred = op("ln_sub", "Sub", {x, mean});
    const auto square = op("ln_square", "Mul", {centred, centred});
    const auto var = reduce("ln_var", square);
    const auto var_eps = op("ln_add_eps", "Add", {var, "eps"});
    const auto stddev = op("ln_sqrt", "Sqrt", {var_eps});
    const auto normed = op("ln_div", "Div", {centred, stddev});
    const auto scaled = op("ln_gamma", "Mul", {normed, weight("ln_gamma_w", {d_})});
    const auto h = op("ln_beta", "Add", {scaled, weight("ln_beta_w", {d_})});
    // Attention, one head: 14 nodes.
    const auto q = dense("q", h, d_, d_);
    const auto k = dense("k", h, d_, d_);
    const auto v = dense("v", h, d_, d_);
    auto& t = node("k_transpose", "Transpose", {k});
    synth::add_ints(t, "perm", {0, 2, 1});
    const auto scores = op("scores", "MatMul", {q, prefix_ + "k_transpose"});
    const auto scaled_scores = op("scores_scale", "Mul", {scores, "scale"});
    const auto probs = op("softmax", "Softmax", {scaled_scores});
    const auto context = op("context", "MatMul", {probs, v});
    const auto attn = dense("attn_out", context, d_, d_);
    const auto x1 = op("attn_residual", "Add", {x, attn});
    // MLP: 6 nodes.
    const auto up = dense("mlp_up", x1, d_, 4 * d_);
    const auto act = op("mlp_relu", "Relu", {up});
    const auto down = dense("mlp_down", act, 4 * d_, d_);
    return op("mlp_residual", "Add", {x1, down});
  }

  ::onnx::ModelProto finish(const std::string& out) {
    synth::set_value(*g_->add_output(), out, {1, s_, d_});
    return std::move(model_);
  }

private:
  std::string op(const std::string& name, const std::string& type,
                 const std::vector<std::string>& inputs) {
    node(name, type, inputs);
    return prefix_ + name;
  }

  ::onnx::NodeProto& node(const std::string& name, const std::string& type,
                          const std::vector<std::string>& inputs) {
    return synth::add_node(*g_, prefix_ + name, type, inputs);
  }

  std::string reduce(const std::string& name, const std::string& x) {
    auto& n = node(name, "ReduceMean", {x});
    synth::add_ints(n, "axes", {-1});
    return prefix_ + name;
  }

  // MatMul by a weight, then Add a bias: 2 nodes.
  std::string dense(const std::string& name, const std::string& x, std::int64_t in,
                    std::int64_t out) {
    const auto y = op(name, "MatMul", {x, weight(name + "_w", {in, out})});
    return op(name + "_bias", "Add", {y, weight(name + "_b", {out})});
  }

  std::string weight(const std::string& name, const std::vector<std::int64_t>& dims) {
    synth::add_weight(*g_, prefix_ + name, dims, 0.02F, seed_++);
    return prefix_ + name;
  }

  void constant(const std::string& name, const std::vector<std::int64_t>& dims, float v) {
    auto& t = *g_->add_initializer();
    t.set_name(name);
    t.set_data_type(::onnx::TensorProto::FLOAT);
    for (auto d : dims) {
      t.add_dims(d);
    }
    t.add_float_data(v);
  }

  std::int64_t d_;
  std::int64_t s_;
  ::onnx::ModelProto model_;
  ::onnx::GraphProto* g_ = nullptr;
  std::string prefix_;
  std::int64_t seed_ = 1;
};

} // namespace

::onnx::ModelProto synth_decoder(int layers, int hidden, int sequence) {
  if (layers < 1 || hidden < 1 || sequence < 1) {
    throw bad_input_error("synth decoder: layers, hidden and sequence must be positive");
  }
  decoder_builder b(hidden, sequence);
  std::string x = "tokens";
  for (int l = 0; l < layers; ++l) {
    x = b.layer(l, x);
  }
  return b.finish(x);
}

} // namespace shardpoint::onnx
