// Fuzzes the wire-level model reader (onnx_adapter/src/wire.hpp) against
// protobuf's own parser, differentially. For every input:
//
//   - the scan never accepts what protobuf rejects;
//   - keeping every data field, its skeleton is protobuf's message exactly;
//   - keeping none, it is protobuf's message but for the initializers'
//     data, and every node span it records holds protobuf's node;
//   - the rewrite, after an edit of every node, parses to protobuf's message
//     with the same edit (so the data copied verbatim is the data);
//   - the rewrite with sharding attributes spliced in (wire::marks) parses
//     to protobuf's message annotated;
//   - parse_graph(), the public entry with its fallback, fails exactly when
//     parse_model() fails, with the same message;
//   - a node's bytes (every node span's, and the input itself taken as a
//     node) that node views accept (node_view.hpp) protobuf parses to the
//     views' fields and serialises to the same bytes, and read_annotations()
//     reads to the views' sharding attributes, without throwing; asked to
//     parse a node holding a tensor, a graph or a type, the views read a
//     plain node as without being asked, and accept no other node than
//     those, parsed as protobuf parses them, under the same checks; an
//     accepted node's runs without its sharding attributes (node_runs_of)
//     are protobuf's bytes of the node with them removed;
//   - parse_graph() with the nodes read as views answers as with them
//     parsed, and writes the same bytes after the same annotation;
//   - an initializer's bytes (every initializer span's, and the input
//     itself taken as one) that the views accept (decode_tensor) protobuf
//     parses, to the views' name; the scan with views reads the names the
//     scan without them parses, counts the same bytes left out, and parses
//     on demand (parse_views) to the same skeleton.
//
// Any disagreement aborts with the two sides named.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <shardpoint/error.hpp>
#include <shardpoint/onnx/graph.hpp>
#include <shardpoint/onnx/model.hpp>

#include "node_view.hpp"
#include "wire.hpp"

namespace {

namespace wire = shardpoint::onnx::wire;

[[noreturn]] void disagree(const char* what) {
  std::fprintf(stderr, "fuzz_wire: disagreement: %s\n", what);
  std::abort();
}

// Byte equality of two messages' serialisations: exact, NaN-safe, and
// insensitive to nothing (unknown fields included, in their order).
bool same(const google::protobuf::MessageLite& a, const google::protobuf::MessageLite& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

// Whether `node` has an attribute holding a tensor, a graph or a type.
bool holds_for_protobuf(const ::onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.has_t() || a.has_g() || a.has_tp() || a.has_sparse_tensor() || a.tensors_size() > 0 ||
        a.graphs_size() > 0 || a.type_protos_size() > 0 || a.sparse_tensors_size() > 0) {
      return true;
    }
  }
  return false;
}

// A node's views, as decode_node gives them; `parsed` where asked for.
struct decoded {
  bool accepted = false;
  std::vector<std::string_view> names;
  wire::node_view v;
  wire::node_sharding sharding;
  std::unique_ptr<::onnx::NodeProto> parsed;
};

// A node the views accepted (`d`, from `bytes`): protobuf reads it to the
// views' fields and writes it back unchanged.
void check_accepted(std::string_view bytes, const decoded& d);

// The node views' rule on `bytes` (a NodeProto's value): accepted, they are
// a node protobuf reads to the views' fields and writes back unchanged;
// asked to parse what they leave to protobuf, they take the same nodes and
// those holding a tensor, a graph or a type that protobuf writes back
// unchanged, which they parse as protobuf does.
void check_node_view(std::string_view bytes) {
  decoded plain;
  plain.accepted = wire::decode_node(bytes, plain.v, plain.names, plain.sharding);
  decoded held;
  held.accepted = wire::decode_node(bytes, held.v, held.names, held.sharding, held.parsed);
  for (const decoded* d : {&plain, &held}) {
    if (!d->accepted && !d->names.empty()) {
      disagree("node views refused a node but kept its names");
    }
    if (!d->accepted && d->parsed != nullptr) {
      disagree("node views refused a node but parsed it");
    }
  }
  if (plain.accepted) {
    check_accepted(bytes, plain);
    if (!held.accepted || held.parsed != nullptr) {
      disagree("node views asked to parse a node took a plain node otherwise");
    }
    if (plain.names != held.names || plain.sharding != held.sharding || !(plain.v == held.v)) {
      disagree("node views asked to parse a node read a plain node otherwise");
    }
    return;
  }
  if (!held.accepted) {
    return;
  }
  if (held.parsed == nullptr) {
    disagree("node views took a node they refused as plain without parsing it");
  }
  check_accepted(bytes, held);
  if (!holds_for_protobuf(*held.parsed)) {
    disagree("node views parsed a node that holds no tensor, graph or type");
  }
}

