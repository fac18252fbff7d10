// ring_buffer: FIFO order through small capacities (wrapping many times),
// owning types, bulk operations, blocking operations across threads.
#include <doctest/doctest.h>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <shardpoint/runtime/ring_buffer.hpp>

using shardpoint::runtime::ring_buffer;

namespace {

// Counts live objects, so that leaks and double destruction show.
struct tracked {
  static inline std::atomic<int> live{0};
  int value;
  explicit tracked(int v) : value(v) { ++live; }
  tracked(const tracked& o) : value(o.value) { ++live; }
  tracked(tracked&& o) noexcept : value(o.value) { ++live; }
  tracked& operator=(const tracked&) = default;
  tracked& operator=(tracked&&) noexcept = default;
  ~tracked() { --live; }
};

// Counts live objects like `tracked`, and throws from its copy constructor
// or its move assignment when the respective countdown reaches zero.
struct fragile {
  static inline int live = 0;
  static inline int copies_left = -1;
  static inline int assignments_left = -1;
  int value;
  explicit fragile(int v) : value(v) { ++live; }
  fragile(const fragile& o) : value(o.value) {
    if (copies_left-- == 0) {
      throw std::runtime_error("copy");
    }
    ++live;
  }
  fragile(fragile&& o) noexcept : value(o.value) { ++live; }
  fragile& operator=(const fragile&) = default;
  fragile& operator=(fragile&& o) { // not noexcept: bulk pop takes the per-item path
    if (assignments_left-- == 0) {
      throw std::runtime_error("assignment");
    }
    value = o.value;
    return *this;
  }
  ~fragile() { --live; }
};

// `count` fragiles valued from, from + step, ...
std::vector<fragile> fragiles(int from, int count, int step = 1) {
  std::vector<fragile> v;
  v.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    v.emplace_back(from + i * step);
  }
  return v;
}

// `count` placeholders of value -1 to pop into.
std::vector<fragile> blanks(int count) {
  return fragiles(-1, count, 0);
}

} // namespace

TEST_CASE("capacity is rounded up to a power of two") {
  CHECK(ring_buffer<int>(1).capacity() == 1);
  CHECK(ring_buffer<int>(3).capacity() == 4);
  CHECK(ring_buffer<int>(1000).capacity() == 1024);
  CHECK_THROWS_AS(ring_buffer<int>(0), shardpoint::bad_parameter_error);
}

TEST_CASE("single thread: full, empty, FIFO, wrap-around") {
  ring_buffer<int> q(4);
  CHECK_FALSE(q.try_pop().has_value());
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 4; ++i) {
      CHECK(q.try_push(round * 4 + i));
    }
    CHECK_FALSE(q.try_push(-1));
    CHECK(q.size() == 4);
    for (int i = 0; i < 4; ++i) {
      CHECK(q.try_pop() == round * 4 + i);
    }
    CHECK(q.empty());
  }
}

TEST_CASE("owning types are constructed on push and destroyed on pop and in the destructor") {
  {
    ring_buffer<std::string> q(2);
    const std::string long_text(100, 'x'); // beyond the small-string buffer
    CHECK(q.try_push(long_text));
    CHECK(q.try_emplace(50, 'y'));
    CHECK(q.try_pop() == long_text);
    CHECK(q.try_push(std::string("z")));
    CHECK(q.try_pop() == std::string(50, 'y'));
    std::string out = "old";
    CHECK(q.try_pop(out)); // the out-parameter form moves into `out`
    CHECK(out == "z");
    CHECK_FALSE(q.try_pop(out));
    CHECK(out == "z"); // untouched when empty
    CHECK(q.try_push(long_text));
    // one string left inside: the destructor frees it (ASan would see a leak)
  }
  {
    ring_buffer<tracked> q(8);
    for (int i = 0; i < 5; ++i) {
      CHECK(q.try_emplace(i));
    }
    CHECK(tracked::live == 5);
    CHECK(q.try_pop()->value == 0);
    CHECK(tracked::live == 4);
  }
  CHECK(tracked::live == 0);
}

