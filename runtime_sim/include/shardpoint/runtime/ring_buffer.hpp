// shardpoint/runtime/ring_buffer.hpp -- a lock-free single-producer
// single-consumer FIFO of fixed capacity.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// One thread pushes, one thread pops; any T that is move-constructible.
// Items are constructed in place on push and destroyed on pop (and in the
// destructor for those never popped); nothing is default-constructed.
//
// Design (after rigtorp/SPSCQueue and Graphcore's Model Runtime RingBuffer):
//  * Indices count up forever (64 bits do not wrap in practice); the slot is
//    index & mask, so the capacity is rounded up to a power of two and
//    "full" is write - read == capacity, with no wasted slot.
//  * Each side owns one index and keeps a cached copy of the other side's:
//    the consumer reads the producer's index only when its cached copy says
//    the buffer is empty, the producer reads the consumer's when its copy
//    says full and, as measured to be faster, once every 32 pushes
//    (refresh_interval); so each side works on its own cache line and the
//    index lines do not ping-pong per item.
//  * Blocking push/pop spin briefly, then sleep with C++20 atomic wait on the
//    other side's index. A side about to sleep raises a "waiting" flag; the
//    other side, after publishing its index, notifies only when the flag is
//    up, so the non-blocking operations make no system call -- and, with an
//    asymmetric barrier (detail::light_barrier), no hardware fence either.
#ifndef SHARDPOINT_RUNTIME_RING_BUFFER_HPP
#define SHARDPOINT_RUNTIME_RING_BUFFER_HPP

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

#include <shardpoint/error.hpp>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace shardpoint::runtime {

