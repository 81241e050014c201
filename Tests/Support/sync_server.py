# A TaskChampion sync server for the tests and the sync benchmark (Tests/Support/ProtocolServer.swift
# says what it does). Usage: python3 sync_server.py PORTFILE  (writes the port it listens on there)
import sys, time, uuid, threading
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
NIL = "00000000-0000-0000-0000-000000000000"
lock = threading.Lock()
clients = {}
faults = {"fail": 0, "lose": 0, "slow": 0.0}
def client(cid):
    return clients.setdefault(cid, {"latest": NIL, "children": {}, "snapshot": None, "since": 0})
class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args): pass
    def reply(self, code, headers=(), body=b""):
        self.send_response(code)
        for k, v in headers: self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def failing(self):
        if faults["slow"] > 0: time.sleep(faults["slow"])
        with lock:
            if faults["fail"] > 0:
                faults["fail"] -= 1
                return True
        return False
    def do_POST(self):
        cid = self.headers.get("X-Client-Id")
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.failing(): return self.reply(500, body=b"injected failure")
        parts = self.path.strip("/").split("/")
        with lock:
            c = client(cid)
            if parts[:3] == ["v1", "client", "add-version"]:
                parent = parts[3]
                if parent != c["latest"]:
                    return self.reply(409, [("X-Parent-Version-Id", c["latest"])])
                vid = str(uuid.uuid4())
                c["children"][parent] = (vid, body)
                c["latest"] = vid
                c["since"] += 1
                if faults["lose"] > 0:
                    faults["lose"] -= 1
                    return self.reply(500, body=b"injected failure after storing the version")
                headers = [("X-Version-Id", vid)]
                if c["since"] >= 100: headers.append(("X-Snapshot-Request", "urgency=high"))
                elif c["since"] >= 10: headers.append(("X-Snapshot-Request", "urgency=low"))
                return self.reply(200, headers)
            if parts[:3] == ["v1", "client", "add-snapshot"]:
                c["snapshot"] = (parts[3], body)
                c["since"] = 0
                # Versions before the snapshot are gone.
                return self.reply(200)
        self.reply(404)
    def do_GET(self):
        cid = self.headers.get("X-Client-Id")
        parts = self.path.strip("/").split("/")
        if parts[0] == "slow":
            faults["slow"] = float(parts[1])
            return self.reply(200)
        if parts[0] in ("fail-next", "lose-next"):
            with lock: faults["fail" if parts[0] == "fail-next" else "lose"] = int(parts[1])
            return self.reply(200)
        if self.failing(): return self.reply(500, body=b"injected failure")
        with lock:
            c = client(cid)
            if parts[:3] == ["v1", "client", "get-child-version"]:
                parent = parts[3]
                if parent in c["children"]:
                    vid, body = c["children"][parent]
                    return self.reply(200, [("X-Version-Id", vid), ("X-Parent-Version-Id", parent),
                                            ("Content-Type", "application/vnd.taskchampion.history-segment")], body)
                if parent == c["latest"]: return self.reply(404)
                return self.reply(410)
            if parts == ["v1", "client", "snapshot"]:
                if c["snapshot"] is None: return self.reply(404)
                vid, body = c["snapshot"]
                return self.reply(200, [("X-Version-Id", vid), ("Content-Type", "application/vnd.taskchampion.snapshot")], body)
            if parts == ["forget"]:
                # As the real server may: the versions up to each client's snapshot go.
                for each in clients.values():
                    if each["snapshot"] is None: continue
                    parent = NIL
                    while parent != each["snapshot"][0] and parent in each["children"]:
                        parent = each["children"].pop(parent)[0]
                return self.reply(200)
        self.reply(404)
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(server.server_address[1]) + "\n")
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
