// The commands' options, declared once (app/option_schema.hpp): the command
// line offers each as its request lists it, with its choices and range;
// the checks every other caller gets say what the command line says; the
// Python package and the documentation name each. docs/options.md is made
// here, from the same lists: this test fails when it differs, and writes the
// fresh one with SHARDPOINT_WRITE_DOCS=1.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "options.hpp"

namespace app = shardpoint::app;
namespace cli = shardpoint::cli;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The whole command line, as main.cpp builds it (the actions own the
// requests the options fill).
struct whole_cli {
  CLI::App app{"shardpoint"};
  std::vector<cli::action> actions;
  whole_cli() {
#define SHARDPOINT_ADD(name) actions.push_back(cli::add_##name(app));
    SHARDPOINT_COMMANDS(SHARDPOINT_ADD)
#undef SHARDPOINT_ADD
  }
};

// Every command with options: "suggest", "weights merge", ...
void commands_of(const CLI::App& at, const std::string& prefix,
                 std::vector<std::pair<std::string, const CLI::App*>>& out) {
  for (const auto* sub : at.get_subcommands({})) {
    if (sub->get_name().empty()) {
      continue; // an option group
    }
    const std::string name = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    if (sub->get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }).empty()) {
      out.emplace_back(name, sub);
    } else {
      commands_of(*sub, name, out);
    }
  }
}

// Every option of a command, its groups' included.
void options_of(const CLI::App& cmd, std::vector<const CLI::Option*>& out) {
  for (const auto* o : cmd.get_options()) {
    if (o->get_name() != "--help") {
      out.push_back(o);
    }
  }
  for (const auto* sub : cmd.get_subcommands({})) {
    if (sub->get_name().empty()) {
      options_of(*sub, out);
    }
  }
}

// A binder that writes a command's options as a Markdown table: what the
// docs say is what the request declares.
class markdown_options {
public:
  /// `python`: whether the command has a Python function (whose keywords
  /// the table then gives).
  markdown_options(std::ostringstream& out, bool python) : out_(&out), python_(python) { header(); }

  template <class T>
  void operator()(const app::option_spec& o, const T& field) {
    if (own_again_) { // the command's own options after a group's: a table of their own
      *out_ << "\n";
      header();
      own_again_ = false;
    }
    std::string names = "`" + std::string(o.flag) + "`";
    if (!o.alias.empty()) {
      names += ", `" + std::string(o.alias) + "`";
    }
    std::string takes;
    if (!o.choices.empty()) {
      takes = "one of " + std::string(o.choices);
    } else if (o.ranged() && std::is_arithmetic_v<std::remove_cvref_t<decltype(numeric(field))>>) {
      takes = app::range_text(o);
    }
    *out_ << "| " << cell(names) << " | "
          << (o.is_flag() ? std::string() : cell("`" + std::string(o.value) + "`")) << " | "
          << cell(takes) << " | " << cell(default_of(o, field)) << " | "
          << (o.keyword.empty() || !python_ ? std::string() : "`" + std::string(o.keyword) + "`")
          << " | " << cell(std::string(o.help)) << " |\n";
  }
  void group(std::string_view name, std::string_view description) {
    if (!name.empty()) {
      *out_ << "\n*" << name << "*: " << description << "\n\n";
      header();
      grouped_ = true;
      own_again_ = false;
    } else if (grouped_) { // the command's own options again, if any follow
      own_again_ = true;
      grouped_ = false;
    }
  }
  void exclusive(const app::option_spec& a, const app::option_spec& b) {
    exclusions_.push_back("`" + std::string(a.flag) + "` and `" + std::string(b.flag) + "`");
  }
  [[nodiscard]] const std::vector<std::string>& exclusions() const { return exclusions_; }

private:
  void header() {
    *out_ << "| option | value | takes | default | Python | what |\n|---|---|---|---|---|---|\n";
  }
  // The number a field holds (its optional's), or the field itself.
  template <class T>
  static const T& numeric(const T& field) {
    return field;
  }
  template <class T>
  static T numeric(const std::optional<T>&) {
    return T{};
  }
  template <class T>
  static std::string default_of(const app::option_spec& o, const T& field) {
    if (o.required) {
      return "required";
    }
    if constexpr (std::is_same_v<T, std::string>) {
      return field.empty() ? std::string() : "`" + field + "`";
    } else if constexpr (std::is_same_v<T, bool>) {
      return field ? "on" : "";
    } else if constexpr (std::is_arithmetic_v<T>) {
      std::ostringstream s;
      s << field;
      return field == T{} ? std::string() : s.str();
    } else {
      return {};
    }
  }

