// Every node of a graph laid out by Graphviz's dot (libgvc, Debian's
// libgraphviz-dev): the node_layout the command line and Python give the
// pictures (app/flags.hpp). Layered, top to bottom, producers above their
// consumers; each node a box in its stage's colour, labelled with its name
// (cut to 40 characters) and its op type.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_APP_GRAPHVIZ_HPP
#define SHARDPOINT_APP_GRAPHVIZ_HPP

#include <string>

#include <shardpoint/app/flags.hpp>

namespace shardpoint::app {

/// `g` as an SVG element (no XML declaration), or "" when Graphviz fails.
std::string graphviz_layout(const node_graph& g);

} // namespace shardpoint::app

#endif // SHARDPOINT_APP_GRAPHVIZ_HPP
