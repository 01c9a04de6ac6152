#!/usr/bin/env python3
"""svg_browser.py - drives an SVG flame graph in headless Chromium through the DevTools
protocol (over --remote-debugging-pipe, so no port is opened for the browser; the SVG is served
on 127.0.0.1 only).

  svg_browser.py test SVG FOLDED PNG REGEX
      Loads SVG (made with --minwidth 0 from the recording FOLDED was made from) and checks:
      it loads without a script error and without a request that leaves the server; the script
      found every frame; hovering a frame shows its details; clicking "Search" and answering
      the prompt with REGEX highlights exactly the frames whose name matches and shows the
      matched share that FOLDED gives; every label is the one the page's script gives its
      frame (the same rule as svg.c's, for a .NET name too); clicking a frame zooms it to the full width, dims its
      ancestors and hides the rest; "Reset Zoom" puts everything back; ?s=REGEX in the address
      searches on load.  The page is saved to PNG (after the search and the zoom).  Prints what failed; exit 0 ok, 1 failed.
  svg_browser.py diff SVG ORACLE PNG
      A differential flame graph (--diff) against ORACLE, flamegraph.pl's drawing of the same
      difffolded.pl lines: every frame of the page has ORACLE's title and fill, and is drawn
      at its x and width (the rendered box, to half a pixel); the colors survive a search and
      its reset (the search color is put back to the change's color), and zoom and reset work
      as in "test".  The page is saved to PNG.
  svg_browser.py shot SVG PNG [REGEX]
      Saves a screenshot of SVG, with REGEX searched first when given.

Exit status 77: no Chromium (chromium or chromium-browser, or $CHROMIUM).
"""
import fcntl
import functools
import http.server
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svg_check  # noqa: E402

XPAD = svg_check.XPAD
SEARCH_COLOR = "rgb(230,0,230)"


def find_chromium():
    for c in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if c and shutil.which(c):
            return shutil.which(c)
    return None


class Browser:
    """One headless Chromium and one page, spoken to over the DevTools pipe."""

    def __init__(self, exe, width, height, deadline):
        self.deadline = deadline
        self.tmp = tempfile.mkdtemp(prefix="perfconv-chromium.")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():  # the browser reads commands on fd 3 and writes replies on fd 4
            r, w = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
                "--user-data-dir=" + os.path.join(self.tmp, "profile"), "--remote-debugging-pipe",
                "--window-size=%d,%d" % (width, height), "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.tmp, "stderr"), "wb"),
                                     preexec_fn=fds, close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self.msgs = queue.Queue()
        self.next_id = 0
        self.events = []
        self.handlers = {}
        self.session = None
        threading.Thread(target=self._reader, daemon=True).start()
        tid = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": tid, "flatten": True},
                                 browser=True)["sessionId"]

    def _reader(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self.from_r, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self.msgs.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                self.msgs.put(json.loads(msg))

    def send(self, method, params=None, browser=False):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def pump(self, until):
        """Reads messages (running event handlers) until until(msg) is true for one; returns it."""
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("timed out waiting for the browser")
            try:
                msg = self.msgs.get(timeout=left)
            except queue.Empty:
                raise RuntimeError("timed out waiting for the browser")
            if msg is None:
                raise RuntimeError("the browser closed the DevTools pipe")
            if "method" in msg:
                self.events.append(msg)
                h = self.handlers.get(msg["method"])
                if h:
                    h(msg.get("params", {}))
            if until(msg):
                return msg

    def call(self, method, params=None, browser=False):
        i = self.send(method, params, browser)
        msg = self.pump(lambda m: m.get("id") == i)
        if "error" in msg:
            raise RuntimeError("%s: %s" % (method, msg["error"].get("message")))
        return msg.get("result", {})

    def wait_event(self, method):
        return self.pump(lambda m: m.get("method") == method)

    def js(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluating %s: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def click(self, x, y):
        for t in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": t, "x": x, "y": y, "button": "left",
                                                   "clickCount": 1})

    def close(self):
        try:
            self.send("Browser.close", browser=True)
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        shutil.rmtree(self.tmp, ignore_errors=True)