TEST_CASE("bulk push and pop publish many items at once, partially when short of room") {
  ring_buffer<int> q(8);
  std::vector<int> in(12);
  std::iota(in.begin(), in.end(), 0);
  CHECK(q.try_push_bulk(in) == 8);
  std::vector<int> out(5, -1);
  CHECK(q.try_pop_bulk(out) == 5);
  CHECK(out == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(q.try_push_bulk(std::span<const int>(in).subspan(8)) == 4);
  std::vector<int> rest(10, -1);
  CHECK(q.try_pop_bulk(rest) == 7);
  CHECK(std::vector<int>(rest.begin(), rest.begin() + 7) ==
        std::vector<int>{5, 6, 7, 8, 9, 10, 11});
}

TEST_CASE(
    "bulk push: a throwing copy pushes nothing and leaks nothing, on either side of the wrap") {
  // Copy number 1 is in the run before the end of the slot array, number 3
  // in the run after the wrap.
  for (int throw_at : {1, 3}) {
    CAPTURE(throw_at);
    {
      ring_buffer<fragile> q(8);
      const std::vector<fragile> in = fragiles(0, 6);
      REQUIRE(q.try_push_bulk(in) == 6);
      std::vector<fragile> out = blanks(6);
      REQUIRE(q.try_pop_bulk(out) == 6); // the next push starts at slot 6 of 8
      const int live_before = fragile::live;
      const std::vector<fragile> more = fragiles(100, 5);
      fragile::copies_left = throw_at;
      CHECK_THROWS_AS(q.try_push_bulk(more), std::runtime_error);
      fragile::copies_left = -1;
      CHECK(q.empty());
      CHECK(fragile::live == live_before + 5); // only `more` itself was added
      CHECK(q.try_push_bulk(more) == 5);
      std::vector<fragile> back = blanks(5);
      CHECK(q.try_pop_bulk(back) == 5);
      for (int i = 0; i < 5; ++i) {
        CHECK(back[static_cast<std::size_t>(i)].value == 100 + i);
      }
      CHECK(q.try_push_bulk(more) == 5); // left inside for the destructor
    }
    CHECK(fragile::live == 0);
  }
}

TEST_CASE("bulk pop: a throwing assignment pops the items before it and keeps the rest") {
  {
    ring_buffer<fragile> q(4);
    const std::vector<fragile> in = fragiles(0, 3);
    REQUIRE(q.try_push_bulk(in) == 3);
    std::vector<fragile> out = blanks(2);
    REQUIRE(q.try_pop_bulk(out) == 2);
    REQUIRE(q.try_push_bulk(fragiles(3, 3)) == 3); // items 2..5, wrapping
    std::vector<fragile> four = blanks(4);
    fragile::assignments_left = 2; // the third assignment (item 4) throws
    CHECK_THROWS_AS(q.try_pop_bulk(four), std::runtime_error);
    fragile::assignments_left = -1;
    CHECK(four[0].value == 2);
    CHECK(four[1].value == 3);
    CHECK(four[2].value == -1); // untouched
    CHECK(q.size() == 2);
    CHECK(q.try_pop()->value == 4);
    CHECK(q.try_pop()->value == 5);
    CHECK(q.empty());
    CHECK(q.try_emplace(6)); // left inside for the destructor
  }
  CHECK(fragile::live == 0); // nothing destroyed twice, nothing leaked
}

TEST_CASE("two threads: items through capacities 1 to 1024, in order") {
  // 1024 is larger than the producer's prefetch distance (128 8-byte items),
  // so the prefetching path runs too; the smaller ones never prefetch.
  for (std::size_t capacity : {1, 2, 3, 64, 1024}) {
    CAPTURE(capacity);
    ring_buffer<std::uint64_t> q(capacity);
    constexpr std::uint64_t n = 200'000;
    std::thread producer([&] {
      for (std::uint64_t i = 0; i < n; ++i) {
        q.push(i);
      }
    });
    std::uint64_t mismatches = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      mismatches += q.pop() != i;
    }
    producer.join();
    CHECK(mismatches == 0);
    CHECK(q.empty());
  }
}

TEST_CASE("two threads: 24-byte items, non-blocking operations, many laps") {
  // A size that does not divide a cache line: the producer prefetches on
  // every second push, 42 items ahead, within a capacity of 128.
  struct triple {
    std::uint64_t a, b, c;
  };
  static_assert(sizeof(triple) == 24);
  ring_buffer<triple> q(100);
  REQUIRE(q.capacity() == 128);
  constexpr std::uint64_t n = 300'000;
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < n; ++i) {
      while (!q.try_emplace(triple{i, ~i, i * 3})) {
      }
    }
  });
  std::uint64_t mismatches = 0;
  triple t{};
  for (std::uint64_t i = 0; i < n; ++i) {
    while (!q.try_pop(t)) {
    }
    mismatches += t.a != i || t.b != ~i || t.c != i * 3;
  }
  producer.join();
  CHECK(mismatches == 0);
  CHECK(q.empty());
}

TEST_CASE("two threads: strings, bulk and single mixed, try and blocking mixed") {
  ring_buffer<std::string> q(16);
  constexpr int n = 50'000;
  std::thread producer([&] {
    std::vector<std::string> batch;
    for (int i = 0; i < n;) {
      if (i % 3 == 0) {
        batch.clear();
        for (int k = 0; k < 5 && i + k < n; ++k) {
          batch.push_back("item " + std::to_string(i + k));
        }
        q.push_bulk(batch);
        i += static_cast<int>(batch.size());
      } else {
        while (!q.try_push("item " + std::to_string(i))) {
          std::this_thread::yield();
        }
        ++i;
      }
    }
  });
  int mismatches = 0;
  std::vector<std::string> chunk(7);
  for (int i = 0; i < n;) {
    if (i % 2 == 0 && n - i >= 7) {
      q.pop_bulk(chunk);
      for (const auto& s : chunk) {
        mismatches += s != "item " + std::to_string(i++);
      }
    } else {
      std::string s;
      if (i % 4 == 1 && q.try_pop(s)) {
        mismatches += s != "item " + std::to_string(i++);
      } else if (i % 4 != 1) {
        mismatches += q.pop() != "item " + std::to_string(i++);
      }
    }
  }
  producer.join();
  CHECK(mismatches == 0);
}
