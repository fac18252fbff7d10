// `simulate --schedule`: training steps on a sharded model and on plain
// stage times, through the command line -- the closed forms, the placement
// rules, the trace's F/B/W events, and every bad input with its exit code
// and no file left behind.
#include <sstream>

#include <nlohmann/json.hpp>

#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/units.hpp>

#include "onnx_support.hpp"

namespace sp = shardpoint::onnx;
namespace fs = std::filesystem;
using onnx_test::expect_failure;
using onnx_test::q;
using onnx_test::run_json;
using onnx_test::shardpoint_cli;
using onnx_test::temp_dir;
using onnx_test::write_file;

TEST_CASE("stage times: GPipe and 1F1B meet (m + p - 1)(t_f + t_b), in flight m and p - i") {
  temp_dir dir;
  for (const int p : {1, 3, 4}) {
    for (const int m : {1, 4, 7}) {
      std::string times = "2";
      for (int s = 1; s < p; ++s) {
        times += ",2";
      }
      for (const std::string schedule : {"gpipe", "1f1b"}) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(schedule);
        const auto j = run_json("simulate --stage-times " + times + " --schedule " + schedule +
                                    " --batches-per-step " + std::to_string(m) +
                                    " --backward-ratio 1.5 --activation-bytes 100",
                                dir);
        CHECK(j["makespan"] == (m + p - 1) * (2 + 3.0));
        CHECK(j["bubble_fraction"].get<double>() == doctest::Approx(double(p - 1) / (m + p - 1)));
        REQUIRE(j["stages"].size() == static_cast<std::size_t>(p));
        for (int i = 0; i < p; ++i) {
          const auto& st = j["stages"][static_cast<std::size_t>(i)];
          const int want = schedule == "gpipe" ? m : std::min(p - i, m);
          CHECK(st["in_flight"] == want);
          CHECK(st["activation_peak"] == 100 * want);
          CHECK(st["backward"] == 3.0);
        }
      }
    }
  }
}

TEST_CASE("the table: times without exponents, bytes in units, as the JSON's") {
  // A trial read 1.23e+04 for a forward time and raw byte counts.
  temp_dir dir;
  const std::string args = "simulate --stage-times 12345.5,2e9,0.25 --schedule 1f1b "
                           "--batches-per-step 4 --activation-bytes 3GiB,1000,1536";
  const auto t = shardpoint_cli(args, dir.path());
  REQUIRE(t.code == 0);
  CHECK(t.out.find("e+") == std::string::npos);
  const auto j = run_json(args, dir);
  std::istringstream rows(t.out);
  std::string line;
  std::getline(rows, line); // the run
  std::getline(rows, line); // the header
  for (const auto& st : j["stages"]) {
    REQUIRE(std::getline(rows, line));
    std::istringstream cells(line);
    std::string stage, device, forward, backward, weight, in_flight;
    cells >> stage >> device >> forward >> backward >> weight >> in_flight;
    CHECK(std::stod(forward) == st["forward"].get<double>());
    CHECK(std::stod(backward) == st["backward"].get<double>());
    CHECK(std::stoi(in_flight) == st["in_flight"].get<int>());
    std::string rest;
    std::getline(cells, rest);
    CHECK(rest.find(shardpoint::io::human_bytes(st["activation_bytes"].get<double>())) !=
          std::string::npos);
    CHECK(rest.find(shardpoint::io::human_bytes(st["activation_peak"].get<double>())) !=
          std::string::npos);
  }
  CHECK(t.out.find("activations/mb") != std::string::npos);
  CHECK(t.out.find("3.00 GiB") != std::string::npos);
  CHECK(t.out.find("makespan " + shardpoint::detail::number(j["makespan"].get<double>()) +
                   " units") != std::string::npos);
}

