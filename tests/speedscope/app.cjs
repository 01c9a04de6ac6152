// app.cjs - loads a perfconv speedscope file into the real speedscope app (the npm package's
// dist/release bundle) in the Debian chromium, headless, and checks what the app made of it.
//
//   node app.cjs NODE_MODULES NAME FILE.speedscope.json SCREENSHOT.png [NAME FILE SCREENSHOT]...
//
// One browser, a fresh page per file.  The app and the files are served by an HTTP server on 127.0.0.1 only (an ephemeral port);
// the app opens the file through its own `#profileURL=` import path.  Checks:
//   - the toolbar names the active profile (activeProfileIndex) and "(i/N)", and the app's
//     export says it opened that one (the "all threads" profile of a .NET recording, profile 0);
//   - the profile selector lists every profile name;
//   - the app's own export (the Export button, speedscope's exportProfileGroup) gives back,
//     for every profile in order, the same name, unit and total weight, and the same set of
//     frames (name, file) as the file's samples use;
//   - the page raised no error.
// A screenshot of the flame chart is saved.  One line per file in tests/run.sh's format
// ("ok    NAME (...)" or "FAIL  NAME: ..." and the problems); exit status 1 when one failed.
// The whole run is bounded (50 s).
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

const nodeModules = path.resolve(process.argv[2]);
const jobs = [];
for (let i = 3; i + 2 < process.argv.length; i += 3)
  jobs.push({ name: process.argv[i], file: path.resolve(process.argv[i + 1]), shot: process.argv[i + 2] });
const release = path.join(nodeModules, 'speedscope/dist/release');
const { chromium } = require(path.join(nodeModules, 'playwright-core'));

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.png': 'image/png', '.woff2': 'font/woff2', '.wasm': 'application/wasm', '.ico': 'image/x-icon', '.txt': 'text/plain' };
// /profiles/N/NAME.speedscope.json is job N's file; anything else comes from the app's bundle
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
  const m = /^\/profiles\/(\d+)\/([^/]+)$/.exec(url);
  let p;
  if (m && jobs[m[1]] && path.basename(jobs[m[1]].file) === m[2]) p = jobs[m[1]].file;
  else if (/^\/[\w.-]+$/.test(url)) p = path.join(release, url.slice(1));
  else if (url === '/') p = path.join(release, 'index.html');
  if (!p || !fs.existsSync(p)) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': types[path.extname(p)] || 'application/octet-stream' });
  fs.createReadStream(p).pipe(res);
});

const frameKey = (f) => JSON.stringify([f.name, f.file === undefined ? null : f.file]);

