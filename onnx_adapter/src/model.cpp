// Reading and atomically writing ONNX models.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SHARDPOINT_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHARDPOINT_LSAN 1
#endif
#endif
#ifdef SHARDPOINT_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <shardpoint/io/files.hpp>
#include <shardpoint/onnx/graph.hpp>
#include <shardpoint/onnx/model.hpp>

#include "arena.hpp"
#include "chunks.hpp"
#include "fd_stream.hpp"
#include "node_view.hpp"
#include "wire.hpp"

namespace shardpoint::onnx {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw input_error(io::quote(path.string()) + ": " + what);
}

// The checks a parse alone cannot make: random bytes or a truncated file
// sometimes decode as a protobuf message that is not a model.
void check_structure(const ::onnx::ModelProto& model, const fs::path& path,
                     const wire::node_views* views = nullptr) {
  if (model.ir_version() <= 0) {
    fail(path, "not an ONNX model (no ir_version)");
  }
  if (!model.has_graph()) {
    fail(path, "not an ONNX model (no graph)");
  }
  if (model.opset_import_size() == 0) {
    fail(path, "not a complete ONNX model (no opset_import; is the file truncated?)");
  }
  const auto& g = model.graph();
  if (g.output_size() == 0) {
    fail(path, "not a complete ONNX model (the graph has no outputs; is the file truncated?)");
  }
  // Every graph output defined (a graph input, an initializer or a node's
  // output). The outputs are few: each defined name is looked up among
  // them, not every name put in a set (a sizable part of loading a
  // 10^6-node model).
  std::unordered_map<std::string_view, bool> defined; // graph output -> defined
  for (const auto& o : g.output()) {
    defined.emplace(o.name(), false);
  }
  const auto define = [&](std::string_view name) {
    if (const auto it = defined.find(name); it != defined.end()) {
      it->second = true;
    }
  };
  for (const auto& i : g.input()) {
    define(i.name());
  }
  for (const auto& t : g.initializer()) {
    define(t.name());
  }
  if (views != nullptr) { // (initializers read as views: the skeleton has none)
    for (const std::string_view name : views->initializers) {
      define(name);
    }
  }
  // The nodes' outputs, in chunks side by side: each chunk marks what it
  // defines in its own copy, merged after.
  // (From the views when the nodes were read as views.)
  const auto keep_defined = [&](const auto& outputs, std::vector<std::string_view>& out) {
    for (const std::string_view o : outputs) {
      if (defined.count(o) != 0) {
        out.push_back(o);
      }
    }
  };
  const auto by_chunk = gather_in_chunks<std::string_view>(
      views != nullptr ? views->size() : static_cast<std::size_t>(g.node_size()), 0,
      [&](std::size_t v, std::vector<std::string_view>& out) {
        if (views != nullptr) {
          keep_defined(views->outputs(v), out);
        } else {
          keep_defined(g.node(static_cast<int>(v)).output(), out);
        }
      });
  for (const auto& names : by_chunk) {
    for (const auto name : names) {
      define(name);
    }
  }
  for (const auto& o : g.output()) {
    if (!defined.at(o.name())) {
      fail(path, "graph output " + io::quote(o.name()) + " is produced by no node");
    }
  }
}

} // namespace

namespace {

// Closes a file descriptor when the scope ends, unless released.
struct fd_guard {
  int fd;
  explicit fd_guard(int f) : fd(f) {}
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  ~fd_guard() {
    if (fd != -1) {
      ::close(fd);
    }
  }
  int release() { return std::exchange(fd, -1); }
};

// Parses `path` into `model` straight from the file descriptor, in 1 MiB
// reads: the file is never held in memory whole, so peak memory is the
// parsed model, not the model plus its bytes (100 MB less for ResNet-50).
void parse_file(const fs::path& path, ::onnx::ModelProto& model) {
  // Only regular files (io/inputs.hpp): a FIFO would block, a device never
  // end. O_NONBLOCK: a FIFO put in its place after the check does not block
  // the open, and fstat then refuses it.
  io::require_regular_file(path, "file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    fail(path, std::string("cannot be opened: ") + std::strerror(errno));
  }
  fd_guard guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    fail(path, std::string("cannot be read: ") + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    io::require_regular_file(path, "file"); // which says what it is
    fail(path, "is not a regular file");
  }
  if (st.st_size == 0) {
    fail(path, "the file is empty");
  }
  google::protobuf::io::FileInputStream in(fd, 1 << 20);
  const bool parsed = model.ParseFromZeroCopyStream(&in);
  if (in.GetErrno() != 0) {
    fail(path, std::string("read error: ") + std::strerror(in.GetErrno()));
  }
  if (!parsed) {
    fail(path, "not an ONNX model (protobuf parse failed; truncated or not a model file?)");
  }
  check_structure(model, path);
}

} // namespace

