// bench/load.cjs URL SECONDS CONCURRENCY: a closed-loop HTTP load on one URL, CONCURRENCY requests
// in flight on keep-alive connections for SECONDS; prints the completed requests a second (and the
// failed ones, and all that completed) as "rps N failed N done N".  Node's own http module: nothing to install.
'use strict';
const http = require('http');
const [url, secs, conc] = [process.argv[2], Number(process.argv[3] || 10), Number(process.argv[4] || 8)];
const agent = new http.Agent({ keepAlive: true, maxSockets: conc });
let done = 0, failed = 0, stop = false;
const t0 = process.hrtime.bigint();
function one() {
    if (stop) return;
    const req = http.get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => { if (res.statusCode === 200) done++; else failed++; one(); });
    });
    req.on('error', () => { failed++; setTimeout(one, 10); });
}
for (let i = 0; i < conc; i++) one();
setTimeout(() => {
    stop = true;
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(`rps ${(done / s).toFixed(1)} failed ${failed} done ${done}`);
    process.exit(0);
}, secs * 1000);
