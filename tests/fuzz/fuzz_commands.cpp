// Fuzzes the commands as a user runs them: `split`, `suggest`, `weights`
// (strategy, then split, then merge), `memory`, `shard` then `validate`,
// `simulate` (training schedules), `plan` (then `validate` of the model it
// emits) and `draw`, each on a mutated small model and config (with
// `inspect` of the model before `shard`, and `strip` of what `shard` wrote
// after it; `synth` reads no file: its two numbers are the option schema's
// ranges, tests/onnx/test_options.cpp), through the
// same CLI11 parsing, command functions and exception-to-exit-code map as the
// program (cli/exit_codes.hpp). A command may succeed (0), refuse (2) or
// find a rule broken (3); exit 4 (a bug), a crash or a sanitizer report is a
// finding. Where one command's output is the next one's input, the second
// must accept it (the differential):
//   - `weights merge` must accept the ranks `weights split` wrote, from the
//     strategy `weights strategy` wrote, and `weights split` must re-shard
//     both the merged weights and the ranks to another strategy;
//   - `validate` must accept (exit 0) the model `shard` wrote without --force,
//     and the sharded model `plan --emit` wrote; `strip` the model `shard`
//     wrote.
//
// Input: byte 0 picks the command (low 3 bits; among SHARDPOINT_FUZZ_ONLY's
// when set) and its variant (the rest:
// stage count, cost, tensor-parallel degree, ...); bytes 1-2 the length of
// the config (little endian); then the config (YAML or JSON, byte 0 says
// which); the rest is the model. tests/fuzz/make_seeds.py makes the seeds.
//
// Each execution works in a folder of its own under $TMPDIR (best a tmpfs),
// which the harness empties afterwards: the files here are the harness's.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"

namespace {

namespace fs = std::filesystem;
namespace cli = shardpoint::cli;

constexpr const char* command_names[] = {"split", "suggest",  "weights", "memory",
                                         "shard", "simulate", "plan",    "draw"};
// Executions per command, printed every 1,000 executions (libFuzzer ends a
// timed run without running exit handlers).
std::uint64_t executions[std::size(command_names)] = {};

void count(unsigned command) {
  static std::uint64_t total = 0;
  ++executions[command];
  if (++total % 1000 == 0) {
    std::fprintf(stderr, "fuzz_commands: executions:");
    for (std::size_t i = 0; i < std::size(command_names); ++i) {
      std::fprintf(stderr, " %s %llu", command_names[i],
                   static_cast<unsigned long long>(executions[i]));
    }
    std::fprintf(stderr, "\n");
  }
}

// The commands this run fuzzes: all, or those SHARDPOINT_FUZZ_ONLY names
// (comma-separated), for a long run that spends its budget where it is
// short; the input's command bits then pick among these.
const std::vector<unsigned>& fuzzed_commands() {
  static const std::vector<unsigned> chosen = [] {
    std::vector<unsigned> out;
    const char* only = std::getenv("SHARDPOINT_FUZZ_ONLY");
    const std::string list = only != nullptr ? "," + std::string(only) + "," : "";
    for (unsigned c = 0; c < std::size(command_names); ++c) {
      if (list.empty() ||
          list.find("," + std::string(command_names[c]) + ",") != std::string::npos) {
        out.push_back(c);
      }
    }
    if (out.empty()) {
      std::fprintf(stderr, "fuzz_commands: SHARDPOINT_FUZZ_ONLY names none of the commands\n");
      std::abort();
    }
    return out;
  }();
  return chosen;
}

// Where an execution's files live: made once, emptied after every input
// (bench/fuzz.sh gives it a TMPDIR of its own, removed afterwards).
const fs::path& workspace() {
  // Never destroyed: the exit handler below runs after static destructors.
  static const fs::path& dir = *[] {
    const char* tmp = std::getenv("TMPDIR");
    fs::path base = tmp != nullptr && *tmp != '\0' ? fs::path(tmp) : fs::path("/tmp");
    auto* d = new fs::path(base / ("shardpoint-fuzz-commands-" + std::to_string(::getpid())));
    fs::create_directories(*d);
    // Removed at a normal exit (the replay ctest); libFuzzer's own exit
    // skips this, and bench/fuzz.sh removes its TMPDIR.
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(workspace(), ignored);
    });
    return d;
  }();
  return dir;
}

