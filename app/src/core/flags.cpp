// The format-neutral parts of requests: points, the pipelining checks, the
// memory planner's options, whole numbers.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <shardpoint/app/flags.hpp>
#include <shardpoint/detail/checked.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/io/units.hpp>

namespace shardpoint::app {

std::vector<config::entry> points::read() const {
  std::vector<config::entry> out;
  if (!config.empty()) {
    out = config::read_file(config);
  }
  for (const auto& flag : shard_flags) {
    out.push_back(config::parse_shard_flag(flag));
  }
  out.insert(out.end(), entries.begin(), entries.end());
  return out;
}

void pipeline_flags::check() const {
  if (num_ipus) {
    check_option(opt::num_ipus, opt::num_ipus.flag, *num_ipus);
  }
  if (batches_per_step) {
    check_option(opt::batches_per_step, opt::batches_per_step.flag, *batches_per_step);
  }
}

pipeline_options pipeline_flags::options(const sharding_result& r) const {
  pipeline_options o;
  o.num_devices = num_ipus;
  o.enable_pipelining =
      pipelining || (batches_enable_pipelining && batches_per_step.has_value() && r.has_stages());
  o.batches_per_step = batches_per_step.value_or(1);
  o.batches_per_step_defaulted = !batches_per_step.has_value();
  o.spelling = flag_spelling;
  return o;
}

std::vector<std::string> choices_of(const option_spec& o) {
  std::vector<std::string> out;
  for (std::string_view rest = o.choices; !rest.empty();) {
    const auto comma = rest.find(',');
    out.emplace_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

namespace {

// A bound or a value as people write it: 1073741824, 0.5, 1e+12.
std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", x);
  return text;
}

} // namespace

std::string choice_error(const option_spec& o, const std::string& value) {
  const auto choices = choices_of(o);
  if (choices.empty() || std::find(choices.begin(), choices.end(), value) != choices.end()) {
    return {};
  }
  std::string list;
  for (const auto& choice : choices) {
    list.append(list.empty() ? "" : ", ").append(choice);
  }
  return io::quote(value) + " is not one of " + list;
}

std::string empty_value_error(const option_spec& o) {
  if (o.value == "REGEX") {
    return {};
  }
  return o.value == "SIZE" ? "an empty size; give one, e.g. 16GiB" : "an empty value; give one";
}

void check_option(const option_spec& o, std::string_view name, const std::string& value) {
  // A size (the memory planner's) is refused empty here too; other text a
  // program gives empty means "not given" to its request.
  if (o.value == "SIZE" && value.empty()) {
    throw bad_parameter_error(std::string(name) + ": " + empty_value_error(o));
  }
  if (const auto why = choice_error(o, value); !why.empty()) {
    throw bad_parameter_error(std::string(name) + ": " + why);
  }
}

void check_option(const option_spec& o, std::string_view name, double value) {
  // As the command line says it (its validator is this check).
  if (o.ranged() && !(value >= o.min && value <= o.max)) {
    throw bad_parameter_error(std::string(name) + ": Value " + number(value) + " not in range " +
                              range_text(o));
  }
}

std::string range_text(const option_spec& o) {
  return number(o.min) + " to " + number(o.max);
}

std::optional<std::int64_t> read_count(const std::string& text, std::string& why) {
  const auto refuse = [&](const char* what) -> std::optional<std::int64_t> {
    why = io::quote(text) + what;
    return std::nullopt;
  };
  // Digits exactly: read as an integer, so that 2^53 + 1 keeps its last
  // digit; else 1e6 and the like, decimal only (io::read_decimal).
  std::string_view digits = text;
  if (digits.starts_with('+') && !digits.substr(1).starts_with('-')) {
    digits.remove_prefix(1);
  }
  // Every count is at most 2^62 (detail::max_count), however it is
  // written: 4600000000000000000 as 4.6e18.
  constexpr auto most = shardpoint::detail::max_count;
  const char* too_large = " is too large (no count passes 2^62, about 4.6e18)";
  long long whole = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), whole);
  if (!digits.empty() && end == digits.data() + digits.size() &&
      (ec == std::errc::result_out_of_range ||
       (ec == std::errc() && (whole > most || whole < -most)))) {
    return refuse(too_large);
  }
  if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size()) {
    return whole;
  }
  const auto decimal = io::read_decimal(text);
  if (!decimal && io::decimal_overflows(text)) {
    return refuse(too_large);
  }
  if (!decimal || *decimal != std::floor(*decimal)) {
    return refuse(" is not a whole number (e.g. 8, 1e6)");
  }
  const double value = *decimal;
  if (!(std::abs(value) <= static_cast<double>(most))) {
    return refuse(too_large);
  }
  return static_cast<std::int64_t>(value);
}