void check_accepted(std::string_view bytes, const decoded& d) {
  const wire::node_view& v = d.v;
  const auto& names = d.names;
  const wire::node_sharding& sharding = d.sharding;
  ::onnx::NodeProto node;
  if (bytes.size() > static_cast<std::size_t>(INT_MAX) ||
      !node.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    disagree("node views accepted a node protobuf refuses");
  }
  if (d.parsed != nullptr && !same(*d.parsed, node)) {
    disagree("node views parsed a node otherwise than protobuf");
  }
  if (node.SerializeAsString() != bytes) {
    disagree("node views accepted a node protobuf writes otherwise");
  }
  bool fields = v.name() == node.name() && v.op_type() == node.op_type() &&
                v.domain() == node.domain() &&
                v.inputs == static_cast<std::uint32_t>(node.input_size()) &&
                v.outputs == static_cast<std::uint32_t>(node.output_size()) &&
                names.size() == v.inputs + v.outputs;
  for (int i = 0; fields && i < node.input_size() + node.output_size(); ++i) {
    fields = names[static_cast<std::size_t>(i)] ==
             (i < node.input_size() ? node.input(i) : node.output(i - node.input_size()));
  }
  auto head = node;
  head.clear_doc_string();
  head.clear_domain();
  if (!fields || v.splice != head.ByteSizeLong()) {
    disagree("node views read other fields than protobuf");
  }
  // The attribute bytes: the node's attributes, merged into an empty node.
  ::onnx::NodeProto attributes;
  ::onnx::NodeProto only; // the node's attributes, nothing else
  *only.mutable_attribute() = node.attribute();
  const std::string_view attribute_bytes = v.attribute_bytes();
  if (!attributes.ParseFromArray(attribute_bytes.data(),
                                 static_cast<int>(attribute_bytes.size())) ||
      !same(attributes, only)) {
    disagree("node views' attribute bytes are not the node's attributes");
  }
  if (d.parsed == nullptr && holds_for_protobuf(node)) {
    disagree("node views accepted an attribute they leave to protobuf");
  }
  // The node's runs without its sharding attributes (split's stage nodes):
  // protobuf's bytes of the node with them removed; and whole, the node.
  for (const bool drop : {false, true}) {
    std::vector<std::string_view> runs;
    wire::node_runs_of(bytes, v, drop, runs);
    std::string joined;
    for (const auto run : runs) {
      joined += run;
    }
    auto without = node;
    if (drop) {
      auto* a = without.mutable_attribute();
      a->erase(std::remove_if(a->begin(), a->end(), shardpoint::onnx::is_sharding_attribute),
               a->end());
    }
    if (joined != without.SerializeAsString()) {
      disagree("a node's runs are not protobuf's bytes of it without its sharding attributes");
    }
  }
  // Sharding attributes: only as read_annotations() takes them, read as it
  // reads them.
  ::onnx::GraphProto alone;
  *alone.add_node() = node;
  try {
    const auto r = shardpoint::onnx::read_annotations(alone);
    if (sharding.device != r.device(0).value_or(-1) || sharding.stage != r.stage(0).value_or(-1)) {
      disagree("node views read other sharding attributes than read_annotations");
    }
  } catch (const shardpoint::bad_input_error&) {
    disagree("node views accepted a sharding attribute read_annotations refuses");
  }
}