::onnx::ModelProto load_model(const fs::path& path) {
  ::onnx::ModelProto model;
  parse_file(path, model);
  return model;
}

namespace {

// Arena blocks come straight from mmap with MAP_POPULATE: one system call
// maps and faults in a whole block, where touching fresh heap pages one by one
// costs a page fault each (the largest single cost of parsing a model of
// 10^5 small nodes on a virtual machine). The arena grows its blocks
// geometrically up to 16 MiB, so at most one partly used block is wasted.
//
// Under LeakSanitizer the blocks are roots it scans: the strings a model
// holds are malloc'ed and pointed to from its blocks only, which LSan would
// otherwise not see (it scans the heap, not mmap'ed memory) and call
// leaked when a model is kept for the exit (keep_models_until_exit).
void* map_block(std::size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    throw std::bad_alloc();
  }
#ifdef SHARDPOINT_LSAN
  __lsan_register_root_region(p, size);
#endif
  return p;
}

void unmap_block(void* p, std::size_t size) {
#ifdef SHARDPOINT_LSAN
  __lsan_unregister_root_region(p, size);
#endif
  ::munmap(p, size);
}

} // namespace

google::protobuf::ArenaOptions large_arena_options(std::size_t expected_bytes) {
  // The first block no larger than needed (a small model, a fuzzer's
  // input: faulting in 256 KiB would cost more than the parse).
  google::protobuf::ArenaOptions options;
  options.start_block_size =
      std::clamp<std::size_t>(std::bit_ceil(expected_bytes), 4 << 10, 256 << 10);
  options.max_block_size = 16 << 20;
  options.block_alloc = map_block;
  options.block_dealloc = unmap_block;
  return options;
}

loaded_model::loaded_model(std::size_t input_bytes) {
  arena_ = std::make_unique<google::protobuf::Arena>(large_arena_options(input_bytes));
  proto_ = google::protobuf::Arena::CreateMessage<::onnx::ModelProto>(arena_.get());
}

loaded_model::loaded_model(loaded_model&& other) noexcept
    : arena_(std::move(other.arena_)), proto_(std::exchange(other.proto_, nullptr)),
      source_(std::move(other.source_)), marks_(std::move(other.marks_)),
      pending_(std::move(other.pending_)), complete_(std::exchange(other.complete_, false)) {}

loaded_model& loaded_model::operator=(loaded_model&& other) noexcept {
  arena_ = std::move(other.arena_);
  proto_ = std::exchange(other.proto_, nullptr);
  source_ = std::move(other.source_);
  marks_ = std::move(other.marks_);
  pending_ = std::move(other.pending_);
  complete_ = std::exchange(other.complete_, false);
  return *this;
}

namespace {

// Models kept for the process's exit (keep_models_until_exit): reachable
// from here, so that leak checkers do not count them, and never freed.
struct kept_models {
  std::mutex lock;
  bool on = false;
  std::vector<std::unique_ptr<google::protobuf::Arena>> arenas;
  std::vector<std::shared_ptr<const loaded_model::wire_source>> sources;
};

kept_models& kept() {
  static auto* k = new kept_models; // never destroyed: see above
  return *k;
}

} // namespace

void keep_models_until_exit() {
  const std::lock_guard hold(kept().lock);
  kept().on = true;
}

loaded_model::~loaded_model() {
  if (!complete_ || arena_ == nullptr) {
    return; // a model that failed to load is freed, whatever the mode
  }
  auto& k = kept();
  const std::lock_guard hold(k.lock);
  if (k.on) {
    k.arenas.push_back(std::move(arena_));
    k.sources.push_back(std::move(source_));
  }
}