  // A table cell: a '|' would end it, in code spans too.
  static std::string cell(const std::string& text) {
    std::string out;
    for (const char c : text) {
      out += c == '|' ? std::string("\\|") : std::string(1, c);
    }
    return out;
  }

  std::ostringstream* out_;
  bool python_;
  bool grouped_ = false;
  bool own_again_ = false;
  std::vector<std::string> exclusions_;
};

template <class Request, class Bind>
void section(std::ostringstream& out, const std::string& name, bool python, Bind bind) {
  out << "\n## shardpoint " << name << "\n\n";
  Request request;
  markdown_options b(out, python);
  bind(b, request);
  for (const auto& e : b.exclusions()) {
    out << "\n" << e << " exclude each other.\n";
  }
}

// Every command: its request, its name, whether Python takes its options as
// keywords, and how its options are bound -- the one list of the commands
// the tests keep (docs/options.md's sections are in this order).
template <class Visit>
void each_command(Visit&& visit) {
  const auto plain = [](auto& b, auto& r) { options(b, r); };
  visit(app::shard_options{}, "shard", true, plain);
  visit(app::suggest_options{}, "suggest", true, plain);
  visit(app::split_options{}, "split", false, plain);
  visit(app::weights_options{}, "weights strategy", true,
        [](auto& b, auto& r) { app::strategy_options(b, r); });
  visit(app::weights_options{}, "weights split", false,
        [](auto& b, auto& r) { app::split_weights_options(b, r); });
  visit(app::weights_options{}, "weights merge", false,
        [](auto& b, auto& r) { app::merge_weights_options(b, r); });
  visit(app::memory_options{}, "memory", true, plain);
  visit(app::inspect_options{}, "inspect", false, plain);
  visit(app::validate_options{}, "validate", false, plain);
  visit(app::simulate_options{}, "simulate", true, plain);
  visit(app::plan_options{}, "plan", true, plain);
  visit(app::draw_options{}, "draw", true, plain);
  visit(app::strip_options{}, "strip", false, plain);
  visit(app::synth_options{}, "synth", false, plain);
}

std::string options_reference() {
  std::ostringstream out;
  out << "# Options\n\n"
         "Every option of every command: its names (PopRT's underscore spelling too), the value "
         "it takes, its choices or range, its default, its Python keyword, and what it does. "
         "Made from the commands' declarations (`app/option_schema.hpp`, each request's "
         "`options()`) by `tests/onnx/test_options.cpp`, which fails when this page differs; "
         "`SHARDPOINT_WRITE_DOCS=1 ctest -R test_options` writes it anew. Sizes take units "
         "(`16GiB`, `900MB`); whole numbers also take `1e6`. The Python column gives "
         "the keyword of the command's Python function (`shardpoint.simulate`, `suggest`, "
         "`memory_plan`, `plan`, `draw`, `shard_file`, `weights_strategy`; the model is its first "
         "argument); see [cli.md](cli.md) for what each command does and "
         "[python.md](python.md) for the functions.\n";
  each_command([&](auto request, const char* name, bool python, auto bind) {
    section<decltype(request)>(out, name, python, bind);
  });
  return out.str();
}

