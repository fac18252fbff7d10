// The planning commands (app/plans.hpp) on a model_source of the test's own
// -- a chain of weighted nodes -- against answers computed here directly:
// the best two-stage cut by brute force, the memory of counts alone, the
// points written and read back, the refusals of a format that cannot write.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include <shardpoint/app/plans.hpp>

namespace app = shardpoint::app;
namespace fs = std::filesystem;

namespace {

/// n nodes in a chain, node i costing cost[i] and reading one fp32 weight
/// of elements[i] elements; optionally a sharding of its own.
class chain_source final : public app::model_source {
public:
  chain_source(std::vector<std::int64_t> cost, std::vector<std::int64_t> elements)
      : cost_(std::move(cost)), elements_(std::move(elements)) {}

  std::optional<shardpoint::sharding_result> stored;
  std::vector<std::string> guesses; ///< what measure() says is estimated
  int loads = 0;

  void load(shardpoint::io::output_set& /*outputs*/) override {
    ++loads;
    std::vector<std::pair<std::size_t, std::size_t>> edges;
    for (std::size_t v = 1; v < cost_.size(); ++v) {
      edges.emplace_back(v - 1, v);
    }
    graph_ =
        graph_type(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), cost_.size());
  }
  const graph_type& graph() override { return graph_; }
  std::vector<std::string> names() override {
    std::vector<std::string> out;
    for (std::size_t v = 0; v < cost_.size(); ++v) {
      out.push_back("n" + std::to_string(v));
    }
    return out;
  }
  app::node_measures measure(app::cost_model how) override {
    app::node_measures m;
    for (std::size_t v = 0; v < cost_.size(); ++v) {
      m.cost.push_back(how == app::cost_model::unit ? 1 : cost_[v]);
      m.parameter_bytes.push_back(4 * elements_[v]);
      m.output_bytes.push_back(v + 1 < cost_.size() ? 64 : 0);
      m.parameters.bytes.push_back(4 * static_cast<double>(elements_[v]));
      m.parameters.used.push_back({static_cast<std::uint32_t>(v)});
    }
    m.estimates = guesses;
    return m;
  }
  std::optional<shardpoint::sharding_result> annotated() override { return stored; }
  shardpoint::parameter_uses
  parameters(const shardpoint::sharding_result& /*stages*/, std::int64_t /*tensor_parallel*/,
             const std::vector<shardpoint::io::layout_choice>*) override {
    shardpoint::parameter_uses uses;
    for (std::size_t v = 0; v < cost_.size(); ++v) {
      uses.tensors.push_back({elements_[v], 1, 4, true});
      uses.used.push_back({static_cast<std::uint32_t>(v)});
    }
    return uses;
  }
  std::vector<std::int64_t> activations(std::int64_t /*micro_batch_size*/,
                                        std::vector<std::string>& /*notes*/,
                                        std::vector<std::string>& /*estimates*/) override {
    return std::vector<std::int64_t>(cost_.size(), 0);
  }

private:
  std::vector<std::int64_t> cost_;
  std::vector<std::int64_t> elements_;
  graph_type graph_;
};

/// A folder of the test's own, removed at the end.
struct scratch {
  fs::path dir = fs::temp_directory_path() / ("shardpoint-test-app-" + std::to_string(::getpid()));
  scratch() { fs::create_directories(dir); }
  ~scratch() { fs::remove_all(dir); }
};

} // namespace

TEST_CASE("suggest: the best two-stage cut of a chain, its points written and read back") {
  shardpoint::synthetic::splitmix64 rng(11);
  for (int round = 0; round < 30; ++round) {
    const std::size_t n = 2 + rng.below(12);
    std::vector<std::int64_t> cost(n);
    for (auto& c : cost) {
      c = static_cast<std::int64_t>(1 + rng.below(100));
    }
    // The reference: every cut of the chain, the smallest larger half.
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    for (std::size_t cut = 1; cut < n; ++cut) {
      std::int64_t left = 0;
      std::int64_t right = 0;
      for (std::size_t v = 0; v < n; ++v) {
        (v < cut ? left : right) += cost[v];
      }
      best = std::min(best, std::max(left, right));
    }
    scratch s;
    chain_source source(cost, std::vector<std::int64_t>(n, 10));
    app::suggest_request a;
    a.stages = 2;
    a.report.format = "json";
    a.output_config = (s.dir / "points.yaml").string();
    const auto r = app::suggest(source, a);
    const auto report = nlohmann::json::parse(r.report);
    CAPTURE(round);
    CHECK(report["bottleneck"].get<double>() == static_cast<double>(best));
    CHECK(r.written == std::vector<std::string>{a.output_config});
    CHECK(app::verdict_of(r) == app::verdict::ok);

    // The points written give a split with that bottleneck.
    app::points where;
    where.config = a.output_config;
    const auto split = app::sharding_of(source, where);
    std::vector<std::int64_t> load(2, 0);
    for (std::size_t v = 0; v < n; ++v) {
      REQUIRE(split.stage(v).has_value());
      load.at(static_cast<std::size_t>(*split.stage(v))) += cost[v];
    }
    CHECK(std::max(load[0], load[1]) == best);
  }
}

TEST_CASE("suggest: a format that cannot store a sharding refuses --output-model before reading") {
  scratch s;
  chain_source source({1, 2, 3}, {1, 1, 1});
  app::suggest_request a;
  a.stages = 2;
  a.output_model = (s.dir / "model.out").string();
  CHECK_THROWS_AS((void)app::suggest(source, a), app::usage_error);
  CHECK(source.loads == 0);
  CHECK(fs::is_empty(s.dir));
}

