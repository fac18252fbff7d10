// `shardpoint plan` through the command line: the ranked layouts of a
// transformer by its counts and of an ONNX model, --top-k, the cluster
// file, --emit's files (runnable: validate accepts the sharded model, the
// strategy files cover the tensor-parallel layout), and every bad input
// with its exit code and nothing written.
#include <sys/stat.h>

#include <set>

#include <nlohmann/json.hpp>

#include "onnx_support.hpp"

namespace sp = shardpoint::onnx;
namespace fs = std::filesystem;
using onnx_test::expect_failure;
using onnx_test::q;
using onnx_test::run_json;
using onnx_test::shardpoint_cli;
using onnx_test::temp_dir;
using onnx_test::write_file;

namespace {

const std::string gpt = "plan --layers 12 --hidden 1024 --sequence 1024 --vocabulary 32000 "
                        "--heads 16 --global-batch 64 ";
const std::string cluster = "--devices 8 --devices-per-node 4 --device-memory 24GiB "
                            "--device-flops 100T --intra-node-bandwidth 200GB/s "
                            "--inter-node-bandwidth 10GB/s ";

} // namespace

TEST_CASE("plan: a transformer's layouts, ranked, every feasible one with --top-k all") {
  temp_dir dir;
  const auto j = run_json(gpt + cluster + "--top-k all", dir);
  const auto& all = j["candidates"];
  REQUIRE(all.size() == j["feasible"].get<std::size_t>());
  REQUIRE(all.size() > 10);
  CHECK(j["costed"] == all.size() + j["infeasible"].size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& x = all[i];
    CHECK(x["pipeline"].get<int>() * x["tensor"].get<int>() * x["data"].get<int>() == 8);
    CHECK(x["micro_batch_size"].get<int>() * x["micro_batches"].get<int>() * x["data"].get<int>() ==
          64);
    CHECK(x["peak_memory"].get<std::int64_t>() <= std::int64_t{24} << 30);
    CHECK(x["headroom"].get<std::int64_t>() ==
          (std::int64_t{24} << 30) - x["peak_memory"].get<std::int64_t>());
    CHECK(x["throughput"].get<double>() == doctest::Approx(64 / x["step_time"].get<double>()));
    CHECK(x["step_time"].get<double>() == // (seconds: relative only with scale 0)
          doctest::Approx(x["makespan"].get<double>() + x["sync_time"].get<double>()).scale(0));
    if (i > 0) {
      CHECK(all[i - 1]["step_time"].get<double>() <= x["step_time"].get<double>() * (1 + 1e-9));
    }
  }
  for (const auto& x : j["infeasible"]) {
    CHECK(!x["reason"].get<std::string>().empty());
  }
  // --top-k 3: the same first three.
  const auto top = run_json(gpt + cluster + "--top-k 3", dir);
  REQUIRE(top["candidates"].size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(top["candidates"][i] == all[i]);
  }
  // The table names the best and its stages.
  const auto t = shardpoint_cli(gpt + cluster, dir.path());
  CHECK(t.code == 0);
  CHECK(t.out.find("layouts costed") != std::string::npos);
  CHECK(t.out.find("best: pp" + std::to_string(all[0]["pipeline"].get<int>())) !=
        std::string::npos);
  CHECK(t.out.find("\n  on 8 devices (4 a node), 24.00 GiB") != std::string::npos);
  // Devices that are no whole number of nodes: the last node's part said.
  const auto part = shardpoint_cli(gpt + "--devices 12 --devices-per-node 8 --device-memory 24GiB "
                                         "--device-flops 100T --intra-node-bandwidth 200GB/s "
                                         "--inter-node-bandwidth 10GB/s",
                                   dir.path());
  CHECK(part.code == 0);
  CHECK(part.out.find("\n  on 12 devices (8 a node: 2 nodes, the last of 4), ") !=
        std::string::npos);
  // Fewer devices than a node: part of one, said; one device, one layer and
  // one head in the singular (a trial read "1 devices", "1 heads").
  const auto few = shardpoint_cli(gpt + "--devices 4 --devices-per-node 8 --device-memory 24GiB "
                                        "--device-flops 100T --intra-node-bandwidth 200GB/s",
                                  dir.path());
  CHECK(few.code == 0);
  CHECK(few.out.find("\n  on 4 devices (8 a node: one node, 4 of its 8), ") != std::string::npos);
  const auto one = shardpoint_cli("plan --layers 1 --hidden 64 --sequence 8 --vocabulary 100 "
                                  "--heads 1 --global-batch 2 --devices 1 --device-memory 1GiB "
                                  "--device-flops 1T",
                                  dir.path());
  CHECK(one.code == 0);
  CHECK(one.out.find("plan for a transformer of 1 layer, hidden 64, sequence 8, vocabulary 100, "
                     "1 head\n  on 1 device (1 a node), 1.00 GiB") != std::string::npos);
  // Absurd rates: no exponent in the header, and the table's columns widen
  // to their figures (a trial read "1e+18 TFLOP/s" and rows out of line).
  const auto fast = shardpoint_cli("plan --layers 1 --hidden 64 --sequence 8 --vocabulary 100 "
                                   "--heads 1 --global-batch 2 --devices 2 --device-memory 1GiB "
                                   "--device-flops 1e18T --intra-node-bandwidth 4EB/s",
                                   dir.path());
  REQUIRE(fast.code == 0);
  CHECK(fast.out.find(" and 1000000000000 EFLOP/s each;") != std::string::npos);
  CHECK(fast.out.find("e-") == std::string::npos); // not "7.68e-07 ns" either
  CHECK(fast.out.find("e+") == std::string::npos);
  // Every row of a table ends under its heading (the last column is
  // right-aligned): the layouts', and the best layout's stages'.
  const auto rows_under = [&](std::size_t head) {
    const auto head_end = fast.out.find('\n', head);
    std::size_t rows = 0;
    for (auto at = head_end + 1; at < fast.out.size() && fast.out[at] != '\n'; ++rows) {
      const auto end = fast.out.find('\n', at);
      CHECK(end - at == head_end - head);
      at = end + 1;
    }
    return rows;
  };
  const auto head = fast.out.find("rank  layout");
  REQUIRE(head != std::string::npos);
  CHECK(rows_under(head) >= 1);
  const auto stages = fast.out.find("\n stage ");
  REQUIRE(stages != std::string::npos);
  CHECK(rows_under(stages + 1) >= 1);
  // A cluster file gives the same; a flag wins over its key.
  write_file(dir / "c.yaml", "devices: 8\ndevices_per_node: 4\ndevice_memory: 24GiB\n"
                             "device_flops: 100 TFLOPS\nintra_node_bandwidth: 200GB/s\n"
                             "inter_node_bandwidth: 1GB/s\n");
  const auto f = run_json(
      gpt + "--top-k all --cluster " + q(dir / "c.yaml") + " --inter-node-bandwidth 10GB/s", dir);
  CHECK(f["candidates"] == all);
  // Heads not given: a guess, warned and marked.
  const auto h = shardpoint_cli("plan --layers 2 --hidden 256 --sequence 64 --vocabulary 1000 "
                                "--global-batch 8 --devices 2 --device-memory 8GiB "
                                "--device-flops 1T --intra-node-bandwidth 10GB/s",
                                dir.path());
  CHECK(h.code == 0);
  CHECK(h.err.find("warning: --heads not given: 4 assumed") != std::string::npos);
  CHECK(h.out.find("estimated: --heads not given") != std::string::npos);
}