class Server:
    """The SVG's directory over HTTP on 127.0.0.1, on a free port; every request is logged."""

    def __init__(self, directory):
        self.requests = []
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/favicon.ico":  # the browser asks for it, not the page
                    self.send_response(204)
                    self.end_headers()
                    return
                super().do_GET()

            def log_message(self, *args):
                outer.requests.append(self.path)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     functools.partial(Handler, directory=directory))
        self.base = "http://127.0.0.1:%d/" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def svg_size(path):
    text = open(path, "rb").read(4096).decode("utf-8", "replace")
    w = re.search(r'<svg[^>]*\swidth="(\d+)"', text)
    h = re.search(r'<svg[^>]*\sheight="(\d+)"', text)
    return int(w.group(1)), int(h.group(1))


def open_page(svg):
    exe = find_chromium()
    if not exe:
        print("no chromium in PATH (Debian package chromium; scripts/install-deps.sh --test)")
        sys.exit(77)
    width, height = svg_size(svg)
    server = Server(os.path.dirname(os.path.abspath(svg)))
    b = Browser(exe, width, height, time.monotonic() + 50)
    answers = []

    def dialog(params):  # the search prompt: answer it with the next queued answer
        b.send("Page.handleJavaScriptDialog",
               {"accept": bool(answers), "promptText": answers.pop(0) if answers else ""})

    b.handlers["Page.javascriptDialogOpening"] = dialog
    for domain in ("Page", "Runtime", "Log", "Network"):
        b.call(domain + ".enable")
    b.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                  "deviceScaleFactor": 1, "mobile": False})
    b.send("Page.navigate", {"url": server.base + os.path.basename(svg)})
    b.wait_event("Page.loadEventFired")
    return b, server, answers


def search_via_ui(b, answers, regex):
    r = b.js("JSON.stringify(document.getElementById('search').getBoundingClientRect())")
    box = json.loads(r)
    answers.append(regex)
    b.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def screenshot(b, png):
    data = b.call("Page.captureScreenshot", {"format": "png"})["data"]
    import base64
    with open(png, "wb") as f:
        f.write(base64.b64decode(data))


def expected(folded, regex):
    """The share of the whole under a frame whose shown name matches, and the total."""
    rx = re.compile(regex)
    total = hit = 0
    with open(folded, "rb") as f:
        for line in f:
            stack, _, count = line.rstrip(b"\n").rpartition(b" ")
            w = int(count)
            total += w
            names = ["all"] + [svg_check.shown(r) for r in svg_check.perl_split(stack)]
            if any(rx.search(n) for n in names):
                hit += w
    pct = 100.0 * hit / total if total else 0.0
    return "100" if pct == 100 else "%.1f" % pct


