// Graphviz's dot as the pictures' node layout (app/graphviz.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <dlfcn.h>

#include <array>
#include <memory>
#include <mutex>

#include <graphviz/gvc.h>

#include <shardpoint/app/graphviz.hpp>
#include <shardpoint/io/text.hpp>

namespace shardpoint::app {

namespace {

// The stage colours of io/picture.cpp, lighter: a node's fill.
const char* fill_of(int stage) {
  static constexpr std::array<const char*, 12> palette{"#c3d3e5", "#fbd8b5", "#c8e2c4", "#f6c4c5",
                                                       "#d3ebe9", "#f9efc3", "#e3d1df", "#ffdfe3",
                                                       "#e0d4ca", "#e8e5e3", "#dbece9", "#efc9d8"};
  return palette[static_cast<std::size_t>(std::max(stage, 0)) % palette.size()];
}

// A label for dot: printable, cut, and with dot's escapes (a backslash
// starts one) written literally.
std::string label_of(const std::string& name, const std::string& op) {
  std::string shown = io::printable(name);
  if (shown.size() > 40) {
    std::size_t cut = 37;
    while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) {
      --cut; // not inside a UTF-8 sequence
    }
    shown = shown.substr(0, cut) + "...";
  }
  std::string out;
  for (const char c : shown + (op.empty() ? "" : "\n" + op)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// Graphviz keeps global state (its error level, its plugins): one layout
// at a time.
std::mutex graphviz_lock;

// The plugins a layout needs, and no others: dot's layout and the core
// renderers (SVG), loaded once from Graphviz's plugin folder. Not the
// configured set: Graphviz 2.43's pango text-layout plugin keeps a pointer
// to the last graph's font name across graphs, which the next layout reads
// after the first graph is freed (AddressSanitizer: heap-use-after-free in
// fuzz_commands). Without it Graphviz estimates text widths from its own
// font metrics, enough for boxes around labels.
struct plugin_list {
  std::array<lt_symlist_t, 3> symbols{};
  bool loaded = false;
};

const plugin_list& layout_plugins() {
  static const plugin_list plugins = [] {
    plugin_list p;
    const auto symbol = [](const char* library, const char* name) -> void* {
      void* handle = dlopen((std::string(SHARDPOINT_GRAPHVIZ_PLUGINS) + "/" + library +
                             SHARDPOINT_GRAPHVIZ_PLUGIN_SUFFIX)
                                .c_str(),
                            RTLD_NOW | RTLD_LOCAL);
      return handle == nullptr ? nullptr : dlsym(handle, name); // kept open for good
    };
    p.symbols[0] = {"gvplugin_dot_layout_LTX_library",
                    symbol("libgvplugin_dot_layout", "gvplugin_dot_layout_LTX_library")};
    p.symbols[1] = {"gvplugin_core_LTX_library",
                    symbol("libgvplugin_core", "gvplugin_core_LTX_library")};
    p.symbols[2] = {nullptr, nullptr};
    p.loaded = p.symbols[0].address != nullptr && p.symbols[1].address != nullptr;
    return p;
  }();
  return plugins;
}

} // namespace

std::string graphviz_layout(const node_graph& g) {
  const std::lock_guard<std::mutex> hold(graphviz_lock);
  agseterr(AGMAX); // its warnings are not ours to print
  const plugin_list& plugins = layout_plugins();
  if (!plugins.loaded) {
    return {};
  }
  const std::unique_ptr<GVC_t, int (*)(GVC_t*)> gvc(gvContextPlugins(plugins.symbols.data(), 0),
                                                    gvFreeContext);
  char name[] = "nodes";
  const std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> graph(agopen(name, Agdirected, nullptr),
                                                            agclose);
  if (!gvc || !graph) {
    return {};
  }
  Agraph_t* G = graph.get();
  // Graphviz 2.43 takes these as char*, and copies them.
  const auto set = [](void* obj, std::string key, std::string value, std::string dflt) {
    agsafeset(obj, key.data(), value.data(), dflt.data());
  };
  set(G, "rankdir", "TB", "");
  set(G, "nodesep", "0.15", "");
  set(G, "ranksep", "0.3", "");
  std::vector<Agnode_t*> nodes;
  nodes.reserve(g.names.size());
  for (std::size_t v = 0; v < g.names.size(); ++v) {
    std::string id = "n" + std::to_string(v);
    Agnode_t* n = agnode(G, id.data(), 1);
    const int stage = v < g.stages.size() ? g.stages[v] : 0;
    set(n, "shape", "box", "ellipse");
    set(n, "style", "filled,rounded", "");
    set(n, "fillcolor", fill_of(stage), "lightgrey");
    set(n, "fontsize", "9", "14");
    set(n, "fontname", "sans-serif", "Times-Roman");
    set(n, "label", label_of(g.names[v], v < g.ops.size() ? g.ops[v] : std::string()), "\\N");
    set(n, "tooltip", io::printable(g.names[v]) + " (stage " + std::to_string(stage) + ")", "");
    nodes.push_back(n);
  }
  for (const auto& [from, to] : g.edges) {
    if (from < nodes.size() && to < nodes.size()) {
      agedge(G, nodes[from], nodes[to], nullptr, 1);
    }
  }
  if (gvLayout(gvc.get(), G, "dot") != 0) {
    return {};
  }
  char* data = nullptr;
  unsigned int length = 0;
  const int rendered = gvRenderData(gvc.get(), G, "svg", &data, &length);
  std::string svg = rendered == 0 && data != nullptr ? std::string(data, length) : std::string();
  if (data != nullptr) {
    gvFreeRenderData(data);
  }
  gvFreeLayout(gvc.get(), G);
  const auto start = svg.find("<svg");
  return start == std::string::npos ? std::string() : svg.substr(start);
}

} // namespace shardpoint::app