TEST_CASE("plan --emit on a model: the split, the sharded model, strategy files for tp") {
  temp_dir dir;
  sp::save_model(sp::synth_decoder(4, 256, 64), dir / "d.onnx");
  // One sample a step: no data parallelism, and tensor parallelism beats a
  // pipeline that cannot fill.
  const std::string args = "plan --input-model " + q(dir / "d.onnx") +
                           " --devices 4 --device-memory 64MiB --device-flops 1T "
                           "--intra-node-bandwidth 1000GB/s --global-batch 1 --emit " +
                           q(dir / "out");
  const auto r = shardpoint_cli(args, dir.path());
  REQUIRE(r.code == 0);
  CHECK(r.out.find("best: pp1 tp4 dp1") != std::string::npos);
  const auto plan = nlohmann::json::parse(onnx_test::read_file(dir / "out/plan.json"));
  CHECK(plan["candidates"][0]["tensor"] == 4);
  // memory.json: the best layout's devices, each the sum of its stages.
  const auto mem = nlohmann::json::parse(onnx_test::read_file(dir / "out/memory.json"));
  REQUIRE(mem["devices"].size() == 1);
  const auto& st = plan["candidates"][0]["stages"][0];
  CHECK(mem["devices"][0]["total_bytes"] == st["total_bytes"]);
  CHECK(mem["devices"][0]["total_bytes"].get<std::int64_t>() ==
        st["parameter_bytes"].get<std::int64_t>() + st["gradient_bytes"].get<std::int64_t>() +
            st["optimizer_bytes"].get<std::int64_t>() + st["gathered_bytes"].get<std::int64_t>() +
            st["activation_bytes"].get<std::int64_t>());
  CHECK(mem["devices"][0]["headroom"] == plan["candidates"][0]["headroom"]);
  CHECK(fs::exists(dir / "out/shard.yaml"));
  CHECK(fs::exists(dir / "out/sharded.onnx"));
  CHECK(fs::file_size(dir / "out/strategy/stage0.ckpt") > 0);
  // The strategy is what `weights strategy` writes for the same split.
  const auto w = shardpoint_cli("weights strategy --input-model " + q(dir / "out/sharded.onnx") +
                                    " --tensor-parallel 4 --output-dir " + q(dir / "ws"),
                                dir.path());
  REQUIRE(w.code == 0);
  CHECK(onnx_test::read_file(dir / "ws/stage0.ckpt") ==
        onnx_test::read_file(dir / "out/strategy/stage0.ckpt"));
  // A pipeline: its split validates as a pipelined run.
  const auto p = shardpoint_cli(
      "plan --input-model " + q(dir / "d.onnx") +
          " --devices 2 --device-memory 64MiB --device-flops 1T --intra-node-bandwidth 1GB/s "
          "--global-batch 8 --schedules 1f1b --emit " +
          q(dir / "pp"),
      dir.path());
  REQUIRE(p.code == 0);
  const auto pj = nlohmann::json::parse(onnx_test::read_file(dir / "pp/plan.json"));
  const int stages = pj["candidates"][0]["pipeline"].get<int>();
  const auto v =
      shardpoint_cli("validate " + q(dir / "pp/sharded.onnx") +
                         " --enable-pipelining --batches-per-step " + std::to_string(2 * stages),
                     dir.path());
  CHECK(v.code == 0);
  // Interleaved: the emitted shard.yaml gives the same stages and devices
  // as the emitted model, stage s on device s mod pp, last stage included.
  const auto i = shardpoint_cli("plan --input-model " + q(dir / "d.onnx") +
                                    " --devices 2 --device-memory 64MiB --device-flops 1T "
                                    "--intra-node-bandwidth 1GB/s --global-batch 8 --schedules "
                                    "interleaved --emit " +
                                    q(dir / "ilv"),
                                dir.path());
  REQUIRE(i.code == 0);
  CHECK(i.out.find("interleaved v2") != std::string::npos);
  const auto replay =
      run_json("simulate --input-model " + q(dir / "d.onnx") + " --manual-sharding-config " +
                   q(dir / "ilv/shard.yaml") +
                   " --batches-per-step 8 --schedule interleaved --virtual-stages 2",
               dir);
  CHECK(replay["devices"].size() == 2);
  REQUIRE(shardpoint_cli("shard --input-model " + q(dir / "d.onnx") + " --manual-sharding-config " +
                             q(dir / "ilv/shard.yaml") + " --output-model " + q(dir / "re.onnx") +
                             " --report none",
                         dir.path())
              .code == 0);
  const auto placed = [&](const fs::path& m) {
    std::vector<std::pair<int, int>> out;
    for (const auto& n : run_json("inspect " + q(m), dir)) {
      out.emplace_back(n["device"].get<int>(), n["stage"].get<int>());
    }
    return out;
  };
  CHECK(placed(dir / "re.onnx") == placed(dir / "ilv/sharded.onnx"));
  // The folder is ours: --force replaces it, nothing else does.
  expect_failure(dir, args, 2, "the output folder exists and is not empty");
  CHECK(shardpoint_cli(args + " --force", dir.path()).code == 0);
}

