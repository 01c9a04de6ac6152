// app.cjs - loads perfconv -f firefox files into the real Firefox Profiler (a production build of
// its repository, scripts/firefox-profiler.sh) in the Debian chromium, headless, and reports what
// the profiler made of them.
//
//   node app.cjs NODE_MODULES DIST OUT.json NAME FILE SCREENSHOT [NAME FILE SCREENSHOT]...
//
// The profiler's dist/ and the files are served by an HTTP server on 127.0.0.1 only (an
// ephemeral port; every other path is the app's index.html, as its own _redirects says); the
// profiler opens each file through its /from-url/ route.  For each file, in a fresh page:
//   - the time from the page's start to the call tree's first row (the load time);
//   - no page error, no console error, no request leaving the server;
//   - what the profiler holds (its window.profile, window.callTree and selectors, which it puts
//     there for its console): the threads (name, pid, tid) and categories, and per thread the
//     call tree's total and its inverted roots (the functions by self time: name, self, total,
//     category) as the call tree shows them; the markers of every thread (name, start, data);
//   - the rows the call tree draws (its DOM) for the thread it opens on, and a screenshot;
//   - when that thread has markers, the rows its marker table draws (those its search field
//     keeps of $MARKER_SEARCH, when set), and a screenshot of it.
// It writes all of it to OUT.json for tests/firefox_check.py, which compares it with the file
// and with perfconv's own folded and top outputs.  Exit status 1 when a page could not be loaded.
// The whole run is bounded (120 s, a 66 MB recording's file included).
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');

const nodeModules = path.resolve(process.argv[2]);
const dist = path.resolve(process.argv[3]);
const outFile = process.argv[4];
const jobs = [];
for (let i = 5; i + 2 < process.argv.length; i += 3)
  jobs.push({ name: process.argv[i], file: path.resolve(process.argv[i + 1]), shot: process.argv[i + 2] });
const { chromium } = require(path.join(nodeModules, 'playwright-core'));

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.png': 'image/png', '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.wasm': 'application/wasm',
  '.ico': 'image/x-icon', '.txt': 'text/plain', '.ftl': 'text/plain', '.webmanifest': 'application/manifest+json' };
// /profiles/N/NAME is job N's file; a file of dist/ is itself; any other path is the app
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
  const m = /^\/profiles\/(\d+)\/([^/]+)$/.exec(url);
  let p = null;
  if (m && jobs[m[1]] && path.basename(jobs[m[1]].file) === m[2]) {
    p = jobs[m[1]].file;
  } else {
    const q = path.join(dist, path.normalize(url));
    if (q.startsWith(dist + path.sep) && fs.existsSync(q) && fs.statSync(q).isFile()) p = q;
    else if (!/\.\w+$/.test(url)) p = path.join(dist, 'index.html');
  }
  if (!p) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': types[path.extname(p)] || 'application/octet-stream',
    'access-control-allow-origin': '*' });
  fs.createReadStream(p).pipe(res);
});

