"""An HTTP proxy for the sync tests' fault cases in front of a real server (SeaweedFS's S3).

    python3 fault_proxy.py PORT_FILE TARGET_PORT

Every request is passed on to 127.0.0.1:TARGET_PORT as it came (the Host header too, so
SigV4 signatures still hold) and its answer passed back, except as these ask:
    GET /__fault/fail-next/N        the next N requests answer 500 without being passed on
    GET /__fault/lose/NAME/N        the next N PUTs of an object NAME (or, for NAME*, of a
                                    name starting so) are passed on (done), but answered 500
                                    (a lost acknowledgement)
The port it listens on is written to PORT_FILE."""
import http.client, http.server, sys, threading

target = int(sys.argv[2])
lock = threading.Lock()
faults = {"fail": 0, "lose": {}}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, headers, body):
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        if self.path.startswith("/__fault/"):
            parts = self.path.split("/")[2:]
            with lock:
                if parts[0] == "fail-next":
                    faults["fail"] = int(parts[1])
                elif parts[0] == "lose":
                    faults["lose"][parts[1]] = int(parts[2])
            return self.reply(200, [], b"ok")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with lock:
            if faults["fail"] > 0:
                faults["fail"] -= 1
                return self.reply(500, [("Content-Type", "application/xml")], b"<Error><Code>InternalError</Code><Message>injected</Message></Error>")
            name = self.path.split("?")[0].rstrip("/").split("/")[-1]
            # NAME, or a prefix of names written NAME* ("v-*": any version).
            rule = next((key for key, left in faults["lose"].items() if left > 0 and (key == name or key.endswith("*") and name.startswith(key[:-1]))), None)
            lose = self.command == "PUT" and rule is not None
            if lose:
                faults["lose"][rule] -= 1
        connection = http.client.HTTPConnection("127.0.0.1", target, timeout=30)
        headers = {name: value for name, value in self.headers.items() if name.lower() not in ("connection", "transfer-encoding")}
        connection.request(self.command, self.path, body=body if body or self.command in ("PUT", "POST") else None, headers=headers)
        answer = connection.getresponse()
        data = answer.read()
        if lose:
            return self.reply(500, [("Content-Type", "application/xml")], b"<Error><Code>InternalError</Code><Message>acknowledgement lost</Message></Error>")
        self.reply(answer.status, answer.getheaders(), data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % server.server_address[1])
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