TEST_CASE("sharding_of: points, then the model's own, then one stage or a usage error") {
  chain_source source({1, 1, 1, 1}, {1, 1, 1, 1});
  shardpoint::io::output_set none;
  source.load(none);
  app::points where;
  CHECK_THROWS_AS((void)app::sharding_of(source, where), app::usage_error);
  const auto one = app::sharding_of(source, where, true);
  CHECK(one.size() == 4);
  CHECK_FALSE(one.has_stages());
  source.stored = shardpoint::sharding_result(4, {0, 0, 1, 1}, {0, 0, 1, 1});
  CHECK(*app::sharding_of(source, where).stage(2) == 1);
  where.shard_flags = {"n0=0:0", "n3=1:1"}; // a point ends its stage
  const auto flagged = app::sharding_of(source, where);
  CHECK(*flagged.stage(1) == 1);
  CHECK(*flagged.stage(3) == 1);
  where.shard_flags = {"n9=0:0"};
  CHECK_THROWS_AS((void)app::sharding_of(source, where), shardpoint::bad_input_error);
}

TEST_CASE("memory: a one-stage model plans as its parameter count alone") {
  chain_source source({5, 5, 5}, {1000, 24, 7000});
  app::memory_request a;
  a.report.format = "json";
  const auto from_model = app::plan_memory(&source, app::points{}, a);
  a.parameters = "8024";
  const auto from_counts = app::plan_memory(nullptr, app::points{}, a);
  const auto m = nlohmann::json::parse(from_model.report)["devices"][0];
  const auto c = nlohmann::json::parse(from_counts.report)["devices"][0];
  for (const char* key : {"parameter_bytes", "gradient_bytes", "optimizer_state_bytes"}) {
    CAPTURE(key);
    CHECK(m[key] == c[key]);
  }
  CHECK(m["parameter_bytes"].get<std::int64_t>() == 2 * 8024); // fp16 by default
  // A model and a count at once is a usage error.
  CHECK_THROWS_AS((void)app::plan_memory(&source, app::points{}, a), app::usage_error);
}

TEST_CASE("simulate: a two-stage chain runs as a pipeline; a bad sharding is check_failed") {
  chain_source source({3, 3, 3, 3}, {1, 1, 1, 1});
  app::points where;
  where.shard_flags = {"n0=0:0", "n3=1:1"};
  app::simulate_request a;
  a.batches_per_step = 4;
  a.cost = "flops";
  a.report.format = "json";
  const auto metrics = nlohmann::json::parse(app::simulate(source, where, a).report);
  // Stage 0 is n0 (3), stage 1 n1..n3 (9): the first micro-batch leaves
  // stage 0 at 3, then the bottleneck takes all four back to back.
  CHECK(metrics["makespan"].get<double>() == 3 + 4 * 9);
  a.batches_per_step = 3; // not a multiple of the two stages
  CHECK_THROWS_AS((void)app::simulate(source, where, a), app::check_failed);
  // A program's request is checked as the command line checks its flags,
  // in the same words; an option of a training step needs a schedule.
  a.batches_per_step = 0;
  CHECK_THROWS_WITH_AS((void)app::simulate(source, where, a),
                       "--batches-per-step: Value 0 not in range 1 to 1073741824",
                       shardpoint::bad_parameter_error);
  a.batches_per_step = 4;
  a.recompute = true;
  CHECK_THROWS_WITH_AS((void)app::simulate(source, where, a),
                       "--recompute describes a training step; give --schedule (or drop it)",
                       app::usage_error);
  a.schedule = "zb-h1";
  a.weight_share = 2;
  CHECK_THROWS_WITH_AS((void)app::simulate(source, where, a),
                       "--weight-share: Value 2 not in range 0 to 1",
                       shardpoint::bad_parameter_error);
}

TEST_CASE("a source's estimates: warned, marked in every report, optimality not claimed") {
  chain_source source({4, 1, 1, 4}, {1, 1, 1, 1});
  app::suggest_request a;
  a.stages = 2;
  const auto measured = app::suggest(source, a);
  CHECK(measured.warnings.empty());
  CHECK(measured.report.find("proven optimal among all splits") != std::string::npos);

  source.guesses = {"the costs of 2 of 4 nodes are guessed"};
  const auto guessed = app::suggest(source, a);
  CHECK(guessed.warnings == source.guesses);
  CHECK(guessed.report.find("proven optimal") == std::string::npos);
  CHECK(guessed.report.find("optimal for the estimated costs") != std::string::npos);
  CHECK(guessed.report.find("estimated: the costs of 2 of 4 nodes are guessed\n") !=
        std::string::npos);
  a.report.format = "json";
  const auto j = nlohmann::json::parse(app::suggest(source, a).report);
  CHECK(j["estimated"] == true);
  CHECK(j["estimates"] == nlohmann::json(source.guesses));

  app::points where;
  where.shard_flags = {"n0=0:0", "n3=1:1"};
  app::simulate_request s;
  s.batches_per_step = 2;
  s.cost = "flops";
  s.report.format = "json";
  const auto run = app::simulate(source, where, s);
  CHECK(run.warnings == source.guesses);
  CHECK(nlohmann::json::parse(run.report)["estimated"] == true);
}