// A binder that parses values into each option alone, through the command
// line's binder, and checks how each kind of field takes them: a whole
// number is read as every count is ("1e0" is 1; "", "2.5" and "0x1" are
// refused saying so), a number refuses "" and "nan", and a value of text
// or a list refuses "" unless it is a pattern.
class value_rules {
public:
  template <class T>
  void operator()(const app::option_spec& o, T&) {
    if (o.is_flag() || o.positional()) {
      return;
    }
    CAPTURE(o.flag);
    using V = std::remove_cvref_t<decltype(numeric(std::declval<T&>()))>;
    if constexpr (std::is_integral_v<V>) {
      const double low = o.ranged() ? o.min : 1;
      CHECK(parsed<T>(o, std::to_string(static_cast<long long>(low)) + "e0") ==
            "=" + std::to_string(static_cast<long long>(low)));
      for (const std::string bad : {"", "2.5", "0x1"}) {
        CAPTURE(bad);
        const std::string error = parsed<T>(o, bad);
        CHECK(error.find(std::string(o.flag) + ": '" + bad + "' is ") == 0);
      }
      // Beyond a double: out of the option's range, or too large a count.
      CHECK(parsed<T>(o, "1e400") ==
            std::string(o.flag) + ": " +
                (o.ranged() ? "Value 1e400 not in range " + app::range_text(o)
                            : "'1e400' is too large (no count passes 2^62, about 4.6e18)"));
      ++wholes;
    } else if constexpr (std::is_floating_point_v<V>) {
      for (const std::string bad : {"", "nan", "1x", "0x10", " 4", "inf"}) {
        CHECK(parsed<T>(o, bad) == std::string(o.flag) + ": '" + bad + "' is not a number");
      }
      CHECK(parsed<T>(o, "1e400") ==
            std::string(o.flag) + ": '1e400' is beyond a double's range (about 1.8e308)");
      CHECK(parsed<T>(o, "-1e-400") == std::string(o.flag) +
                                           ": '-1e-400' is below a double's smallest (about "
                                           "2.2e-308); give 0");
    } else if constexpr (std::is_same_v<T, std::string> ||
                         std::is_same_v<T, std::vector<std::string>>) {
      // Only a pattern takes "" (every name); a file, a size, a rate, a
      // name, a list: "an empty value".
      CHECK((parsed<T>(o, "") == "=") == (o.value == "REGEX"));
    } else if constexpr (requires(T t) { t.front() + 1; }) { // a list of numbers
      CHECK(parsed<T>(o, "") == std::string(o.flag) + ": an empty value in ''");
    }
  }
  void group(std::string_view, std::string_view) {}
  void exclusive(const app::option_spec&, const app::option_spec&) {}
  int wholes = 0;

private:
  template <class T>
  static auto numeric(T& field) {
    if constexpr (requires { field.value_or(0); }) {
      return field.value_or(0);
    } else if constexpr (requires { field.size(); }) {
      return std::string();
    } else {
      return field;
    }
  }
  // "=" and the value parsed, or CLI11's error.
  template <class T>
  static std::string parsed(app::option_spec o, const std::string& typed) {
    o.required = false;
    o.choices = {};
    CLI::App one{"test"};
    T field{};
    cli::cli_options b(one);
    b(o, field);
    try {
      one.parse(std::vector<std::string>{typed, std::string(o.flag)});
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    if constexpr (std::is_same_v<T, std::string>) {
      return "=" + field;
    } else if constexpr (std::is_arithmetic_v<std::remove_cvref_t<decltype(numeric(field))>>) {
      return "=" + std::to_string(numeric(field));
    } else {
      return "=";
    }
  }
};

} // namespace

TEST_CASE("every memory plan option is on the command line, with its choices") {
  CLI::App cmd{"test"};
  app::memory_flags f;
  cli::cli_options b(cmd);
  options(b, f);
  for (const auto& o : app::memory_plan_options) {
    CAPTURE(o.spec.flag);
    const CLI::Option* added = cmd.get_option_no_throw(std::string(o.spec.flag));
    REQUIRE(added != nullptr);
    CHECK(added->get_description() == o.spec.help);
    CHECK((o.text != nullptr) != (o.set != nullptr)); // a value or a flag, never both
    for (const auto& choice : app::choices_of(o.spec)) {
      // Each choice parses into its field, and config() takes it.
      CLI::App one{"test"};
      app::memory_flags g;
      cli::cli_options to_one(one);
      options(to_one, g);
      CAPTURE(choice);
      CHECK_NOTHROW(one.parse(std::vector<std::string>{choice, std::string(o.spec.flag)}));
      CHECK(g.*o.text == choice);
      CHECK_NOTHROW((void)g.config());
    }
  }
  // A value outside the choices is refused as it is parsed, and by config()
  // for the callers that do not parse a command line.
  CHECK_THROWS_AS(cmd.parse(std::vector<std::string>{"adagrad", "--optimizer"}),
                  CLI::ValidationError);
  CHECK_THROWS_AS(cmd.parse(std::vector<std::string>{"--training", "--inference"}),
                  CLI::ExcludesError);
  app::memory_flags bad;
  bad.schedule = "interleaved"; // memory does not plan its virtual stages
  CHECK_THROWS_WITH_AS((void)bad.config(),
                       "--schedule: 'interleaved' is not one of gpipe, 1f1b, zb-h1",
                       shardpoint::bad_parameter_error);
}

TEST_CASE("the documentation and the Python package name every memory plan option") {
  const std::string docs = read(SHARDPOINT_SOURCE_DIR "/docs/memory-model.md");
  const std::string python = read(SHARDPOINT_SOURCE_DIR "/python/shardpoint/__init__.py");
  REQUIRE_FALSE(docs.empty());
  REQUIRE_FALSE(python.empty());
  for (const auto& o : app::memory_plan_options) {
    CAPTURE(o.spec.flag);
    CHECK(docs.find(std::string(o.spec.flag)) != std::string::npos);
    if (!o.spec.keyword.empty()) {
      CHECK(python.find("``" + std::string(o.spec.keyword) + "``") != std::string::npos);
    }
  }
}