TEST_CASE("stage times: interleaved and zb-h1 meet theirs; the trace holds F, B and W") {
  temp_dir dir;
  // p = 2 devices, v = 2: four stages of forward 1, backward 2.
  auto j = run_json("simulate --stage-times 1,1,1,1 --schedule interleaved --virtual-stages 2 "
                    "--batches-per-step 4 --trace " +
                        q(dir / "i.json"),
                    dir);
  CHECK(j["makespan"] == 4 * 2 * 3.0 + (2 - 1) * 3.0); // m v (t_f + t_b) + (p - 1)(t_f + t_b)
  CHECK(j["devices"].size() == 2);
  CHECK(j["stages"][3]["device"] == 1);
  auto trace = nlohmann::json::parse(onnx_test::read_file(dir / "i.json"));
  CHECK(trace["traceEvents"].size() == 2 + 2 * 4 * 4); // thread names + F and B of 4 x 4

  // zb-h1, p = 4, m = 8, t_f = 1, B = W = 1: m (t_f + t_b + t_w) + (p - 1)(t_f + t_b - t_w).
  j = run_json("simulate --stage-times 1,1,1,1 --schedule zb-h1 --weight-share 0.5 "
               "--batches-per-step 8 --trace " +
                   q(dir / "z.json"),
               dir);
  CHECK(j["makespan"] == 8 * 3.0 + 3 * 1.0);
  CHECK(j["stages"][0]["weight_gradient"] == 1.0);
  trace = nlohmann::json::parse(onnx_test::read_file(dir / "z.json"));
  std::map<std::string, int> by_category;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M") {
      continue;
    }
    // Chrome's trace-event format: a complete event has ts and dur in us.
    CHECK(e["ph"] == "X");
    CHECK(e["dur"].get<double>() >= 0);
    CHECK(e["ts"].get<double>() >= 0);
    const std::string name = e["name"];
    CHECK(std::string(1, name[0]) == (e["cat"] == "forward"    ? "F"
                                      : e["cat"] == "backward" ? "B"
                                                               : "W"));
    CHECK(name.substr(1) == std::to_string(e["args"]["stage"].get<int>()));
    ++by_category[e["cat"]];
  }
  CHECK(by_category ==
        std::map<std::string, int>{{"forward", 32}, {"backward", 32}, {"weight-gradient", 32}});

  // Measured times: the same as the ratio and the share that give them.
  const std::string zb = "simulate --stage-times 1,2,1,1 --schedule zb-h1 --batches-per-step 8";
  CHECK(run_json(zb + " --backward-times 2,4,2,2 --weight-times 1,2,1,1", dir) ==
        run_json(zb + " --backward-ratio 2 --weight-share 0.5", dir));
  const auto slow = run_json(zb + " --backward-times 2,9,2,2", dir);
  CHECK(slow["stages"][1]["backward"] == 9.0);
  CHECK(slow["stages"][1]["weight_gradient"] == 4.5); // the share of the measured backward
  CHECK(slow["makespan"].get<double>() > j["makespan"].get<double>());

  // Threads: the virtual makespan at least, and near it (10%: the order is
  // what is checked, not the machine's speed; test_schedules.cpp).
  const auto threads = run_json("simulate --stage-times 1,1,1,1 --schedule 1f1b "
                                "--batches-per-step 8 --mode threads --unit-us 10000",
                                dir);
  CHECK(threads["mode"] == "threads");
  CHECK(threads["makespan"].get<double>() >= 33.0);
  CHECK(threads["makespan"].get<double>() <= 33.0 * 1.10);
}

