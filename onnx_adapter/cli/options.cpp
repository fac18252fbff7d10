// The option schema on CLI11.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <type_traits>

#include <shardpoint/detail/text.hpp>
#include <shardpoint/io/report.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/io/units.hpp>

#include "exit_codes.hpp"
#include "options.hpp"

namespace shardpoint::cli {

namespace {

// "--input-model,--input_model": the names CLI11 takes.
std::string names_of(const option_spec& o) {
  return std::string(o.flag) + (o.alias.empty() ? "" : "," + std::string(o.alias));
}

// A number as the spec takes it, as a CLI11 validator: a whole number for a
// whole field, read as every count is (read_count: "8", "1e6"; not "2.5",
// "0x10" or "") and handed to CLI11 in digits; otherwise a finite number;
// then the spec's range, said as CLI11's own Range says it ("Value 0 not in
// range 1 to 1073741824") with the bounds as people write them.
CLI::Validator number_check(const option_spec& o, bool whole) {
  return CLI::Validator(
      [o, whole](std::string& typed) {
        double value = 0;
        if (whole) {
          std::string why;
          const auto count = read_count(o, typed, why);
          if (!count) {
            return why;
          }
          value = static_cast<double>(*count);
          typed = std::to_string(*count);
        } else {
          const auto decimal = io::read_decimal(typed); // as read_count: decimal only
          if (!decimal) {
            return io::decimal_error(typed);
          }
          value = *decimal;
        }
        return !o.ranged() || (value >= o.min && value <= o.max)
                   ? std::string()
                   : "Value " + typed + " not in range " + range_text(o);
      },
      o.ranged() ? "(" + range_text(o) + ")" : std::string());
}

// An empty value is a mistake, never "not given" (nor a size of "no limit",
// a rate of none, a file of no name); only an empty pattern means something
// (every name).
CLI::Option* refuse_empty(CLI::Option* added, const option_spec& o) {
  std::string why = empty_value_error(o);
  if (why.empty()) {
    return added;
  }
  return added->check(
      CLI::Validator([why](const std::string& v) { return v.empty() ? why : std::string(); }, ""));
}

// `text` split at commas, each element a number read as every number is
// (a double by io::read_decimal), or, a list of whole numbers being one of
// byte sizes, a size as every size is (io::parse_size: 1GiB, 16GB, 4096; a
// trial's --activation-bytes 1GiB was refused where --device-memory took
// it), or a string as it is; bad_parameter_error naming `flag` for an empty
// element or one that is not a number.
template <class T>
std::vector<T> list_of(const std::string& flag, const std::string& text) {
  std::vector<T> out;
  std::size_t from = 0;
  while (true) {
    const auto to = std::min(text.find(',', from), text.size());
    const std::string item = text.substr(from, to - from);
    std::string why = "an empty value";
    std::optional<T> value;
    if (!item.empty()) {
      if constexpr (std::is_same_v<T, std::string>) {
        value = item;
      } else if constexpr (std::is_floating_point_v<T>) {
        value = io::read_decimal(item);
        why = value ? "" : io::decimal_error(item);
      } else {
        value = io::parse_size(flag, item); // (which says why it is not one)
      }
    }
    if (!value) {
      throw bad_parameter_error(flag + ": " + why + " in " + io::quote(text));
    }
    out.push_back(*value);
    if (to == text.size()) {
      return out;
    }
    from = to + 1;
  }
}

} // namespace

CLI::Option* cli_options::finish(CLI::Option* added, const option_spec& o) {
  if (!o.value.empty()) {
    added->type_name(std::string(o.value));
  }
  if (o.required) {
    added->required();
  }
  if (!o.choices.empty()) { // in check_option's words, for the help as CLI::IsMember
    added->check(CLI::Validator([o](const std::string& v) { return choice_error(o, v); },
                                "{" + std::string(o.choices) + "}"));
  }
  return added;
}

CLI::Option* cli_options::operator()(const option_spec& o, std::string& field) {
  auto* added = finish(at_->add_option(names_of(o), field, std::string(o.help)), o);
  if (!o.required && !field.empty()) { // --help shows the request's own default
    added->default_str(field);
  }
  return refuse_empty(added, o);
}

CLI::Option* cli_options::operator()(const option_spec& o, bool& field) {
  auto* added = at_->add_flag(names_of(o), field, std::string(o.help));
  if (o.required) {
    added->required();
  }
  return added;
}

// A number, checked as the spec says (a number read as text is parsed, and
// checked, where it is used).
template <class T>
CLI::Option* cli_options::number(const option_spec& o, T& field) {
  auto* added = finish(at_->add_option(names_of(o), field, std::string(o.help)), o);
  if constexpr (std::is_arithmetic_v<T>) {
    // --help shows the request's own default; one outside the range is a
    // "not given" (--layers 0) that the help says in words.
    const auto value = static_cast<double>(field);
    if (!o.required && (!o.ranged() || (value >= o.min && value <= o.max))) {
      added->default_str(shardpoint::detail::number(value));
    }
  }
  added->transform(number_check(o, !std::is_floating_point_v<T>));
  return added;
}

CLI::Option* cli_options::operator()(const option_spec& o, int& field) {
  return number(o, field);
}
CLI::Option* cli_options::operator()(const option_spec& o, std::int64_t& field) {
  return number(o, field);
}
CLI::Option* cli_options::operator()(const option_spec& o, double& field) {
  return number(o, field);
}
CLI::Option* cli_options::operator()(const option_spec& o, std::optional<int>& field) {
  return number(o, field);
}
CLI::Option* cli_options::operator()(const option_spec& o, std::optional<std::int64_t>& field) {
  return number(o, field);
}

CLI::Option* cli_options::operator()(const option_spec& o, std::vector<std::string>& field) {
  if (o.choices.empty()) {
    return refuse_empty(finish(at_->add_option(names_of(o), field, std::string(o.help)), o), o);
  }
  // A list of choices, "gpipe,1f1b", each value given adding its own:
  // split here, as a list of numbers is, since CLI11's delimiter drops
  // empty elements (a trial's "gpipe," was taken for "gpipe").
  auto* added = at_->add_option(
      names_of(o),
      [&field, o](const CLI::results_t& given) {
        field.clear();
        const std::string flag(o.flag);
        for (const auto& text : given) {
          try {
            for (auto& item : list_of<std::string>(flag, text)) {
              if (auto why = choice_error(o, item); !why.empty()) {
                throw CLI::ValidationError(flag + ": " + why);
              }
              field.push_back(std::move(item));
            }
          } catch (const bad_parameter_error& e) {
            throw CLI::ValidationError(one_line(e.what()));
          }
        }
        return true;
      },
      std::string(o.help));
  added->expected(1, CLI::detail::expected_max_vector_size); // as a vector: "gpipe 1f1b" too
  added->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  added->allow_extra_args(true);
  if (!o.value.empty()) {
    added->type_name(std::string(o.value) + ":{" + std::string(o.choices) + "}");
  }
  if (o.required) {
    added->required();
  }
  return added;
}

template <class T>
CLI::Option* cli_options::numbers(const option_spec& o, std::vector<T>& field) {
  const std::string flag(o.flag);
  auto* added = at_->add_option(
      names_of(o),
      [&field, flag](const CLI::results_t& typed) {
        try {
          field = list_of<T>(flag, typed.back());
        } catch (const bad_parameter_error& e) {
          throw CLI::ValidationError(one_line(e.what()));
        }
        return true;
      },
      std::string(o.help));
  added->expected(1);
  return finish(added, o);
}

CLI::Option* cli_options::operator()(const option_spec& o, std::vector<double>& field) {
  return numbers(o, field);
}
CLI::Option* cli_options::operator()(const option_spec& o, std::vector<std::int64_t>& field) {
  return numbers(o, field);
}

void cli_options::group(std::string_view name, std::string_view description) {
  at_ = name.empty() ? cmd_ : cmd_->add_option_group(std::string(name), std::string(description));
}

void cli_options::exclusive(const option_spec& a, const option_spec& b) {
  auto* first = cmd_->get_option_no_throw(std::string(a.flag));
  auto* second = cmd_->get_option_no_throw(std::string(b.flag));
  if (first != nullptr && second != nullptr) {
    first->excludes(second);
  }
}

bool memory_flags_given(const CLI::App& cmd) {
  for (const auto& o : memory_plan_options) {
    if (cmd.count(std::string(o.spec.flag)) > 0) {
      return true;
    }
  }
  return false;
}

void print_written(const std::vector<std::string>& files) {
  for (const auto& f : files) {
    std::cerr << "shardpoint: wrote " << io::printable(f) << '\n';
  }
}

void print_findings(const std::vector<diagnostic>& diagnostics) {
  std::cerr << io::to_lines(diagnostics);
}

} // namespace shardpoint::cli