TEST_CASE("every option of every command comes from the schema") {
  // No command adds an option of its own: each is in its request's
  // options(), so Python and the docs see it too.
  for (const auto& entry :
       std::filesystem::directory_iterator(SHARDPOINT_SOURCE_DIR "/onnx_adapter/cli/commands")) {
    CAPTURE(entry.path().string());
    const std::string text = read(entry.path().string());
    CHECK(text.find("add_option(") == std::string::npos);
    CHECK(text.find("add_flag(") == std::string::npos);
  }
  whole_cli cli;
  std::vector<std::pair<std::string, const CLI::App*>> commands;
  commands_of(cli.app, "", commands);
  CHECK(commands.size() >= 14); // 12 commands, weights three; each with its section below
  const std::string reference = options_reference();
  for (const auto& entry : commands) {
    const std::string& name = entry.first;
    const CLI::App* cmd = entry.second;
    CAPTURE(name);
    const auto at = reference.find("\n## shardpoint " + name + "\n");
    REQUIRE(at != std::string::npos);
    const auto end = reference.find("\n## ", at + 1);
    const std::string section = reference.substr(at, end - at);
    std::vector<const CLI::Option*> all;
    options_of(*cmd, all);
    CHECK_FALSE(all.empty());
    for (const auto* o : all) {
      const std::string shown = o->get_lnames().empty() ? o->get_name() : "--" + o->get_lnames()[0];
      CAPTURE(shown);
      CHECK(section.find("`" + shown + "`") != std::string::npos);
      CHECK_FALSE(o->get_description().empty());
    }
  }
}

TEST_CASE("every option of the table is taken by some command, under its names") {
  // app/options.def holds no option that no command offers, and each is
  // offered under its flag and PopRT's alias.
  whole_cli cli;
  std::vector<std::pair<std::string, const CLI::App*>> commands;
  commands_of(cli.app, "", commands);
  std::set<std::string> offered;
  for (const auto& entry : commands) {
    std::vector<const CLI::Option*> all;
    options_of(*entry.second, all);
    for (const auto* o : all) {
      for (const auto& n : o->get_lnames()) {
        offered.insert("--" + n);
      }
      if (o->get_lnames().empty()) {
        offered.insert(o->get_name());
      }
    }
  }
  CHECK(std::size(app::opt::all) >= 90);
  std::set<std::string> names;
  for (const auto& o : app::opt::all) {
    CAPTURE(o.flag);
    CHECK(offered.contains(std::string(o.flag)));
    if (!o.alias.empty()) {
      CHECK(offered.contains(std::string(o.alias)));
    }
    CHECK_FALSE(o.help.empty());
    CHECK((o.ranged() || (o.min == 0 && o.max == 0)));
    if (!o.choices.empty()) {
      CHECK_FALSE(o.is_flag());
    }
  }
}

TEST_CASE("a value out of range is said the same by the command line and check_option") {
  whole_cli cli;
  for (const auto& typed : std::vector<std::pair<std::string, std::string>>{
           {"--batches-per-step", "0"}, {"--queue-depth", "2000000"}, {"--unit-us", "0"}}) {
    const std::string& flag = typed.first;
    const std::string& value = typed.second;
    CAPTURE(flag);
    std::string said;
    try {
      cli.app.parse(std::vector<std::string>{value, flag, "1", "--stage-times", "simulate"});
    } catch (const CLI::ValidationError& e) {
      said = e.what();
    }
    const app::option_spec* spec = flag == "--batches-per-step" ? &app::opt::batches_per_step
                                   : flag == "--queue-depth"    ? &app::opt::queue_depth
                                                                : &app::opt::unit_us;
    CHECK_THROWS_WITH_AS(app::check_option(*spec, spec->flag, std::stod(value)), said.c_str(),
                         shardpoint::bad_parameter_error);
  }
  // Fractions as people write them, not CLI11's "0.000000 to 1.000000".
  CHECK_THROWS_WITH(app::check_option(app::opt::weight_share, "--weight-share", 1.5),
                    "--weight-share: Value 1.5 not in range 0 to 1");
  CHECK_NOTHROW(app::check_option(app::opt::weight_share, "--weight-share", 0.5));
  CHECK_THROWS_WITH(app::check_option(app::opt::mode, "mode", std::string("fast")),
                    "mode: 'fast' is not one of virtual, threads");
  CHECK_THROWS_WITH(app::check_option(app::opt::device_memory, "device_memory", std::string()),
                    "device_memory: an empty size; give one, e.g. 16GiB");
  // A list of numbers is read strictly, as it is parsed.
  CHECK_THROWS_WITH_AS(cli.app.parse(std::vector<std::string>{"1,,2", "--stage-times", "1",
                                                              "--batches-per-step", "simulate"}),
                       "--stage-times: an empty value in '1,,2'", CLI::ValidationError);
}