TEST_CASE("a sharded model: forward = the stage's cost, backward its ratio, activations") {
  temp_dir dir;
  sp::save_model(sp::synth_resnet50(), dir / "resnet50.onnx");
  const std::string base = "simulate --input-model " + q(dir / "resnet50.onnx") +
                           " --manual-sharding-config " +
                           q(fs::path(SHARDPOINT_SOURCE_DIR) / "examples/resnet50/shard.yaml");
  const auto forward = run_json(base + " --batches-per-step 8", dir);
  const auto j = run_json(base + " --batches-per-step 8 --schedule 1f1b", dir);
  REQUIRE(j["stages"].size() == 4);
  double path = 0;
  double slowest = 0;
  for (std::size_t s = 0; s < 4; ++s) {
    const auto& st = j["stages"][s];
    CHECK(st["forward"] == forward["stages"][s]["cost"].get<double>());
    CHECK(st["backward"] == 2 * st["forward"].get<double>());
    CHECK(st["in_flight"] == 4 - static_cast<int>(s));
    CHECK(st["activation_bytes"].get<std::int64_t>() > 0);
    CHECK(st["activation_peak"] ==
          st["activation_bytes"].get<std::int64_t>() * st["in_flight"].get<std::int64_t>());
    path += 3 * st["forward"].get<double>();
    slowest = std::max(slowest, 3 * st["forward"].get<double>());
  }
  // Bounds any schedule meets: one micro-batch's path; the slowest stage's work.
  CHECK(j["makespan"].get<double>() >= path);
  CHECK(j["makespan"].get<double>() >= 8 * slowest);
  CHECK(j["makespan"].get<double>() <= path + 7 * slowest * 2);

  // With recomputation a stage holds only what it reads of the others, and
  // its backward runs its forward again.
  const auto r = run_json(base + " --batches-per-step 8 --schedule 1f1b --recompute", dir);
  CHECK(r["makespan"].get<double>() > j["makespan"].get<double>());
  for (std::size_t s = 0; s < 4; ++s) {
    CHECK(r["stages"][s]["activation_bytes"].get<std::int64_t>() <=
          j["stages"][s]["activation_bytes"].get<std::int64_t>());
  }
  CHECK(r["stages"][0]["activation_bytes"] == 0); // the model's input is not a stage's output
  CHECK(r["stages"][1]["activation_bytes"].get<std::int64_t>() <
        j["stages"][1]["activation_bytes"].get<std::int64_t>() / 10);
  // A micro-batch of 4 samples holds 4 times the bytes of one (the seed
  // model's batch is its free dimension).
  const auto four =
      run_json(base + " --batches-per-step 8 --schedule 1f1b --micro-batch-size 4", dir);
  CHECK(four["stages"][0]["activation_bytes"] ==
        4 * j["stages"][0]["activation_bytes"].get<std::int64_t>());
  // The stage times count the model's batch, the activations a micro-batch:
  // said when the two differ (a trial's --dim N=8 ran times of 8 samples
  // beside activations of one, unsaid).
  const auto said = [&](const nlohmann::json& run) {
    std::vector<std::string> out;
    for (const auto& e : run["estimates"]) {
      if (e.get<std::string>().starts_with("the stage times count")) {
        out.push_back(e.get<std::string>());
      }
    }
    return out;
  };
  const std::string give =
      " (--micro-batch-size): give both the same batch (the model's with --dim or --input-shape)";
  CHECK(said(j).empty());
  CHECK(said(four) == std::vector<std::string>{"the stage times count one sample (the model's "
                                               "batch is free or 1), the activations 4" +
                                               give});
  const std::string sized = base + " --batches-per-step 8 --schedule 1f1b --dim N=4";
  CHECK(said(run_json(sized, dir)) ==
        std::vector<std::string>{"the stage times count 4 samples (input 'data' has its batch "
                                 "sized to 4 (dimension 'N')), the activations 1" +
                                 give});
  CHECK(said(run_json(sized + " --micro-batch-size 4", dir)).empty());
  // The table.
  const auto table = shardpoint_cli(base + " --batches-per-step 8 --schedule zb-h1", dir.path());
  CHECK(table.code == 0);
  CHECK(table.out.find("schedule zb-h1 (virtual), 8 micro-batches, 4 stages on 4 devices") !=
        std::string::npos);
  CHECK(table.out.find("device 3 |") != std::string::npos);
}