loaded_model read_model(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  loaded_model model(ec ? std::size_t{256} << 10 : static_cast<std::size_t>(size));
  parse_file(path, model.proto());
  model.complete_ = true;
  return model;
}

loaded_model parse_model(std::string_view bytes, const std::string& source) {
  if (bytes.empty()) {
    fail(source, "the model is empty");
  }
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    throw unsupported_error(io::quote(source) + ": protobuf messages are limited to 2 GiB");
  }
  loaded_model model(bytes.size());
  google::protobuf::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()));
  if (!model.proto().ParseFromZeroCopyStream(&in)) {
    fail(source, "not an ONNX model (protobuf parse failed; truncated or not a model file?)");
  }
  check_structure(model.proto(), source);
  model.complete_ = true;
  return model;
}

// ---- the wire-level fast path (wire.hpp) ------------------------------------

struct loaded_model::wire_source {
  std::string_view input;
  void* mapping = nullptr; // owned when not null
  std::size_t mapped = 0;
  int fd = -1; ///< the file mapped (owned when not -1), which the writer copies from
  wire::layout where;
  wire::node_views views; ///< the nodes, when scan() read them as views

  wire_source() = default;
  wire_source(const wire_source&) = delete;
  wire_source& operator=(const wire_source&) = delete;
  ~wire_source() {
    if (mapping != nullptr) {
      ::munmap(mapping, mapped);
    }
    if (fd != -1) {
      ::close(fd);
    }
  }
};

// Nodes read as views, parsed by the first proto() (see model.hpp).
struct loaded_model::pending_nodes {
  std::once_flag once;
  std::atomic<bool> parsed{false};
  std::exception_ptr failed; ///< set once, under `once`, when the parse failed
};

const wire::node_views* loaded_model::node_views() const noexcept {
  return pending_ != nullptr && !pending_->parsed.load(std::memory_order_acquire) ? &source_->views
                                                                                  : nullptr;
}

const ::onnx::GraphProto& graph_with_initializers(const loaded_model& model) {
  const auto* views = model.node_views();
  return views != nullptr && !views->initializers_as_views ? model.proto_without_nodes().graph()
                                                           : model.proto().graph();
}

const ::onnx::ModelProto& loaded_model::proto() const {
  if (node_views() != nullptr) {
    // Nothing is thrown out of call_once (libstdc++'s call_once does not
    // recover from a throw everywhere): a failure is kept, the graph left
    // without nodes, and thrown to every caller.
    std::call_once(pending_->once, [this] {
      auto& graph = *proto_->mutable_graph();
      try {
        if (wire::parse_views(source_->input, source_->where, graph)) {
          pending_->parsed.store(true, std::memory_order_release);
          return;
        }
        pending_->failed = std::make_exception_ptr(
            internal_error("shardpoint: protobuf refused a node or initializer read as a view"));
      } catch (...) { // std::bad_alloc
        pending_->failed = std::current_exception();
      }
      graph.clear_node();
      if (source_->views.initializers_as_views) {
        graph.clear_initializer();
      }
    });
    if (pending_->failed) {
      std::rethrow_exception(pending_->failed);
    }
  }
  return *proto_;
}

::onnx::ModelProto& loaded_model::proto() {
  std::as_const(*this).proto();
  return *proto_;
}

namespace {

// The skeleton of `source->input`, or nothing when the scan gives up.
std::optional<loaded_model> scan_into(loaded_model model,
                                      std::shared_ptr<loaded_model::wire_source> source,
                                      const fs::path& name, node_reading nodes) {
  // (No nodes are pending yet: proto() is the skeleton as scanned.)
  auto where = wire::scan(source->input, model.proto(), wire::kept_data_bytes,
                          nodes != node_reading::parsed ? &source->views : nullptr,
                          nodes == node_reading::views);
  if (!where) {
    return std::nullopt;
  }
  source->where = std::move(*where);
  const bool views = source->views.size() != 0;
  check_structure(model.proto(), name, views ? &source->views : nullptr);
  return model;
}

} // namespace

