// shardpoint._core: the Python extension. Thin bindings of the application
// (shardpoint::app, app/include/shardpoint/app/commands.hpp: what the
// command line calls too) and of the core algorithms on an
// edge list; shardpoint/__init__.py gives them their Python shape. Nothing
// here decides anything the command line does not.
//
// Models cross as bytes: the caller's bytes object is parsed where it lies
// (no copy) and the result is serialised straight into the bytes object
// returned. Long work runs without the GIL.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <shardpoint/shardpoint.hpp>

#include <shardpoint/app/commands.hpp>
#include <shardpoint/io/text.hpp>
#include <shardpoint/io/units.hpp>

namespace py = pybind11;
namespace sp = shardpoint;
namespace app = shardpoint::app;

namespace {

// ---- errors: the C++ categories as Python classes ----------------------

// One row a class, in the order they are made: a class derives from a row
// above it (or from none) and from a Python builtin (or none).
enum error_row : std::size_t {
  base,
  bad_input,
  bad_parameter,
  unsupported,
  internal,
  invalid_sharding,
  error_rows
};

struct error_class {
  const char* name;
  const char* doc;
  std::size_t parent; // a row above; error_rows for none
  PyObject* builtin;  // nullptr for none
};

std::array<PyObject*, error_rows>& errors() {
  static std::array<PyObject*, error_rows> e{}; // lives as long as the module (never unloaded)
  return e;
}

PyObject* add_error(py::module_& m, const error_class& c) {
  std::vector<PyObject*> bases;
  if (c.parent != error_rows) {
    bases.push_back(errors()[c.parent]);
  }
  if (c.builtin != nullptr) {
    bases.push_back(c.builtin);
  }
  py::tuple t(bases.size());
  for (std::size_t i = 0; i < bases.size(); ++i) {
    t[i] = py::reinterpret_borrow<py::object>(bases[i]);
  }
  PyObject* cls = PyErr_NewExceptionWithDoc((std::string("shardpoint.") + c.name).c_str(), c.doc,
                                            t.ptr(), nullptr);
  if (cls == nullptr) {
    throw py::error_already_set();
  }
  m.add_object(c.name, py::reinterpret_borrow<py::object>(cls));
  return cls; // the reference PyErr_NewExceptionWithDoc gave, kept for good
}

// The row an error category raises.
error_row row_of(sp::error_category c) {
  switch (c) {
  case sp::error_category::bad_input:
    return bad_input;
  case sp::error_category::bad_parameter:
    return bad_parameter;
  case sp::error_category::unsupported:
    return unsupported;
  case sp::error_category::internal:
    break;
  }
  return internal;
}

void register_errors(py::module_& m) {
  const std::array<error_class, error_rows> classes{{
      {"Error", "Base of every error shardpoint raises.", error_rows, PyExc_Exception},
      {"BadInputError",
       "The data given cannot be used: a model, graph, file or config "
       "(the command line's exit code 2).",
       base, PyExc_ValueError},
      {"BadParameterError", "A parameter or option is outside its domain (exit code 2).", base,
       PyExc_ValueError},
      {"UnsupportedError", "A valid request this version does not support (exit code 2).", base,
       PyExc_NotImplementedError},
      {"InternalError", "A bug in shardpoint (exit code 4): please report it with the call.", base,
       PyExc_RuntimeError},
      {"InvalidShardingError",
       "The sharding breaks a rule: validation failed or it cannot run "
       "as a pipeline (the command line's exit code 3).",
       bad_input, nullptr},
  }};
  for (std::size_t i = 0; i < classes.size(); ++i) {
    errors()[i] = add_error(m, classes[i]);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    const auto raise = [](PyObject* cls, const std::exception& x) {
      PyErr_SetString(cls, app::message_of(x));
    };
    try {
      std::rethrow_exception(p);
    } catch (const py::builtin_exception&) {
      throw; // pybind11's own (TypeError for a bad argument, ...)
    } catch (const py::error_already_set&) {
      throw;
    } catch (const app::check_failed& x) {
      raise(errors()[invalid_sharding], x);
    } catch (const sp::invalid_sharding_error& x) {
      raise(errors()[invalid_sharding], x);
    } catch (const sp::error& x) {
      raise(errors()[row_of(x.category())], x);
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "shardpoint: out of memory");
    } catch (const std::exception& x) {
      if (const auto* system = dynamic_cast<const std::system_error*>(&x);
          system != nullptr && app::out_of_memory(*system)) {
        PyErr_SetString(PyExc_MemoryError,
                        ("shardpoint: out of memory (" + system->code().message() + ")").c_str());
        return;
      }
      PyErr_SetString(errors()[internal],
                      (std::string(x.what()) + " (a bug in shardpoint: please report it)").c_str());
    }
  });
}