TEST_CASE("placement: stages on the schedule's devices, or exit 3 naming the stage") {
  temp_dir dir;
  sp::save_model(sp::synth_resnet50(), dir / "resnet50.onnx");
  const auto model = q(dir / "resnet50.onnx");
  // Stage s on device s mod 2: interleaved with two virtual stages a device.
  write_file(dir / "v2.yaml", "- {node: resnetv17_stage1__plus0, device: 0, stage: 0}\n"
                              "- {node: resnetv17_stage4_batchnorm2_fwd, device: 1, stage: 1}\n"
                              "- {node: resnetv17_stage4__plus0, device: 0, stage: 2}\n"
                              "- {node: resnetv17_dense0_fwd, device: 1, stage: 3}\n");
  const std::string v2 = "simulate --input-model " + model + " --manual-sharding-config " +
                         q(dir / "v2.yaml") + " --batches-per-step 4";
  const auto j = run_json(v2 + " --schedule interleaved --virtual-stages 2", dir);
  CHECK(j["devices"].size() == 2);
  CHECK(j["virtual_stages"] == 2);
  expect_failure(dir, v2 + " --schedule 1f1b", 3,
                 "stages 0 and 2 share device 0: the 1f1b schedule runs each stage on a device "
                 "of its own; give each stage its own device, or run stages that share devices as "
                 "--schedule interleaved --virtual-stages V");
  expect_failure(dir,
                 "simulate --input-model " + model + " --manual-sharding-config " +
                     q(fs::path(SHARDPOINT_SOURCE_DIR) / "examples/resnet50/shard.yaml") +
                     " --batches-per-step 4 --schedule interleaved --virtual-stages 2",
                 3,
                 "stage 2 is on device 2, but with 2 virtual stages a device it runs on stage 0's "
                 "device (0)");
  expect_failure(dir, v2 + " --schedule interleaved --virtual-stages 3", 3,
                 "4 stages are not 3 virtual stages a device");
}

TEST_CASE("a forward run too long for a timeline says so; its trace is refused, not empty") {
  temp_dir dir;
  sp::save_model(sp::synth_resnet50(), dir / "resnet50.onnx");
  const std::string base =
      "simulate --input-model " + q(dir / "resnet50.onnx") + " --manual-sharding-config " +
      q(fs::path(SHARDPOINT_SOURCE_DIR) / "examples/resnet50/shard.yaml") + " --batches-per-step ";
  // 4 stages x 1,000,000 micro-batches: kept, drawn (B a multiple of the 4
  // stages, as PopRT's rules want).
  auto r = shardpoint_cli(base + "1000000", dir.path());
  REQUIRE(r.code == 0);
  CHECK(r.out.find("timeline (a row per device") != std::string::npos);
  // More: the metrics, and a line saying why there is no timeline.
  r = shardpoint_cli(base + "1000004", dir.path());
  REQUIRE(r.code == 0);
  CHECK(r.out.find("makespan ") != std::string::npos);
  CHECK(r.out.find("timeline: not drawn (more than 4000000 stage micro-batches") !=
        std::string::npos);
  expect_failure(dir, base + "1000004 --trace " + q(dir / "t.json"), 2,
                 "--trace: 4 stages x 1000004 micro-batches are more operations than a trace "
                 "keeps (4000000)");
}

TEST_CASE("an option of the other kind of run is refused, never ignored") {
  temp_dir dir;
  sp::save_model(sp::synth_resnet50(), dir / "resnet50.onnx");
  const std::string base = "simulate --input-model " + q(dir / "resnet50.onnx") +
                           " --manual-sharding-config " +
                           q(fs::path(SHARDPOINT_SOURCE_DIR) / "examples/resnet50/shard.yaml") +
                           " --batches-per-step 8 --trace " + q(dir / "t.json") + " ";
  for (const std::string training :
       {"--virtual-stages 2", "--backward-ratio 3", "--weight-share 0.25", "--recompute",
        "--micro-batch-size 4", "--backward-times 1,1,1,1", "--weight-times 0,0,0,0"}) {
    expect_failure(dir, base + training, 1,
                   training.substr(0, training.find(' ')) +
                       " describes a training step; give --schedule (or drop it)");
  }
  expect_failure(dir, base + "--schedule 1f1b --queue-depth 2", 1,
                 "--queue-depth is for forward passes");
  expect_failure(dir, base + "--schedule 1f1b --weight-share 0.25", 1,
                 "--weight-share splits the weight gradient from the backward, which only zb-h1");
  for (const char* schedule : {"gpipe", "1f1b", "zb-h1"}) {
    expect_failure(dir, base + "--schedule " + schedule + " --virtual-stages 2", 1,
                   "--virtual-stages puts several stages on a device, which only the "
                   "interleaved schedule runs");
  }
  expect_failure(dir, base + "--unit-us 5", 1, "--unit-us is the length of a cost unit");
  // Each is taken by its own kind of run.
  CHECK(shardpoint_cli(base + "--schedule 1f1b --micro-batch-size 4", dir.path()).code == 0);
  CHECK(shardpoint_cli(base + "--queue-depth 2", dir.path()).code == 0);
  // Forward passes in threads are bounded as a schedule's are: refused
  // before a thread starts when the virtual run says they would take over
  // 10 minutes.
  expect_failure(dir, base + "--mode threads --unit-us 10000000", 2,
                 "the threaded run would take ");
  // draw's timeline schedule is its own, not the memory bars' training
  // option: with --inference bars it is still taken.
  CHECK(shardpoint_cli("draw --input-model " + q(dir / "resnet50.onnx") +
                           " --manual-sharding-config " +
                           q(fs::path(SHARDPOINT_SOURCE_DIR) / "examples/resnet50/shard.yaml") +
                           " --schedule 1f1b --inference --output " + q(dir / "p.html"),
                       dir.path())
            .code == 0);
}