loaded_model read_graph(const fs::path& path, node_reading nodes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return read_model(path); // which says why
  }
  fd_guard guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > INT_MAX) {
    return read_model(path);
  }
  auto source = std::make_shared<loaded_model::wire_source>();
  source->mapped = static_cast<std::size_t>(st.st_size);
  void* p = ::mmap(nullptr, source->mapped, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    return read_model(path);
  }
  source->mapping = p;
  source->input = {static_cast<const char*>(p), source->mapped};
  auto model = scan_into(loaded_model(source->input.size()), source, path, nodes);
  if (!model) {
    return read_model(path);
  }
  if (source->views.size() != 0) { // parsed by the first proto()
    model->pending_ = std::make_unique<loaded_model::pending_nodes>();
  }
  source->fd = guard.release(); // for the writer's copies (write_file)
  model->source_ = std::move(source);
  model->complete_ = true;
  return std::move(*model);
}

loaded_model parse_graph(std::string_view bytes, const std::string& source_name,
                         node_reading nodes) {
  auto source = std::make_shared<loaded_model::wire_source>();
  source->input = bytes;
  auto model = scan_into(loaded_model(bytes.size()), source, source_name, nodes);
  if (!model) {
    return parse_model(bytes, source_name);
  }
  if (source->views.size() != 0) { // parsed by the first proto()
    model->pending_ = std::make_unique<loaded_model::pending_nodes>();
  }
  model->source_ = std::move(source);
  model->complete_ = true;
  return std::move(*model);
}

namespace {

constexpr const char* too_large = "protobuf messages are limited to 2 GiB";

std::size_t checked(std::size_t size, const std::string& what) {
  if (size > static_cast<std::size_t>(INT_MAX)) {
    throw unsupported_error(what + "the model cannot be serialised: " + too_large);
  }
  return size;
}

std::string where(const fs::path& path) {
  return "'" + path.string() + "': ";
}

// The serialised size; it caches every size the writers below then use.
// (With `views`, the nodes read as views and not parsed: `model` has none.)
std::size_t byte_size(const loaded_model::wire_source* src, const ::onnx::ModelProto& model,
                      const wire::marks* marks = nullptr, const wire::node_views* views = nullptr) {
  if (views != nullptr) {
    return wire::rewritten_size(src->input, src->where, *views, marks);
  }
  return src != nullptr ? wire::rewritten_size(src->input, src->where, model.graph(), marks)
                        : model.ByteSizeLong();
}

void write(const loaded_model::wire_source* src, const ::onnx::ModelProto& model,
           google::protobuf::io::CodedOutputStream& out, const wire::marks* marks = nullptr,
           const wire::node_views* views = nullptr, wire::range_copier* copier = nullptr) {
  if (views != nullptr) {
    wire::rewrite(src->input, src->where, *views, out, marks, copier);
  } else if (src != nullptr) {
    wire::rewrite(src->input, src->where, model.graph(), out, marks, copier);
  } else {
    model.SerializeWithCachedSizes(&out);
  }
}

// The rewrite's long runs of unchanged bytes, copied from the input's file
// by the kernel (io::file_writer::copy): a 100 MB model's weights are
// written without being read into this process (bench/README.md).
class file_copier final : public wire::range_copier {
public:
  file_copier(const loaded_model::wire_source& src, fd_output_stream& file)
      : src_(src), file_(file) {}
  void copy(google::protobuf::io::CodedOutputStream& out, std::size_t from,
            std::size_t to) override {
    out.Trim(); // what `out` holds, to `file_`, which copy() writes first
    (void)file_.copy(src_.fd, from, src_.input.substr(from, to - from)); // errors: file_.error()
  }

private:
  const loaded_model::wire_source& src_;
  fd_output_stream& file_;
};

// Serialised straight into the file, never into a second copy in memory,
// `size` bytes by `write(CodedOutputStream&, fd_output_stream&)`.
template <class Write>
void write_file(const fs::path& path, std::size_t size, const Write& write) {
  // protobuf refuses messages over 2 GiB (and logs a line of its own);
  // refuse them first, with our one line.
  checked(size, where(path));
  io::write_atomically(path, [&](int fd) {
    fd_output_stream out(fd);
    bool ok = true;
    {
      google::protobuf::io::CodedOutputStream coded(&out);
      write(coded, out);
      ok = !coded.HadError();
    }
    ok = out.Flush() && ok;
    return out.error() != 0 ? out.error() : (ok ? 0 : EIO);
  });
}

// With the sizes byte_size() caches.
void save(const loaded_model::wire_source* src, const ::onnx::ModelProto& model,
          const fs::path& path, const wire::marks* marks = nullptr,
          const wire::node_views* views = nullptr) {
  write_file(path, byte_size(src, model, marks, views),
             [&](google::protobuf::io::CodedOutputStream& out, fd_output_stream& file) {
               if (src != nullptr && src->fd != -1) {
                 file_copier copier(*src, file);
                 write(src, model, out, marks, views, &copier);
               } else {
                 write(src, model, out, marks, views);
               }
             });
}

void serialize(const loaded_model::wire_source* src, const ::onnx::ModelProto& model, char* out,
               std::size_t size, const wire::marks* marks = nullptr,
               const wire::node_views* views = nullptr) {
  google::protobuf::io::ArrayOutputStream array(out, static_cast<int>(size));
  google::protobuf::io::CodedOutputStream coded(&array);
  write(src, model, coded, marks, views);
  if (coded.HadError() || static_cast<std::size_t>(coded.ByteCount()) != size) {
    throw internal_error("serialize_into() given a buffer of the wrong size");
  }
}

} // namespace

