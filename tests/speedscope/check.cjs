// check.cjs - validates a speedscope file written by perfconv (tests/speedscope.sh runs it).
//
//   node check.cjs NODE_MODULES FILE [--name NAME] [--unit UNIT] [--by thread|process]
//                  [--folded-tid FOLDED] [--folded FOLDED] [--script PERF_SCRIPT_TEXT]
//                  [--threads-of SPEEDSCOPE_FILE]
//   node check.cjs NODE_MODULES --batch JOBS    one job a line: NAME<TAB>FILE<TAB>OPTIONS...
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
//    an activeProfileIndex in range, no frame that no sample uses; per thread, first and
//    opened, "comm (pid) all threads" with the samples of every thread of the process of most
//    weight, when it has two threads or more (else the heaviest thread opens).
// 4. By value: --folded-tid compares each thread's total weight with the folded --tid
//    output's total for that thread (perf script | stackcollapse-perf.pl --tid), --folded
//    the grand total, --script each thread's total with the sum of the periods of the first
//    event in perf script text (for recordings whose folded output counts samples), and
//    --threads-of each process's total with the sum of its threads' profiles in the
//    per-thread file.  --frame-suffix-hex asks for a frame name ending with that UTF-8 text.
// Prints one summary line on success; otherwise the problems (at most 20), exit status 1.
// With --batch (one node process for many files), one "ok    NAME (summary)" or
// "FAIL  NAME: ..." line per job, in tests/run.sh's format; the exit status is then 0.
'use strict';
const fs = require('fs');
const path = require('path');

const SCHEMA_URL = 'https://www.speedscope.app/file-format-schema.json';
const nodeModules = path.resolve(process.argv[2]);
const Ajv = require(path.join(nodeModules, 'ajv'));
const schema = JSON.parse(fs.readFileSync(path.join(nodeModules, 'speedscope/dist/release/file-format-schema.json'), 'utf8'));
const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);

class Stop extends Error {}

function foldedLines(f) {
  return fs.readFileSync(f, 'latin1').split('\n').filter((l) => l.length).map((l) => {
    const sp = l.lastIndexOf(' ');
    return { stack: l.slice(0, sp), weight: Number(l.slice(sp + 1)) };
  });
}

// Returns { problems, summary } for one file.
function checkFile(file, opt) {
  const problems = [];
  const bad = (msg) => {
    if (problems.length < 20) problems.push(msg);
    else if (problems.length === 20) problems.push('...');
  };
  function load(f) {
    const bytes = fs.readFileSync(f);
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (e) {
      bad(`${path.basename(f)}: not valid UTF-8`);
      throw new Stop();
    }
    try {
      return JSON.parse(text);
    } catch (e) {
      bad(`${path.basename(f)}: not JSON: ${e.message}`);
      throw new Stop();
    }
  }
  let summary = '';
  try {
    summary = checkDoc(load(file), opt, bad, load);
  } catch (e) {
    if (!(e instanceof Stop)) bad(String(e && e.stack || e));
  }
  return { problems, summary };
}