TEST_CASE("bad input: one line, its exit code, no output") {
  temp_dir dir;
  const std::string t = " --trace " + q(dir / "t.json");
  expect_failure(dir, "simulate --stage-times 1,1 --batches-per-step 4" + t, 1,
                 "stage times need a training schedule (--schedule)");
  expect_failure(dir,
                 "simulate --stage-times 1,1 --schedule 1f1b --batches-per-step 4 --cost flops" + t,
                 1, "--cost prices a model's nodes; --stage-times gives the times");
  expect_failure(
      dir, "simulate --stage-times 1,1,1,1 --schedule 1f1b --batches-per-step 8 --num-ipus 2" + t,
      3, "the schedule runs 4 stages on 4 devices but --num-ipus is 2");
  expect_failure(dir, "simulate --schedule 1f1b --batches-per-step 4" + t, 1,
                 "--input-model is required (or --stage-times with --schedule)");
  expect_failure(dir, "simulate --stage-times 1,1 --schedule zb-h2 --batches-per-step 4" + t, 2,
                 "--schedule: 'zb-h2' is not one of gpipe, 1f1b, interleaved, zb-h1");
  expect_failure(dir, "simulate --stage-times 1,1,1 --schedule zb-h1 --batches-per-step 2" + t, 2,
                 "zb-h1 needs at least as many micro-batches (2) as devices (3)");
  expect_failure(dir, "simulate --stage-times 1,-1 --schedule 1f1b --batches-per-step 2" + t, 2,
                 "--stage-times: stage 1's time must be in [0, 1e12], not -1");
  expect_failure(dir, "simulate --stage-times 1,2e12 --schedule 1f1b --batches-per-step 2" + t, 2,
                 "--stage-times: stage 1's time must be in [0, 1e12], not 2000000000000");
  expect_failure(dir,
                 "simulate --stage-times 1,1 --activation-bytes 1,2,3 --schedule 1f1b "
                 "--batches-per-step 2" +
                     t,
                 2, "--activation-bytes: 3 activation sizes for 2 stages");
  expect_failure(dir,
                 "simulate --stage-times 1,1,1 --schedule interleaved --virtual-stages 2 "
                 "--batches-per-step 2" +
                     t,
                 3, "3 stages are not 2 virtual stages a device");
  expect_failure(dir,
                 "simulate --stage-times 1,1 --schedule 1f1b --batches-per-step 1000000000" + t, 2,
                 "more than a training schedule runs");
  expect_failure(dir, "simulate --stage-times 1,1 --schedule interleaved --batches-per-step 2" + t,
                 2, "the interleaved schedule needs --virtual-stages of at least 2");
  expect_failure(dir,
                 "simulate --stage-times 1,1 --activation-bytes 1099511627777 --schedule 1f1b "
                 "--batches-per-step 2" +
                     t,
                 2, "--activation-bytes: stage 0's bytes must be in [0, 2^40]");
  expect_failure(dir,
                 "simulate --stage-times 1e6,1e6 --schedule 1f1b --batches-per-step 2 --mode "
                 "threads" +
                     t,
                 2, "the threaded run would take 900 s, more than 600");
  expect_failure(dir, "simulate --stage-times '' --schedule 1f1b --batches-per-step 2" + t, 2,
                 "--stage-times: an empty value in ''");
  expect_failure(dir, "simulate --stage-times 1,,1 --schedule 1f1b --batches-per-step 2" + t, 2,
                 "--stage-times: an empty value in '1,,1'");
  expect_failure(dir, "simulate --stage-times 1,1, --schedule 1f1b --batches-per-step 2" + t, 2,
                 "--stage-times: an empty value in '1,1,'");
  expect_failure(dir, "simulate --stage-times 1,x --schedule 1f1b --batches-per-step 2" + t, 2,
                 "--stage-times: 'x' is not a number in '1,x'");
  // Each element read as every number is: '+4' is 4, nan and 1e400 are not
  // numbers a double holds, a count list takes 1e3.
  CHECK(run_json("simulate --stage-times 1,+4 --schedule 1f1b --batches-per-step 2",
                 dir)["stages"][1]["forward"] == 4.0);
  expect_failure(dir, "simulate --stage-times 1,nan --schedule 1f1b --batches-per-step 2" + t, 2,
                 "--stage-times: 'nan' is not a number in '1,nan'");
  expect_failure(dir, "simulate --stage-times 1,1e400 --schedule 1f1b --batches-per-step 2" + t, 2,
                 "--stage-times: '1e400' is beyond a double's range (about 1.8e308)");
  expect_failure(dir,
                 "simulate --stage-times 1,1 --schedule 1f1b --batches-per-step 2 "
                 "--backward-ratio 1e400" +
                     t,
                 2, "--backward-ratio: '1e400' is beyond a double's range");
  expect_failure(dir, "simulate --stage-times 1,1 --schedule 1f1b --batches-per-step 1e400" + t, 2,
                 "--batches-per-step: Value 1e400 not in range 1 to 1073741824");
  // Activation bytes are sizes, read as every size is (a trial's 1GiB was
  // refused where --device-memory took it).
  const auto sized = run_json("simulate --stage-times 1,1 --schedule 1f1b --batches-per-step 2 "
                              "--activation-bytes 1e3,1.5KiB",
                              dir);
  CHECK(sized["stages"][0]["activation_bytes"] == 1000);
  CHECK(sized["stages"][1]["activation_bytes"] == 1536);
  expect_failure(dir,
                 "simulate --stage-times 1,1 --schedule 1f1b --batches-per-step 2 "
                 "--activation-bytes 1,1.3" +
                     t,
                 2, "--activation-bytes '1.3' is not a whole number of bytes");
  expect_failure(dir,
                 "simulate --stage-times 1,1 --schedule 1f1b --batches-per-step 2 "
                 "--activation-bytes 1,,2" +
                     t,
                 2, "--activation-bytes: an empty value in '1,,2'");
  expect_failure(dir,
                 "simulate --stage-times 1,1 --schedule 1f1b --batches-per-step 2 "
                 "--backward-times 2" +
                     t,
                 2, "--backward-times gives 1 times for 2 stages: give one a stage");
  expect_failure(dir,
                 "simulate --stage-times 1,1 --schedule zb-h1 --batches-per-step 2 "
                 "--weight-times 1,3" +
                     t,
                 2,
                 "--weight-times: stage 1's weight gradient (3) is longer than its backward (2)");
  // Measured times or the ratio and the share, not both.
  expect_failure(dir,
                 "simulate --stage-times 1,1 --schedule 1f1b --batches-per-step 2 "
                 "--backward-times 2,2 --backward-ratio 3" +
                     t,
                 1, "--backward-ratio excludes --backward-times");
  expect_failure(dir,
                 "simulate --stage-times 1,1 --schedule zb-h1 --batches-per-step 2 "
                 "--weight-times 1,1 --weight-share 0.9" +
                     t,
                 1, "--weight-share excludes --weight-times");
  expect_failure(dir,
                 "simulate --stage-times 1 --schedule 1f1b --backward-ratio -1 "
                 "--batches-per-step 2" +
                     t,
                 2, "--backward-ratio");
  sp::save_model(sp::synth_resnet50(), dir / "m.onnx");
  expect_failure(dir,
                 "simulate --input-model " + q(dir / "m.onnx") +
                     " --stage-times 1 --schedule 1f1b --batches-per-step 2" + t,
                 1, "stage times and activation bytes are for a run without a model");
}
