#!/usr/bin/env python3
"""A local MCP Registry (the frozen /v0.1 API) for tests: no network, documents from a directory.

Each *.json in --documents is a registry entry ({"server": {...server.json...}, "_meta": {...}}). The text
"{{REMOTE_URL}}" in them becomes --remote-url, "{{BASE}}" this registry's own URL, "{{SHA}}" the
SHA-256 of --tarball (--wrong-sha: another), (a package index it also serves:
/npm/<name>/<version> and /npm/tarballs/<file>, whose bytes are --tarball's).

GET /v0.1/servers?search=&limit=&cursor=&version=latest   (cursor: an offset; --loop answers the same cursor forever)
GET /v0.1/servers/<name>/versions
GET /v0.1/servers/<name>/versions/<version|latest>
GET /_stats                                               how many /v0.1 requests were answered
--slow S sleeps S seconds before every answer. Prints "listening on URL" on stderr.
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = None
entries = []  # registry entries, in file-name order
served = 0
lock = threading.Lock()


def load(base):
    out = []
    for name in sorted(os.listdir(args.documents)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(args.documents, name), encoding="utf-8") as f:
            text = f.read()
        text = text.replace("{{REMOTE_URL}}", args.remote_url or "http://127.0.0.1:9/mcp").replace("{{BASE}}", base)
        text = text.replace("{{SHA}}", "0" * 64 if args.wrong_sha else tarball_sha())
        out.append(json.loads(text))
    return out


def tarball_sha():
    with open(args.tarball, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def status(entry):
    return entry.get("_meta", {}).get("io.modelcontextprotocol.registry/official", {}).get("status", "active")


def latest(entry):
    return entry.get("_meta", {}).get("io.modelcontextprotocol.registry/official", {}).get("isLatest", True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body, content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        global served
        if args.slow:
            time.sleep(args.slow)
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        if parts == ["_stats"]:
            return self.send(200, {"served": served})
        if parts[:1] == ["npm"]:
            return self.npm(parts[1:])
        if parts[:2] != ["v0.1", "servers"]:
            return self.send(404, {"detail": "not found"})
        with lock:
            served += 1
        if len(parts) == 2:
            return self.search(query)
        # /v0.1/servers/<name>/versions[/<version>]: the name is one encoded segment ("io.x%2Fy")
        name, rest = parts[2], parts[3:]
        found = [e for e in entries if e["server"]["name"] == name]
        if not found or rest[:1] != ["versions"]:
            return self.send(404, {"title": "Not Found", "status": 404, "detail": "Server not found"})
        if len(rest) == 1:
            return self.send(200, {"servers": found, "metadata": {"count": len(found)}})
        version = rest[1]
        match = [e for e in found if (latest(e) if version == "latest" else e["server"]["version"] == version)]
        if not match:
            return self.send(404, {"title": "Not Found", "status": 404, "detail": "Server version not found"})
        return self.send(200, match[0])

    def search(self, query):
        term = query.get("search", [""])[0].lower()
        limit = min(int(query.get("limit", ["30"])[0]), 100)
        offset = int(query.get("cursor", ["0"])[0] or 0)
        pool = [e for e in entries if term in e["server"]["name"].lower() and status(e) != "deleted"]
        if query.get("version", [""])[0] == "latest":
            pool = [e for e in pool if latest(e)]
        page = pool[offset:offset + limit]
        metadata = {"count": len(page)}
        if args.loop:
            metadata["nextCursor"] = "0"
        elif offset + limit < len(pool):
            metadata["nextCursor"] = str(offset + limit)
        return self.send(200, {"servers": page, "metadata": metadata})

    def npm(self, parts):
        if parts[:1] == ["tarballs"]:
            with open(args.tarball, "rb") as f:
                return self.send(200, f.read(), "application/octet-stream")
        if len(parts) == 2:
            base = "http://%s:%d" % self.server.server_address[:2]
            return self.send(200, {"name": parts[0], "version": parts[1],
                                   "dist": {"tarball": base + "/npm/tarballs/package.tgz"}})
        return self.send(404, {"error": "not found"})


def main():
    global args, entries
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--documents", required=True)
    p.add_argument("--remote-url")
    p.add_argument("--tarball", default=os.devnull)
    p.add_argument("--slow", type=float, default=0)
    p.add_argument("--loop", action="store_true")
    p.add_argument("--wrong-sha", action="store_true", help="{{SHA}} is not the tarball's digest")
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    base = "http://127.0.0.1:%d" % server.server_address[1]
    entries = load(base)
    print("listening on " + base, file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