// ---- models as bytes ------------------------------------------------------

std::string_view view(const py::bytes& b) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(b.ptr(), &data, &size) != 0) {
    throw py::error_already_set();
  }
  return {data, static_cast<std::size_t>(size)};
}

// `f()` -- the application's work, C++ alone -- run without the GIL, so
// that other Python threads go on meanwhile.
template <class F>
auto without_gil(F f) {
  py::gil_scoped_release free;
  return f();
}

// The model serialised into a new bytes object, without a second copy.
py::bytes to_bytes(const sp::onnx::loaded_model& model) {
  std::size_t size = 0;
  {
    py::gil_scoped_release free;
    size = sp::onnx::serialized_size(model);
  }
  PyObject* out = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
  if (out == nullptr) {
    throw py::error_already_set();
  }
  auto owned = py::reinterpret_steal<py::bytes>(out);
  {
    py::gil_scoped_release free;
    sp::onnx::serialize_into(model, PyBytes_AS_STRING(out), size);
  }
  return owned;
}

// (severity, rule, message, node names, node indices) for Python's Diagnostic.
using finding = std::tuple<std::string, std::string, std::string, std::vector<std::string>,
                           std::vector<std::size_t>>;

// Without node names (the report's JSON has them where the caller wants them).
std::vector<finding> unnamed(const std::vector<sp::diagnostic>& ds) {
  std::vector<finding> out;
  for (const auto& d : ds) {
    out.emplace_back(std::string(sp::to_string(d.severity)), std::string(sp::to_string(d.rule)),
                     d.message, std::vector<std::string>{}, d.vertices);
  }
  return out;
}

// A node's name as the model has it ("" for none). Nodes that stayed views
// are all named (assign_names parses them otherwise), so their display name
// is their name, and reading it parses nothing.
std::string raw_name(const sp::onnx::loaded_model& model, std::size_t v) {
  return model.node_views() != nullptr ? sp::onnx::node_name(model, v)
                                       : model.proto().graph().node(static_cast<int>(v)).name();
}

std::vector<finding> findings(const std::vector<sp::diagnostic>& ds,
                              const sp::onnx::loaded_model& model, std::size_t nodes) {
  auto out = unnamed(ds);
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (auto v : ds[i].vertices) {
      std::get<3>(out[i]).push_back(v < nodes ? raw_name(model, v) : std::string());
    }
  }
  return out;
}

// An int, a numpy integer: anything with __index__ but a bool; never a
// float (1.9 is not silently 1).
std::int64_t integer(const app::option_spec& o, const py::object& v) {
  PyObject* index = py::isinstance<py::bool_>(v) ? nullptr : PyNumber_Index(v.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    throw py::type_error("shardpoint: " + std::string(o.keyword) + " must be an integer, not " +
                         py::str(py::type::of(v).attr("__name__")).cast<std::string>());
  }
  const auto owned = py::reinterpret_steal<py::object>(index);
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(owned.ptr(), &overflow);
  if (overflow != 0) { // its size, not its digits (2**100000 has 30,103)
    const auto bits = owned.attr("bit_length")().cast<long long>();
    throw sp::bad_parameter_error(std::string(o.flag) + ": a " + std::to_string(bits) +
                                  "-bit integer is beyond 64 bits");
  }
  app::check_option(o, o.flag, static_cast<double>(value));
  return value;
}

template <class I>
I narrow(const app::option_spec& o, std::int64_t value) {
  if (value < std::numeric_limits<I>::min() || value > std::numeric_limits<I>::max()) {
    throw sp::bad_parameter_error(std::string(o.flag) + ": " + std::to_string(value) +
                                  " is too large");
  }
  return static_cast<I>(value);
}

