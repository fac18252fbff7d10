// shardpoint/version.hpp
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_VERSION_HPP
#define SHARDPOINT_VERSION_HPP

#define SHARDPOINT_VERSION_MAJOR 0
#define SHARDPOINT_VERSION_MINOR 1
#define SHARDPOINT_VERSION_PATCH 0

#endif // SHARDPOINT_VERSION_HPP
