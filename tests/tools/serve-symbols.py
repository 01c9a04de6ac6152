#!/usr/bin/env python3
# tests/tools/serve-symbols.py DIR|--slow PORTFILE LOG: a symbol server for the tests on
# 127.0.0.1 (tests/symsrv.sh, tests/record.sh): the files of DIR by path, or (--slow) accept, log
# and never answer.  Its port goes to PORTFILE, every request path to LOG; it stops by itself
# after five minutes.
import functools, http.server, sys, threading, time
root, portfile, log = sys.argv[1:4]
class H(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        with open(log, 'a') as f:
            f.write(self.path + '\n')
        if root == '--slow':
            time.sleep(120)
            return
        super().do_GET()
    def log_message(self, *a): pass
h = H if root == '--slow' else functools.partial(H, directory=root)
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), h)
s.daemon_threads = True
open(portfile, 'w').write(str(s.server_address[1]))
threading.Timer(300, lambda: s.shutdown()).start()
s.serve_forever()
