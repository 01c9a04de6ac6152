// check.cjs - validates a speedscope file written by perfconv (tests/speedscope.sh runs it).
//
//   node check.cjs NODE_MODULES FILE [--name NAME] [--unit UNIT] [--by thread|process]
//                  [--folded-tid FOLDED] [--folded FOLDED] [--threads-of SPEEDSCOPE_FILE]
//
// 1. The bytes must be UTF-8 (a strict decoder) and JSON.
// 2. The JSON must validate against the schema shipped in the npm package speedscope
//    (dist/release/file-format-schema.json), with ajv 8 (strict: false), as the spec says.
// 3. What speedscope's importer enforces and the schema does not (src/lib/file-format.ts,
//    src/lib/profile.ts): samples.length == weights.length, positive finite weights, frame
//    indices in range, de-duplicated frames; for evented profiles non-decreasing `at`, each
//    close matching the open frame on top, nothing left open.  And what perfconv promises:
//    the exact $schema, name, exporter, unit, one profile per thread (or process) named
//    "comm (pid/tid)" (or "comm (pid)"), endValue - startValue == the sum of the weights,
//    an activeProfileIndex in range, no frame that no sample uses.
// 4. By value: --folded-tid compares each thread's total weight with the folded --tid
//    output's total for that thread (perf script | stackcollapse-perf.pl --tid), --folded
//    the grand total, and --threads-of each process's total with the sum of its threads'
//    profiles in the per-thread file.
// Prints one summary line on success; otherwise the problems (at most 20), exit status 1.
'use strict';
const fs = require('fs');
const path = require('path');

const [, , nodeModulesArg, file, ...rest] = process.argv;
const nodeModules = path.resolve(nodeModulesArg);
const opt = {};
for (let i = 0; i < rest.length; i += 2) opt[rest[i].replace(/^--/, '')] = rest[i + 1];

const problems = [];
const bad = (msg) => { if (problems.length < 20) problems.push(msg); else problems.length === 20 && problems.push('...'); };
function finish(summary) {
  if (problems.length) {
    for (const p of problems) console.log(p);
    process.exit(1);
  }
  console.log(summary);
  process.exit(0);
}

function load(f) {
  const bytes = fs.readFileSync(f);
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (e) {
    bad(`${f}: not valid UTF-8`);
    finish();
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    bad(`${f}: not JSON: ${e.message}`);
    finish();
  }
}

const doc = load(file);