// The initializer views' rule on `bytes` (a TensorProto's value):
// accepted, they are a tensor protobuf reads, with the views' name, holding
// nothing the views leave to protobuf.
void check_tensor_view(std::string_view bytes) {
  wire::tensor_view v;
  if (!wire::decode_tensor(bytes, 16, v)) {
    return;
  }
  ::onnx::TensorProto t;
  if (bytes.size() > static_cast<std::size_t>(INT_MAX) ||
      !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    disagree("initializer views accepted a tensor protobuf refuses");
  }
  if (v.name != t.name() || v.left_out > bytes.size()) {
    disagree("initializer views read another name than protobuf");
  }
  if (t.has_segment() || t.external_data_size() > 0 || t.has_data_location() ||
      !t.unknown_fields().empty()) {
    disagree("initializer views accepted a field they leave to protobuf");
  }
}

// The scan with views against the scan without (`plain`, `parsed`): the
// same initializers' names and bytes left out, and, parsed on demand, the
// same skeleton.
void check_scan_views(std::string_view input, std::size_t kept, const wire::layout& plain,
                      const ::onnx::ModelProto& parsed) {
  ::onnx::ModelProto skeleton;
  wire::node_views views;
  const auto where = wire::scan(input, skeleton, kept, &views);
  if (!where) {
    disagree("the scan with views gave up where the scan without them did not");
  }
  if (where->stripped != plain.stripped || where->stripped_bytes != plain.stripped_bytes) {
    disagree("the scan with views counts other bytes left out");
  }
  const auto& g = parsed.graph();
  if (views.initializers_as_views) {
    bool names = views.initializers.size() == static_cast<std::size_t>(g.initializer_size()) &&
                 skeleton.graph().initializer_size() == 0;
    for (int i = 0; names && i < g.initializer_size(); ++i) {
      names = views.initializers[static_cast<std::size_t>(i)] == g.initializer(i).name();
    }
    if (!names) {
      disagree("initializers read as views are not the parse's names");
    }
  }
  if (views.size() != 0 && !wire::parse_views(input, *where, *skeleton.mutable_graph())) {
    disagree("protobuf refused what the scan read as views");
  }
  if (!same(skeleton, parsed)) {
    disagree("the scan with views, parsed on demand, is not the scan's skeleton");
  }
}

void clear_data(::onnx::ModelProto& m) {
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    t.clear_float_data();
    t.clear_int32_data();
    t.clear_string_data();
    t.clear_int64_data();
    t.clear_raw_data();
    t.clear_double_data();
    t.clear_uint64_data();
  }
}

// What `shard` does to a node, and then some: attributes replaced, a name.
void edit(::onnx::GraphProto& g) {
  for (int i = 0; i < g.node_size(); ++i) {
    auto& n = *g.mutable_node(i);
    auto* a = n.add_attribute();
    a->set_name(shardpoint::onnx::ipu_attribute);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(i % 3);
    if (i == 0) {
      n.set_name("edited");
    }
  }
}

// The rewrite of `graph` over `input` (with `marks`, if any) parses to
// `expected` and is the size computed beforehand; `what` names it. The
// rewrite, or nothing over 2 GiB.
std::optional<std::string> check_rewrite(std::string_view input, const wire::layout& where,
                                         const ::onnx::GraphProto& graph, const wire::marks* marks,
                                         const ::onnx::ModelProto& expected,
                                         const std::string& what) {
  const std::size_t size = wire::rewritten_size(input, where, graph, marks);
  if (size > static_cast<std::size_t>(INT_MAX)) {
    return std::nullopt;
  }
  std::string out(size, '\0');
  {
    google::protobuf::io::ArrayOutputStream array(out.data(), static_cast<int>(size));
    google::protobuf::io::CodedOutputStream coded(&array);
    wire::rewrite(input, where, graph, coded, marks);
    if (coded.HadError() || static_cast<std::size_t>(coded.ByteCount()) != size) {
      disagree((what + " is not the size computed").c_str());
    }
  }
  ::onnx::ModelProto reread;
  if (!reread.ParseFromString(out)) {
    disagree(("protobuf rejects " + what).c_str());
  }
  if (!same(reread, expected)) {
    disagree((what + " is not the model expected").c_str());
  }
  return out;
}