TEST_CASE("docs/options.md is made from the declarations") {
  const std::string path = SHARDPOINT_SOURCE_DIR "/docs/options.md";
  const std::string made = options_reference();
  if (const char* write = std::getenv("SHARDPOINT_WRITE_DOCS");
      write && std::string(write) == "1") {
    std::ofstream(path) << made;
  }
  CHECK_MESSAGE(read(path) == made,
                "docs/options.md differs from the declarations: SHARDPOINT_WRITE_DOCS=1 ctest -R "
                "test_options writes it anew");
}

TEST_CASE("every command's numbers and values are read by one rule") {
  // Found by a first user: --layers 0 was a usage error and --layers -1 a
  // bad parameter; --global-batch '' read as 0, --devices '' and
  // --device-flops '' as not given; --stages 1e0 "Could not convert" where
  // the memory plan's counts took 1e6.
  value_rules rules;
  each_command([&](auto request, const char*, bool, auto bind) { bind(rules, request); });
  CHECK(rules.wholes > 20);
}

TEST_CASE("--help shows each option's default, the request's own") {
  whole_cli c;
  const auto* simulate = c.app.get_subcommand("simulate");
  CHECK(simulate->get_option("--unit-us")->get_default_str() == "100");
  CHECK(simulate->get_option("--mode")->get_default_str() == "virtual");
  CHECK(simulate->get_option("--batches-per-step")->get_default_str().empty()); // required
  // 0 is plan's "not given", outside the range: no default shown.
  CHECK(c.app.get_subcommand("plan")->get_option("--layers")->get_default_str().empty());
  const auto* memory = c.app.get_subcommand("memory");
  CHECK(memory->get_option("--tensor-parallel")->get_default_str() == "1");
  CHECK(memory->get_option("--queue-depth")->get_default_str().empty()); // its help says 4
  std::ostringstream help;
  help << simulate->help();
  CHECK(help.str().find("--queue-depth N:(1 to 1048576)=4") != std::string::npos);
}

TEST_CASE("shard_model and validate_model hold any caller to the options' ranges, first") {
  // No command line parsed these: the app layer checks them itself, before
  // it reads the model (here a path that does not exist).
  app::validate_options v;
  v.model = "no-such-model.onnx";
  v.pipeline.num_ipus = -1;
  CHECK_THROWS_WITH_AS(app::validate_model(v), "--num-ipus: Value -1 not in range 1 to 65536",
                       shardpoint::bad_parameter_error);
  v.pipeline.num_ipus = 2;
  v.pipeline.batches_per_step = 0;
  CHECK_THROWS_WITH_AS(app::validate_model(v),
                       "--batches-per-step: Value 0 not in range 1 to 1073741824",
                       shardpoint::bad_parameter_error);
  app::model_points m;
  m.input = "no-such-model.onnx";
  app::pipeline_flags f;
  f.num_ipus = 70000;
  CHECK_THROWS_WITH_AS(app::shard_model(m, f), "--num-ipus: Value 70000 not in range 1 to 65536",
                       shardpoint::bad_parameter_error);
}

TEST_CASE("every command has its synopsis in docs/cli.md and a fuzz case") {
  // ARCHITECTURE.md's "A command" lists both; nothing else would notice a
  // command without them.
  const std::string docs = read(SHARDPOINT_SOURCE_DIR "/docs/cli.md");
  const std::string fuzz = read(SHARDPOINT_SOURCE_DIR "/tests/fuzz/fuzz_commands.cpp");
  REQUIRE_FALSE(docs.empty());
  REQUIRE_FALSE(fuzz.empty());
  std::vector<std::string> names;
#define SHARDPOINT_NAME(name) names.emplace_back(#name);
  SHARDPOINT_COMMANDS(SHARDPOINT_NAME)
#undef SHARDPOINT_NAME
  CHECK(names.size() >= 12);
  for (const auto& name : names) {
    CAPTURE(name);
    CHECK(docs.find("\nshardpoint " + name + " ") != std::string::npos);
    if (name != "synth") { // reads no file: its two numbers are the schema's ranges
      CHECK(fuzz.find('"' + name + '"') != std::string::npos); // runs it, on a mutated input
    }
  }
}
