// shardpoint/shardpoint.hpp -- the umbrella header of the shardpoint core.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_SHARDPOINT_HPP
#define SHARDPOINT_SHARDPOINT_HPP

// The pieces every algorithm shares first, then the algorithms.
#include "concepts.hpp"
#include "error.hpp"
#include "graph_access.hpp"
#include "memory_items.hpp"
#include "pipeline_rules.hpp"
#include "producers_late.hpp"
#include "sharding_point.hpp"
#include "sharding_result.hpp"
#include "topological_order.hpp"

#include "balanced_shard.hpp"
#include "baselines.hpp"
#include "evaluate.hpp"
#include "manual_shard.hpp"
#include "memory_plan.hpp"
#include "synthetic.hpp"
#include "tensor_layout.hpp"
#include "validate.hpp"
#include "version.hpp"

#endif // SHARDPOINT_SHARDPOINT_HPP