// Loads job n in a new page; returns [problems, summary].
async function runJob(context, port, n) {
  const { file, shot } = jobs[n];
  const problems = [];
  const bad = (m) => problems.push(m);
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  // what the file says: per profile, its name, unit, total and frames
  const want = doc.profiles.map((p) => {
    const used = new Set();
    for (const st of p.samples) for (const x of st) used.add(frameKey(doc.shared.frames[x]));
    return { name: p.name, unit: p.unit, total: p.weights.reduce((a, b) => a + b, 0), frames: used };
  });
  const page = await context.newPage();
  try {
    page.setDefaultTimeout(15000);
    page.on('pageerror', (e) => bad(`page error: ${e.message}`));
    if (process.env.DEBUG) page.on('console', (m) => console.error('console:', m.text()));
    // nothing leaves this machine: every request must go to our server
    await page.route('**/*', (route) => {
      const u = new URL(route.request().url());
      if (u.hostname === '127.0.0.1' && Number(u.port) === port) return route.continue();
      if (u.protocol === 'blob:' || u.protocol === 'data:') return route.continue();
      bad(`request outside the test server: ${u.href}`);
      return route.abort();
    });
    const url = `/profiles/${n}/${path.basename(file)}`;
    await page.goto(`http://127.0.0.1:${port}/#profileURL=${encodeURIComponent(url)}`);

    const active = doc.activeProfileIndex || 0;
    const activeName = doc.profiles.length ? doc.profiles[active].name : null;
    const label = doc.profiles.length > 1 ? `(${active + 1}/${doc.profiles.length})` : '';
    await page.waitForFunction(([nm, l]) => document.body.innerText.includes(nm) && document.body.innerText.includes(l),
      [activeName, label]).catch(() => bad(`the app does not show the profile ${JSON.stringify(activeName)} ${label}`));
    await page.waitForTimeout(300);    // let the flame chart draw
    await page.screenshot({ path: shot });
    const top = await page.evaluate(() => document.body.innerText);
    if (/something went wrong|error/i.test(top.split('\n').slice(0, 5).join(' ')))
      bad(`the app shows an error: ${top.slice(0, 200)}`);

    if (doc.profiles.length > 1) {
      // the profile selector opens on hover over the name and lists every profile
      await page.locator('span', { hasText: label }).filter({ hasText: activeName }).first().hover();
      await page.waitForTimeout(200);
      const listed = await page.evaluate(() => document.body.innerText);
      for (const p of doc.profiles)
        if (!listed.includes(p.name)) bad(`the profile selector does not list ${JSON.stringify(p.name)}`);
      await page.mouse.move(640, 600);   // away from it again
      await page.waitForTimeout(200);
    }

    // the app's own export: what it imported, written back
    const [download] = await Promise.all([page.waitForEvent('download'),
      page.locator('div', { hasText: /^\S*Export$/ }).last().click()]);
    const exported = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    if (exported.profiles.length !== want.length)
      bad(`the app has ${exported.profiles.length} profiles, the file ${want.length}`);
    exported.profiles.forEach((p, i) => {
      const w = want[i];
      if (!w) return;
      const frames = new Set(p.events.map((e) => frameKey(exported.shared.frames[e.frame])));
      if (p.name !== w.name) bad(`profile ${i}: the app calls it ${JSON.stringify(p.name)}, the file ${JSON.stringify(w.name)}`);
      if (p.unit !== w.unit) bad(`profile ${i}: unit ${p.unit} in the app, ${w.unit} in the file`);
      if (p.endValue !== w.total) bad(`profile ${i}: total ${p.endValue} in the app, ${w.total} in the file`);
      if (frames.size !== w.frames.size || [...w.frames].some((k) => !frames.has(k)))
        bad(`profile ${i}: ${frames.size} frames in the app, ${w.frames.size} in the file`);
    });
    if (exported.activeProfileIndex !== active) bad(`the app shows profile ${exported.activeProfileIndex}, the file says ${active}`);
    const nframes = want.reduce((k, w) => k + w.frames.size, 0);
    const shown = want.length > 4 ? want.slice(0, 3).concat([{ name: '...', frames: { size: '..' } }]) : want;
    return [problems, `opens ${JSON.stringify(activeName)} ${label}; ${exported.profiles.length} profiles (${shown.map((w) => `${w.name}: ${w.frames.size} frames`).join(', ')}), ` +
      `${nframes} frames in all`];
  } catch (e) {
    bad(String(e && e.message || e).split('\n').slice(0, 4).join(' / '));
    return [problems, ''];
  } finally {
    await page.close().catch(() => {});
  }
}

async function main() {
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const port = server.address().port;
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfconv-chromium-'));
  let context, failed = 0;
  try {
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      chromiumSandbox: false,
      acceptDownloads: true,
      viewport: { width: 1280, height: 800 },
      timeout: 20000,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    for (let n = 0; n < jobs.length; n++) {
      const [problems, summary] = await runJob(context, port, n);
      if (problems.length) {
        failed++;
        console.log(`FAIL  ${jobs[n].name}: the speedscope app did not show ${path.basename(jobs[n].file)} as written`);
        for (const p of problems.slice(0, 20)) console.log(`      | ${p}`);
      } else {
        console.log(`ok    ${jobs[n].name} (${summary}; screenshot ${jobs[n].shot})`);
      }
    }
  } finally {
    if (context) await context.close().catch(() => {});
    server.close();
    fs.rmSync(profileDir, { recursive: true, force: true });
  }
  return failed;
}

const timer = setTimeout(() => {
  console.log(`FAIL  ${jobs.map((j) => j.name).join(' ')}: timed out after 50 s`);
  process.exit(1);
}, 50000);
main().then((failed) => {
  clearTimeout(timer);
  process.exit(failed ? 1 : 0);
}, (e) => {
  clearTimeout(timer);
  console.log(`FAIL  ${jobs.map((j) => j.name).join(' ')}: ${String(e && e.message || e).split('\n').slice(0, 4).join(' / ')}`);
  process.exit(1);
});