// An optional int keyword (PopRT's num_ipus, batches_per_step): None, or
// integer() narrowed to int.
std::optional<int> optional_int(const app::option_spec& o, const py::object& v) {
  if (v.is_none()) {
    return std::nullopt;
  }
  return narrow<int>(o, integer(o, v));
}

using mapping = std::vector<std::pair<std::string, std::string>>; // ids as decimal text

// The pipeline flags as PopRT's keywords give them (app/ checks their
// ranges, in the command line's words).
app::pipeline_flags checks(const py::object& num_ipus, const py::object& batches_per_step,
                           bool enable_pipelining) {
  app::pipeline_flags f;
  f.num_ipus = optional_int(app::opt::num_ipus, num_ipus);
  f.batches_per_step = optional_int(app::opt::batches_per_step, batches_per_step);
  f.pipelining = enable_pipelining;
  return f;
}

// A model argument: a path (str) or serialised bytes.
struct model_arg {
  std::string path;
  std::optional<py::bytes> bytes;
  std::string_view data() const { return bytes ? view(*bytes) : std::string_view(); }
};

model_arg model_from(const py::object& o) {
  if (py::isinstance<py::bytes>(o)) {
    return {"", o.cast<py::bytes>()};
  }
  return {py::str(o).cast<std::string>(), std::nullopt};
}

// ---- the commands -----------------------------------------------------------

// The verdict as the Python layer takes it: whether to raise
// InvalidShardingError (the application decides, app::verdict_of).
bool rule_broken(app::verdict v) {
  return v == app::verdict::rule_broken;
}

py::tuple shard_bytes(const py::bytes& data, const mapping& sharding_info,
                      const mapping& pipelining_info, bool strict, const py::object& num_ipus,
                      const py::object& batches_per_step, bool enable_pipelining) {
  app::model_points m;
  m.data = view(data);
  m.entries = sp::config::from_mapping_texts(sharding_info, pipelining_info, "Sharder");
  m.strict = strict;
  // The nodes read as views where the model allows it, as `shard` without a
  // report reads them (app::reading::graph_views).
  const auto out = without_gil([&] {
    return app::shard_model(m, checks(num_ipus, batches_per_step, enable_pipelining),
                            app::reading::graph_views);
  });
  const auto& model = out.sharded.model;
  return py::make_tuple(to_bytes(model),
                        findings(out.diagnostics, model, out.sharded.result.size()),
                        rule_broken(app::verdict_of(out)));
}

py::tuple validate(const py::object& model, const py::object& num_ipus,
                   const py::object& batches_per_step, bool enable_pipelining) {
  const auto m = model_from(model);
  app::validate_options a;
  a.model = m.path;
  a.data = m.data();
  a.pipeline = checks(num_ipus, batches_per_step, enable_pipelining);
  a.pipeline.batches_enable_pipelining = true; // as `validate` has it
  a.report.format = "json";
  const auto r = without_gil([&] { return app::validate_model(a); });
  auto f = unnamed(r.diagnostics);
  for (std::size_t i = 0; i < f.size(); ++i) {
    std::get<3>(f[i]) = r.node_names[i];
  }
  return py::make_tuple(r.report, f);
}

std::string inspect(const py::object& model, const std::string& grep) {
  const auto m = model_from(model);
  app::inspect_options a;
  a.model = m.path;
  a.data = m.data();
  a.grep = grep;
  a.report.format = "json";
  py::gil_scoped_release free;
  return app::inspect_model(a);
}

// A binder (app/option_schema.hpp) reading a command's options from the
// settings __init__.py passes: a dict whose keys are the options' Python
// keywords. An absent key, or None, leaves the request's default; a value
// is checked as the command line checks it (app::check_option), its
// messages naming the flag, as the command line's do.
class py_options {
public:
  explicit py_options(const py::dict& settings) : settings_(settings) {}