std::optional<std::int64_t> read_count(const option_spec& o, const std::string& text,
                                       std::string& why) {
  const auto count = read_count(text, why);
  if (!count && o.ranged()) {
    // A whole number beyond 64 bits is out of the option's range, not "too
    // large" for counts in general (the CLI validator's words).
    const auto decimal = io::read_decimal(text);
    if (decimal ? *decimal == std::floor(*decimal) : io::decimal_overflows(text)) {
      why = "Value " + text + " not in range " + range_text(o);
    }
  }
  return count;
}

std::int64_t parse_count(const std::string& flag, const std::string& text) {
  std::string why;
  const auto count = read_count(text, why);
  if (!count) {
    throw bad_parameter_error(flag + ": " + why);
  }
  return *count;
}

std::int64_t parse_count(const option_spec& o, const std::string& text) {
  std::string why;
  const auto count = read_count(o, text, why);
  if (!count) {
    throw bad_parameter_error(std::string(o.flag) + ": " + why);
  }
  // The option's largest value, as the command line's validator says it
  // for a typed option (a trial's memory --batches-per-step 2147483647
  // passed a range of 1 to 2^30 that 10^20 was refused by); one below the
  // least is the planner's rule to say ("must be a positive integer").
  if (o.ranged() && static_cast<double>(*count) > o.max) {
    throw bad_parameter_error(std::string(o.flag) + ": Value " + text + " not in range " +
                              range_text(o));
  }
  return *count;
}

parallel_config memory_flags::config() const {
  // The command line checks the choices as it parses (CLI11); these checks
  // are for every other caller (the Python bindings).
  for (const auto& o : memory_plan_options) {
    if (o.text != nullptr && !(this->*o.text).empty()) { // empty: the default
      check_option(o.spec, o.spec.flag, this->*o.text);
    }
  }
  parallel_config c;
  c.training = !inference;
  // An option of the other mode would be silently ignored: refused.
  if (inference && (!optimizer.empty() || !precision.empty() || fp16 || bf16 ||
                    shard_optimizer_states || !schedule.empty() || !batches_per_step.empty())) {
    throw usage_error("--optimizer, --precision, --fp16, --bf16, --shard-optimizer-states, "
                      "--schedule and --batches-per-step describe training; drop them or "
                      "--inference");
  }
  if (!inference && !queue_depth.empty()) {
    throw usage_error("--queue-depth is for --inference (the entries queued between stages); "
                      "a training step's micro-batches in flight follow --schedule");
  }
  c.optimizer = optimizer == "sgd"    ? optimizer_kind::sgd
                : optimizer == "none" ? optimizer_kind::none
                                      : optimizer_kind::adam;
  // SageMaker's two flags, and --precision on top: asking for both 16-bit
  // types is the planner's fp16-or-bf16 rule.
  c.fp16 = fp16 || precision == "fp16";
  c.bf16 = bf16 || precision == "bf16";
  if (precision == "fp32" && (fp16 || bf16)) {
    throw usage_error(std::string("--precision fp32 contradicts --") + (fp16 ? "fp16" : "bf16"));
  }
  if (precision.empty() && !fp16 && !bf16) {
    c.fp16 = true; // the default: the ZeRO paper's mixed precision
  }
  c.tensor_parallel = parse_count(opt::tensor_parallel, tensor_parallel);
  c.data_parallel = parse_count(opt::data_parallel, data_parallel);
  c.sharded_data_parallel =
      automatic() ? 1 : parse_count(opt::sharded_data_parallel, sharded_data_parallel);
  c.shard_optimizer_states = shard_optimizer_states;
  c.param_persistence_threshold =
      parse_count(opt::param_persistence_threshold, persistence_threshold);
  c.max_live_parameters = parse_count(opt::max_live_parameters, max_live_parameters);
  c.micro_batch_size = parse_count(opt::micro_batch_size, micro_batch_size);
  c.micro_batches =
      batches_per_step.empty() ? 1 : parse_count(opt::batches_per_step, batches_per_step);
  c.schedule = schedule == "1f1b"    ? pipeline_schedule::one_f_one_b
               : schedule == "zb-h1" ? pipeline_schedule::zb_h1
                                     : pipeline_schedule::gpipe;
  c.queue_depth = queue_depth.empty() ? 4 : parse_count(opt::queue_depth, queue_depth);
  return c;
}

} // namespace shardpoint::app