// A sharding of `n` nodes with three devices, two stages and some nodes
// without a stage.
shardpoint::sharding_result some_sharding(std::size_t n) {
  std::vector<int> devices(n);
  std::vector<int> stages(n);
  for (std::size_t i = 0; i < n; ++i) {
    devices[i] = static_cast<int>(i % 3);
    stages[i] = i % 5 == 4 ? shardpoint::sharding_result::unset : static_cast<int>(i % 2);
  }
  return {n, devices, stages};
}

// The rewrite with the sharding attributes spliced in (wire::marks), as
// annotate(loaded_model&) leaves the skeleton, against annotate() on the
// whole model: the same message.
void check_marks(std::string_view input, const wire::layout& where,
                 const ::onnx::ModelProto& skeleton, const ::onnx::ModelProto& full) {
  const auto n = static_cast<std::size_t>(full.graph().node_size());
  const shardpoint::sharding_result r = some_sharding(n);
  ::onnx::ModelProto marked = skeleton;
  for (std::size_t i = 0; i < n; ++i) {
    auto& node = *marked.mutable_graph()->mutable_node(static_cast<int>(i));
    if (wire::marks::spliced(node)) {
      shardpoint::onnx::annotate(node, std::nullopt, std::nullopt);
    } else {
      shardpoint::onnx::annotate(node, r.device(i), r.stage(i));
    }
  }
  ::onnx::ModelProto annotated = full;
  shardpoint::onnx::annotate(*annotated.mutable_graph(), r);
  const wire::marks marks(r);
  const auto out =
      check_rewrite(input, where, marked.graph(), &marks, annotated, "the rewrite with marks");
  // Where protobuf wrote the input (a model with a graph: none is no model,
  // and the rewrite then puts an empty graph first), its bytes are
  // protobuf's for the annotated model: the marks are where protobuf puts
  // the attributes.
  if (out && full.has_graph() && full.SerializeAsString() == input &&
      *out != annotated.SerializeAsString()) {
    disagree("the rewrite with marks of a model protobuf wrote is not protobuf's bytes");
  }
}

std::string error_of(void (*f)(std::string_view), std::string_view input) {
  try {
    f(input);
  } catch (const shardpoint::error& e) {
    return std::string("error: ") + e.what();
  }
  return "ok";
}