def run_test(svg, folded, png, regex):
    errors = []
    b, server, answers = open_page(svg)
    try:
        n = b.js("typeof boxes === 'object' ? boxes.length : -1")
        ngs = len(re.findall(r"<g><title>", open(svg, encoding="utf-8").read()))
        if n != ngs:
            errors.append("the script found %s frames, the file has %d (init did not run?)" % (n, ngs))

        # the labels the file was written with are the ones the page's script gives (label():
        # flamegraph.pl's cut, a .NET name from its type or method); the script sees widths
        # rounded to 0.1 px, so a label at the edge may be the one of a width 0.1 px off
        bad = json.loads(b.js(
            "JSON.stringify(boxes.filter(function (f) { var t = f.text.textContent;"
            " return t !== label(f.name, f.w) && t !== label(f.name, f.w - 0.1) && t !== label(f.name, f.w + 0.1); })"
            ".slice(0, 3).map(function (f) { return [f.text.textContent, label(f.name, f.w), f.name]; }))"))
        for lbl, js, nm in bad:
            errors.append("label %r in the file, %r from the page's script, of %r" % (lbl, js, nm))

        # hover: the details line shows the frame's title
        i = min(3, ngs - 1)
        box = json.loads(b.js("JSON.stringify(boxes[%d].rect.getBoundingClientRect())" % i))
        b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box["x"] + box["width"] / 2,
                                            "y": box["y"] + box["height"] / 2})
        det, title = b.js("[document.getElementById('details').textContent, boxes[%d].title]" % i)
        if det != "Function: " + title:
            errors.append("hover: details say %r, expected %r" % (det, "Function: " + title))

        # search through the button and its prompt
        search_via_ui(b, answers, regex)
        got = b.js("JSON.stringify({m: document.getElementById('matched').textContent, "
                   "hl: boxes.filter(function (f) { return f.rect.getAttribute('fill') === '%s'; })"
                   ".map(function (f) { return f.name; }), "
                   "names: boxes.map(function (f) { return f.name; })})" % SEARCH_COLOR)
        got = json.loads(got)
        want_pct = expected(folded, regex)
        if got["m"] != "Matched: %s%%" % want_pct:
            errors.append("search %r: shows %r, expected 'Matched: %s%%'" % (regex, got["m"], want_pct))
        want_hl = [nm for nm in got["names"] if re.search(regex, nm)]
        if got["hl"] != want_hl:
            errors.append("search %r: %d frames highlighted, %d match" % (regex, len(got["hl"]), len(want_hl)))
        if not want_hl:
            errors.append("search %r matches no frame: the test proves nothing" % regex)

        # zoom: a frame between 15% and 85% of the width, below the process level
        info = json.loads(b.js(
            "JSON.stringify(boxes.map(function (f, i) { return [i, f.depth, f.w, f.end]; }))"))
        full = float(b.js("fg.width")) - 2 * XPAD
        pick = [f for f in info if f[1] >= 2 and 0.15 * full < f[2] < 0.85 * full]
        if not pick:
            errors.append("no frame of a useful width to zoom into")
        else:
            z, _, _, zend = pick[0]
            box = json.loads(b.js("JSON.stringify(boxes[%d].rect.getBoundingClientRect())" % z))
            b.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            st = json.loads(b.js(
                "JSON.stringify({x: boxes[%d].rect.getAttribute('x'), w: boxes[%d].rect.getAttribute('width'),"
                " unzoom: document.getElementById('unzoom').classList.contains('hide'),"
                " cls: boxes.map(function (f) { return f.g.getAttribute('class') || ''; })})" % (z, z)))
            if abs(float(st["x"]) - XPAD) > 0.05 or abs(float(st["w"]) - full) > 0.15:
                errors.append("zoom: the clicked frame is at x=%s w=%s, not the full width" % (st["x"], st["w"]))
            if st["unzoom"]:
                errors.append("zoom: 'Reset Zoom' is still hidden")
            for j, (idx, _, _, jend) in enumerate(info):
                want = "" if z <= j < zend else "parent" if j < z < jend else "hide"
                if st["cls"][j].strip() != want:
                    errors.append("zoom: frame %d has class %r, expected %r" % (j, st["cls"][j], want))
                    break
        screenshot(b, png)

        # reset zoom
        box = json.loads(b.js("JSON.stringify(document.getElementById('unzoom').getBoundingClientRect())"))
        b.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        back = b.js("boxes.every(function (f) { return !f.g.classList.contains('hide') && "
                    "parseFloat(f.rect.getAttribute('width')).toFixed(1) === f.w.toFixed(1); })")
        if not back:
            errors.append("Reset Zoom did not restore every frame")

        # a search given in the address runs on load
        b.send("Page.navigate", {"url": server.base + os.path.basename(svg) + "?s=" +
                                 urllib.parse.quote(regex)})
        b.wait_event("Page.loadEventFired")
        m = b.js("document.getElementById('matched').textContent")
        if m != "Matched: %s%%" % want_pct:
            errors.append("?s=: shows %r, expected 'Matched: %s%%'" % (m, want_pct))

        for ev in b.events:
            m, p = ev["method"], ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                errors.append("script error: %s %s" % (d.get("text"), d.get("exception", {}).get("description", "")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
                errors.append("console error: %s" % p.get("args"))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errors.append("browser error: %s" % p["entry"].get("text"))
            elif m == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if not url.startswith(server.base):
                    errors.append("the page requested %s" % url)
    finally:
        b.close()
        server.close()
    for e in errors[:10]:
        print(e)
    return 1 if errors else 0


def oracle_frames(path):
    """flamegraph.pl's frames: (title, x, width, fill) of every drawn frame."""
    import html
    out = []
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r'<title>([^<]*)</title><rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" '
                         r'height="[\d.]+" fill="([^"]+)"', text):
        out.append((html.unescape(m.group(1)), float(m.group(2)), float(m.group(3)), m.group(4)))
    return out


def run_diff(svg, oracle, png):
    errors = []
    want = sorted(oracle_frames(oracle))
    b, server, answers = open_page(svg)
    try:
        got = json.loads(b.js(
            "JSON.stringify(boxes.map(function (f) { var r = f.rect.getBoundingClientRect();"
            " return [f.title, r.x, r.width, f.rect.getAttribute('fill')]; }))"))
        got = sorted(tuple(g) for g in got)
        if len(got) != len(want):
            errors.append("the page has %d frames, flamegraph.pl drew %d" % (len(got), len(want)))
        wt = {w[0]: w for w in want}
        for title, x, w, fill in got:
            o = wt.get(title)
            if not o:
                errors.append("frame %r: flamegraph.pl has no frame of that title" % title)
            elif fill != o[3]:
                errors.append("frame %r: fill %s, flamegraph.pl %s" % (title, fill, o[3]))
            elif abs(x - o[1]) > 0.5 or abs(w - o[2]) > 0.5:
                errors.append("frame %r: drawn at x=%.1f w=%.1f, flamegraph.pl x=%.1f w=%.1f" % (title, x, w, o[1], o[2]))
        # the script reads each frame's name from its title, the change included
        bad = json.loads(b.js("JSON.stringify(boxes.filter(function (f) { return / \\(/.test(f.name); })"
                              ".map(function (f) { return f.name; }))"))
        if bad:
            errors.append("the script read no name from the titles of %r" % bad[:3])
        if not any(g[3] not in ("rgb(255,255,255)",) for g in got):
            errors.append("no frame is colored: the test proves nothing")

        # a search paints the matches and its reset gives the change's colors back
        before = b.js("JSON.stringify(boxes.map(function (f) { return f.rect.getAttribute('fill'); }))")
        search_via_ui(b, answers, "path_")
        hl = b.js("boxes.filter(function (f) { return f.rect.getAttribute('fill') === '%s'; }).length" % SEARCH_COLOR)
        if not hl:
            errors.append("search 'path_': nothing highlighted")
        m = b.js("document.getElementById('matched').textContent")
        if not m.startswith("Matched: "):
            errors.append("search 'path_': shows %r" % m)
        b.js("resetSearch(), 0")
        after = b.js("JSON.stringify(boxes.map(function (f) { return f.rect.getAttribute('fill'); }))")
        if after != before:
            errors.append("the colors after a search and its reset are not the ones before")

        # zoom into the widest frame below the process level, then reset
        info = json.loads(b.js("JSON.stringify(boxes.map(function (f, i) { return [i, f.depth, f.w]; }))"))
        full = float(b.js("fg.width")) - 2 * XPAD
        pick = [f for f in info if f[1] >= 2 and 0.15 * full < f[2] < 0.85 * full]
        if not pick:
            errors.append("no frame of a useful width to zoom into")
        else:
            z = pick[0][0]
            box = json.loads(b.js("JSON.stringify(boxes[%d].rect.getBoundingClientRect())" % z))
            b.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            st = json.loads(b.js("JSON.stringify({x: boxes[%d].rect.getAttribute('x'), "
                                 "w: boxes[%d].rect.getAttribute('width')})" % (z, z)))
            if abs(float(st["x"]) - XPAD) > 0.05 or abs(float(st["w"]) - full) > 0.15:
                errors.append("zoom: the clicked frame is at x=%s w=%s, not the full width" % (st["x"], st["w"]))
            fills = b.js("JSON.stringify(boxes.map(function (f) { return f.rect.getAttribute('fill'); }))")
            if fills != before:
                errors.append("zoom changed the colors")
            screenshot(b, png)
            box = json.loads(b.js("JSON.stringify(document.getElementById('unzoom').getBoundingClientRect())"))
            b.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            back = b.js("boxes.every(function (f) { return !f.g.classList.contains('hide') && "
                        "parseFloat(f.rect.getAttribute('width')).toFixed(1) === f.w.toFixed(1); })")
            if not back:
                errors.append("Reset Zoom did not restore every frame")
        for ev in b.events:
            if ev["method"] == "Runtime.exceptionThrown":
                d = ev.get("params", {}).get("exceptionDetails", {})
                errors.append("script error: %s" % d.get("text"))
    finally:
        b.close()
        server.close()
    for e in errors[:10]:
        print(e)
    return 1 if errors else 0


def run_shot(svg, png, regex):
    b, server, answers = open_page(svg)
    try:
        if regex:
            search_via_ui(b, answers, regex)
        screenshot(b, png)
    finally:
        b.close()
        server.close()
    return 0


def main(argv):
    try:
        if len(argv) == 6 and argv[1] == "test":
            return run_test(argv[2], argv[3], argv[4], argv[5])
        if len(argv) == 5 and argv[1] == "diff":
            return run_diff(argv[2], argv[3], argv[4])
        if len(argv) in (4, 5) and argv[1] == "shot":
            return run_shot(argv[2], argv[3], argv[4] if len(argv) == 5 else None)
    except RuntimeError as e:
        print(e)
        return 1
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