void put(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// One run of the program on `args` (without "shardpoint"), its exit code;
// the command's printing goes nowhere. What main.cpp does, without the
// signal watcher's thread, and with only the command run added to the
// command line: CLI11 checks each option added against those before it, and
// building all the commands took a quarter of an execution's time.
int run(std::vector<std::string> args) {
  CLI::App app{"shardpoint"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, cli::action>> commands;
#define SHARDPOINT_ADD_COMMAND(name)                                                               \
  if (args.front() == #name) {                                                                     \
    auto action = cli::add_##name(app);                                                            \
    commands.emplace_back(app.get_subcommands({}).back(), std::move(action));                      \
  }
  SHARDPOINT_COMMANDS(SHARDPOINT_ADD_COMMAND)
#undef SHARDPOINT_ADD_COMMAND
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    // The harness only gives valid command lines.
    std::fprintf(stderr, "fuzz_commands: the harness's command line fails to parse: %s\n",
                 e.what());
    std::abort();
  }
  for (auto& [cmd, action] : commands) {
    if (cmd->parsed()) {
      try {
        return action();
      } catch (...) {
        return cli::report_current_exception("fuzzing");
      }
    }
  }
  std::abort();
}

[[noreturn]] void finding(const std::vector<std::string>& args, int code, const char* what) {
  std::string line;
  for (const auto& a : args) {
    line += ' ' + a;
  }
  std::fprintf(stderr, "fuzz_commands: shardpoint%s: exit %d: %s\n", line.c_str(), code, what);
  std::abort();
}

// Runs `args`; a bug (exit 4) or an exit code outside the table aborts.
int checked(const std::vector<std::string>& args) {
  const int code = run(args);
  if (code == cli::exit_internal) {
    finding(args, code, "internal error on an input a user can give");
  }
  if (code < 0 || code > cli::exit_invalid) {
    finding(args, code, "an exit code outside the table");
  }
  return code;
}

void must_accept(const std::vector<std::string>& args, const char* why) {
  if (const int code = checked(args); code != cli::exit_ok) {
    finding(args, code, why);
  }
}

// Silences std::cout and std::cerr while it lives (the commands' reports and
// error lines: millions of them otherwise), unless SHARDPOINT_FUZZ_VERBOSE.
class quiet {
public:
  quiet() {
    if (std::getenv("SHARDPOINT_FUZZ_VERBOSE") == nullptr) {
      out_ = std::cout.rdbuf(sink_.rdbuf());
      err_ = std::cerr.rdbuf(sink_.rdbuf());
    }
  }
  ~quiet() {
    if (out_ != nullptr) {
      std::cout.rdbuf(out_);
      std::cerr.rdbuf(err_);
    }
  }
  quiet(const quiet&) = delete;
  quiet& operator=(const quiet&) = delete;

private:
  std::ostringstream sink_;
  std::streambuf* out_ = nullptr;
  std::streambuf* err_ = nullptr;
};

void one_input(std::uint8_t pick, std::string_view config_bytes, std::string_view model_bytes) {
  const fs::path& dir = workspace();
  const std::string model = (dir / "model.onnx").string();
  const bool json = (pick & 0x80) != 0;
  const std::string config = (dir / (json ? "shard.json" : "shard.yaml")).string();
  const std::string out = (dir / "out").string();
  put(model, model_bytes);
  put(config, config_bytes);
  const unsigned variant = pick >> 3;
  const std::string small = std::to_string(1 + (variant & 3)); // 1..4
  const auto& commands = fuzzed_commands();
  const unsigned command = commands[(pick & 7U) % commands.size()];
  count(command);

  switch (command) {
  case 0: { // split, by stage or device, with or without relays
    std::vector<std::string> args{"split", "--input-model", model, "--manual-sharding-config",
                                  config,  "--output-dir",  out};
    if ((variant & 1) != 0) {
      args.insert(args.end(), {"--by", "device"});
    }
    if ((variant & 2) != 0) {
      args.emplace_back("--relay");
    }
    if ((variant & 4) != 0) {
      args.emplace_back("--external-data");
    }
    checked(args);
    break;
  }
  case 1: { // suggest: stages, cost, optionally a memory cap; writes both outputs
    static const char* const costs[] = {"flops", "params", "unit", "flops"};
    std::vector<std::string> args{"suggest",
                                  "--input-model",
                                  model,
                                  "--stages",
                                  small,
                                  "--cost",
                                  costs[(variant >> 2) & 3],
                                  "--output-config",
                                  out + ".yaml",
                                  "--output-model",
                                  out + ".onnx"};
    if ((variant & 16) != 0) {
      args.insert(args.end(), {"--memory-per-device", "4KB"});
    }
    checked(args);
    break;
  }
  case 2: { // weights strategy -> split -> merge: merge takes what split wrote
    std::vector<std::string> strategy{"weights",           "strategy", "--input-model", model,
                                      "--tensor-parallel", small,      "--output-dir",  out + "-s"};
    if ((variant & 4) != 0) {
      strategy.insert(strategy.end(), {"--format", "json"});
    } else if ((variant & 1) != 0) {
      strategy.insert(strategy.end(), {"--layout-form", "tutorial"});
    }
    if ((variant & 8) != 0) {
      strategy.insert(strategy.end(), {"--layout", config});
    }
    if (checked(strategy) != cli::exit_ok) {
      break;
    }
    std::vector<std::string> split{"weights",        "split",    "--input-model", model,
                                   "--strategy-dir", out + "-s", "--output-dir",  out + "-r"};
    if ((variant & 16) != 0) {
      split.insert(split.end(), {"--format", "safetensors"});
    }
    if (checked(split) != cli::exit_ok) {
      break;
    }
    must_accept({"weights", "merge", "--strategy-dir", out + "-s", "--ranks-dir", out + "-r",
                 "--output", out + ".safetensors"},
                "merge refuses the ranks split wrote");
    // Re-shard to T = 1, from the merged weights and from the ranks: both
    // must take what merge and split wrote.
    if (checked({"weights", "strategy", "--input-model", model, "--tensor-parallel", "1",
                 "--output-dir", out + "-s1"}) != cli::exit_ok) {
      break;
    }
    must_accept({"weights", "split", "--from-weights", out + ".safetensors", "--strategy-dir",
                 out + "-s1", "--output-dir", out + "-w1"},
                "split refuses the weights merge wrote");
    must_accept({"weights", "split", "--from-ranks", out + "-r", "--from-strategy-dir", out + "-s",
                 "--strategy-dir", out + "-s1", "--output-dir", out + "-r1"},
                "split refuses the ranks split wrote");
    break;
  }
  case 3: { // memory on the config's stages: inference, training, sharded
    std::vector<std::string> args{"memory", "--input-model", model, "--manual-sharding-config",
                                  config};
    switch (variant & 3) {
    case 0:
      args.emplace_back("--inference");
      break;
    case 1:
      args.emplace_back("--training");
      break;
    case 2:
      args.insert(args.end(), {"--training", "--sharded-data-parallel", "auto", "--data-parallel",
                               "8", "--device-memory", "1GB"});
      break;
    default:
      args.insert(args.end(), {"--tensor-parallel", small, "--micro-batch-size", "3", "--schedule",
                               "1f1b", "--batches-per-step", "4"});
      break;
    }
    if ((variant & 4) != 0) {
      args.emplace_back("--compare-stages");
    }
    checked(args);
    break;
  }
  case 5: { // simulate a training step on the config's stages
    static const char* const schedules[] = {"gpipe", "1f1b", "interleaved", "zb-h1"};
    std::vector<std::string> args{"simulate",
                                  "--input-model",
                                  model,
                                  "--manual-sharding-config",
                                  config,
                                  "--schedule",
                                  schedules[variant & 3],
                                  "--batches-per-step",
                                  std::to_string(2 * (1 + ((variant >> 2) & 3))),
                                  "--trace",
                                  out + ".json"};
    if ((variant & 16) != 0) {
      args.insert(args.end(), {"--virtual-stages", "2", "--recompute", "--cost", "flops"});
    }
    checked(args);
    break;
  }
  case 6: { // plan on a small cluster; validate the sharded model it emits
    std::vector<std::string> args{"plan",
                                  "--input-model",
                                  model,
                                  "--devices",
                                  small,
                                  "--device-memory",
                                  (variant & 4) != 0 ? "64KB" : "1GB",
                                  "--device-flops",
                                  "1T",
                                  "--intra-node-bandwidth",
                                  "10GB/s",
                                  "--global-batch",
                                  std::to_string(1 + ((variant >> 3) & 7)),
                                  "--top-k",
                                  "all",
                                  "--emit",
                                  out};
    if (checked(args) != cli::exit_ok || !fs::exists(out + "/sharded.onnx")) {
      break;
    }
    must_accept({"validate", out + "/sharded.onnx"}, "validate rejects the model plan emitted");
    break;
  }
  case 7: { // draw: a page or SVG files, the costs, a training step's timeline
    static const char* const costs[] = {"flops", "unit", "params", "flops"};
    const bool svg = (variant & 1) != 0;
    std::vector<std::string> args{"draw",
                                  "--input-model",
                                  model,
                                  "--manual-sharding-config",
                                  config,
                                  "--format",
                                  svg ? "svg" : "html",
                                  "--output",
                                  svg ? out : out + ".html",
                                  "--cost",
                                  costs[(variant >> 1) & 3]};
    if ((variant & 8) != 0) {
      args.insert(args.end(), {"--schedule", (variant & 16) != 0 ? "zb-h1" : "1f1b",
                               "--batches-per-step", small});
    }
    checked(args);
    break;
  }
  case 4: { // inspect, shard, then validate and strip what it wrote
    checked({"inspect", model, "--report", (variant & 2) != 0 ? "json" : "table"});
    std::vector<std::string> checks;
    if ((variant & 1) != 0) {
      checks = {"--enable-pipelining", "--batches-per-step", small};
    }
    std::vector<std::string> shard{
        "shard", "--input-model",  model,        "--manual-sharding-config",
        config,  "--output-model", out + ".onnx"};
    shard.insert(shard.end(), checks.begin(), checks.end());
    if (checked(shard) != cli::exit_ok || !fs::exists(out + ".onnx")) {
      break;
    }
    std::vector<std::string> validate{"validate", out + ".onnx"};
    validate.insert(validate.end(), checks.begin(), checks.end());
    must_accept(validate, "validate rejects the model shard wrote");
    must_accept({"strip", "--input-model", out + ".onnx", "--output-model", out + "-plain.onnx"},
                "strip rejects the model shard wrote");
    break;
  }
  default:
    break;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) {
    return 0;
  }
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::size_t wanted = static_cast<std::uint8_t>(bytes[1]) |
                             static_cast<std::size_t>(static_cast<std::uint8_t>(bytes[2])) << 8;
  const std::string_view rest = bytes.substr(3);
  const std::size_t config_size = std::min(wanted, rest.size());
  {
    const quiet silence;
    one_input(static_cast<std::uint8_t>(bytes[0]), rest.substr(0, config_size),
              rest.substr(config_size));
  }
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(workspace())) {
    fs::remove_all(entry.path(), ignored);
  }
  return 0;
}
