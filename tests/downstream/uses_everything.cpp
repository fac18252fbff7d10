// Instantiates what a user calls, from every exported target, so that the
// installed headers are compiled with the user's flags (-O3 -Werror), not
// only ours.
#include <iostream>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <shardpoint/io/config.hpp>
#include <shardpoint/io/metrics.hpp>
#include <shardpoint/io/report.hpp>
#include <shardpoint/runtime/pipeline.hpp>
#include <shardpoint/shardpoint.hpp>

int main() {
  namespace syn = shardpoint::synthetic;
  auto d = syn::layered_residual(16, 6, 1);
  syn::assign_costs(d, 2);
  using csr = boost::compressed_sparse_row_graph<boost::directedS>;
  const csr g(boost::edges_are_unsorted_multi_pass, d.edges.begin(), d.edges.end(), d.num_vertices);
  const auto points = syn::evenly_spaced_points(d, 4, syn::spacing::cost);
  const auto r = shardpoint::manual_shard(g, points);
  const auto diagnostics = shardpoint::validate(g, r, {.num_devices = 2});
  const auto index = get(boost::vertex_index, g);
  const auto cost = boost::make_iterator_property_map(d.cost.begin(), index);
  const auto m = shardpoint::evaluate(g, r, cost);
  const auto order = shardpoint::topological_order(g);

  namespace rt = shardpoint::runtime;
  const auto plan = rt::make_plan(
      r, [](std::size_t) { return 1; }, 4);
  const rt::session s(plan, rt::device_manager(plan.num_devices));
  const auto run = s.run_virtual({.micro_batches = 4});
  rt::ring_buffer<int> ring(8);
  (void)ring.try_push(1);

  const auto entries = shardpoint::config::parse("- {node: a, device: 0}\n", "inline.yaml");
  std::cout << r.num_stages() << " stages, " << diagnostics.size() << " finding(s), bottleneck "
            << m.bottleneck << ", " << order.size() << " vertices, makespan " << run.makespan
            << ", " << entries.size() << " entry\n"
            << shardpoint::io::to_lines(diagnostics);
}