  template <class T>
  void operator()(const app::option_spec& o, T& field) {
    if (o.keyword.empty()) {
      return;
    }
    const std::string key(o.keyword);
    known_.insert(key);
    if (!settings_.contains(key) || settings_[key.c_str()].is_none()) {
      return;
    }
    given_.insert(key);
    read(o, py::reinterpret_borrow<py::object>(settings_[key.c_str()]), field);
  }
  void group(std::string_view, std::string_view) {}
  void exclusive(const app::option_spec& a, const app::option_spec& b) {
    if (given_.count(std::string(a.keyword)) && given_.count(std::string(b.keyword))) {
      throw app::usage_error(std::string(a.keyword) + " and " + std::string(b.keyword) +
                             " exclude each other");
    }
  }
  [[nodiscard]] bool given(std::string_view keyword) const {
    return given_.count(std::string(keyword)) > 0;
  }
  /// Refuses a key no option of the command has ("unknown `what` option").
  void finish(const char* what) const {
    for (const auto& item : settings_) {
      const auto key = py::str(item.first).cast<std::string>();
      if (!known_.count(key)) {
        throw app::usage_error("unknown " + std::string(what) + " option '" + key + "'");
      }
    }
  }

private:
  static void read(const app::option_spec& o, const py::object& v, std::string& field) {
    field = py::str(v).cast<std::string>();
    app::check_option(o, o.flag, field);
  }
  // True or False (numpy's too); never a string or a number ("no" is not
  // True).
  static void read(const app::option_spec& o, const py::object& v, bool& field) {
    const auto type = py::str(py::type::of(v).attr("__name__")).cast<std::string>();
    if (!py::isinstance<py::bool_>(v) && type != "bool_") {
      throw py::type_error("shardpoint: " + std::string(o.keyword) + " must be a bool, not " +
                           type);
    }
    field = v.cast<bool>();
  }
  static void read(const app::option_spec& o, const py::object& v, int& field) {
    field = narrow<int>(o, integer(o, v));
  }
  static void read(const app::option_spec& o, const py::object& v, std::optional<int>& field) {
    field = narrow<int>(o, integer(o, v));
  }
  static void read(const app::option_spec& o, const py::object& v, std::int64_t& field) {
    field = integer(o, v);
  }
  static void read(const app::option_spec& o, const py::object& v,
                   std::optional<std::int64_t>& field) {
    field = integer(o, v);
  }
  // `v` as T; TypeError naming the keyword and what it takes otherwise.
  template <class T>
  static T as(const app::option_spec& o, const py::object& v, const char* what) {
    try {
      return v.cast<T>();
    } catch (const py::cast_error&) {
      throw py::type_error("shardpoint: " + std::string(o.keyword) + " must be " + what + ", not " +
                           py::str(py::type::of(v).attr("__name__")).cast<std::string>());
    }
  }
  static void read(const app::option_spec& o, const py::object& v, double& field) {
    field = as<double>(o, v, "a number");
    app::check_option(o, o.flag, field);
  }
  static void read(const app::option_spec& o, const py::object& v,
                   std::vector<std::string>& field) {
    field = as<std::vector<std::string>>(o, v, "a list of strings");
    for (const auto& item : field) {
      app::check_option(o, o.flag, item);
    }
  }
  // Byte sizes (the one list of whole numbers): each an int, or a string as
  // the command line reads it ("1.5MiB").
  static void read(const app::option_spec& o, const py::object& v,
                   std::vector<std::int64_t>& field) {
    field.clear();
    for (const auto& item : as<std::vector<py::object>>(o, v, "a list of sizes")) {
      if (py::isinstance<py::str>(item)) {
        field.push_back(sp::io::parse_size(o.flag, item.cast<std::string>()));
      } else {
        field.push_back(as<std::int64_t>(o, item, "a list of sizes (ints or strings)"));
      }
    }
  }
  template <class T>
  static void read(const app::option_spec& o, const py::object& v, std::vector<T>& field) {
    field = as<std::vector<T>>(o, v, "a list of numbers"); // "1,2" too: not a list
  }

  const py::dict& settings_;
  std::set<std::string> known_;
  std::set<std::string> given_;
};

// A command's request from the model argument (a path or bytes; None: no
// model) and its settings; `what` names the options in an unknown key's
// message. Returns the binder, which knows what was given.
template <class Request>
py_options read_request(Request& a, const py::dict& settings, const char* what) {
  py_options b(settings);
  options(b, a);
  b.finish(what);
  return b;
}

// Python's `training=False` is --inference; whether any memory plan option
// was given (the command line's memory_flags_given).
bool memory_keywords(const py_options& b, app::memory_flags& f) {
  if (b.given("training") && !f.training) {
    f.inference = true;
  }
  for (const auto& o : app::memory_plan_options) {
    if (!o.spec.keyword.empty() && b.given(o.spec.keyword)) {
      return true;
    }
  }
  return false;
}

