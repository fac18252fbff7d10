// shardpoint/version.hpp
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_VERSION_HPP
#define SHARDPOINT_VERSION_HPP

#define SHARDPOINT_VERSION_MAJOR 0
#define SHARDPOINT_VERSION_MINOR 1
#define SHARDPOINT_VERSION_PATCH 0

#define SHARDPOINT_DETAIL_STRINGIFY2(x) #x
#define SHARDPOINT_DETAIL_STRINGIFY(x) SHARDPOINT_DETAIL_STRINGIFY2(x)
/// "MAJOR.MINOR.PATCH": what `shardpoint --version` and Python's
/// `shardpoint.__version__` say.
#define SHARDPOINT_VERSION_STRING                                                                  \
  SHARDPOINT_DETAIL_STRINGIFY(SHARDPOINT_VERSION_MAJOR)                                            \
  "." SHARDPOINT_DETAIL_STRINGIFY(SHARDPOINT_VERSION_MINOR) "." SHARDPOINT_DETAIL_STRINGIFY(       \
      SHARDPOINT_VERSION_PATCH)

#endif // SHARDPOINT_VERSION_HPP
