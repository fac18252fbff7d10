// shardpoint/runtime/queue_manager.hpp -- host-side input and output queues
// in the style of Graphcore's Model Runtime QueueManager.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// One input queue per model input tensor and one output queue per output
// tensor. Each holds {pointer, byte size, completion} records pointing into
// memory the user owns: the user enqueues pointers from its own thread while
// the (emulated) device runs, the device reads inputs and writes outputs
// through those pointers, and no tensor data is ever copied by the queues.
// The only blocking is an empty queue (device side) or a full one (user side).
#ifndef SHARDPOINT_RUNTIME_QUEUE_MANAGER_HPP
#define SHARDPOINT_RUNTIME_QUEUE_MANAGER_HPP

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ring_buffer.hpp"

namespace shardpoint::runtime {

/// Set once by the device when it is done with a buffer; the user polls it or
/// waits for it. Reusable after reset().
class completion {
public:
  void set() noexcept {
    done_.store(true, std::memory_order_release); // publishes the device's writes
    done_.notify_all();
  }
  [[nodiscard]] bool ready() const noexcept { return done_.load(std::memory_order_acquire); }
  void wait() const noexcept { done_.wait(false, std::memory_order_acquire); }
  void reset() noexcept { done_.store(false, std::memory_order_relaxed); }

private:
  std::atomic<bool> done_{false};
};

/// An input buffer: the device reads `bytes` bytes at `data`.
struct input_ref {
  const void* data = nullptr;
  std::size_t bytes = 0;
  completion* done = nullptr; ///< set when the device has read it (may be null)
};

/// An output buffer: the device writes up to `bytes` bytes at `data`.
struct output_ref {
  void* data = nullptr;
  std::size_t bytes = 0;
  completion* done = nullptr; ///< set when the device has written it (may be null)
};

class queue_manager {
public:
  /// Queues of `depth` entries (rounded up to a power of two) for the given
  /// input and output tensor names.
  queue_manager(std::vector<std::string> inputs, std::vector<std::string> outputs,
                std::size_t depth)
      : input_names_(std::move(inputs)), output_names_(std::move(outputs)) {
    for (std::size_t i = 0; i < input_names_.size(); ++i) {
      inputs_.push_back(std::make_unique<ring_buffer<input_ref>>(depth));
    }
    for (std::size_t i = 0; i < output_names_.size(); ++i) {
      outputs_.push_back(std::make_unique<ring_buffer<output_ref>>(depth));
    }
  }

  [[nodiscard]] const std::vector<std::string>& input_names() const noexcept {
    return input_names_;
  }
  [[nodiscard]] const std::vector<std::string>& output_names() const noexcept {
    return output_names_;
  }

  /// Index of a tensor by name; throws shardpoint::bad_parameter_error naming it.
  [[nodiscard]] std::size_t input_index(const std::string& name) const {
    return find(input_names_, name, "input");
  }
  [[nodiscard]] std::size_t output_index(const std::string& name) const {
    return find(output_names_, name, "output");
  }

  // User side (one thread): blocks only while the queue is full.
  void enqueue_input(std::size_t i, const void* data, std::size_t bytes,
                     completion* done = nullptr) {
    inputs_.at(i)->push(input_ref{data, bytes, done});
  }
  void enqueue_output(std::size_t i, void* data, std::size_t bytes, completion* done = nullptr) {
    outputs_.at(i)->push(output_ref{data, bytes, done});
  }

  // Device side (one thread): blocks only while the queue is empty.
  input_ref next_input(std::size_t i) { return inputs_.at(i)->pop(); }
  output_ref next_output(std::size_t i) { return outputs_.at(i)->pop(); }

  [[nodiscard]] ring_buffer<input_ref>& input_queue(std::size_t i) { return *inputs_.at(i); }
  [[nodiscard]] ring_buffer<output_ref>& output_queue(std::size_t i) { return *outputs_.at(i); }

private:
  static std::size_t find(const std::vector<std::string>& names, const std::string& name,
                          const char* what) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) {
        return i;
      }
    }
    throw shardpoint::bad_parameter_error(std::string("shardpoint: queue_manager: no ") + what +
                                          " tensor named '" + name + "'");
  }

  std::vector<std::string> input_names_;
  std::vector<std::string> output_names_;
  std::vector<std::unique_ptr<ring_buffer<input_ref>>> inputs_;
  std::vector<std::unique_ptr<ring_buffer<output_ref>>> outputs_;
};

} // namespace shardpoint::runtime

#endif // SHARDPOINT_RUNTIME_QUEUE_MANAGER_HPP