TEST_CASE("plan: FLOPs rounded up to whole MFLOPs a node are a guess when they weigh") {
  // A trial's 4-layer, hidden-8 decoder was costed at 116 MFLOPs a sample
  // for about 0.14, and nothing said so.
  temp_dir dir;
  const auto estimates = [&](int hidden, int sequence) {
    sp::save_model(sp::synth_decoder(1, hidden, sequence), dir / "d.onnx");
    const auto r = shardpoint_cli("plan --input-model " + q(dir / "d.onnx") +
                                      " --devices 1 --device-memory 80GiB --device-flops 1T "
                                      "--global-batch 8 --report json",
                                  dir.path());
    REQUIRE(r.code == 0);
    std::string rounding;
    const auto report = nlohmann::json::parse(r.out);
    for (const auto& e : report["estimates"]) {
      if (e.get<std::string>().find("rounded up") != std::string::npos) {
        CHECK(r.err.find("shardpoint: warning: " + e.get<std::string>()) != std::string::npos);
        rounding = e.get<std::string>();
      }
    }
    return rounding;
  };
  const std::string small = estimates(8, 16);
  const auto nodes = static_cast<std::size_t>(sp::synth_decoder(1, 8, 16).graph().node_size());
  CHECK(small == "each node's FLOPs are counted in whole MFLOPs, rounded up (at least 1): up to " +
                     std::to_string(nodes) + " of the " + std::to_string(nodes) +
                     " counted (100%) may be that rounding, and the compute times that much too "
                     "long");
  CHECK(estimates(256, 4096).empty()); // GFLOPs a node: the rounding is < 5%
}

