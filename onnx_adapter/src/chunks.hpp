// Work over a model's nodes in chunks, side by side (internal to the
// adapter).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_ONNX_SRC_CHUNKS_HPP
#define SHARDPOINT_ONNX_SRC_CHUNKS_HPP

#include <algorithm>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace shardpoint::onnx {

// Nodes per thread below which one thread does them all: a thread costs
// about what protobuf takes to parse or size this many small nodes.
constexpr std::size_t nodes_per_thread = 16384;

// How many chunks in_chunks(n, f) cuts [0, n) into: one a core (at most
// 8), each of at least nodes_per_thread, or one.
inline std::size_t chunk_count(std::size_t n) {
  const std::size_t cores = std::max(1U, std::thread::hardware_concurrency());
  return std::max(std::size_t{1}, std::min({cores, std::size_t{8}, n / nodes_per_thread}));
}

// f(chunk, from, to) for chunk = 0, 1, ..., chunk_count(n) - 1 over [0, n)
// cut into contiguous [from, to), side by side; the exception of the first
// chunk (in chunk order) that threw is rethrown after every chunk is done.
// Where a thread cannot be had, its chunk runs on the calling thread.
template <class F>
void in_chunks(std::size_t n, F f) {
  const std::size_t threads = chunk_count(n);
  if (threads == 1) {
    f(std::size_t{0}, std::size_t{0}, n);
    return;
  }
  const std::size_t chunk = (n + threads - 1) / threads;
  std::vector<std::exception_ptr> failed(threads);
  const auto run = [&](std::size_t t) {
    try {
      f(t, t * chunk, std::min(n, (t + 1) * chunk));
    } catch (...) { // std::bad_alloc
      failed[t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  std::vector<std::size_t> here{0}; // the chunks this thread runs
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(run, t);
    } catch (const std::system_error&) { // no thread to be had: run it here
      here.push_back(t);
    }
  }
  for (const std::size_t t : here) {
    run(t);
  }
  for (auto& thread : pool) {
    thread.join();
  }
  for (const auto& e : failed) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
}

// What f(v, out) appends to `out` for each v in [0, n), gathered in chunks
// side by side: a vector a chunk (`per_item` reserved for each v), in chunk
// order, so that the vectors one after the other are one pass's, in order.
template <class T, class F>
std::vector<std::vector<T>> gather_in_chunks(std::size_t n, std::size_t per_item, F f) {
  std::vector<std::vector<T>> out(chunk_count(n));
  in_chunks(n, [&](std::size_t chunk, std::size_t from, std::size_t to) {
    out[chunk].reserve(per_item * (to - from));
    for (std::size_t v = from; v < to; ++v) {
      f(v, out[chunk]);
    }
  });
  return out;
}

} // namespace shardpoint::onnx

#endif // SHARDPOINT_ONNX_SRC_CHUNKS_HPP