// The Python keywords of a command's options, in the order it declares them
// (what its function in __init__.py takes; tests/python/test_package.py).
struct keyword_list {
  std::vector<std::string> keywords;
  template <class T>
  void operator()(const app::option_spec& o, T&) {
    if (!o.keyword.empty()) {
      keywords.emplace_back(o.keyword);
    }
  }
  void group(std::string_view, std::string_view) {}
  void exclusive(const app::option_spec&, const app::option_spec&) {}
};

std::vector<std::string> keywords(const std::string& command) {
  keyword_list b;
  // The commands Python binds with keyword arguments, found by name.
  using bound = std::tuple<app::simulate_options, app::plan_options, app::suggest_options,
                           app::memory_options, app::draw_options, app::shard_options>;
  const bool found = std::apply(
      [&](auto... request) {
        return ((decltype(request)::about.name == command && (options(b, request), true)) || ...);
      },
      bound{});
  if (command == "weights strategy") {
    app::weights_options r;
    app::strategy_options(b, r);
  } else if (!found) {
    throw sp::bad_parameter_error("no command " + sp::io::quote(command) + " binds its options");
  }
  return b.keywords;
}

// A picture as the package takes it: the page, the fragment a notebook
// shows, and the SVG files by name.
py::dict picture_dict(const sp::io::picture& p) {
  py::dict d;
  d["html"] = sp::io::to_html(p);
  d["fragment"] = sp::io::to_html_fragment(p);
  py::dict svgs;
  for (const auto& [name, text] : sp::io::to_svgs(p)) {
    svgs[py::str(name)] = text;
  }
  d["svgs"] = svgs;
  return d;
}

// The report as asked: the JSON text, or (`report` "picture") the picture.
py::object report_of(const std::string& report, const std::string& text,
                     const sp::io::picture& picture) {
  return report == "picture" ? py::object(picture_dict(picture)) : py::object(py::str(text));
}

// `simulate --report json` (or the picture): (report, files written).
py::tuple simulate(const py::object& model, const py::dict& settings, const std::string& report) {
  app::simulate_options a;
  const auto b = read_request(a, settings, "simulate");
  std::optional<model_arg> m;
  if (!model.is_none()) {
    m = model_from(model);
    a.model.input = m->path;
    a.model.data = m->data();
  }
  a.report.format = report;
  const auto r = without_gil([&] { return app::simulate_model(a); });
  return py::make_tuple(report_of(report, r.report, r.picture), r.written);
}

// `plan --report json`: (report, files written).
py::tuple plan(const py::object& model, const py::dict& settings) {
  app::plan_options a;
  read_request(a, settings, "plan");
  std::optional<model_arg> m;
  if (!model.is_none()) {
    m = model_from(model);
    a.input = m->path;
    a.data = m->data();
  }
  a.report.format = "json";
  const auto r = without_gil([&] { return app::plan_model(a); });
  return py::make_tuple(r.report, r.written);
}

// `suggest --report json` (or the picture): (report, findings, files
// written, whether a rule is broken).
py::tuple suggest(const py::object& model, const py::dict& settings, const std::string& report) {
  const auto m = model_from(model);
  app::suggest_options a;
  const auto b = read_request(a, settings, "memory plan");
  a.input = m.path;
  a.data = m.data();
  a.report.format = report;
  a.planned = memory_keywords(b, a.plan);
  if (a.plan.automatic()) {
    throw app::usage_error("suggest plans one sharded data parallel degree; give a number");
  }
  const auto r = without_gil([&] { return app::suggest_split(a); });
  return py::make_tuple(report_of(report, r.report, r.picture), unnamed(r.diagnostics), r.written,
                        rule_broken(app::verdict_of(r)));
}

// `memory --report json` (or the picture): (report, the shortfall).
py::tuple memory_plan(const py::object& model, const py::dict& settings,
                      const std::string& report) {
  app::memory_options a;
  const auto b = read_request(a, settings, "memory plan");
  (void)memory_keywords(b, a.plan);
  std::optional<model_arg> m;
  if (!model.is_none()) {
    m = model_from(model);
    a.model.input = m->path.empty() ? "<bytes>" : m->path; // a model is given
    a.model.data = m->data();
  }
  a.report.format = report;
  const auto r = without_gil([&] { return app::plan_model_memory(a); });
  return py::make_tuple(report_of(report, r.report, r.picture), r.shortfall);
}

