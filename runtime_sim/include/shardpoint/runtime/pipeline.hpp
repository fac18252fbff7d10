// shardpoint/runtime/pipeline.hpp -- the pipeline emulator: plan,
// session, metrics and trace output.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_RUNTIME_PIPELINE_HPP
#define SHARDPOINT_RUNTIME_PIPELINE_HPP

#include "metrics.hpp"
#include "plan.hpp"
#include "session.hpp"
#include "trace.hpp"

#endif // SHARDPOINT_RUNTIME_PIPELINE_HPP
