// shardpoint/io/files.hpp -- the file policies in one include: what a
// command may write (outputs.hpp), what it may read (inputs.hpp), and how
// names from files are checked and shown (text.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#ifndef SHARDPOINT_IO_FILES_HPP
#define SHARDPOINT_IO_FILES_HPP

#include <shardpoint/io/inputs.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/io/text.hpp>

#endif // SHARDPOINT_IO_FILES_HPP