// `shardpoint draw`: (picture, warnings, files written, validation
// findings); written only when the settings name an output.
py::tuple draw(const py::object& model, const py::dict& settings) {
  const auto m = model_from(model);
  app::draw_options a;
  const auto b = read_request(a, settings, "memory plan");
  (void)memory_keywords(b, a.plan);
  a.model.input = m.path;
  a.model.data = m.data();
  if (a.report.file.empty()) {
    a.report.format = "picture"; // returned only
  }
  const auto r = without_gil([&] { return app::draw_model(a); });
  return py::make_tuple(picture_dict(r.picture), r.warnings, r.written, unnamed(r.diagnostics));
}

// `shard --report json` (`--report none` without `report`): (report,
// findings, written, output, rule broken).
py::tuple shard_file(const std::string& input, const py::dict& settings, bool report) {
  app::shard_options a;
  read_request(a, settings, "shard");
  a.model.input = input;
  a.report.format = report ? "json" : "none";
  const auto r = without_gil([&] { return app::shard_file(a); });
  return py::make_tuple(r.report, unnamed(r.diagnostics), r.written, r.output.string(),
                        rule_broken(app::verdict_of(r)));
}

// `weights strategy`: (the decision on every weight, warnings).
py::tuple weights_strategy(const py::object& model, const py::dict& settings) {
  const auto m = model_from(model);
  app::weights_options a;
  py_options b(settings);
  app::strategy_options(b, a);
  b.finish("weights strategy");
  a.model.input = m.path;
  a.model.data = m.data();
  const auto r = without_gil([&] { return app::write_strategy(a); });
  py::list out;
  for (const auto& d : r.decisions) {
    py::dict x;
    x["name"] = d.name;
    x["shape"] = py::cast(d.shape);
    x["stages"] = py::cast(d.stages);
    x["layout"] = std::string(sp::io::to_string(d.choice.how));
    x["shard"] = py::tuple(py::cast(d.shard));
    x["reason"] = d.choice.reason;
    out.append(x);
  }
  return py::make_tuple(out, r.warnings);
}

// ---- the core algorithms on an edge list ------------------------------------

using csr = boost::compressed_sparse_row_graph<boost::directedS>;
using int_array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
using float_array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// The rows of a C-contiguous (E, 2) int64 array as (source, target) pairs,
// read in place by the CSR constructor.
struct edge_iterator {
  const std::int64_t* p;
  using iterator_category = std::forward_iterator_tag;
  using value_type = std::pair<std::size_t, std::size_t>;
  using difference_type = std::ptrdiff_t;
  using pointer = const value_type*;
  using reference = value_type;
  value_type operator*() const {
    return {static_cast<std::size_t>(p[0]), static_cast<std::size_t>(p[1])};
  }
  edge_iterator& operator++() {
    p += 2;
    return *this;
  }
  edge_iterator operator++(int) {
    auto old = *this;
    p += 2;
    return old;
  }
  bool operator==(const edge_iterator& o) const { return p == o.p; }
  bool operator!=(const edge_iterator& o) const { return p != o.p; }
};

// The (E, 2) edges as a CSR graph: the one copy the algorithms need.
csr graph_of(std::int64_t num_vertices, const int_array& edges) {
  if (num_vertices < 0) {
    throw sp::bad_parameter_error("num_vertices must be non-negative, not " +
                                  std::to_string(num_vertices));
  }
  const auto info = edges.request();
  if (!(info.ndim == 2 && info.shape[1] == 2) && !(info.ndim == 1 && info.shape[0] == 0)) {
    throw sp::bad_input_error("edges must be an (E, 2) array of vertex pairs");
  }
  const std::size_t count = info.ndim == 2 ? static_cast<std::size_t>(info.shape[0]) : 0;
  const auto* e = static_cast<const std::int64_t*>(info.ptr);
  for (std::size_t i = 0; i < count; ++i) {
    for (int k = 0; k < 2; ++k) {
      const auto v = e[2 * i + static_cast<std::size_t>(k)];
      if (v < 0 || v >= num_vertices) {
        throw sp::bad_input_error("edge " + std::to_string(i) + " (" + std::to_string(e[2 * i]) +
                                  ", " + std::to_string(e[2 * i + 1]) + ") names vertex " +
                                  std::to_string(v) + " of a graph of " +
                                  std::to_string(num_vertices) + " vertices");
      }
    }
  }
  return csr(boost::edges_are_unsorted_multi_pass, edge_iterator{e}, edge_iterator{e + 2 * count},
             static_cast<std::size_t>(num_vertices));
}

