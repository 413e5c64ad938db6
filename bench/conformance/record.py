"""A recording HTTP proxy for `loupe serve --http`: forwards every request unchanged (Host,
Origin and every MCP header included, so DNS-rebinding checks still see what the client sent)
and streams every answer back as it comes (SSE included), writing one JSON line per exchange:
method, path, request headers and body, status, response headers and body.

Usage: python3 record.py UPSTREAM_PORT LOG_FILE
Prints `recording on http://127.0.0.1:PORT` once it listens (port 0: a free one).
Standard library only.
"""

import http.client
import http.server
import json
import sys
import threading

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
MAX_RECORDED = 4 * 1024 * 1024


class Recorder(http.server.BaseHTTPRequestHandler):
    # HTTP/1.0 answers end with the connection: no re-chunking of streamed bodies.
    protocol_version = "HTTP/1.0"
    upstream_port = 0
    log = None
    lock = threading.Lock()

    def log_message(self, *_):
        pass

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        upstream = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=300)
        upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for name, value in self.headers.items():
            if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                upstream.putheader(name, value)
        upstream.putheader("Content-Length", str(len(body)))
        upstream.endheaders(body)
        response = upstream.getresponse()
        self.send_response_only(response.status, response.reason)
        kept = [(name, value) for name, value in response.getheaders() if name.lower() not in HOP_BY_HOP]
        for name, value in kept:
            if name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        received = bytearray()
        try:
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                if len(received) < MAX_RECORDED:
                    received.extend(chunk)
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            upstream.close()
        record = {
            "method": self.command,
            "path": self.path,
            "request_headers": {name.lower(): value for name, value in self.headers.items()},
            "request_body": body.decode("utf-8", "replace"),
            "status": response.status,
            "response_headers": {name.lower(): value for name, value in kept},
            "response_body": received.decode("utf-8", "replace"),
        }
        with self.lock, open(self.log, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = forward


def main():
    Recorder.upstream_port = int(sys.argv[1])
    Recorder.log = sys.argv[2]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    server.daemon_threads = True
    print(f"recording on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
