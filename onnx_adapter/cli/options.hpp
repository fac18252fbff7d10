// The command line's side of the shared request parts (app/requests.hpp):
// the option groups several commands take, declared once on CLI11, and the
// ranges CLI11 checks as it parses.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_CLI_OPTIONS_HPP
#define SHARDPOINT_CLI_OPTIONS_HPP

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <shardpoint/app/commands.hpp>

namespace shardpoint::cli {

// The command line is written in the application's vocabulary.
using namespace shardpoint::app;

/// The domains of counts given on the command line (app/requests.hpp); a
/// value outside is a bad parameter (exit 2), said by CLI11 as
/// "--opt: Value V not in range A to B".
inline const CLI::Range device_count(1, max_devices);
inline const CLI::Range batch_count(1, max_batches);

/// --input-model, --manual-sharding-config, --shard, --only-manual-sharding.
void add_to(CLI::App& cmd, model_points& m, const std::string& what = "Model to shard",
            bool required = true);

/// --num-ipus, --enable-pipelining, --batches-per-step.
void add_to(CLI::App& cmd, pipeline_flags& f, const std::string& bps_help);

/// --input-shape, --dim: sizes for the model's free input dimensions.
void add_to(CLI::App& cmd, shape_flags& f);

/// --report with the given formats (and --report-file, when they include
/// the pictures: html, svg).
void add_to(CLI::App& cmd, report_flag& r, const std::vector<std::string>& formats,
            const std::string& help = "Report format");

/// The memory planner's options but those in `leave_out` (a command that
/// has its own --batches-per-step or --schedule leaves the planner's out).
void add_to(CLI::App& cmd, memory_flags& f, std::initializer_list<std::string_view> leave_out = {});

/// Whether any memory planner option was given on the command line.
bool memory_flags_given(const CLI::App& cmd);

/// The report formats of the planning commands: theirs and the pictures.
inline const std::vector<std::string> planning_reports{"table", "json", "html", "svg"};

/// "shardpoint: wrote FILE" on stderr for each file, as every command that
/// writes says.
void print_written(const std::vector<std::string>& files);

/// Validation findings on stderr, one line each.
void print_findings(const std::vector<diagnostic>& diagnostics);

} // namespace shardpoint::cli

#endif // SHARDPOINT_CLI_OPTIONS_HPP