void check_scan(std::string_view input, const ::onnx::ModelProto* full, std::size_t kept) {
  ::onnx::ModelProto skeleton;
  const auto where = wire::scan(input, skeleton, kept);
  if (!where) {
    return; // the caller falls back to protobuf's whole parse
  }
  if (full == nullptr) {
    disagree("the scan accepted a model protobuf rejects");
  }
  if (kept == SIZE_MAX) {
    if (!same(skeleton, *full)) {
      disagree("the skeleton keeping all data is not protobuf's message");
    }
  } else {
    ::onnx::ModelProto a = skeleton;
    ::onnx::ModelProto b = *full;
    clear_data(a);
    clear_data(b);
    if (!same(a, b)) {
      disagree("the skeleton without data is not protobuf's message without data");
    }
  }
  if (where->nodes.size() != static_cast<std::size_t>(full->graph().node_size())) {
    disagree("the scan found another number of nodes");
  }
  for (std::size_t i = 0; i < where->nodes.size(); ++i) {
    const auto& s = where->nodes[i];
    google::protobuf::io::CodedInputStream in(
        reinterpret_cast<const std::uint8_t*>(input.data() + s.begin),
        static_cast<int>(s.end - s.begin));
    std::uint32_t length = 0;
    if (in.ReadTag() != 10 || !in.ReadVarint32(&length) ||
        length != s.end - s.begin - static_cast<std::size_t>(in.CurrentPosition())) {
      disagree("a node span is not one node field");
    }
    ::onnx::NodeProto node;
    const auto limit = in.PushLimit(static_cast<int>(length));
    in.SetRecursionLimit(98);
    if (!node.MergePartialFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
      disagree("a node span does not parse");
    }
    in.PopLimit(limit);
    if (!same(node, full->graph().node(static_cast<int>(i)))) {
      disagree("a node span holds another node");
    }
    check_node_view(
        input.substr(s.begin + static_cast<std::size_t>(in.CurrentPosition()) - length, length));
  }
  for (const auto& s : where->initializers) { // (shortest tags and lengths: the scan's rule)
    google::protobuf::io::CodedInputStream in(
        reinterpret_cast<const std::uint8_t*>(input.data() + s.begin),
        static_cast<int>(s.end - s.begin));
    std::uint32_t length = 0;
    if (in.ReadTag() != 42 || !in.ReadVarint32(&length) ||
        length != s.end - s.begin - static_cast<std::size_t>(in.CurrentPosition())) {
      disagree("an initializer span is not one initializer field");
    }
    check_tensor_view(input.substr(s.end - length, length));
  }
  check_scan_views(input, kept, *where, skeleton);
  check_marks(input, *where, skeleton, *full);
  // The rewrite of an edited skeleton against the same edit of the whole.
  edit(*skeleton.mutable_graph());
  ::onnx::ModelProto edited = *full;
  edit(*edited.mutable_graph());
  check_rewrite(input, *where, skeleton.graph(), nullptr, edited, "the rewrite");
}

} // namespace

// parse_graph() with the nodes read as views: the verdict of parse_graph()
// with them parsed; the same bytes after the same annotation; and proto()
// then the parsed model.
void check_views_read(std::string_view input, const std::string& parsed_error) {
  namespace so = shardpoint::onnx;
  std::optional<so::loaded_model> views;
  std::string error = "ok";
  try {
    views = so::parse_graph(input, "<bytes>", so::node_reading::views);
  } catch (const shardpoint::error& e) {
    error = std::string("error: ") + e.what();
  }
  if (error != parsed_error) {
    disagree("parse_graph with node views and with nodes parsed answer differently");
  }
  if (!views) {
    return;
  }
  auto parsed = so::parse_graph(input);
  const auto n = static_cast<std::size_t>(parsed.proto().graph().node_size());
  const shardpoint::sharding_result r = some_sharding(n);
  so::annotate(*views, r);
  so::annotate(parsed, r);
  if (so::serialized_size(*views) <= static_cast<std::size_t>(INT_MAX) &&
      so::serialize_model(*views) != so::serialize_model(parsed)) {
    disagree("the rewrite of nodes read as views is not the rewrite of parsed nodes");
  }
  ::onnx::ModelProto plain = parsed.proto(); // (without the marks, which the writer adds)
  ::onnx::ModelProto read = views->proto();
  for (auto* m : {&plain, &read}) {
    for (auto& node : *m->mutable_graph()->mutable_node()) {
      so::annotate(node, std::nullopt, std::nullopt);
    }
  }
  if (!same(plain, read)) {
    disagree("nodes read as views parse to other nodes");
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  ::onnx::ModelProto full;
  const bool accepted = size <= static_cast<std::size_t>(INT_MAX) &&
                        full.ParseFromArray(data, static_cast<int>(size));
  check_node_view(input);
  check_tensor_view(input);
  check_scan(input, accepted ? &full : nullptr, SIZE_MAX);
  check_scan(input, accepted ? &full : nullptr, 0);

  const auto graph =
      error_of([](std::string_view b) { (void)shardpoint::onnx::parse_graph(b); }, input);
  const auto model =
      error_of([](std::string_view b) { (void)shardpoint::onnx::parse_model(b); }, input);
  if (graph != model) {
    std::fprintf(stderr, "parse_graph: %s\nparse_model: %s\n", graph.c_str(), model.c_str());
    disagree("parse_graph and parse_model answer differently");
  }
  check_views_read(input, graph);
  return 0;
}
