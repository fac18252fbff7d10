// A ResNet-50 v1 with the names, op types and topology of the ONNX model
// zoo's resnet50-v1-7.onnx (Gluon's resnetv17): the seed example's model.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <shardpoint/error.hpp>
#include <shardpoint/onnx/synth.hpp>

#include "synth_support.hpp"

namespace shardpoint::onnx {

namespace {

class builder {
public:
  builder() {
    g_ = &synth::start_model(model_, 3, "shardpoint synth", 7, "resnet50-v1-7");
    model_.set_producer_version("resnet50-v1-7 structure");
    synth::set_value(*g_->add_input(), "data", {-1, 3, 224, 224});
  }

  ::onnx::ModelProto finish(const std::string& output) {
    synth::set_value(*g_->add_output(), output, {-1, 1000});
    // ir_version 3: initializers are listed among the graph inputs too.
    for (const auto& t : g_->initializer()) {
      std::vector<std::int64_t> dims(t.dims().begin(), t.dims().end());
      synth::set_value(*g_->add_input(), t.name(), dims);
    }
    return std::move(model_);
  }

  std::string conv(const std::string& name, const std::string& x, std::int64_t in, std::int64_t out,
                   std::int64_t k, std::int64_t stride) {
    const std::string w = name + "_weight";
    weight(w, {out, in, k, k});
    auto& n = node(name + "_fwd", "Conv", {x, w});
    synth::add_ints(n, "dilations", {1, 1});
    synth::add_int(n, "group", 1);
    synth::add_ints(n, "kernel_shape", {k, k});
    const std::int64_t p = k / 2;
    synth::add_ints(n, "pads", {p, p, p, p});
    synth::add_ints(n, "strides", {stride, stride});
    return name + "_fwd";
  }

  std::string batchnorm(const std::string& name, const std::string& x, std::int64_t c) {
    std::vector<std::string> inputs{x};
    for (const char* p : {"gamma", "beta", "running_mean", "running_var"}) {
      weight(name + "_" + p, {c});
      inputs.push_back(name + "_" + p);
    }
    auto& n = node(name + "_fwd", "BatchNormalization", inputs);
    synth::add_float(n, "epsilon", 1e-5F);
    synth::add_float(n, "momentum", 0.9F);
    return name + "_fwd";
  }

  std::string op(const std::string& name, const std::string& type,
                 const std::vector<std::string>& inputs) {
    node(name, type, inputs);
    return name;
  }

  ::onnx::NodeProto& node(const std::string& name, const std::string& type,
                          const std::vector<std::string>& inputs) {
    return synth::add_node(*g_, name, type, inputs);
  }

  void weight(const std::string& name, const std::vector<std::int64_t>& dims) {
    synth::add_weight(*g_, name, dims, 0.05F, seed_);
    seed_ += 7919;
  }

private:
  ::onnx::ModelProto model_;
  ::onnx::GraphProto* g_ = nullptr;
  std::int64_t seed_ = 1;
};

} // namespace

::onnx::ModelProto synth_resnet50() {
  builder b;
  const std::string p = "resnetv17_";
  std::string x = b.conv(p + "conv0", "data", 3, 64, 7, 2);
  x = b.batchnorm(p + "batchnorm0", x, 64);
  x = b.op(p + "relu0_fwd", "Relu", {x});
  {
    auto& pool = b.node(p + "pool0_fwd", "MaxPool", {x});
    synth::add_ints(pool, "kernel_shape", {3, 3});
    synth::add_ints(pool, "pads", {1, 1, 1, 1});
    synth::add_ints(pool, "strides", {2, 2});
    x = p + "pool0_fwd";
  }
  struct stage_shape {
    int blocks;
    std::int64_t width;
  };
  const stage_shape stages[] = {{3, 64}, {4, 128}, {6, 256}, {3, 512}};
  std::int64_t channels = 64;
  for (int s = 0; s < 4; ++s) {
    const std::string sp = p + "stage" + std::to_string(s + 1) + "_";
    const std::int64_t w = stages[s].width;
    const std::int64_t out = 4 * w;
    for (int k = 0; k < stages[s].blocks; ++k) {
      const int c = k == 0 ? 0 : 3 * k + 1; // first conv of the block
      const std::int64_t stride = (k == 0 && s > 0) ? 2 : 1;
      const auto idx = [&](int i) { return std::to_string(i); };
      std::string y = b.conv(sp + "conv" + idx(c), x, channels, w, 1, stride);
      y = b.batchnorm(sp + "batchnorm" + idx(c), y, w);
      y = b.op(sp + "relu" + idx(2 * k) + "_fwd", "Relu", {y});
      y = b.conv(sp + "conv" + idx(c + 1), y, w, w, 3, 1);
      y = b.batchnorm(sp + "batchnorm" + idx(c + 1), y, w);
      y = b.op(sp + "relu" + idx(2 * k + 1) + "_fwd", "Relu", {y});
      y = b.conv(sp + "conv" + idx(c + 2), y, w, out, 1, 1);
      y = b.batchnorm(sp + "batchnorm" + idx(c + 2), y, out);
      std::string shortcut = x;
      if (k == 0) {
        shortcut = b.conv(sp + "conv3", x, channels, out, 1, stride);
        shortcut = b.batchnorm(sp + "batchnorm3", shortcut, out);
      }
      const std::string sum = b.op(sp + "_plus" + idx(k), "Add", {y, shortcut});
      x = b.op(sp + "activation" + idx(k), "Relu", {sum});
      channels = out;
    }
  }
  x = b.op(p + "pool1_fwd", "GlobalAveragePool", {x});
  {
    auto& flatten = b.node("flatten_473", "Flatten", {x});
    synth::add_int(flatten, "axis", 1);
    x = "flatten_473";
  }
  b.weight(p + "dense0_weight", {1000, 2048});
  b.weight(p + "dense0_bias", {1000});
  auto& dense = b.node(p + "dense0_fwd", "Gemm", {x, p + "dense0_weight", p + "dense0_bias"});
  synth::add_float(dense, "alpha", 1.0F);
  synth::add_float(dense, "beta", 1.0F);
  synth::add_int(dense, "transA", 0);
  synth::add_int(dense, "transB", 1);
  return b.finish(p + "dense0_fwd");
}

} // namespace shardpoint::onnx
