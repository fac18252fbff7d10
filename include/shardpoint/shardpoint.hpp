// shardpoint/shardpoint.hpp -- the umbrella header of the shardpoint core.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_SHARDPOINT_HPP
#define SHARDPOINT_SHARDPOINT_HPP

#include "concepts.hpp"
#include "error.hpp"
#include "manual_shard.hpp"
#include "sharding_point.hpp"
#include "sharding_result.hpp"
#include "synthetic.hpp"
#include "validate.hpp"
#include "version.hpp"

#endif // SHARDPOINT_SHARDPOINT_HPP
