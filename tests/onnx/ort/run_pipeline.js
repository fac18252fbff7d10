// Runs a model whole and as the chain of stage models `shardpoint split`
// wrote, on the same random inputs, in ONNX Runtime, and compares every graph
// output bit for bit.
//
//   node run_pipeline.js MODEL SPLIT_DIR [JSON]
//
// JSON (optional): {"seed": 1, "dims": {"batch": 1}, "values": {"sr": [16000]},
// "optimization": "all" | "disabled"}. Symbolic dimensions not in "dims" are
// 1. Prints {"outputs": [{"name", "equal", "max_abs_diff"}], "stages": N} and
// exits 0 when it ran; exits 2 with the error on stderr otherwise.
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const [modelPath, splitDir, optionsText] = process.argv.slice(2);
const options = optionsText ? JSON.parse(optionsText) : {};

// mulberry32: a small deterministic generator.
let state = (options.seed || 1) >>> 0;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const arrays = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

function makeInput(meta) {
  const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d :
    (options.dims && options.dims[d] !== undefined ? options.dims[d] : 1)));
  const count = dims.reduce((a, b) => a * b, 1);
  const Array_ = arrays[meta.type];
  if (!Array_) {
    throw new Error(`input '${meta.name}' has type ${meta.type}, which this driver does not fill`);
  }
  const data = new Array_(count);
  const fixed = options.values && options.values[meta.name];
  for (let i = 0; i < count; ++i) {
    if (fixed) {
      data[i] = Array_ === BigInt64Array || Array_ === BigUint64Array ? BigInt(fixed[i % fixed.length])
                                                                      : fixed[i % fixed.length];
    } else if (meta.type.startsWith('float')) {
      data[i] = random() * 2 - 1;
    } else if (Array_ === BigInt64Array || Array_ === BigUint64Array) {
      data[i] = BigInt(Math.floor(random() * 4));
    } else {
      data[i] = meta.type === 'bool' ? (random() < 0.5 ? 1 : 0) : Math.floor(random() * 4);
    }
  }
  return new ort.Tensor(meta.type, data, dims);
}

function bytesOf(tensor) {
  const d = tensor.data;
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}

async function main() {
  const sessionOptions = { graphOptimizationLevel: options.optimization || 'all' };
  if (options.threads) {
    sessionOptions.intraOpNumThreads = options.threads;
    sessionOptions.interOpNumThreads = options.threads;
  }
  const whole = await ort.InferenceSession.create(modelPath, sessionOptions);
  const feeds = {};
  for (const meta of whole.inputMetadata) {
    feeds[meta.name] = makeInput(meta);
  }
  const expected = await whole.run(feeds);

  const plan = JSON.parse(fs.readFileSync(path.join(splitDir, 'pipeline.json'), 'utf8'));
  const env = Object.assign({}, feeds);
  for (const stage of plan.stages) {
    const session = await ort.InferenceSession.create(path.join(splitDir, stage.file),
                                                      sessionOptions);
    const stageFeeds = {};
    for (const input of stage.inputs) {
      if (!(input.name in env)) {
        throw new Error(`stage ${stage.stage} needs '${input.name}', which nothing produced`);
      }
      stageFeeds[input.name] = env[input.name];
    }
    const produced = await session.run(stageFeeds);
    for (const output of stage.outputs) {
      env[output.name] = produced[output.name];
    }
  }
  const result = { stages: plan.stages.length, outputs: [] };
  for (const name of Object.keys(expected)) {
    const a = expected[name];
    const b = env[name];
    let maxAbs = 0;
    if (b && a.type.startsWith('float')) {
      for (let i = 0; i < a.data.length; ++i) {
        const d = Math.abs(a.data[i] - b.data[i]);
        if (Number.isFinite(d)) {
          maxAbs = Math.max(maxAbs, d);
        }
      }
    }
    result.outputs.push({
      name,
      equal: !!b && a.type === b.type && JSON.stringify(a.dims) === JSON.stringify(b.dims) &&
        bytesOf(a).equals(bytesOf(b)),
      max_abs_diff: maxAbs,
    });
  }
  console.log(JSON.stringify(result));
}

main().catch((e) => {
  console.error(e.message.split('\n')[0]);
  process.exit(2);
});