TEST_CASE("plan: a model holding a batch of more than one is counted per sample, and says so") {
  // A trial's `plan --dim N=4` costed the compute of 4 samples a sample
  // (the activations were scaled to one), unsaid: every step 4x too long.
  temp_dir dir;
  auto model = sp::synth_decoder(2, 256, 512);
  auto* batch = model.mutable_graph()
                    ->mutable_input(0)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape()
                    ->mutable_dim(0);
  batch->set_dim_param("batch");
  sp::save_model(model, dir / "free.onnx");
  batch->set_dim_value(4);
  sp::save_model(model, dir / "fixed.onnx");
  const auto run = [&](const std::string& model_and_sizes) {
    const auto r = shardpoint_cli(
        "plan --input-model " + model_and_sizes +
            " --devices 2 --device-memory 80GiB --device-flops 10T --intra-node-bandwidth 100GB/s "
            "--global-batch 8 --schedules 1f1b --report json",
        dir.path());
    REQUIRE(r.code == 0);
    const auto report = nlohmann::json::parse(r.out);
    std::vector<std::string> held;
    for (const auto& e : report["estimates"]) {
      if (e.get<std::string>().find("plan counts one sample") != std::string::npos) {
        CHECK(r.err.find("shardpoint: warning: " + e.get<std::string>() + "\n") !=
              std::string::npos);
        held.push_back(e.get<std::string>());
      }
    }
    return std::pair(report["candidates"][0]["step_time"].get<double>(), held);
  };
  const auto [one, one_said] = run(q(dir / "free.onnx") + " --dim batch=1");
  CHECK(one_said.empty());
  const auto [free, free_said] = run(q(dir / "free.onnx"));
  CHECK(free_said.empty());
  // A free batch is one sample, as plan counts: no guess (plan.md says to
  // leave it free, and the FLOPs were "estimated" on it).
  const auto left_free =
      shardpoint_cli("plan --input-model " + q(dir / "free.onnx") +
                         " --devices 2 --device-memory 80GiB --device-flops 10T "
                         "--intra-node-bandwidth 100GB/s --global-batch 8 --report json",
                     dir.path());
  REQUIRE(left_free.code == 0);
  CHECK(nlohmann::json::parse(left_free.out)["estimates"] == nlohmann::json::array());
  CHECK(left_free.err.empty());
  // (Approx's tolerance is relative only with scale 0: the times are ms.)
  CHECK(free == doctest::Approx(one).scale(0));
  const auto [sized, sized_said] = run(q(dir / "free.onnx") + " --dim batch=4");
  // Whole MFLOPs a node, divided by 4: near one sample's, not equal.
  CHECK(sized == doctest::Approx(one).scale(0).epsilon(0.05));
  CHECK(sized_said == std::vector<std::string>{
                          "input 'tokens' has its batch sized to 4 (dimension 'batch'): plan "
                          "counts one sample, so the FLOPs and activations measured at 4 are "
                          "divided by 4 (a node's FLOPs need not be linear in the batch: give "
                          "the batch as 1, or leave it free, to measure one sample)"});
  const auto [fixed, fixed_said] = run(q(dir / "fixed.onnx"));
  CHECK(fixed == doctest::Approx(sized).scale(0));
  REQUIRE(fixed_said.size() == 1);
  CHECK(fixed_said[0].starts_with("input 'tokens' has a fixed batch of 4 (dimension 0): plan "
                                  "counts one sample"));
}

TEST_CASE("plan: tensor parallelism all-reduces the row-parallel layers' outputs, no others") {
  // A trial found pp1 tp2 charged 4 MiB of all-reduce a layer where
  // `weights strategy` names two row layers of 512 KiB each: the splitting
  // nodes were paired by turns (column, row, ...), so a column bias's Add
  // counted as a row layer and the real row layers as columns.
  temp_dir dir;
  sp::save_model(sp::synth_decoder(1, 512, 256), dir / "d.onnx");
  const auto r = shardpoint_cli("plan --input-model " + q(dir / "d.onnx") +
                                    " --devices 2 --device-memory 1GiB --device-flops 50T "
                                    "--intra-node-bandwidth 100GB/s --global-batch 1 --top-k all "
                                    "--report json",
                                dir.path());
  REQUIRE(r.code == 0);
  int seen = 0;
  const auto report = nlohmann::json::parse(r.out); // (a range-for's temporary would die first)
  for (const auto& c : report["candidates"]) {
    if (c["pipeline"] != 1 || c["tensor"] != 2 || c["zero"] == 3) {
      continue;
    }
    // forward = compute + all-reduce, backward = 2 compute + all-reduce (the
    // default backward ratio; one stage sends nothing): the all-reduce is
    // 2 forward - backward, a ring's 2 (t - 1) / t of attn_out's and
    // mlp_down's outputs, 256 x 512 floats each, at 100 GB/s.
    const auto& st = c["stages"][0];
    const double all_reduce = 2 * st["forward"].get<double>() - st["backward"].get<double>();
    CHECK(all_reduce == doctest::Approx(2.0 * 256 * 512 * 4 / 100e9).scale(0));
    ++seen;
  }
  CHECK(seen > 0);
}

