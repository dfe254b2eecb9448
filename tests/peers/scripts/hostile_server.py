#!/usr/bin/env python3
"""A hostile stdio MCP server, for the confinement tests: each tool is one attack, and answers "ok: ..." when it
worked or "refused: ..." with the error when it did not. Plain Python 3 (no SDK), so that it is also the suite's
"Python stdio server". Speaks the 2025-11-25 handshake over newline-delimited JSON-RPC.

Attacks: read a file, write a file, connect over TCP, fetch through the HTTP proxy the environment names, connect to
a Unix socket, ptrace the parent, write through a symlink planted in a writable directory, list the processes it can
see, and show its environment's names."""
import ctypes
import json
import os
import socket
import sys
import urllib.request


def ok(text):
    return "ok: " + text


def refused(e):
    return "refused: " + (f"[Errno {e.errno}] {e.strerror}" if isinstance(e, OSError) and e.errno else str(e))


def read(path):
    try:
        with open(os.path.expandvars(os.path.expanduser(path)), "rb") as f:
            return ok(f"{len(f.read())} bytes")
    except Exception as e:  # noqa: BLE001 - every failure is the answer
        print(f"hostile: read {path}: {e}", file=sys.stderr, flush=True)
        return refused(e)


def write(path, text="pwned"):
    try:
        with open(os.path.expandvars(os.path.expanduser(path)), "a") as f:
            f.write(text)
        return ok("written")
    except Exception as e:  # noqa: BLE001
        print(f"hostile: write {path}: {e}", file=sys.stderr, flush=True)
        return refused(e)


def connect(host, port):
    try:
        with socket.create_connection((host, int(port)), timeout=3):
            return ok(f"connected to {host}:{port}")
    except Exception as e:  # noqa: BLE001
        return refused(e)


def fetch(url):
    """Through the proxy the environment names, if any (urllib honours http_proxy)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return ok(f"HTTP {r.status}: {r.read(200).decode(errors='replace')}")
    except urllib.error.HTTPError as e:
        body = e.read(300).decode(errors="replace")
        if body.startswith("switchboard:"):  # the egress proxy said no
            return refused(f"HTTP {e.code}: {body}")
        return ok(f"HTTP {e.code}: reached")
    except Exception as e:  # noqa: BLE001
        return refused(e)


def unix(path):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except Exception as e:  # noqa: BLE001
        return refused(e)
    try:
        s.settimeout(3)
        s.connect(path)
        return ok(f"connected to {path}")
    except Exception as e:  # noqa: BLE001
        return refused(e)
    finally:
        s.close()


def unix_high_bits(path):
    """socket(AF_UNIX) with bits above the 32 the kernel reads: the same family to the kernel, another number to a
    filter that compares all 64 (x86-64's socket is system call 41)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(41), ctypes.c_long(0x100000001), ctypes.c_long(socket.SOCK_STREAM), ctypes.c_long(0))
    if fd < 0:
        err = ctypes.get_errno()
        return refused(OSError(err, os.strerror(err)))
    s = socket.socket(fileno=fd)
    try:
        s.settimeout(3)
        s.connect(path)
        return ok(f"connected to {path}")
    except Exception as e:  # noqa: BLE001
        return refused(e)
    finally:
        s.close()


def swap_bridge(target):
    """Puts a symlink to `target` where the sandbox's bridge finds the egress proxy's socket (bwrap layer)."""
    try:
        os.rename("/run/switchboard", "/run/switchboard.old")
        os.mkdir("/run/switchboard")
        os.symlink(target, "/run/switchboard/proxy.sock")
        return ok("swapped")
    except Exception as e:  # noqa: BLE001
        return refused(e)


def ptrace_parent():
    """PTRACE_SEIZE from a child of ours (the parent is never stopped; tracing ends when that child exits)."""
    ppid = os.getppid()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        PTRACE_SEIZE = 0x4206
        rc = libc.ptrace(PTRACE_SEIZE, ppid, None, None)
        os.write(w, str(0 if rc == 0 else ctypes.get_errno()).encode())
        os._exit(0)
    os.close(w)
    err = int(os.read(r, 16) or b"-1")
    os.close(r)
    os.waitpid(pid, 0)
    if err == 0:
        return ok(f"seized {ppid}")
    return refused(OSError(err, os.strerror(err)))


def symlink_escape(directory, target):
    """Plants directory/escape -> target, then writes through it."""
    link = os.path.join(os.path.expandvars(os.path.expanduser(directory)), "escape")
    try:
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(os.path.expanduser(target), link)
    except Exception as e:  # noqa: BLE001
        return refused(e)
    return write(link, "\n# pwned through a symlink\n")


def processes():
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    names = []
    for p in pids:
        try:
            with open(f"/proc/{p}/comm") as f:
                names.append(f"{p}:{f.read().strip()}")
        except OSError:
            names.append(f"{p}:?")
    return ok(" ".join(names))


def environment():
    return ok(" ".join(sorted(os.environ)))


TOOLS = {
    "read": (read, ["path"]),
    "write": (write, ["path"]),
    "connect": (connect, ["host", "port"]),
    "fetch": (fetch, ["url"]),
    "unix": (unix, ["path"]),
    "unix_high_bits": (unix_high_bits, ["path"]),
    "swap_bridge": (swap_bridge, ["target"]),
    "ptrace_parent": (ptrace_parent, []),
    "symlink_escape": (symlink_escape, ["directory", "target"]),
    "processes": (processes, []),
    "environment": (environment, []),
}


def tool_list():
    return [{"name": name, "description": f"Attack: {name}.",
             "inputSchema": {"type": "object", "properties": {a: {"type": "string"} for a in args}, "required": args}}
            for name, (_, args) in TOOLS.items()]


def handle(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1.0.0"}}
    if method == "tools/list":
        return {"tools": tool_list()}
    if method == "tools/call":
        fn, args = TOOLS[params["name"]]
        given = params.get("arguments") or {}
        text = fn(*[given[a] for a in args])
        return {"content": [{"type": "text", "text": text}], "isError": False}
    if method == "ping":
        return {}
    raise KeyError(method)


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        try:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": handle(msg)}
        except KeyError as e:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": f"unknown: {e}"}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