py::array_t<std::int32_t> to_array(const sp::sharding_result& r, bool stages) {
  py::array_t<std::int32_t> out(static_cast<py::ssize_t>(r.size()));
  auto* p = out.mutable_data();
  for (std::size_t i = 0; i < r.size(); ++i) {
    p[i] = (stages ? r.stage(i) : r.device(i)).value_or(-1);
  }
  return out;
}

py::tuple manual_shard(std::int64_t num_vertices, const int_array& edges, const int_array& points) {
  const auto info = points.request();
  if (!(info.ndim == 2 && (info.shape[1] == 2 || info.shape[1] == 3)) &&
      !(info.ndim == 1 && info.shape[0] == 0)) {
    throw sp::bad_input_error(
        "points must be a (P, 2) array of (vertex, device) or (P, 3) of (vertex, device, stage)");
  }
  const std::size_t width = info.ndim == 2 ? static_cast<std::size_t>(info.shape[1]) : 2;
  const std::size_t count = info.ndim == 2 ? static_cast<std::size_t>(info.shape[0]) : 0;
  const auto* p = static_cast<const std::int64_t*>(info.ptr);
  std::vector<sp::sharding_point<std::size_t>> list;
  for (std::size_t i = 0; i < count; ++i) {
    const auto* row = p + i * width;
    const auto narrow = [&](std::int64_t v, const char* what) {
      if (v < 0 || v > INT32_MAX) {
        throw sp::bad_input_error("point " + std::to_string(i) + ": " + what + " " +
                                  std::to_string(v) + " is not a non-negative int");
      }
      return static_cast<int>(v);
    };
    if (row[0] < 0 || row[0] >= num_vertices) {
      throw sp::bad_input_error("point " + std::to_string(i) + " names vertex " +
                                std::to_string(row[0]) + " of a graph of " +
                                std::to_string(num_vertices) + " vertices");
    }
    list.push_back({static_cast<std::size_t>(row[0]), narrow(row[1], "device"),
                    width == 3 ? std::optional<int>(narrow(row[2], "stage")) : std::nullopt});
  }
  const csr g = graph_of(num_vertices, edges);
  const auto r = without_gil([&] { return sp::manual_shard(g, list); });
  return py::make_tuple(to_array(r, false), to_array(r, true));
}

py::dict balanced_shard(std::int64_t num_vertices, const int_array& edges, int stages,
                        const std::optional<float_array>& cost,
                        const std::optional<float_array>& memory,
                        std::optional<double> memory_capacity,
                        const std::optional<float_array>& output_bytes,
                        double communication_weight) {
  const csr g = graph_of(num_vertices, edges);
  const auto n = static_cast<std::size_t>(num_vertices);
  // Each column read where it lies (float_array converted it, if at all,
  // once); an absent one is a constant.
  std::vector<double> ones(n, 1.0);
  std::vector<double> zeros(n, 0.0);
  const auto column = [&](const std::optional<float_array>& a, const std::vector<double>& fallback,
                          const char* what) -> const double* {
    if (!a) {
      return fallback.data();
    }
    if (a->ndim() != 1 || static_cast<std::size_t>(a->shape(0)) != n) {
      throw sp::bad_input_error(std::string(what) + " must be a 1-D array of num_vertices (" +
                                std::to_string(n) + ") numbers");
    }
    return a->data();
  };
  const double* c = column(cost, ones, "cost");
  const double* mem = column(memory, zeros, "memory");
  const double* bytes = column(output_bytes, zeros, "output_bytes");
  const auto index = get(boost::vertex_index, g);
  sp::balance_options o;
  o.stages = stages;
  o.memory_capacity = memory_capacity;
  o.communication_weight = communication_weight;
  const auto b = without_gil([&] {
    return sp::balanced_shard(g, boost::make_iterator_property_map(c, index),
                              boost::make_iterator_property_map(mem, index),
                              boost::make_iterator_property_map(bytes, index), o);
  });
  py::dict out;
  out["device"] = to_array(b.result, false);
  out["stage"] = to_array(b.result, true);
  py::list points;
  for (const auto& p : b.points) {
    points.append(py::make_tuple(p.vertex, p.device.value_or(-1), p.stage.value_or(-1)));
  }
  out["points"] = points;
  out["stage_cost"] = b.stage_cost;
  out["stage_memory"] = b.stage_memory;
  out["bottleneck"] = b.bottleneck;
  out["lower_bound"] = b.lower_bound;
  out["exact"] = b.exact;
  out["exact_intervals"] = b.exact_intervals;
  out["method"] = b.method;
  return out;
}