TEST_CASE("plan: a tensor-parallel degree must divide every dimension it splits") {
  // A trial's plan ranked pp2 tp3 on 512-wide weights, which `memory` and
  // `weights` refuse; and a model with an odd hidden size was no plan at
  // all (the probe at tp 2 threw). `memory --tensor-parallel t` is the
  // reference: plan costs a degree exactly when memory accepts it.
  temp_dir dir;
  for (const auto& [hidden, devices] : {std::pair{10, 6}, std::pair{7, 2}}) {
    const int width = hidden; // (clang 14 captures no structured binding)
    CAPTURE(width);
    const fs::path model = dir / ("d" + std::to_string(hidden) + ".onnx");
    sp::save_model(sp::synth_decoder(1, hidden, 4), model);
    const auto r =
        shardpoint_cli("plan --input-model " + q(model) + " --devices " + std::to_string(devices) +
                           " --device-memory 1GiB --device-flops 50T "
                           "--intra-node-bandwidth 100GB/s --global-batch 8 "
                           "--top-k all --report json",
                       dir.path());
    REQUIRE(r.code == 0);
    const auto report = nlohmann::json::parse(r.out);
    std::set<int> costed;
    std::set<int> refused;
    for (const auto& c : report["candidates"]) {
      costed.insert(c["tensor"].get<int>());
    }
    for (const auto& c : report["infeasible"]) {
      if (c["refused_by"] == "tensor") {
        refused.insert(c["tensor"].get<int>());
        CHECK(c["reason"] == "tensor parallelism " + std::to_string(c["tensor"].get<int>()) +
                                 " does not divide the " + std::to_string(hidden) +
                                 " along dimension 1 of weight 'layer0/q_w'");
      }
    }
    for (int t = 1; t <= devices; ++t) {
      if (devices % t != 0) {
        continue;
      }
      CAPTURE(t);
      const auto m = shardpoint_cli("memory --input-model " + q(model) + " --tensor-parallel " +
                                        std::to_string(t),
                                    dir.path());
      CHECK((m.code == 0) == !refused.contains(t));
      if (m.code != 0) {
        CHECK(!costed.contains(t));
      }
    }
    CHECK(!refused.empty());
  }
  // The table's example of a layout the batch refuses has no micro-batches
  // to show (it said "micro-batch 0 x 0").
  const auto t = shardpoint_cli("plan --input-model " + q(dir / "d10.onnx") +
                                    " --devices 6 --device-memory 1GiB --device-flops 50T "
                                    "--intra-node-bandwidth 100GB/s --global-batch 8",
                                dir.path());
  REQUIRE(t.code == 0);
  const auto batch = t.out.find(" by batch, e.g. ");
  REQUIRE(batch != std::string::npos);
  const std::string line = t.out.substr(batch, t.out.find('\n', batch) - batch);
  CHECK(line.find(": the data-parallel degree ") != std::string::npos);
  CHECK(line.find("micro-batch") == std::string::npos);
}

