// Helpers of the ONNX tests: small models built in code, temporary folders,
// running the command line, and where the shared test models are.
#ifndef SHARDPOINT_TESTS_ONNX_SUPPORT_HPP
#define SHARDPOINT_TESTS_ONNX_SUPPORT_HPP

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <shardpoint/onnx/adapter.hpp>

namespace onnx_test {

namespace fs = std::filesystem;

/// ../shared/models, or empty when it is absent (tests then skip, visibly).
inline fs::path models_dir() {
  const fs::path dir = SHARDPOINT_MODELS_DIR;
  return fs::is_directory(dir) ? dir : fs::path();
}

#define SKIP_WITHOUT_MODELS()                                                                      \
  if (onnx_test::models_dir().empty()) {                                                           \
    WARN_MESSAGE(false, "skipped: " SHARDPOINT_MODELS_DIR " not found");                           \
    return;                                                                                        \
  }

struct node_spec {
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string op = "Relu";
};

/// A graph-valued attribute `attribute` ("then_branch", "else_branch", "body")
/// of `node`: its graph, to fill.
inline ::onnx::GraphProto& add_branch(::onnx::NodeProto& node, const std::string& attribute) {
  auto& a = *node.add_attribute();
  a.set_name(attribute);
  a.set_type(::onnx::AttributeProto::GRAPH);
  return *a.mutable_g();
}

/// An If node `name` reading `condition` and writing `output`, appended to
/// `g`: its then_branch, to fill.
inline ::onnx::GraphProto& add_if(::onnx::GraphProto& g, const std::string& name,
                                  const std::string& condition, const std::string& output) {
  auto& n = *g.add_node();
  n.set_name(name);
  n.set_op_type("If");
  n.add_input(condition);
  n.add_output(output);
  return add_branch(n, "then_branch");
}

/// A model of no nodes (IR 8, opset 13) whose graph is named `name`.
inline ::onnx::ModelProto empty_model(const std::string& name) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name(name);
  return m;
}

/// A float model: graph input "x" [1, 4], the given nodes, outputs as named.
inline ::onnx::ModelProto make_model(const std::vector<node_spec>& nodes,
                                     const std::vector<std::string>& outputs) {
  ::onnx::ModelProto m = empty_model("test");
  auto& g = *m.mutable_graph();
  const auto value = [](::onnx::ValueInfoProto& v, const std::string& name) {
    v.set_name(name);
    auto& t = *v.mutable_type()->mutable_tensor_type();
    t.set_elem_type(::onnx::TensorProto::FLOAT);
    t.mutable_shape()->add_dim()->set_dim_value(1);
    t.mutable_shape()->add_dim()->set_dim_value(4);
  };
  value(*g.add_input(), "x");
  for (const auto& spec : nodes) {
    auto& n = *g.add_node();
    n.set_name(spec.name);
    n.set_op_type(spec.op);
    for (const auto& i : spec.inputs) {
      n.add_input(i);
    }
    for (const auto& o : spec.outputs) {
      n.add_output(o);
    }
  }
  for (const auto& o : outputs) {
    value(*g.add_output(), o);
  }
  return m;
}

// The sharding read_annotations() reads from `node` alone: (device, stage),
// -1 where it has none; nothing when it throws on the node's attributes.
inline std::optional<std::pair<int, int>> node_annotations(const ::onnx::NodeProto& node) {
  ::onnx::GraphProto g;
  *g.add_node() = node;
  try {
    const auto r = shardpoint::onnx::read_annotations(g);
    return std::pair<int, int>(r.device(0).value_or(-1), r.stage(0).value_or(-1));
  } catch (const shardpoint::bad_input_error&) {
    return std::nullopt;
  }
}

// Whether `node` has an attribute holding a tensor, graph, type or sparse
// tensor: what node views (onnx_adapter/src/node_view.hpp) read only as
// protobuf parses it.
inline bool holds_for_protobuf(const ::onnx::NodeProto& node) {
  return std::any_of(node.attribute().begin(), node.attribute().end(), [](const auto& a) {
    return a.has_t() || a.has_g() || a.has_tp() || a.has_sparse_tensor() || a.tensors_size() > 0 ||
           a.graphs_size() > 0 || a.type_protos_size() > 0 || a.sparse_tensors_size() > 0;
  });
}

// Whether node views leave `node` to protobuf by what it holds: an
// attribute holding a tensor, graph, type or sparse tensor, or a sharding
// attribute read_annotations() throws on. Stated here, apart from the
// views' own rule, for the tests to hold that rule to. Asked to parse
// the first kind (decode_node's `parsed`), the views leave to protobuf
// only the second (of a node protobuf wrote): see views_refuse.
inline bool left_to_protobuf(const ::onnx::NodeProto& node) {
  return holds_for_protobuf(node) || !node_annotations(node);
}

// Whether node views, asked to parse what they leave to protobuf (the
// scan's way), refuse `node` as protobuf writes it.
inline bool views_refuse(const ::onnx::NodeProto& node) {
  return !node_annotations(node);
}

/// A FLOAT tensor's raw_data moved into float_data: the other form a
/// model may hold its values in (the readers take both).
inline void to_float_data(::onnx::TensorProto& t) {
  std::vector<float> values(t.raw_data().size() / sizeof(float));
  std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(float));
  t.clear_raw_data();
  for (const float v : values) {
    t.add_float_data(v);
  }
}

/// A fresh empty folder, removed at the end of the test.
class temp_dir {
public:
  explicit temp_dir(const fs::path& parent = fs::temp_directory_path()) {
    std::string tmpl = (parent / "shardpoint-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

private:
  fs::path path_;
};

inline void write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct run_result {
  int code = -1;
  std::string out; // stdout
  std::string err; // stderr
};

/// `p` in single quotes, for a shell command line (test paths hold no quotes).
inline std::string q(const fs::path& p) {
  return "'" + p.string() + "'";
}

/// Runs the shardpoint binary with `args` (already shell-quoted where needed).
inline run_result shardpoint_cli(const std::string& args, const fs::path& scratch) {
  const fs::path out = scratch / ".stdout";
  const fs::path err = scratch / ".stderr";
  const std::string cmd = std::string("'") + SHARDPOINT_CLI + "' " + args + " >'" + out.string() +
                          "' 2>'" + err.string() + "' </dev/null";
  const int status = std::system(cmd.c_str());
  run_result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

/// Runs a command with --report json, which must exit `expected`; its report.
inline nlohmann::json run_json(const std::string& args, const temp_dir& dir, int expected = 0) {
  const auto r = shardpoint_cli(args + " --report json", dir.path());
  CAPTURE(args);
  REQUIRE_MESSAGE(r.code == expected, r.err);
  return nlohmann::json::parse(r.out);
}

/// Runs a command that must fail: exit `code`, one line on stderr holding
/// `message`, nothing on stdout, and `dir` holding exactly what it held
/// before (no output, no temporary file).
inline void expect_failure(const temp_dir& dir, const std::string& args, int code,
                           const std::string& message) {
  const auto before = dir.files();
  const auto r = shardpoint_cli(args, dir.path());
  CAPTURE(args);
  CAPTURE(r.err);
  CHECK(r.code == code);
  CHECK(r.out.empty());
  CHECK(r.err.find(message) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(dir.files() == before);
}

} // namespace onnx_test

#endif