struct loaded_model::sharding_marks : wire::marks {
  using wire::marks::marks;
};

void annotate(loaded_model& model, const sharding_result& result) {
  if (const auto* views = model.node_views(); views != nullptr && !views->sharding.empty()) {
    (void)model.proto(); // views holding sharding attributes: parsed, to remove them
  }
  if (const auto* views = model.node_views()) {
    // These views hold no sharding attribute to remove: only the marks.
    if (result.size() != views->size()) {
      throw internal_error("shardpoint: annotate() given a result of another graph");
    }
    model.marks_ = std::make_shared<const loaded_model::sharding_marks>(result);
    return;
  }
  auto& g = *model.proto().mutable_graph();
  if (!model.is_skeleton()) {
    annotate(g, result);
    return;
  }
  if (result.size() != static_cast<std::size_t>(g.node_size())) {
    throw internal_error("shardpoint: annotate() given a result of another graph");
  }
  // As annotate(g, result) does, but for the attributes the writer adds.
  for (int v = 0; v < g.node_size(); ++v) {
    auto& node = *g.mutable_node(v);
    const auto i = static_cast<std::size_t>(v);
    if (wire::marks::spliced(node)) {
      annotate(node, std::nullopt, std::nullopt);
    } else {
      annotate(node, result.device(i), result.stage(i));
    }
  }
  model.marks_ = std::make_shared<const loaded_model::sharding_marks>(result);
}

void save_model(const loaded_model& model, const fs::path& path) {
  const auto* views = model.node_views();
  save(model.source_.get(), views != nullptr ? model.proto_without_nodes() : model.proto(), path,
       model.marks_.get(), views);
}

// save_part(), with `nodes` (views of `whole`'s, the part without nodes)
// written first in its graph, or none (nullptr).
struct part_writer {
  static void save_part_with(const ::onnx::ModelProto& part, const loaded_model& whole,
                             const std::vector<int>& from, const wire::node_runs* nodes,
                             const fs::path& path);
  static const loaded_model::wire_source& source(const loaded_model& whole) {
    return *whole.source_;
  }
};

void part_writer::save_part_with(const ::onnx::ModelProto& part, const loaded_model& whole,
                                 const std::vector<int>& from, const wire::node_runs* nodes,
                                 const fs::path& path) {
  const auto* src = whole.source_.get();
  if (src == nullptr) {
    save(nullptr, part, path);
    return;
  }
  if (from.size() != static_cast<std::size_t>(part.graph().initializer_size())) {
    throw internal_error("save_part() given another number of initializers");
  }
  std::vector<const wire::span*> spans;
  bool any = false;
  for (const int k : from) {
    const auto i = static_cast<std::size_t>(k);
    const bool copied = k >= 0 && src->where.stripped.at(i);
    spans.push_back(copied ? &src->where.initializers[i] : nullptr);
    any = any || copied;
  }
  if (!any && nodes == nullptr) {
    save(nullptr, part, path);
    return;
  }
  const std::string small = serialize_model(part); // the graph, no large data
  const wire::splice pieces(small, src->input, spans, nodes);
  write_file(path, pieces.size(),
             [&](google::protobuf::io::CodedOutputStream& out, fd_output_stream& file) {
               if (src->fd != -1) {
                 file_copier copier(*src, file);
                 pieces.write(out, &copier);
               } else {
                 pieces.write(out);
               }
             });
}