// For the tests of the error translation: throws the C++ error of a category
// by its name. The internal category marks bugs, which no input reaches.
void raise_error(const std::string& category, const std::string& message) {
  if (category == "bad_input") {
    throw sp::bad_input_error(message);
  }
  if (category == "bad_parameter") {
    throw sp::bad_parameter_error(message);
  }
  if (category == "unsupported") {
    throw sp::unsupported_error(message);
  }
  if (category == "internal") {
    throw sp::internal_error(message);
  }
  if (category == "invalid_sharding") {
    throw sp::invalid_sharding_error(message);
  }
  throw std::logic_error(message); // a std::exception that is not ours
}

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "shardpoint's C++ core; use the shardpoint package, which wraps it.";
  m.attr("__version__") = SHARDPOINT_VERSION_STRING;
  register_errors(m);
  // Argument names as in _core.pyi (test_package checks that they agree).
  using py::arg;
  m.def("shard_bytes", &shard_bytes, arg("data"), arg("sharding_info"), arg("pipelining_info"),
        arg("strict"), arg("num_ipus").none(true), arg("batches_per_step").none(true),
        arg("enable_pipelining"),
        "shardpoint shard on serialised bytes: (bytes, findings, rule broken).");
  m.def("shard_file", &shard_file, arg("input"), arg("settings"), arg("report"),
        "shardpoint shard --report json (or none): (report, findings, written, output, rule "
        "broken).");
  m.def("validate", &validate, arg("model"), arg("num_ipus").none(true),
        arg("batches_per_step").none(true), arg("enable_pipelining"),
        "shardpoint validate: (report JSON, findings).");
  m.def("inspect", &inspect, arg("model"), arg("grep"), "shardpoint inspect --report json.");
  // The planning commands: a model (path, bytes or None) and the settings,
  // keyed by the options' Python keywords (app/option_schema.hpp).
  m.def("simulate", &simulate, arg("model").none(true), arg("settings"), arg("report"),
        "shardpoint simulate --report json (or, report \"picture\", its picture): (report, "
        "files written).");
  m.def("plan", &plan, arg("model").none(true), arg("settings"),
        "shardpoint plan --report json: (report, files written).");
  m.def("suggest", &suggest, arg("model"), arg("settings"), arg("report"),
        "shardpoint suggest --report json (or its picture): (report, findings, written, rule "
        "broken).");
  m.def("memory_plan", &memory_plan, arg("model").none(true), arg("settings"), arg("report"),
        "shardpoint memory --report json (or its picture): (report, shortfall).");
  m.def("draw", &draw, arg("model"), arg("settings"),
        "shardpoint draw: (picture, warnings, files written, findings).");
  m.def("keywords", &keywords, arg("command"),
        "The Python keywords of a planning command's options (app/option_schema.hpp).");
  m.def("weights_strategy", &weights_strategy, arg("model"), arg("settings"),
        "shardpoint weights strategy: (the decision on every weight, warnings).");
  m.def("manual_shard", &manual_shard, arg("num_vertices"), arg("edges"), arg("points"),
        "manual_shard on an edge list: (device, stage) arrays.");
  m.def("balanced_shard", &balanced_shard, arg("num_vertices"), arg("edges"), arg("stages"),
        arg("cost").none(true), arg("memory").none(true), arg("memory_capacity").none(true),
        arg("output_bytes").none(true), arg("communication_weight"),
        "balanced_shard on an edge list.");
  m.def("_raise_error", &raise_error, arg("category"), arg("message"),
        "Throws a C++ shardpoint::error of the category, for the tests of the translation "
        "(an internal error cannot be caused otherwise).");
}
