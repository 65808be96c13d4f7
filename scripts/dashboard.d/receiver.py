"""A webhook receiver for scripts/dashboard-snapshot: 204 while CONTROL_FILE says "up", else 503.

usage: receiver.py PORT CONTROL_FILE
"""
import http.server
import sys

port, control = int(sys.argv[1]), sys.argv[2]


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(control) as f:
            up = f.read().strip() == "up"
        self.send_response(204 if up else 503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