// 2. the published schema
const Ajv = require(path.join(nodeModules, 'ajv'));
const schema = JSON.parse(fs.readFileSync(path.join(nodeModules, 'speedscope/dist/release/file-format-schema.json'), 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(schema);
if (!validate(doc))
  for (const e of validate.errors) bad(`schema: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);

// 3. semantics
const SCHEMA_URL = 'https://www.speedscope.app/file-format-schema.json';
if (doc.$schema !== SCHEMA_URL) bad(`$schema is ${JSON.stringify(doc.$schema)}`);
if (opt.name !== undefined && doc.name !== opt.name) bad(`name is ${JSON.stringify(doc.name)}, expected ${JSON.stringify(opt.name)}`);
if (!/^perfconv@\S+$/.test(doc.exporter || '')) bad(`exporter is ${JSON.stringify(doc.exporter)}, expected perfconv@VERSION`);
const frames = (doc.shared && doc.shared.frames) || [];
const profiles = doc.profiles || [];
if (profiles.length) {
  const a = doc.activeProfileIndex;
  if (!Number.isInteger(a) || a < 0 || a >= profiles.length) bad(`activeProfileIndex ${a} is not a profile`);
}
const keys = new Map();
frames.forEach((f, i) => {
  if (typeof f.name !== 'string' || !f.name.length) bad(`frame ${i} has no name`);
  const k = JSON.stringify([f.name, f.file, f.line, f.col]);
  if (keys.has(k)) bad(`frames ${keys.get(k)} and ${i} are the same frame ${k}`);
  keys.set(k, i);
});
const used = new Uint8Array(frames.length);
const byProcess = opt.by === 'process';
const nameRe = byProcess ? /^(.+) \((-?\d+)\)$/ : /^(.+) \((-?\d+)\/(-?\d+)\)$/;
const names = new Set();
let nsamples = 0, grand = 0;
const totals = new Map();   // tid (or pid) -> total weight
const okIndex = (x) => Number.isInteger(x) && x >= 0 && x < frames.length;

profiles.forEach((p, pi) => {
  const where = `profile ${pi} (${JSON.stringify(p.name)})`;
  if (names.has(p.name)) bad(`${where}: two profiles have this name`);
  names.add(p.name);
  const m = nameRe.exec(p.name || '');
  if (!m) bad(`${where}: name is not "comm (${byProcess ? 'pid' : 'pid/tid'})"`);
  if (opt.unit !== undefined && p.unit !== opt.unit) bad(`${where}: unit ${p.unit}, expected ${opt.unit}`);
  let sum = 0;
  if (p.type === 'sampled') {
    if (p.samples.length !== p.weights.length)
      bad(`${where}: ${p.samples.length} samples but ${p.weights.length} weights`);
    p.weights.forEach((w, i) => {
      if (typeof w !== 'number' || !Number.isFinite(w) || !(w > 0)) bad(`${where}: weight ${i} is ${w}`);
      sum += w;
    });
    p.samples.forEach((st, i) => {
      for (const x of st) {
        if (!okIndex(x)) bad(`${where}: sample ${i} has frame index ${x}`);
        else used[x] = 1;
      }
    });
    nsamples += p.samples.length;
  } else if (p.type === 'evented') {
    const stack = [];
    let last = -Infinity;
    p.events.forEach((e, i) => {
      if (e.at < last) bad(`${where}: event ${i} at ${e.at} goes back in time`);
      last = e.at;
      if (!okIndex(e.frame)) bad(`${where}: event ${i} has frame index ${e.frame}`);
      else used[e.frame] = 1;
      if (e.type === 'O') stack.push(e.frame);
      else if (stack.pop() !== e.frame) bad(`${where}: event ${i} closes frame ${e.frame}, not the one on top`);
    });
    if (stack.length) bad(`${where}: ${stack.length} frames left open`);
    sum = p.endValue - p.startValue;
  }
  if (p.endValue - p.startValue !== sum) bad(`${where}: endValue - startValue = ${p.endValue - p.startValue}, weights sum to ${sum}`);
  grand += sum;
  if (m) {
    const key = byProcess ? m[2] : m[3];
    totals.set(key, (totals.get(key) || 0) + sum);
  }
});
const unused = used.reduce((n, u) => n + (u ? 0 : 1), 0);
if (unused) bad(`${unused} frames are used by no sample`);

// 4. totals by value
function foldedLines(f) {
  return fs.readFileSync(f, 'latin1').split('\n').filter((l) => l.length).map((l) => {
    const sp = l.lastIndexOf(' ');
    return { stack: l.slice(0, sp), weight: Number(l.slice(sp + 1)) };
  });
}
if (opt['folded-tid']) {
  const want = new Map();
  for (const { stack, weight } of foldedLines(opt['folded-tid'])) {
    const m = /\/(\d+)$/.exec(stack.split(';')[0]);
    if (!m) { bad(`${opt['folded-tid']}: no tid in ${stack.split(';')[0]}`); continue; }
    want.set(m[1], (want.get(m[1]) || 0) + weight);
  }
  for (const [tid, w] of want)
    if (totals.get(tid) !== w) bad(`thread ${tid}: folded total ${w}, speedscope total ${totals.get(tid)}`);
  for (const [tid, w] of totals)
    if (!want.has(tid)) bad(`thread ${tid}: speedscope total ${w}, not in the folded output`);
}
if (opt.folded) {
  const want = foldedLines(opt.folded).reduce((n, l) => n + l.weight, 0);
  if (want !== grand) bad(`total weight ${grand}, folded total ${want}`);
}
if (opt['threads-of']) {
  const threads = load(opt['threads-of']);
  const want = new Map();
  for (const p of threads.profiles) {
    const m = /\((-?\d+)\/(-?\d+)\)$/.exec(p.name);
    const w = p.weights.reduce((a, b) => a + b, 0);
    if (m) want.set(m[1], (want.get(m[1]) || 0) + w);
  }
  for (const [pid, w] of want)
    if (totals.get(pid) !== w) bad(`process ${pid}: its threads total ${w}, its profile ${totals.get(pid)}`);
  if (want.size !== totals.size) bad(`${totals.size} process profiles for ${want.size} processes`);
}
finish(`${profiles.length} profiles, ${frames.length} frames, ${nsamples} samples, total ${grand}`);
