#!/usr/bin/env python3
"""A loopback proxy in front of llama-server that records every call the host makes.

    recorder.py UPSTREAM_URL CALLS_JSONL PORT_FILE

Listens on 127.0.0.1 (a free port, written to PORT_FILE once it listens), forwards each
request unchanged to UPSTREAM_URL and streams the reply back as it comes. For each call it
appends one JSON line to CALLS_JSONL: the method and path, the request body (parsed when it
is JSON), the status, and the reply's `finish_reason`s, or the body itself when the server
refused the call. That is what a report of a server refusing the host needs, and what the
host's own events do not show (they see a refusal only as an error after the retries).
"""

import http.client
import http.server
import json
import os
import signal
import sys
import threading
import urllib.parse

UPSTREAM = urllib.parse.urlsplit(sys.argv[1])
CALLS = sys.argv[2]
PORT_FILE = sys.argv[3]
WRITE = threading.Lock()
# Headers the proxy sets itself, or that describe a hop rather than the message.
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


def finish_reasons(sse: bytes) -> list:
    """The `finish_reason`s in a streamed (or whole) Chat Completions reply, in order."""
    reasons = []
    payloads = [line[5:].strip() for line in sse.split(b"\n") if line.startswith(b"data:")]
    if not payloads:
        payloads = [sse]
    for payload in payloads:
        try:
            chunk = json.loads(payload)
        except ValueError:
            continue
        for choice in (chunk.get("choices") or []) if isinstance(chunk, dict) else []:
            if isinstance(choice, dict) and choice.get("finish_reason"):
                reasons.append(choice["finish_reason"])
    return reasons


class Handler(http.server.BaseHTTPRequestHandler):
    # One request per connection: the reply's end is the connection's end, so a stream
    # can be passed on as it arrives without re-framing it.
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        self.forward()

    def do_POST(self):
        self.forward()

    def forward(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        upstream = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=600)
        upstream.request(self.command, self.path, body=body, headers=headers)
        reply = upstream.getresponse()
        self.send_response(reply.status, reply.reason)
        for key, value in reply.getheaders():
            if key.lower() not in HOP_HEADERS:
                self.send_header(key, value)
        self.end_headers()
        received = bytearray()
        try:
            while True:
                piece = reply.read1(65536)
                if not piece:
                    break
                received += piece
                self.wfile.write(piece)
                self.wfile.flush()
        except OSError:
            # The host hung up (it had read all it wanted, or gave up): the call still counts.
            pass
        finally:
            upstream.close()
            self.record(body, reply.status, bytes(received))

    def record(self, body: bytes, status: int, received: bytes):
        try:
            request = json.loads(body) if body else None
        except ValueError:
            request = body.decode("utf-8", "replace")
        call = {"method": self.command, "path": self.path, "status": status, "request": request}
        if status >= 400:
            call["reply"] = received.decode("utf-8", "replace")
        else:
            call["finish_reasons"] = finish_reasons(received)
        with WRITE, open(CALLS, "a", encoding="utf-8") as calls:
            calls.write(json.dumps(call) + "\n")

    def log_message(self, format, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # On SIGTERM, stop taking calls but let those in flight finish and be recorded:
    # server_close() joins their threads.
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    with open(PORT_FILE + ".tmp", "w", encoding="utf-8") as port:
        port.write(str(server.server_address[1]))
    # Renamed into place, so a reader never sees half a number.
    os.replace(PORT_FILE + ".tmp", PORT_FILE)
    server.serve_forever()
    server.server_close()


if __name__ == "__main__":
    main()
