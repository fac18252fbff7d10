#!/usr/bin/env python3
"""The ratios the README quotes, from bench_ring_buffer's JSON output (run with
--benchmark_repetitions and aggregates): per capacity, ring_buffer's
single-item throughput over boost's, and each bulk configuration's throughput
over single-item at the same capacity -- for both queues, medians."""
import json
import sys


def parse(run_name):
    # "ring_buffer/bulk/items:4194304/capacity:4096/chunk:1024/real_time"
    queue, kind, *rest = run_name.split("/")
    args = dict(part.split(":") for part in rest if ":" in part)
    return queue, kind, int(args.get("capacity", 0)), int(args.get("chunk", 0))


def main(path):
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    median = {}
    for run in runs:
        if run.get("aggregate_name") == "median" and "items_per_second" in run:
            median[parse(run["run_name"])] = run["items_per_second"] / 1e6
    if not median:
        sys.exit(f"{path}: no median aggregates (run with --benchmark_repetitions)")
    for (queue, kind, capacity, chunk), rate in sorted(median.items()):
        if queue != "ring_buffer":
            continue
        boost = median.get(("boost_spsc", kind, capacity, chunk))
        line = f"capacity {capacity:>5} {kind:<10}"
        if chunk:
            line = f"capacity {capacity:>5} bulk {chunk:<5}"
        line += f" ring_buffer {rate:7.1f} M/s"
        if boost:
            line += f"  boost {boost:7.1f} M/s  ring/boost {rate / boost:4.2f}"
        single = median.get(("ring_buffer", "single", capacity, 0))
        boost_single = median.get(("boost_spsc", "single", capacity, 0))
        if chunk and single and boost and boost_single:
            line += f"  bulk/single: ring {rate / single:4.2f}, boost {boost / boost_single:4.2f}"
        print(line)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: ring_ratios.py RING_BUFFER_JSON")
    main(sys.argv[1])
