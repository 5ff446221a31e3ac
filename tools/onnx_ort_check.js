// Runs models exported by goluon's gluon/onnx.Export in ONNX Runtime, an
// implementation of ONNX independent of goluon's importer, and compares
// each output with the network's own (`make onnx-ort`).
//
// usage: node tools/onnx_ort_check.js DIR
// For every DIR/NAME.onnx with a DIR/NAME.io.json (written by the Go
// round-trip tests: the input and the network's output, each as dtype,
// shape and base64 little-endian bytes; or "inputs" and "outputs", lists
// of such arrays with the graph's names, for models of several), it runs
// the model on the inputs and prints the largest relative L2 difference
// of its outputs; it exits non-zero when one
// exceeds the tolerance of its output type (float32 1e-4, float16 1e-2,
// float64 1e-6) or fails to run. Needs onnxruntime-node on NODE_PATH.
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const tolerance = { float32: 1e-4, float16: 1e-2, float64: 1e-6 };

// half converts IEEE half-precision bits to a number.
function half(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

// tensorOf decodes one io.json array into an ORT tensor.
function tensorOf(t) {
  const b = Buffer.from(t.data, 'base64');
  const buf = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  const data = {
    float32: () => new Float32Array(buf),
    float64: () => new Float64Array(buf),
    float16: () => new Uint16Array(buf),
    int64: () => new BigInt64Array(buf),
    bool: () => new Uint8Array(buf),
  }[t.dtype];
  if (!data) throw new Error(`dtype ${t.dtype}`);
  return new ort.Tensor(t.dtype, data(), t.shape);
}

// numbers returns a tensor's values as numbers.
function numbers(t) {
  if (t.type === 'float16') return Array.from(t.data, half);
  return Array.from(t.data, Number);
}

// relL2 is the relative L2 difference of output out from want.
function relL2(out, want) {
  if (out.dims.join() !== want.dims.join()) {
    throw new Error(`shape [${out.dims}], the network's [${want.dims}]`);
  }
  const g = numbers(out), w = numbers(want);
  let d = 0, n = 0;
  for (let i = 0; i < w.length; i++) {
    d += (g[i] - w[i]) ** 2;
    n += w[i] ** 2;
  }
  return Math.sqrt(d / Math.max(n, 1e-30));
}

// check runs one model and returns the largest relative difference of
// its outputs and the first output's dtype (for the tolerance).
async function check(model, io) {
  const session = await ort.InferenceSession.create(model, { logSeverityLevel: 3 });
  if (!io.inputs) {
    const feeds = { [session.inputNames[0]]: tensorOf(io.input) };
    const out = (await session.run(feeds))[session.outputNames[0]];
    return [relL2(out, tensorOf(io.output)), io.output.dtype];
  }
  const feeds = {};
  for (const t of io.inputs) feeds[t.name] = tensorOf(t);
  const res = await session.run(feeds);
  let worst = 0;
  for (const t of io.outputs) {
    if (!res[t.name]) throw new Error(`no output ${t.name}`);
    worst = Math.max(worst, relL2(res[t.name], tensorOf(t)));
  }
  return [worst, io.outputs[0].dtype];
}

async function main(dir) {
  const names = fs.readdirSync(dir).filter((f) => f.endsWith('.io.json')).sort();
  if (names.length === 0) {
    console.error(`no .io.json files in ${dir}`);
    return 1;
  }
  let bad = 0, skipped = 0;
  for (const f of names) {
    const base = f.slice(0, -'.io.json'.length);
    const model = path.join(dir, base + '.onnx');
    const io = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    try {
      const [rel, dtype] = await check(model, io);
      const tol = tolerance[dtype];
      const ok = rel <= tol;
      if (!ok) bad++;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${base}: relative L2 difference ${rel.toExponential(2)} (tolerance ${tol})`);
    } catch (e) {
      const msg = e.message.split('\n')[0];
      if (msg.includes('Could not find an implementation')) {
        // ONNX allows the type; ONNX Runtime's CPU kernels lack it
        // (float64 convolutions and recurrences).
        skipped++;
        console.log(`skip ${base}: ONNX Runtime has no kernel: ${msg}`);
        continue;
      }
      bad++;
      console.log(`FAIL ${base}: ${msg}`);
    }
  }
  console.log(`${names.length - bad - skipped} of ${names.length} exported models agree with ONNX Runtime, ${skipped} use an op ONNX Runtime has no CPU kernel for, ${bad} fail`);
  return bad ? 1 : 0;
}

main(process.argv[2] || '.').then((rc) => process.exit(rc), (e) => {
  console.error(e);
  process.exit(1);
});
