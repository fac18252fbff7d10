// Loads a model in ONNX Runtime (default graph optimisations, or as given)
// and prints "loaded", or the first line of ONNX Runtime's error.
//
//   node load.js MODEL [all|disabled]
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
'use strict';
const ort = require('onnxruntime-node');

ort.InferenceSession.create(process.argv[2], { graphOptimizationLevel: process.argv[3] || 'all' })
  .then(() => console.log('loaded'))
  .catch((e) => console.log(e.message.split('\n')[0]));
