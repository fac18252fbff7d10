// shardpoint/io/picture.hpp -- a split drawn: the graph condensed to its
// stages, the per-stage bars, the pipeline timeline, the candidates, as one
// self-contained HTML page or as plain SVG files.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
//
// THE PICTURE
//
//   A `picture` is data: what `draw` (and `suggest`, `simulate`, `memory`
//   with `--report html|svg`) measured, in the units their JSON reports
//   use. Every section is optional; the renderers draw the ones present:
//     - blocks: runs of consecutive nodes of one stage (in the order the
//       nodes are laid out), each with its node count, cost, weight bytes
//       and op-type histogram; crossings: the bytes that go from one block
//       to a later (or earlier) one;
//     - stages: per-stage bars of cost (with the lower bound and the
//       bottleneck marked), parameter bytes, activation bytes and memory
//       (against the capacity, when there is one);
//     - timeline: the emulator's operations, a row per device, idle time
//       (the bubbles) left grey; the activation bytes each device holds
//       over time, when the run is a training schedule;
//     - candidates: the best bottleneck found for each stage count, against
//       its lower bound, the chosen count marked (`suggest`);
//     - node_graph_svg: a layout engine's drawing of every node (Graphviz's
//       dot on the command line), shown behind a toggle.
//   Numbers appear twice: as text for people and, exactly, as `data-*`
//   attributes (data-stage, data-cost, data-parameter-bytes, ...) that the
//   tests read back and compare with the JSON reports.
//
//   The page holds no script and fetches nothing: inline CSS and SVG only.
//   Names are shown through printable() and escaped for XML, whatever
//   bytes they hold.
#ifndef SHARDPOINT_IO_PICTURE_HPP
#define SHARDPOINT_IO_PICTURE_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardpoint::io {

struct picture {
  std::string title;     ///< the model, or what was planned
  std::string command;   ///< "draw", "suggest", ...
  std::string cost_unit; ///< what a cost unit is, in words ("MFLOP", "node", "byte")
  /// What the stage bars and the bottleneck measure: "cost", or "load" when
  /// a stage's figure adds its bytes received (`suggest --communication-weight`).
  std::string cost_heading = "cost";
  /// What the figures rest on that is a guess, a sentence each: shown in a
  /// banner and marked on the page.
  std::vector<std::string> estimates;

  struct stage {
    int stage = 0;
    int device = 0;
    std::size_t nodes = 0;
    double cost = 0;
    double parameter_bytes = 0;
    double received_bytes = 0;
    std::optional<double> activation_bytes; ///< a micro-batch's, when measured
    std::optional<double> memory_bytes;     ///< the memory planner's total for the device
  };
  std::vector<stage> stages;
  double lower_bound = 0;
  double bottleneck = 0;
  int bottleneck_stage = -1;
  /// The device whose stages, run one after another, cost more together than
  /// every stage alone: it sets the pipeline's pace, so its stages are
  /// marked instead of the heaviest one (`bottleneck_stage`).
  struct pace {
    int device = 0;
    double cost = 0; ///< its stages' sum, a micro-batch
  };
  std::optional<pace> pace_device;
  std::optional<double> memory_capacity;

  struct block {
    int stage = 0;
    int device = 0;
    std::size_t first = 0; ///< position of its first node
    std::size_t nodes = 0;
    double cost = 0;
    double parameter_bytes = 0;
    std::string first_name, last_name;
    std::vector<std::pair<std::string, std::size_t>> ops; ///< op type, count; most first
  };
  std::vector<block> blocks;
  struct crossing {
    std::size_t from = 0, to = 0; ///< blocks
    double bytes = 0;
  };
  std::vector<crossing> crossings;

  struct event {
    int device = 0;
    int stage = 0;
    int micro_batch = 0;
    char kind = 'F'; ///< F forward, B backward, W weight gradient
    double start = 0, end = 0;
  };
  std::vector<event> timeline;
  double makespan = 0;
  std::string time_unit = "cost units";
  struct memory_sample {
    int device = 0;
    double time = 0;
    double bytes = 0;
  };
  std::vector<memory_sample> memory_curve; ///< per device, in time order

  struct candidate {
    int stages = 0;
    double bottleneck = 0;
    double lower_bound = 0;
  };
  std::vector<candidate> candidates;
  int chosen_stages = 0;
  std::vector<std::pair<std::string, double>> baselines; ///< name, bottleneck

  std::string node_graph_svg;     ///< every node, laid out; empty when not drawn
  std::string node_graph_note;    ///< why it was not drawn, when it was not
  std::vector<std::string> notes; ///< what else the page should say (a section left out, why)
};

/// One HTML page: inline CSS and SVG, no script, nothing fetched.
std::string to_html(const picture& p);

/// The page's content as one element (its styles scoped to it), for a
/// page of someone else's: a notebook's output cell.
std::string to_html_fragment(const picture& p);

/// The same content as SVG documents, by file name: stages.svg, bars.svg,
/// and where present timeline.svg, candidates.svg, nodes.svg.
std::vector<std::pair<std::string, std::string>> to_svgs(const picture& p);

/// `text` for XML character data or attribute values: printable(), then
/// &, <, >, " and ' as entities.
std::string xml_escaped(std::string_view text);

} // namespace shardpoint::io

#endif // SHARDPOINT_IO_PICTURE_HPP