TEST_CASE("plan and memory count a tensor-parallel stage's activations alike") {
  // A trial's plan fitted pp2 tp2 at 198 MiB where memory found the same
  // layout 26 MiB over the 200 MiB: memory held every column layer's
  // outputs whole on each rank. Each pp1 tp2 layout against memory's plan
  // of the same degrees, micro-batch and schedule.
  temp_dir dir;
  sp::save_model(sp::synth_decoder(2, 64, 32), dir / "d.onnx");
  const auto r = shardpoint_cli("plan --input-model " + q(dir / "d.onnx") +
                                    " --devices 2 --device-memory 1GiB --device-flops 50T "
                                    "--intra-node-bandwidth 100GB/s --global-batch 8 "
                                    "--schedules 1f1b --top-k all --report json",
                                dir.path());
  REQUIRE(r.code == 0);
  const auto report = nlohmann::json::parse(r.out);
  int seen = 0;
  for (const auto& c : report["candidates"]) {
    if (c["pipeline"] != 1 || c["tensor"] != 2 || c["zero"] != 0) {
      continue;
    }
    const auto b = c["micro_batch_size"].get<int>();
    CAPTURE(b);
    const auto m = run_json("memory --input-model " + q(dir / "d.onnx") +
                                " --tensor-parallel 2 --micro-batch-size " + std::to_string(b) +
                                " --batches-per-step " +
                                std::to_string(c["micro_batches"].get<int>()) + " --schedule 1f1b",
                            dir);
    for (const auto& d : m["devices"]) {
      CHECK(d["activation_bytes"] == c["stages"][0]["activation_bytes"]);
    }
    ++seen;
  }
  CHECK(seen >= 3);
  // Split outputs are less than whole ones: tp 2 holds less than tp 1.
  const auto one = run_json("memory --input-model " + q(dir / "d.onnx"), dir);
  const auto two =
      run_json("memory --input-model " + q(dir / "d.onnx") + " --tensor-parallel 2", dir);
  CHECK(two["devices"][0]["activation_bytes"].get<std::int64_t>() <
        one["devices"][0]["activation_bytes"].get<std::int64_t>());
}

TEST_CASE("plan: a best layout whose tensor parallelism splits no weight says so") {
  // A trial's plan of silero (no Megatron pair) ranked tp 4 first, unsaid.
  SKIP_WITHOUT_MODELS();
  temp_dir dir;
  const auto run = [&](const fs::path& model) {
    const auto r = shardpoint_cli("plan --input-model " + q(model) + " " + cluster +
                                      "--global-batch 64 --report json",
                                  dir.path());
    REQUIRE(r.code == 0);
    return std::pair(nlohmann::json::parse(r.out), r.err);
  };
  const auto [silero, silero_err] = run(onnx_test::models_dir() / "silero_vad_legacy.onnx");
  const int tp = silero["candidates"][0]["tensor"].get<int>();
  const std::string said =
      "tensor parallelism splits no weight: the graph has no Megatron column/row pair (two "
      "MatMul or Gemm weights, one feeding the other) nor a vocabulary table; the best layout's " +
      std::to_string(tp) + " tensor-parallel ranks each hold every weight and compute every node";
  const auto estimates = silero["estimates"].get<std::vector<std::string>>();
  CHECK(std::count(estimates.begin(), estimates.end(), said) == (tp > 1 ? 1 : 0));
  CHECK((silero_err.find("shardpoint: warning: " + said + "\n") != std::string::npos) == (tp > 1));
  // A decoder's pairs split: nothing to say of them.
  sp::save_model(sp::synth_decoder(2), dir / "d.onnx");
  CHECK(run(dir / "d.onnx").second.find("splits no weight") == std::string::npos);
}