void save_part(const ::onnx::ModelProto& part, const loaded_model& whole,
               const std::vector<int>& from, const fs::path& path) {
  part_writer::save_part_with(part, whole, from, nullptr, path);
}

void save_part(const ::onnx::ModelProto& part, const loaded_model& whole,
               const std::vector<int>& from, std::span<const std::size_t> nodes, bool keep_sharding,
               const fs::path& path) {
  const auto* views = whole.node_views();
  if (views == nullptr || part.graph().node_size() != 0) {
    throw internal_error("save_part() given nodes of a model not read as views");
  }
  const auto& src = part_writer::source(whole);
  wire::node_runs runs;
  runs.ends.reserve(nodes.size());
  runs.runs.reserve(nodes.size());
  for (const std::size_t v : nodes) {
    const wire::span& value = src.where.node_values.at(v);
    const bool sharded = !views->sharding.empty() && views->sharding[v] != wire::node_sharding{};
    wire::node_runs_of(src.input.substr(value.begin, value.end - value.begin), views->nodes[v],
                       sharded && !keep_sharding, runs.runs);
    runs.ends.push_back(runs.runs.size());
  }
  part_writer::save_part_with(part, whole, from, &runs, path);
}

std::optional<::onnx::TensorProto> initializer_with_data(const loaded_model& whole, int k) {
  const auto* src = whole.source_.get();
  const auto i = static_cast<std::size_t>(k);
  if (src == nullptr || !src->where.stripped.at(i)) {
    return std::nullopt;
  }
  // The field's value: after its tag (one byte: field 5) and length.
  const auto& s = src->where.initializers[i];
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const std::uint8_t*>(src->input.data() + s.begin),
      static_cast<int>(s.end - s.begin));
  std::uint32_t length = 0;
  ::onnx::TensorProto t;
  if (in.ReadTag() == 0 || !in.ReadVarint32(&length) ||
      !t.ParseFromArray(src->input.data() + s.begin + in.CurrentPosition(),
                        static_cast<int>(length))) {
    throw internal_error("an initializer the scan read does not parse again");
  }
  return t;
}

std::size_t serialized_size(const loaded_model& model) {
  const auto* views = model.node_views();
  return checked(byte_size(model.source_.get(),
                           views != nullptr ? model.proto_without_nodes() : model.proto(),
                           model.marks_.get(), views),
                 "");
}

void serialize_into(const loaded_model& model, char* out, std::size_t size) {
  if (size > static_cast<std::size_t>(INT_MAX)) {
    throw internal_error("serialize_into() given a buffer of the wrong size");
  }
  const auto* views = model.node_views();
  if (views == nullptr && model.pending_ != nullptr) {
    // Nodes read as views and parsed since: serialized_size() may have
    // sized the views (proto() called in between, by this thread or
    // another), and the rewrite of parsed nodes needs their sizes cached.
    (void)byte_size(model.source_.get(), model.proto(), model.marks_.get());
  }
  serialize(model.source_.get(), views != nullptr ? model.proto_without_nodes() : model.proto(),
            out, size, model.marks_.get(), views);
}

std::string serialize_model(const loaded_model& model) {
  std::string out(serialized_size(model), '\0');
  serialize_into(model, out.data(), out.size());
  return out;
}

void save_model(const ::onnx::ModelProto& model, const fs::path& path) {
  save(nullptr, model, path);
}

void write_file_atomically(const fs::path& path, const std::string& data) {
  io::write_file_atomically(path, data);
}

std::size_t serialized_size(const ::onnx::ModelProto& model) {
  return checked(byte_size(nullptr, model), "");
}

void serialize_into(const ::onnx::ModelProto& model, char* out, std::size_t size) {
  if (size > static_cast<std::size_t>(INT_MAX) ||
      size != static_cast<std::size_t>(model.GetCachedSize())) {
    throw internal_error("serialize_into() given a buffer of the wrong size");
  }
  serialize(nullptr, model, out, size);
}

std::string serialize_model(const ::onnx::ModelProto& model) {
  std::string out(serialized_size(model), '\0');
  serialize_into(model, out.data(), out.size());
  return out;
}

} // namespace shardpoint::onnx
