// queue_manager: zero copy, order, completion.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include <shardpoint/runtime/queue_manager.hpp>

using namespace shardpoint::runtime;

TEST_CASE("the device sees the user's pointers, in order, and completes them") {
  queue_manager qm({"image", "mask"}, {"logits"}, 4);
  CHECK(qm.input_index("mask") == 1);
  // The library's errors are shardpoint::error by category (error.hpp).
  CHECK_THROWS_WITH_AS((void)qm.output_index("nope"),
                       "shardpoint: queue_manager: no output tensor named 'nope'",
                       shardpoint::bad_parameter_error);
  constexpr int n = 1000;
  std::vector<float> inputs(n);
  std::vector<float> outputs(n, 0.0F);
  std::vector<completion> done(n);
  std::thread device([&] {
    for (int i = 0; i < n; ++i) {
      const input_ref in = qm.next_input(0);
      const output_ref out = qm.next_output(0);
      // Zero copy: exactly the user's addresses.
      CHECK(in.data == &inputs[static_cast<std::size_t>(i)]);
      CHECK(out.data == &outputs[static_cast<std::size_t>(i)]);
      CHECK(in.bytes == sizeof(float));
      *static_cast<float*>(out.data) = *static_cast<const float*>(in.data) * 2;
      out.done->set();
    }
  });
  for (int i = 0; i < n; ++i) { // the user enqueues while the device runs
    inputs[static_cast<std::size_t>(i)] = static_cast<float>(i);
    qm.enqueue_input(0, &inputs[static_cast<std::size_t>(i)], sizeof(float));
    qm.enqueue_output(0, &outputs[static_cast<std::size_t>(i)], sizeof(float),
                      &done[static_cast<std::size_t>(i)]);
  }
  done[n - 1].wait();
  device.join();
  for (int i = 0; i < n; ++i) {
    CHECK(done[static_cast<std::size_t>(i)].ready());
    CHECK(outputs[static_cast<std::size_t>(i)] == static_cast<float>(2 * i));
  }
}