TEST_CASE("plan: bad input is one line, its exit code, nothing written") {
  temp_dir dir;
  const std::string emit = " --emit " + q(dir / "e");
  expect_failure(dir, "plan --global-batch 8 --devices 2" + emit, 1,
                 "plan takes a model (--input-model) or a transformer's counts");
  expect_failure(dir, gpt + "--device-memory 1GiB --device-flops 1T" + emit, 1,
                 "plan needs the number of devices");
  expect_failure(dir, gpt + "--devices 2 --device-memory 1GiB --device-flops lots" + emit, 2,
                 "--device-flops: 'lots' is not a FLOP/s rate");
  // Rates below 1 a second: refused by their flag, not divided by.
  expect_failure(dir, gpt + "--devices 2 --device-memory 1GiB --device-flops 1e-300" + emit, 2,
                 "--device-flops: '1e-300' is not a FLOP/s rate of at least 1");
  expect_failure(dir,
                 gpt +
                     "--devices 2 --device-memory 1GiB --device-flops 1T "
                     "--intra-node-bandwidth 1e-300B/s" +
                     emit,
                 2, "--intra-node-bandwidth: '1e-300B/s' is not a bandwidth");
  expect_failure(dir, gpt + "--devices 2 --device-memory 1GiB --device-flops 1T" + emit, 1,
                 "plan on more than one device needs --intra-node-bandwidth (or "
                 "intra_node_bandwidth: in --cluster)");
  expect_failure(dir,
                 gpt +
                     "--devices 4 --devices-per-node 2 --device-memory 1GiB --device-flops 1T "
                     "--intra-node-bandwidth 1GB/s" +
                     emit,
                 1,
                 "plan on more than one node needs --inter-node-bandwidth (or "
                 "inter_node_bandwidth: in --cluster)");
  expect_failure(dir, gpt + "--devices 2 --device-memory 1GiB" + emit, 1,
                 "plan needs each device's memory and FLOP/s (--device-memory and "
                 "--device-flops, or device_memory: and device_flops: in --cluster)");
  expect_failure(dir, gpt + cluster + "--top-k none" + emit, 2, "--top-k 'none'");
  expect_failure(dir, gpt + cluster + "--force", 1,
                 "--force replaces what --emit or --report-file wrote before; give one");
  expect_failure(dir, gpt + cluster + "--schedules 2f2b" + emit, 2,
                 "--schedules: '2f2b' is not one of gpipe, 1f1b, interleaved, zb-h1");
  // An empty element is refused as in a list of numbers (CLI11's own split
  // dropped it: a trial's "gpipe," searched gpipe alone).
  for (const std::string list : {"gpipe,", ",gpipe", "gpipe,,1f1b"}) {
    expect_failure(dir, gpt + cluster + "--schedules " + list + emit, 2,
                   "--schedules: an empty value in '" + list + "'");
  }
  { // the flag given twice, a list and two values: all searched
    const auto both = shardpoint_cli(
        gpt + cluster + "--schedules gpipe,1f1b --schedules zb-h1 gpipe --top-k all --report json",
        dir.path());
    REQUIRE(both.code == 0);
    const auto j = nlohmann::json::parse(both.out);
    std::set<std::string> searched;
    for (const auto& c : j.at("candidates")) {
      searched.insert(c.at("schedule").get<std::string>());
    }
    CHECK(searched == std::set<std::string>{"gpipe", "1f1b", "zb-h1"});
  }
  // A schedule's option with that schedule left out of the search: refused,
  // not ignored; at its default, or with the schedule searched, taken.
  expect_failure(dir, gpt + cluster + "--schedules 1f1b --virtual-stages 4" + emit, 1,
                 "--virtual-stages is the interleaved schedule's, which --schedules leaves out");
  expect_failure(dir, gpt + cluster + "--schedules gpipe,interleaved --weight-share 0.25" + emit, 1,
                 "--weight-share is zb-h1's, which --schedules leaves out");
  CHECK(shardpoint_cli(gpt + cluster + "--schedules 1f1b --virtual-stages 2 --weight-share 0.5",
                       dir.path())
            .code == 0);
  CHECK(shardpoint_cli(gpt + cluster +
                           "--schedules interleaved,zb-h1 --virtual-stages 4 "
                           "--weight-share 0.25",
                       dir.path())
            .code == 0);
  write_file(dir / "c.yaml", "devices: 8\nnodes: 2\n");
  expect_failure(dir, gpt + "--cluster " + q(dir / "c.yaml") + emit, 2,
                 "c.yaml:2:1: 'nodes' is not a cluster key");
  write_file(dir / "c.yaml", "devices: 8\ndevice_memory: {a: 1}\n");
  expect_failure(dir, gpt + "--cluster " + q(dir / "c.yaml") + emit, 2,
                 "c.yaml:2:16: device_memory takes one value, as the flag --device-memory does "
                 "(not a list, a mapping or nothing)");
  expect_failure(dir,
                 "plan --layers 8 --global-batch 8 --devices 1 --device-memory 1GiB "
                 "--device-flops 1T" +
                     emit,
                 1,
                 "plan from a transformer's counts needs --layers, --hidden, --sequence and "
                 "--vocabulary, each at least 1");
  const std::string counts = "plan --layers 2 --hidden 512 --sequence 64 --vocabulary 1000 "
                             "--global-batch 8 --device-flops 1T --intra-node-bandwidth 10GB/s ";
  // Out of range or empty is one answer, whichever count (exit 2).
  const std::string cluster_flags =
      "--devices 2 --device-memory 1GiB --intra-node-bandwidth 10GB/s ";
  expect_failure(dir,
                 "plan --layers 0 --hidden 8 --sequence 8 --vocabulary 8 --global-batch 8 "
                 "--device-flops 1T " +
                     cluster_flags + emit,
                 2, "--layers: Value 0 not in range 1 to 16777216");
  expect_failure(dir,
                 "plan --layers 99999999999999999999 --hidden 8 --sequence 8 --vocabulary 8 "
                 "--global-batch 8 --device-flops 1T " +
                     cluster_flags + emit,
                 2, "--layers: Value 99999999999999999999 not in range 1 to 16777216");
  expect_failure(dir, gpt + cluster_flags + "--device-flops ''" + emit, 2,
                 "--device-flops: an empty value; give one");
  expect_failure(dir, counts + "--devices 2 --device-memory 1GiB --heads 0" + emit, 2,
                 "--heads must divide the hidden size 512, not be 0");
  expect_failure(dir, counts + "--devices 2 --device-memory 1GiB --heads 7" + emit, 2,
                 "--heads must divide the hidden size 512, not be 7");
  expect_failure(dir, counts + "--devices 2 --device-memory 0" + emit, 2,
                 "--device-memory: a device's memory must be more than 0 bytes");
  // A search too large to emulate is refused before it starts.
  expect_failure(dir,
                 "plan --layers 62 --hidden 64 --sequence 1 --vocabulary 10 --heads 64 "
                 "--global-batch 524288 --max-micro-batch-size 1 --devices 64 --device-memory 1GiB "
                 "--device-flops 1T --intra-node-bandwidth 10GB/s" +
                     emit,
                 2, "the search would emulate 44335104 stage micro-batches, more than 20000000");
  // ... and so is one whose every layout is over the limit of one (it was
  // searched to "no layout fits", exit 3).
  expect_failure(dir,
                 "plan --layers 2 --hidden 512 --sequence 64 --vocabulary 1000 --global-batch "
                 "2147483648 --device-flops 1T --intra-node-bandwidth 10GB/s --devices 4 "
                 "--device-memory 1GiB" +
                     emit,
                 2, "every layout would emulate more than 1000000 stage micro-batches");
  // Heads not given: hidden / 64, or the divisor of hidden below it.
  const auto guess = shardpoint_cli("plan --layers 2 --hidden 500 --sequence 64 --vocabulary 1000 "
                                    "--global-batch 8 --device-flops 1T --device-memory 1GiB "
                                    "--devices 1",
                                    dir.path());
  CHECK(guess.code == 0);
  CHECK(guess.err.find("--heads not given: 5 assumed") != std::string::npos);
  // Tensor parallelism must divide the heads: with 4 heads on 8 devices,
  // tp = 8 is refused by that rule; a schedule named twice is costed once.
  const auto h = run_json(counts + "--device-memory 1GiB --devices 8 --heads 4 --top-k all", dir);
  bool refused = false;
  for (const auto& x : h["infeasible"]) {
    if (x["tensor"] == 8) {
      CHECK(x["refused_by"] == "tensor");
      CHECK(x["reason"] == "tensor parallelism 8 does not divide the 4 attention heads");
      refused = true;
    }
  }
  CHECK(refused);
  for (const auto& x : h["candidates"]) {
    CHECK(x["tensor"].get<int>() <= 4);
  }
  const auto twice = counts + "--device-memory 1GiB --devices 2 --schedules 1f1b,1f1b";
  CHECK(run_json(twice, dir)["costed"] ==
        run_json(counts + "--device-memory 1GiB --devices 2 --schedules 1f1b", dir)["costed"]);
  // Nothing fits: exit 3, the report says why, nothing emitted.
  const auto r = shardpoint_cli(gpt +
                                    "--devices 2 --device-memory 1GiB --device-flops 1T "
                                    "--intra-node-bandwidth 1GB/s" +
                                    emit,
                                dir.path());
  CHECK(r.code == 3);
  CHECK(r.err.find("no layout fits (the report says which rule refused each)") !=
        std::string::npos);
  CHECK(r.out.find("0 fit: none") != std::string::npos);
  CHECK(r.out.find("by memory") != std::string::npos);
  CHECK(!fs::exists(dir / "e"));
  // --emit never replaces what it did not write: the folder of the input
  // model, a folder of the user's files, the current folder's parent, a
  // FIFO -- not even with --force.
  fs::create_directories(dir / "models");
  fs::create_directories(dir / "mine");
  write_file(dir / "mine/notes.txt", "mine");
  sp::save_model(sp::synth_decoder(2, 64, 8), dir / "models/m.onnx");
  const std::string plan_m = "plan --input-model " + q(dir / "models/m.onnx") +
                             " --devices 1 --device-memory 1GiB --device-flops 1T "
                             "--global-batch 1 --force --emit ";
  expect_failure(dir, plan_m + q(dir / "models"), 2,
                 "holds the input model '" + (dir / "models/m.onnx").string() +
                     "'; shardpoint never replaces a folder holding what it reads");
  expect_failure(dir, plan_m + q(dir / "mine"), 2,
                 "holds no shardpoint manifest (.shardpoint-manifest.json)");
  expect_failure(dir, plan_m + "..", 2, "holds the current folder");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  expect_failure(dir, plan_m + q(dir / "fifo"), 2, "exists and is not a folder");
  CHECK(fs::is_fifo(dir / "fifo"));
  CHECK(onnx_test::read_file(dir / "mine/notes.txt") == "mine");
  // --emit never replaces what it did not write: the current folder.
  sp::save_model(sp::synth_decoder(2, 64, 8), dir / "m.onnx");
  expect_failure(dir,
                 "plan --input-model m.onnx --devices 1 --device-memory 1GiB --device-flops 1T "
                 "--global-batch 1 --emit .",
                 2, "--emit");
}