namespace detail {

// What keeps the two sides' data apart: 128 bytes, two 64-byte cache lines,
// because the adjacent-line prefetchers of Intel and AMD cores fetch lines
// in 128-byte pairs and would otherwise make neighbouring lines of the two
// sides bounce together (measured: single-item throughput fell by about a
// third with 64). Not std::hardware_destructive_interference_size: GCC warns that its
// value may differ between compilations, which would make this layout part
// of the ABI.
inline constexpr std::size_t cache_line = 128;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The wake-up handshake between a side that publishes an index and a side
// about to sleep is Dekker's pattern: each stores (its index, resp. its
// "waiting" flag), then loads the other's variable, and a StoreLoad barrier
// between the two must stop both loads from reading stale values. The
// publishing side runs on every push and pop, the sleeping side almost
// never, so the barrier is made asymmetric (as in Linux RCU and folly's
// asymmetric barriers): where the kernel offers membarrier(), the sleeping
// side issues it -- a full barrier on every running thread of the process --
// and the hot side needs only a compiler barrier. Elsewhere both sides use a
// seq_cst fence.
inline bool asymmetric_barriers() noexcept {
#if defined(__linux__) && defined(__NR_membarrier)
  static const bool registered =
      syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  return registered;
#else
  return false;
#endif
}

/// The hot side's half of the handshake; `asymmetric` is asymmetric_barriers(),
/// read once by the caller.
inline void light_barrier(bool asymmetric) noexcept {
  if (asymmetric) {
    std::atomic_signal_fence(std::memory_order_seq_cst); // compiler only
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

/// The sleeping side's half.
inline void heavy_barrier() noexcept {
#if defined(__linux__) && defined(__NR_membarrier)
  if (asymmetric_barriers() &&
      syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    return;
  }
#endif
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

} // namespace detail

template <class T>
class ring_buffer {
  static_assert(std::is_nothrow_destructible_v<T>, "ring_buffer<T> needs a noexcept destructor");

public:
  using value_type = T;

  /// A buffer holding at least `min_capacity` items: the capacity is
  /// `min_capacity` rounded up to a power of two (see `capacity()`).
  /// Throws shardpoint::bad_parameter_error for 0 or a capacity that cannot be
  /// rounded.
  explicit ring_buffer(std::size_t min_capacity)
      : capacity_(round_up(min_capacity)), mask_(capacity_ - 1),
        slots_(static_cast<T*>(::operator new(slot_bytes(capacity_), slot_alignment))) {}

  ring_buffer(const ring_buffer&) = delete;
  ring_buffer& operator=(const ring_buffer&) = delete;

  ~ring_buffer() {
    // No other thread may use the buffer any more: plain loads suffice.
    const std::size_t w = write_.load(std::memory_order_relaxed);
    for (std::size_t r = read_.load(std::memory_order_relaxed); r != w; ++r) {
      std::destroy_at(slot(r));
    }
    ::operator delete(slots_, slot_alignment);
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  /// Items in the buffer: exact from either side when the other is idle, a
  /// snapshot otherwise.
  [[nodiscard]] std::size_t size() const noexcept {
    const std::size_t r = read_.load(std::memory_order_acquire);
    const std::size_t w = write_.load(std::memory_order_acquire);
    return w - r;
  }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }

  // ---- producer side -------------------------------------------------------

  bool try_push(const T& value) { return try_emplace(value); }
  bool try_push(T&& value) { return try_emplace(std::move(value)); }

  /// Constructs an item in place; false (and nothing constructed) when full.
  template <class... Args>
  bool try_emplace(Args&&... args) {
    // Only this thread writes write_: a relaxed load reads our own value.
    const std::size_t w = write_.load(std::memory_order_relaxed);
    // The cached consumer index is refreshed when the buffer looks full and,
    // besides, once every `refresh_interval` pushes (see there for why).
    if ((w & (refresh_interval - 1)) == 0 || w - read_cache_ == capacity_) {
      // acquire: pairs with the consumer's publication of read_, so its
      // destruction of the slot we are about to reuse happens before our
      // construction in it.
      read_cache_ = read_.load(std::memory_order_acquire);
      if (w - read_cache_ == capacity_) {
        return false;
      }
    }
    prefetch_ahead_of(w);
    std::construct_at(slot(w), std::forward<Args>(args)...);
    publish_write(w + 1);
    return true;
  }

  /// Pushes as many items of `items` as fit, copying them, with a single
  /// index update for all; returns how many were pushed. If copying an item
  /// throws, nothing is pushed and the exception propagates.
  std::size_t try_push_bulk(std::span<const T> items) {
    const std::size_t w = write_.load(std::memory_order_relaxed);
    std::size_t free = capacity_ - (w - read_cache_);
    if (free < items.size()) {
      read_cache_ = read_.load(std::memory_order_acquire); // as in try_emplace
      free = capacity_ - (w - read_cache_);
    }
    const std::size_t n = std::min(free, items.size());
    if (n == 0) {
      return 0;
    }
    // At most two contiguous runs of slots, the second from the start of the
    // array after a wrap, each copied whole (a memmove for trivially copyable
    // T) rather than item by item through a masked index: measured between
    // two cores, 8-byte items in 1024-item chunks through a 4096-item ring
    // went from 355-395 to 683-725 M items/s (README, "Ring buffer").
    const std::size_t at = w & mask_;
    const std::size_t first = std::min(n, capacity_ - at);
    std::uninitialized_copy_n(items.data(), first, slots_ + at); // cleans up after itself
    try {
      std::uninitialized_copy_n(items.data() + first, n - first, slots_);
    } catch (...) {
      std::destroy_n(slots_ + at, first);
      throw;
    }
    publish_write(w + n);
    return n;
  }

  /// Blocking push: spins briefly, then sleeps until there is room.
  template <class U>
  void push(U&& value) {
    while (!try_push(std::forward<U>(value))) {
      wait_for_room();
    }
  }

  /// Blocking bulk push of all `items`.
  void push_bulk(std::span<const T> items) {
    while (!items.empty()) {
      const std::size_t n = try_push_bulk(items);
      items = items.subspan(n);
      if (!items.empty()) {
        wait_for_room();
      }
    }
  }

  // ---- consumer side -------------------------------------------------------

  /// The oldest item, or nothing when empty.
  std::optional<T> try_pop() {
    const std::size_t r = read_.load(std::memory_order_relaxed); // ours
    if (r == write_cache_) {
      // acquire: pairs with the producer's publication of write_, so the
      // item's construction happens before we read it.
      write_cache_ = write_.load(std::memory_order_acquire);
      if (r == write_cache_) {
        return std::nullopt;
      }
    }
    T* p = slot(r);
    std::optional<T> out(std::move(*p));
    std::destroy_at(p);
    publish_read(r + 1);
    return out;
  }

  /// Moves the oldest item into `out` (assigning over it); false when empty.
  /// try_pop() without the std::optional.
  bool try_pop(T& out) {
    const std::size_t r = read_.load(std::memory_order_relaxed); // ours
    if (r == write_cache_) {
      write_cache_ = write_.load(std::memory_order_acquire); // as in try_pop()
      if (r == write_cache_) {
        return false;
      }
    }
    T* p = slot(r);
    out = std::move(*p);
    std::destroy_at(p);
    publish_read(r + 1);
    return true;
  }

  /// Moves up to out.size() items into `out` (assigning over what is there),
  /// with a single index update; returns how many were popped. If a move
  /// assignment throws, the items before it are popped (and in `out`), that
  /// item and the ones after it stay in the buffer, and the exception
  /// propagates.
  std::size_t try_pop_bulk(std::span<T> out) {
    const std::size_t r = read_.load(std::memory_order_relaxed);
    std::size_t available = write_cache_ - r;
    if (available < out.size()) {
      write_cache_ = write_.load(std::memory_order_acquire); // as in try_pop
      available = write_cache_ - r;
    }
    const std::size_t n = std::min(available, out.size());
    if (n == 0) {
      return 0;
    }
    if constexpr (std::is_nothrow_move_assignable_v<T>) {
      // Two contiguous runs, as in try_push_bulk.
      const std::size_t at = r & mask_;
      const std::size_t first = std::min(n, capacity_ - at);
      std::move(slots_ + at, slots_ + at + first, out.data());
      std::destroy_n(slots_ + at, first);
      std::move(slots_, slots_ + (n - first), out.data() + first);
      std::destroy_n(slots_, n - first);
    } else {
      std::size_t i = 0;
      try {
        for (; i < n; ++i) {
          T* p = slot(r + i);
          out[i] = std::move(*p);
          std::destroy_at(p);
        }
      } catch (...) {
        if (i > 0) {
          publish_read(r + i); // the ones moved out and destroyed are gone
        }
        throw;
      }
    }
    publish_read(r + n);
    return n;
  }

  /// Blocking pop: spins briefly, then sleeps until an item arrives.
  T pop() {
    for (;;) {
      if (auto item = try_pop()) {
        return std::move(*item);
      }
      wait_for_item();
    }
  }

  /// Blocking bulk pop: fills all of `out`.
  void pop_bulk(std::span<T> out) {
    while (!out.empty()) {
      const std::size_t n = try_pop_bulk(out);
      out = out.subspan(n);
      if (!out.empty()) {
        wait_for_item();
      }
    }
  }

private:
  static std::size_t round_up(std::size_t n) {
    if (n == 0 || n > (std::size_t{1} << (8 * sizeof(std::size_t) - 2)) / sizeof(T)) {
      throw shardpoint::bad_parameter_error(
          "shardpoint: ring_buffer: capacity must be at least 1 and fit in memory");
    }
    return std::bit_ceil(n);
  }

  T* slot(std::size_t index) const noexcept { return slots_ + (index & mask_); }

  // The slot array starts on a cache_line boundary and its size is rounded up to
  // whole cache_line blocks: no other heap object (which another thread could
  // be writing) shares its first or last line, and for item sizes that divide
  // 64 every line holds whole items, so "once per line" below means once per
  // line.
  static constexpr std::align_val_t slot_alignment{std::max(alignof(T), detail::cache_line)};
  static std::size_t slot_bytes(std::size_t capacity) noexcept {
    const std::size_t block = static_cast<std::size_t>(slot_alignment);
    return (capacity * sizeof(T) + block - 1) / block * block;
  }

  // Single-item pushes are tuned by measurement (bench/bench_ring_buffer.cpp;
  // README, "Ring buffer"). Reloading read_ only when the buffer looks full
  // left single-item throughput between two cores at 0.4-1.0x that of
  // boost::lockfree::spsc_queue (which loads the other index on every
  // operation), depending on little more than where the compiler placed the
  // polling loops: a consumer polling a nearly empty buffer takes each item
  // as soon as it is published, so every item moves write_'s line and the
  // slot's line between the cores while the producer is still writing them.
  // Two producer-side changes made it 1.3-2.1x boost's (medians over eight
  // g++ and clang++ builds with different code alignment):
  //
  //  * refresh_interval: the producer also reloads read_ once every 32
  //    pushes. This alone gave 1.2-2.0x; every 8 to 64 measured alike,
  //    every 256 no better than never, every push (boost's way) as well
  //    with g++ but only at parity with clang++. Our reading of why: taking
  //    the consumer's line now and then delays the consumer's next index
  //    store, so it falls behind and takes items in runs, one line transfer
  //    for several items. The load is an acquire for the same reason as the
  //    one on a full buffer.
  //  * prefetch_ahead_of: the producer asks for the slot line 1 KiB ahead,
  //    once per line, so that fetching it back from the consumer's cache
  //    (which read it one lap ago) overlaps the pushes in between instead of
  //    stalling the one that writes it (clang++ builds: 1.3-1.4x -> 1.7-1.8x;
  //    g++ builds unchanged). Only a slot the cached read_ says is free is
  //    prefetched, never one the consumer has yet to read. A prefetch is a
  //    hint that reads and writes nothing, so it is no data race and orders
  //    nothing. It is a write prefetch where the target has one (prefetchw,
  //    e.g. -march=native), a read prefetch (prefetcht0) on baseline x86-64.
  static constexpr std::size_t refresh_interval = 32;
  static constexpr std::size_t prefetch_bytes = 1024;
  static constexpr std::size_t prefetch_ahead =
      std::max<std::size_t>(1, prefetch_bytes / sizeof(T));
  // Pushes per 64-byte line, as a power of two (every push for T >= 64 B).
  static constexpr std::size_t prefetch_every =
      std::bit_floor(std::max<std::size_t>(1, 64 / sizeof(T)));

  void prefetch_ahead_of(std::size_t w) const noexcept {
#if defined(__GNUC__) || defined(__clang__)
    if ((w & (prefetch_every - 1)) == 0 && w + prefetch_ahead - read_cache_ < capacity_) {
      __builtin_prefetch(slot(w + prefetch_ahead), 1);
    }
#else
    (void)w;
#endif
  }

  // release: the item's construction (resp. destruction) happens before the
  // other side's acquire load of the index. Then the hot half of the wake-up
  // handshake (see detail::light_barrier): either we see the other side's
  // "waiting" flag and notify, or it sees our index and does not sleep. The
  // flags sit on a line of their own, written only around a sleep, so the
  // load hits in cache.
  void publish_write(std::size_t w) {
    write_.store(w, std::memory_order_release);
    detail::light_barrier(asymmetric_);
    if (consumer_waiting_.load(std::memory_order_relaxed)) {
      write_.notify_one();
    }
  }

  void publish_read(std::size_t r) {
    read_.store(r, std::memory_order_release);
    detail::light_barrier(asymmetric_);
    if (producer_waiting_.load(std::memory_order_relaxed)) {
      read_.notify_one();
    }
  }

  static constexpr int spins = 256;

  // Producer: waits until the consumer moves read_ past a full buffer.
  void wait_for_room() {
    sleep_while_equal(read_, producer_waiting_, write_.load(std::memory_order_relaxed) - capacity_);
  }

  // Consumer: waits until the producer moves write_ past an empty buffer.
  void wait_for_item() {
    sleep_while_equal(write_, consumer_waiting_, read_.load(std::memory_order_relaxed));
  }

  // Spins, then sleeps, while the other side's `index` still equals `value`.
  // The flag store, heavy barrier and index load are the sleeping half of the
  // handshake with publish_*().
  static void sleep_while_equal(const std::atomic<std::size_t>& index, std::atomic<bool>& waiting,
                                std::size_t value) {
    for (int i = 0; i < spins; ++i) {
      if (index.load(std::memory_order_acquire) != value) {
        return;
      }
      detail::cpu_relax();
    }
    waiting.store(true, std::memory_order_relaxed);
    detail::heavy_barrier();
    if (index.load(std::memory_order_acquire) == value) {
      index.wait(value, std::memory_order_acquire);
    }
    waiting.store(false, std::memory_order_relaxed);
  }

  // Read-only after construction: shared by both sides without contention.
  const std::size_t capacity_;
  const std::size_t mask_;
  T* const slots_;
  const bool asymmetric_ = detail::asymmetric_barriers();

  // Producer's line: its index and its cache of the consumer's.
  alignas(detail::cache_line) std::atomic<std::size_t> write_{0};
  std::size_t read_cache_ = 0;

  // Consumer's line: its index and its cache of the producer's.
  alignas(detail::cache_line) std::atomic<std::size_t> read_{0};
  std::size_t write_cache_ = 0;

  // Written only around a sleep; on their own line so that the hot indices'
  // lines are not invalidated by them.
  alignas(detail::cache_line) std::atomic<bool> producer_waiting_{false};
  std::atomic<bool> consumer_waiting_{false};
  // alignas on the members makes the class 128-byte aligned, so its size is
  // a whole number of such blocks: whatever is placed next starts on a fresh one.
};

} // namespace shardpoint::runtime

#endif // SHARDPOINT_RUNTIME_RING_BUFFER_HPP