function checkDoc(doc, opt, bad, load) {
  // 2. the published schema
  if (!validate(doc))
    for (const e of validate.errors) bad(`schema: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);

  // 3. semantics
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

  const allRe = /^(.+) \((-?\d+)\) all threads$/;
  let all = null;   // per thread: the profile of every thread of the heaviest process
  profiles.forEach((p, pi) => {
    const where = `profile ${pi} (${JSON.stringify(p.name)})`;
    if (names.has(p.name)) bad(`${where}: two profiles have this name`);
    names.add(p.name);
    const am = byProcess ? null : allRe.exec(p.name || '');
    if (am) {
      if (all) bad(`${where}: a second "all threads" profile`);
      else all = { index: pi, pid: am[2], profile: p };
    }
    const m = am ? null : nameRe.exec(p.name || '');
    if (!m && !am) bad(`${where}: name is not "comm (${byProcess ? 'pid' : 'pid/tid'})"`);
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
    if (!am) grand += sum;   // the "all threads" profile weighs its threads again
    if (m) {
      const key = byProcess ? m[2] : m[3];
      totals.set(key, (totals.get(key) || 0) + sum);
    }
  });
  const unused = used.reduce((n, u) => n + (u ? 0 : 1), 0);
  if (unused) bad(`${unused} frames are used by no sample`);

  // Per thread, the process of most weight with two threads or more has one profile of all
  // its threads, first, and the file opens on it: its samples are those of its threads'
  // profiles (stacks by frame names, weights added up).  Else the heaviest thread opens.
  if (!byProcess && profiles.length) {
    const procs = new Map();   // pid -> { total, threads }
    for (const p of profiles) {
      const m = nameRe.exec(p.name || '');
      if (!m) continue;
      const e = procs.get(m[2]) || { total: 0, threads: [] };
      e.total += p.weights ? p.weights.reduce((a, b) => a + b, 0) : p.endValue - p.startValue;
      e.threads.push(p);
      procs.set(m[2], e);
    }
    let heavy = null;
    for (const [pid, e] of procs) if (!heavy || e.total > heavy.total) heavy = { pid, ...e };
    const stacks = (ps) => {
      const w = new Map();
      for (const p of ps)
        (p.samples || []).forEach((st, i) => {
          const k = JSON.stringify(st.map((x) => frames[x] && [frames[x].name, frames[x].file]));
          w.set(k, (w.get(k) || 0) + p.weights[i]);
        });
      return w;
    };
    if (heavy && heavy.threads.length > 1) {
      if (!all) bad(`no "all threads" profile for process ${heavy.pid}, the heaviest, of ${heavy.threads.length} threads`);
      else {
        if (all.pid !== heavy.pid) bad(`the "all threads" profile is of process ${all.pid}, the heaviest is ${heavy.pid}`);
        if (all.index !== 0) bad(`the "all threads" profile is profile ${all.index}, not the first`);
        if (doc.activeProfileIndex !== all.index) bad(`activeProfileIndex ${doc.activeProfileIndex}, not the "all threads" profile ${all.index}`);
        const want = stacks(heavy.threads), got = stacks([all.profile]);
        let differ = want.size !== got.size;
        for (const [k, w] of want) if (got.get(k) !== w) differ = true;
        if (differ) bad(`the "all threads" profile's stacks (${got.size}) are not its threads' (${want.size}) added up`);
      }
    } else if (all) {
      bad(`an "all threads" profile for a process of one thread`);
    }
  }

  // 4. totals by value
  const compareThreads = (want, what) => {
    for (const [tid, w] of want)
      if (totals.get(tid) !== w) bad(`thread ${tid}: ${what} total ${w}, speedscope total ${totals.get(tid)}`);
    for (const [tid, w] of totals)
      if (!want.has(tid)) bad(`thread ${tid}: speedscope total ${w}, not in the ${what} output`);
  };
  if (opt['folded-tid']) {
    const want = new Map();
    for (const { stack, weight } of foldedLines(opt['folded-tid'])) {
      const m = /\/(\d+)$/.exec(stack.split(';')[0]);
      if (!m) { bad(`${opt['folded-tid']}: no tid in ${stack.split(';')[0]}`); continue; }
      want.set(m[1], (want.get(m[1]) || 0) + weight);
    }
    compareThreads(want, 'folded');
  }
  if (opt.script) {
    // perf script -F comm,pid,tid,[cpu,][time,]period,event,...: header lines start in column 0
    const want = new Map();
    let event = null;
    for (const l of fs.readFileSync(opt.script, 'latin1').split('\n')) {
      const m = /^\S.*?\s+(-?\d+)\/(-?\d+)\s+(?:\[\d+\]\s+)?(?:\d+\.\d+:\s+)?(\d+)\s+(\S+):\s/.exec(l);
      if (!m) continue;
      if (event === null) event = m[4];
      if (m[4] === event) want.set(m[2], (want.get(m[2]) || 0) + Number(m[3]));
    }
    if (!want.size) bad(`${opt.script}: no sample lines`);
    compareThreads(want, 'perf script');
  }
  if (opt['frame-suffix-hex']) {
    const suffix = Buffer.from(opt['frame-suffix-hex'], 'hex').toString('utf8');
    if (!frames.some((f) => f.name.endsWith(suffix))) bad(`no frame name ends with ${JSON.stringify(suffix)}`);
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
  return `${profiles.length} profiles, ${frames.length} frames, ${nsamples} samples, total ${grand}`;
}

function parseOpts(args) {
  const opt = {};
  for (let i = 0; i < args.length; i += 2) opt[args[i].replace(/^--/, '')] = args[i + 1];
  return opt;
}

if (process.argv[3] === '--batch') {
  for (const line of fs.readFileSync(process.argv[4], 'utf8').split('\n')) {
    if (!line) continue;
    const [name, file, ...args] = line.split('\t');
    const { problems, summary } = checkFile(file, parseOpts(args));
    if (problems.length) {
      console.log(`FAIL  ${name}: tests/speedscope/check.cjs ${path.basename(file)} ${args.join(' ')}`);
      for (const p of problems) console.log(`      | ${p}`);
    } else {
      console.log(`ok    ${name} (${summary})`);
    }
  }
} else {
  const { problems, summary } = checkFile(process.argv[3], parseOpts(process.argv.slice(4)));
  for (const p of problems) console.log(p);
  if (!problems.length) console.log(summary);
  process.exit(problems.length ? 1 : 0);
}