async function runJob(context, port, n) {
  const { name, file, shot } = jobs[n];
  const problems = [];
  const bad = (m) => problems.push(m);
  const page = await context.newPage();
  const result = { name, file, problems };
  try {
    page.setDefaultTimeout(90000);
    page.on('pageerror', (e) => bad(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') bad(`console error: ${m.text()}`);
      if (process.env.DEBUG) console.error('console:', m.text());
    });
    await page.route('**/*', (route) => {
      const u = new URL(route.request().url());
      if (u.hostname === '127.0.0.1' && Number(u.port) === port) return route.continue();
      if (u.protocol === 'blob:' || u.protocol === 'data:') return route.continue();
      bad(`request outside the test server: ${u.href}`);
      return route.abort();
    });
    const url = `http://127.0.0.1:${port}/profiles/${n}/${path.basename(file)}`;
    const t0 = Date.now();
    await page.goto(`http://127.0.0.1:${port}/from-url/${encodeURIComponent(url)}/calltree/`);
    await page.waitForSelector('.treeViewRow');
    result.loadMs = Date.now() - t0;
    await page.waitForTimeout(500);    // let the tracks draw
    await page.screenshot({ path: shot });
    // the rows the call tree draws: each row's text (total, self, name, library)
    result.rows = await page.$$eval('.treeViewBodyInner .treeViewRow', (rs) => rs.slice(0, 12).map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
    Object.assign(result, await page.evaluate(() => {
      const w = window;
      const st = w.getState();
      const prof = w.profile;
      const out = {
        meta: { product: prof.meta.product, symbolicated: prof.meta.symbolicated,
          version: prof.meta.preprocessedProfileVersion, categories: prof.meta.categories.map((c) => [c.name, c.color]) },
        selected: [...w.selectors.urlState.getSelectedThreadIndexes(st)],
        threads: [],
      };
      prof.threads.forEach((t, i) => {
        w.dispatch(w.actions.changeSelectedThreads(new Set([i])));
        w.dispatch(w.actions.changeInvertCallstack(false));
        const ct = w.callTree;
        const th = { name: t.name, processName: t.processName, pid: t.pid, tid: t.tid, samples: t.samples.length,
          total: ct.getTotal(), weightType: t.samples.weightType };
        w.dispatch(w.actions.changeInvertCallstack(true));
        const inv = w.callTree;
        th.top = inv.getRoots().map((r) => {
          const d = inv.getDisplayData(r);
          const nd = inv.getNodeData(r);
          return { name: d.name, self: nd.self, total: nd.total, category: d.categoryName, lib: d.lib };
        }).sort((a, b) => b.self - a.self || (a.name < b.name ? -1 : a.name > b.name)).slice(0, 40);
        th.markers = w.filteredMarkers.map((m) => ({ name: m.name, start: m.start, data: m.data }));
        out.threads.push(th);
      });
      w.dispatch(w.actions.changeInvertCallstack(false));
      w.dispatch(w.actions.changeSelectedThreads(new Set(out.selected)));
      return out;
    }));
    // the marker table of the thread it opens on, when that has markers: the rows it draws
    // (as text) and a screenshot beside the call tree's (SCREENSHOT with -markers before .png)
    const opened = result.threads[result.selected[0]];
    if (opened && opened.markers.length) {
      await page.click('.tabBarTab[data-name="marker-table"] button');
      await page.waitForSelector('.markerTable .treeViewRow');
      // MARKER_SEARCH: only the rows the table's search field keeps (it draws the rows in view)
      if (process.env.MARKER_SEARCH) {
        await page.fill('.markerSettings .idleSearchFieldInput', process.env.MARKER_SEARCH);
        await page.waitForTimeout(500);
      }
      result.markerRows = await page.$$eval('.markerTable .treeViewBodyInner .treeViewRow',
        (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
      await page.screenshot({ path: shot.replace(/\.png$/, '-markers.png') });
    }
    const text = await page.evaluate(() => document.body.innerText);
    if (/something went wrong|couldn.t|could not/i.test(text.slice(0, 2000)))
      bad(`the profiler shows an error: ${text.slice(0, 300)}`);
  } catch (e) {
    bad(`${e.message.split('\n')[0]}`);
    result.failed = true;
  } finally {
    await page.close();
  }
  return result;
}

(async () => {
  const timer = setTimeout(() => {
    console.error('app.cjs: timed out');
    process.exit(1);
  }, 120000);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--js-flags=--max-old-space-size=4096'] });
  const results = [];
  let failed = 0;
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    for (let n = 0; n < jobs.length; n++) {
      const r = await runJob(context, port, n);
      if (r.failed) failed++;
      results.push(r);
    }
  } finally {
    await browser.close();
    server.close();
    clearTimeout(timer);
  }
  fs.writeFileSync(outFile, JSON.stringify(results, null, 1));
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.error(`app.cjs: ${e.stack || e}`);
  process.exit(1);
});
