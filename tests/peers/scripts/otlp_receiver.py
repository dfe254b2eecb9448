#!/usr/bin/env python3
"""A tiny OTLP/HTTP trace collector for Switchboard's tracing tests (python3 stdlib only).

Start:   python3 otlp_receiver.py --port 0 [--status N] [--delay-ms N] [--retry-after S]
                                  [--exit-on-stdin-eof] [--verbose]
Prints exactly one line `PORT <n>` on stdout once it listens on 127.0.0.1 (and `listening on http://127.0.0.1:<n>`
on stderr, for the C++ tests' start_listening).

Endpoints
  POST /v1/traces   OTLP ExportTraceServiceRequest, as application/x-protobuf or application/json
                    (OTLP/JSON), optionally Content-Encoding: gzip. Success: 200 with an empty
                    ExportTraceServiceResponse (empty protobuf body, or `{}` for JSON).
                    Malformed body: 400. Unknown content type: 415. Both counted in "rejected".
  GET  /spans       {"spans": [...], "requests": N, "accepted": N, "rejected": N, "malformed": N,
                     "dropped": N}; filters: ?traceId=, ?name=, ?service= (repeatable keys AND-ed).
  POST /reset       clears spans and counters; with ?control=1 (or body {"control": true}) also puts
                    the failure controls back to their start-up values.
  POST /control     JSON {"status": 200|429|500|503|..., "delayMs": N, "retryAfter": S|null,
                    "drop": bool, "times": N|null}. Only the keys given change. With "times": N the
                    failure (non-2xx status or drop) applies to the next N export requests only and
                    then reverts to 200/no drop. Answers the resulting control state.
  GET  /control     the current control state.
  GET  /healthz     {"ok": true}

Spans of a request answered non-2xx (or dropped) are not stored; the request is counted in
"rejected". Every span is normalized to:
  {"traceId","spanId","parentSpanId" (lowercase hex, "" when none),"traceState","flags","name",
   "kind" (int),"start","end" (int ns),"attributes" {key: plain value},
   "events" [{"name","time","attributes"}],"links" [{"traceId","spanId","traceState","attributes"}],
   "status" {"code" (int),"message"},"service" (resource service.name or ""),"resource" {...},
   "scope" {"name","version"},"encoding" ("protobuf"|"json"),"headers" {lowercase: value}}
Plain attribute values: str, bool, int, float, list (array_value), dict (kvlist_value), and base64
text for bytes_value.

The protobuf side is a hand-written wire-format decoder plus the field numbers of
opentelemetry/proto/{collector/trace,trace,common,resource}/v1.
"""

import argparse
import base64
import binascii
import copy
import gzip
import json
import os
import signal
import socket
import struct
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Malformed(Exception):
    """The request body is not a valid ExportTraceServiceRequest."""


# ---------------------------------------------------------------------------------------------
# Protobuf wire format

WT_VARINT, WT_I64, WT_LEN, WT_SGROUP, WT_EGROUP, WT_I32 = 0, 1, 2, 3, 4, 5


def _read_varint(buf, pos):
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise Malformed("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise Malformed("varint too long")


def parse_fields(buf):
    """Splits one message into [(field_number, wire_type, value)]: value is an int for varints,
    and bytes for the 64-bit, length-delimited and 32-bit types."""
    fields = []
    pos = 0
    n = len(buf)
    while pos < n:
        key, pos = _read_varint(buf, pos)
        field, wt = key >> 3, key & 7
        if field == 0:
            raise Malformed("field number 0")
        if wt == WT_VARINT:
            value, pos = _read_varint(buf, pos)
        elif wt == WT_I64:
            if pos + 8 > n:
                raise Malformed("truncated 64-bit field %d" % field)
            value, pos = bytes(buf[pos:pos + 8]), pos + 8
        elif wt == WT_LEN:
            length, pos = _read_varint(buf, pos)
            if pos + length > n:
                raise Malformed("length-delimited field %d overruns the message" % field)
            value, pos = bytes(buf[pos:pos + length]), pos + length
        elif wt == WT_I32:
            if pos + 4 > n:
                raise Malformed("truncated 32-bit field %d" % field)
            value, pos = bytes(buf[pos:pos + 4]), pos + 4
        else:
            # Groups are deprecated and never used by OTLP.
            raise Malformed("unsupported wire type %d (field %d)" % (wt, field))
        fields.append((field, wt, value))
    return fields


def _expect(wt, want, what):
    if wt != want:
        raise Malformed("%s: wire type %d, expected %d" % (what, wt, want))


def _str(value, wt, what):
    _expect(wt, WT_LEN, what)
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Malformed("%s: invalid UTF-8 (%s)" % (what, e))


def _fixed64(value, wt, what):
    _expect(wt, WT_I64, what)
    return struct.unpack("<Q", value)[0]


def _fixed32(value, wt, what):
    _expect(wt, WT_I32, what)
    return struct.unpack("<I", value)[0]


def _int64(value, wt, what):
    _expect(wt, WT_VARINT, what)
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _enum(value, wt, what):
    _expect(wt, WT_VARINT, what)
    value &= (1 << 32) - 1
    return value - (1 << 32) if value >= 1 << 31 else value


def pb_any_value(buf):
    # AnyValue: string_value=1, bool_value=2, int_value=3, double_value=4, array_value=5,
    # kvlist_value=6, bytes_value=7 (a oneof: the last one present wins).
    out = None
    for field, wt, v in parse_fields(buf):
        if field == 1:
            out = _str(v, wt, "AnyValue.string_value")
        elif field == 2:
            _expect(wt, WT_VARINT, "AnyValue.bool_value")
            out = bool(v)
        elif field == 3:
            out = _int64(v, wt, "AnyValue.int_value")
        elif field == 4:
            _expect(wt, WT_I64, "AnyValue.double_value")
            out = struct.unpack("<d", v)[0]
        elif field == 5:
            _expect(wt, WT_LEN, "AnyValue.array_value")
            # ArrayValue: values=1
            out = [pb_any_value(x) for f, w, x in parse_fields(v) if f == 1 and _lenok(w, "ArrayValue.values")]
        elif field == 6:
            _expect(wt, WT_LEN, "AnyValue.kvlist_value")
            # KeyValueList: values=1
            out = pb_key_values([x for f, w, x in parse_fields(v) if f == 1 and _lenok(w, "KeyValueList.values")])
        elif field == 7:
            _expect(wt, WT_LEN, "AnyValue.bytes_value")
            out = base64.b64encode(v).decode("ascii")
    return out


def _lenok(wt, what):
    _expect(wt, WT_LEN, what)
    return True


def pb_key_values(bufs):
    # KeyValue: key=1, value=2
    out = {}
    for buf in bufs:
        key, value = "", None
        for field, wt, v in parse_fields(buf):
            if field == 1:
                key = _str(v, wt, "KeyValue.key")
            elif field == 2:
                _expect(wt, WT_LEN, "KeyValue.value")
                value = pb_any_value(v)
        out[key] = value
    return out


def _attrs(fields, number, what):
    return pb_key_values([v for f, w, v in fields if f == number and _lenok(w, what)])


def pb_span(buf):
    # Span: trace_id=1, span_id=2, trace_state=3, parent_span_id=4, name=5, kind=6,
    # start_time_unix_nano=7 (fixed64), end_time_unix_nano=8 (fixed64), attributes=9,
    # dropped_attributes_count=10, events=11, links=13, status=15, flags=16 (fixed32)
    span = _empty_span()
    fields = parse_fields(buf)
    for field, wt, v in fields:
        if field == 1:
            _expect(wt, WT_LEN, "Span.trace_id")
            span["traceId"] = v.hex()
        elif field == 2:
            _expect(wt, WT_LEN, "Span.span_id")
            span["spanId"] = v.hex()
        elif field == 3:
            span["traceState"] = _str(v, wt, "Span.trace_state")
        elif field == 4:
            _expect(wt, WT_LEN, "Span.parent_span_id")
            span["parentSpanId"] = v.hex()
        elif field == 5:
            span["name"] = _str(v, wt, "Span.name")
        elif field == 6:
            span["kind"] = _enum(v, wt, "Span.kind")
        elif field == 7:
            span["start"] = _fixed64(v, wt, "Span.start_time_unix_nano")
        elif field == 8:
            span["end"] = _fixed64(v, wt, "Span.end_time_unix_nano")
        elif field == 11:
            _expect(wt, WT_LEN, "Span.events")
            span["events"].append(pb_event(v))
        elif field == 13:
            _expect(wt, WT_LEN, "Span.links")
            span["links"].append(pb_link(v))
        elif field == 15:
            _expect(wt, WT_LEN, "Span.status")
            span["status"] = pb_status(v)
        elif field == 16:
            span["flags"] = _fixed32(v, wt, "Span.flags")
    span["attributes"] = _attrs(fields, 9, "Span.attributes")
    return span


def pb_event(buf):
    # Span.Event: time_unix_nano=1 (fixed64), name=2, attributes=3
    event = {"name": "", "time": 0, "attributes": {}}
    fields = parse_fields(buf)
    for field, wt, v in fields:
        if field == 1:
            event["time"] = _fixed64(v, wt, "Event.time_unix_nano")
        elif field == 2:
            event["name"] = _str(v, wt, "Event.name")
    event["attributes"] = _attrs(fields, 3, "Event.attributes")
    return event


def pb_link(buf):
    # Span.Link: trace_id=1, span_id=2, trace_state=3, attributes=4, flags=6 (fixed32)
    link = {"traceId": "", "spanId": "", "traceState": "", "attributes": {}}
    fields = parse_fields(buf)
    for field, wt, v in fields:
        if field == 1:
            _expect(wt, WT_LEN, "Link.trace_id")
            link["traceId"] = v.hex()
        elif field == 2:
            _expect(wt, WT_LEN, "Link.span_id")
            link["spanId"] = v.hex()
        elif field == 3:
            link["traceState"] = _str(v, wt, "Link.trace_state")
    link["attributes"] = _attrs(fields, 4, "Link.attributes")
    return link


def pb_status(buf):
    # Status: message=2, code=3
    status = {"code": 0, "message": ""}
    for field, wt, v in parse_fields(buf):
        if field == 2:
            status["message"] = _str(v, wt, "Status.message")
        elif field == 3:
            status["code"] = _enum(v, wt, "Status.code")
    return status


def pb_scope(buf):
    # InstrumentationScope: name=1, version=2
    scope = {"name": "", "version": ""}
    for field, wt, v in parse_fields(buf):
        if field == 1:
            scope["name"] = _str(v, wt, "InstrumentationScope.name")
        elif field == 2:
            scope["version"] = _str(v, wt, "InstrumentationScope.version")
    return scope


def decode_protobuf(body):
    """ExportTraceServiceRequest (resource_spans=1) -> [normalized span]."""
    spans = []
    for field, wt, rs_buf in parse_fields(body):
        if field != 1:
            continue
        _expect(wt, WT_LEN, "ExportTraceServiceRequest.resource_spans")
        # ResourceSpans: resource=1, scope_spans=2, schema_url=3
        resource = {}
        scope_spans = []
        for f, w, v in parse_fields(rs_buf):
            if f == 1:
                _expect(w, WT_LEN, "ResourceSpans.resource")
                # Resource: attributes=1
                resource = _attrs(parse_fields(v), 1, "Resource.attributes")
            elif f == 2:
                _expect(w, WT_LEN, "ResourceSpans.scope_spans")
                scope_spans.append(v)
        for ss_buf in scope_spans:
            # ScopeSpans: scope=1, spans=2
            scope = {"name": "", "version": ""}
            span_bufs = []
            for f, w, v in parse_fields(ss_buf):
                if f == 1:
                    _expect(w, WT_LEN, "ScopeSpans.scope")
                    scope = pb_scope(v)
                elif f == 2:
                    _expect(w, WT_LEN, "ScopeSpans.spans")
                    span_bufs.append(v)
            for sb in span_bufs:
                span = pb_span(sb)
                _finish_span(span, resource, scope, "protobuf")
                spans.append(span)
    return spans


# ---------------------------------------------------------------------------------------------
# OTLP/JSON

SPAN_KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5,
}
STATUS_CODE_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def _j_obj(v, what):
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise Malformed("%s: expected an object" % what)
    return v


def _j_list(v, what):
    if v is None:
        return []
    if not isinstance(v, list):
        raise Malformed("%s: expected an array" % what)
    return v


def _j_str(v, what):
    if v is None:
        return ""
    if not isinstance(v, str):
        raise Malformed("%s: expected a string" % what)
    return v


def _j_int(v, what):
    """int64/uint64/fixed64 in OTLP/JSON: a decimal string or a JSON number."""
    if v is None:
        return 0
    if isinstance(v, bool):
        raise Malformed("%s: expected an integer" % what)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v.strip(), 10)
        except ValueError:
            pass
    raise Malformed("%s: expected an integer, got %r" % (what, v))


def _j_enum(v, names, what):
    if isinstance(v, str) and v in names:
        return names[v]
    return _j_int(v, what)


def _j_id(v, what):
    """traceId/spanId: lowercase hex in OTLP/JSON; base64 (proto3 JSON's bytes form) tolerated."""
    s = _j_str(v, what)
    if s == "":
        return ""
    if len(s) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in s):
        return s.lower()
    try:
        return base64.b64decode(s, validate=True).hex()
    except (binascii.Error, ValueError):
        raise Malformed("%s: not a hex id: %r" % (what, s))


def _j_double(v, what):
    if isinstance(v, bool):
        raise Malformed("%s: expected a number" % what)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v in ("NaN", "Infinity", "-Infinity"):
        return float(v.replace("Infinity", "inf"))
    raise Malformed("%s: expected a number" % what)


def json_any_value(v):
    v = _j_obj(v, "AnyValue")
    out = None
    for key, val in v.items():
        if key == "stringValue":
            out = _j_str(val, "AnyValue.stringValue")
        elif key == "boolValue":
            if not isinstance(val, bool):
                raise Malformed("AnyValue.boolValue: expected a boolean")
            out = val
        elif key == "intValue":
            out = _j_int(val, "AnyValue.intValue")
        elif key == "doubleValue":
            out = _j_double(val, "AnyValue.doubleValue")
        elif key == "arrayValue":
            out = [json_any_value(x) for x in _j_list(_j_obj(val, "arrayValue").get("values"), "arrayValue.values")]
        elif key == "kvlistValue":
            out = json_key_values(_j_obj(val, "kvlistValue").get("values"))
        elif key == "bytesValue":
            out = _j_str(val, "AnyValue.bytesValue")
    return out


def json_key_values(v):
    out = {}
    for kv in _j_list(v, "attributes"):
        kv = _j_obj(kv, "KeyValue")
        out[_j_str(kv.get("key"), "KeyValue.key")] = json_any_value(kv.get("value"))
    return out


def json_span(s):
    s = _j_obj(s, "Span")
    span = _empty_span()
    span["traceId"] = _j_id(s.get("traceId"), "Span.traceId")
    span["spanId"] = _j_id(s.get("spanId"), "Span.spanId")
    span["parentSpanId"] = _j_id(s.get("parentSpanId"), "Span.parentSpanId")
    span["traceState"] = _j_str(s.get("traceState"), "Span.traceState")
    span["flags"] = _j_int(s.get("flags"), "Span.flags")
    span["name"] = _j_str(s.get("name"), "Span.name")
    span["kind"] = _j_enum(s.get("kind"), SPAN_KIND_NAMES, "Span.kind")
    span["start"] = _j_int(s.get("startTimeUnixNano"), "Span.startTimeUnixNano")
    span["end"] = _j_int(s.get("endTimeUnixNano"), "Span.endTimeUnixNano")
    span["attributes"] = json_key_values(s.get("attributes"))
    for e in _j_list(s.get("events"), "Span.events"):
        e = _j_obj(e, "Event")
        span["events"].append({
            "name": _j_str(e.get("name"), "Event.name"),
            "time": _j_int(e.get("timeUnixNano"), "Event.timeUnixNano"),
            "attributes": json_key_values(e.get("attributes")),
        })
    for l in _j_list(s.get("links"), "Span.links"):
        l = _j_obj(l, "Link")
        span["links"].append({
            "traceId": _j_id(l.get("traceId"), "Link.traceId"),
            "spanId": _j_id(l.get("spanId"), "Link.spanId"),
            "traceState": _j_str(l.get("traceState"), "Link.traceState"),
            "attributes": json_key_values(l.get("attributes")),
        })
    st = _j_obj(s.get("status"), "Span.status")
    span["status"] = {
        "code": _j_enum(st.get("code"), STATUS_CODE_NAMES, "Status.code"),
        "message": _j_str(st.get("message"), "Status.message"),
    }
    return span


def decode_json(body):
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Malformed("invalid JSON: %s" % e)
    doc = _j_obj(doc, "ExportTraceServiceRequest")
    spans = []
    for rs in _j_list(doc.get("resourceSpans"), "resourceSpans"):
        rs = _j_obj(rs, "ResourceSpans")
        resource = json_key_values(_j_obj(rs.get("resource"), "Resource").get("attributes"))
        for ss in _j_list(rs.get("scopeSpans"), "scopeSpans"):
            ss = _j_obj(ss, "ScopeSpans")
            sc = _j_obj(ss.get("scope"), "InstrumentationScope")
            scope = {"name": _j_str(sc.get("name"), "scope.name"),
                     "version": _j_str(sc.get("version"), "scope.version")}
            for s in _j_list(ss.get("spans"), "spans"):
                span = json_span(s)
                _finish_span(span, resource, scope, "json")
                spans.append(span)
    return spans


# ---------------------------------------------------------------------------------------------
# Normalized spans

def _empty_span():
    return {
        "traceId": "", "spanId": "", "parentSpanId": "", "traceState": "", "flags": 0,
        "name": "", "kind": 0, "start": 0, "end": 0, "attributes": {}, "events": [], "links": [],
        "status": {"code": 0, "message": ""},
    }


def _finish_span(span, resource, scope, encoding):
    service = resource.get("service.name")
    span["service"] = service if isinstance(service, str) else ""
    span["resource"] = copy.deepcopy(resource)
    span["scope"] = dict(scope)
    span["encoding"] = encoding


# ---------------------------------------------------------------------------------------------
# State

class State:
    def __init__(self, control):
        self.lock = threading.Lock()
        self.initial_control = dict(control)
        self.control = dict(control)
        self.spans = []
        self.counters = {}
        self.clear_counters()

    def clear_counters(self):
        self.counters = {"requests": 0, "accepted": 0, "rejected": 0, "malformed": 0, "dropped": 0}

    def take_control(self):
        """The control that applies to one export request; counts down a bounded failure."""
        with self.lock:
            c = dict(self.control)
            failing = c["drop"] or not (200 <= c["status"] < 300)
            if failing and c.get("times") is not None:
                left = c["times"] - 1
                if left <= 0:
                    self.control.update(status=200, drop=False, times=None)
                else:
                    self.control["times"] = left
            return c


def _parse_control(body, current):
    try:
        doc = json.loads(body.decode("utf-8")) if body.strip() else {}
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError("invalid JSON: %s" % e)
    if not isinstance(doc, dict):
        raise ValueError("control must be a JSON object")
    c = dict(current)
    if "status" in doc:
        if not isinstance(doc["status"], int) or isinstance(doc["status"], bool) or not 100 <= doc["status"] <= 599:
            raise ValueError("status must be an HTTP status code")
        c["status"] = doc["status"]
    if "delayMs" in doc:
        d = doc["delayMs"]
        if d is None:
            d = 0
        if isinstance(d, bool) or not isinstance(d, (int, float)) or d < 0:
            raise ValueError("delayMs must be a non-negative number")
        c["delayMs"] = d
    if "retryAfter" in doc:
        r = doc["retryAfter"]
        if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float, str))):
            raise ValueError("retryAfter must be seconds, an HTTP date string, or null")
        c["retryAfter"] = r
    if "drop" in doc:
        if not isinstance(doc["drop"], bool):
            raise ValueError("drop must be a boolean")
        c["drop"] = doc["drop"]
    if "times" in doc:
        t = doc["times"]
        if t is not None and (isinstance(t, bool) or not isinstance(t, int) or t < 1):
            raise ValueError("times must be a positive integer or null")
        c["times"] = t
    return c


# ---------------------------------------------------------------------------------------------
# HTTP

MAX_BODY = 64 * 1024 * 1024


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "switchboard-otlp-receiver/1"

    # -- plumbing ------------------------------------------------------------------------------
    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("otlp_receiver: %s %s\n" % (self.address_string(), fmt % args))

    def _read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            chunks = []
            total = 0
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    raise Malformed("truncated chunked body")
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise Malformed("bad chunk size")
                if size == 0:
                    # trailers until the empty line
                    while True:
                        t = self.rfile.readline(65537)
                        if t in (b"\r\n", b"\n", b""):
                            break
                    break
                total += size
                if total > MAX_BODY:
                    raise Malformed("body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline(3)
            return b"".join(chunks)
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        try:
            n = int(length)
        except ValueError:
            raise Malformed("bad Content-Length")
        if n < 0 or n > MAX_BODY:
            raise Malformed("bad Content-Length")
        data = self.rfile.read(n)
        if len(data) != n:
            raise Malformed("truncated body")
        return data

    def _send(self, status, body=b"", content_type="application/json", extra_headers=None):
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def _send_json(self, status, doc):
        self._send(status, json.dumps(doc).encode("utf-8"), "application/json")

    def _headers_dict(self):
        out = {}
        for k, v in self.headers.items():
            k = k.lower()
            out[k] = out[k] + ", " + v if k in out else v
        return out

    # -- routes --------------------------------------------------------------------------------
    def do_GET(self):
        url = urlsplit(self.path)
        st = self.server.state
        if url.path == "/spans":
            q = parse_qs(url.query)
            with st.lock:
                spans = copy.deepcopy(st.spans)
                doc = dict(st.counters)
            for qk, sk in (("traceId", "traceId"), ("name", "name"), ("service", "service")):
                for want in q.get(qk, []):
                    if qk == "traceId":
                        want = want.lower()
                    spans = [s for s in spans if s.get(sk) == want]
            doc["spans"] = spans
            self._send_json(200, doc)
        elif url.path == "/control":
            with st.lock:
                self._send_json(200, dict(st.control))
        elif url.path == "/healthz":
            self._send_json(200, {"ok": True})
        else:
            self._send_json(404, {"error": "not found: %s" % url.path})

    def do_POST(self):
        url = urlsplit(self.path)
        try:
            body = self._read_body()
        except Malformed as e:
            self.close_connection = True
            if url.path == "/v1/traces":
                with self.server.state.lock:
                    self.server.state.counters["requests"] += 1
                    self.server.state.counters["rejected"] += 1
                    self.server.state.counters["malformed"] += 1
            self._send_json(400, {"error": str(e)})
            return
        if url.path == "/v1/traces":
            self._export(body)
        elif url.path == "/reset":
            self._reset(url, body)
        elif url.path == "/control":
            st = self.server.state
            with st.lock:
                try:
                    st.control = _parse_control(body, st.control)
                except ValueError as e:
                    self._send_json(400, {"error": str(e)})
                    return
                doc = dict(st.control)
            self._send_json(200, doc)
        else:
            self._send_json(404, {"error": "not found: %s" % url.path})

    def _reset(self, url, body):
        st = self.server.state
        also_control = parse_qs(url.query).get("control", ["0"])[-1] in ("1", "true", "yes")
        if body.strip():
            try:
                doc = json.loads(body.decode("utf-8"))
                if isinstance(doc, dict) and doc.get("control") is True:
                    also_control = True
            except (UnicodeDecodeError, ValueError):
                pass
        with st.lock:
            st.spans = []
            st.clear_counters()
            if also_control:
                st.control = dict(st.initial_control)
        self._send_json(200, {"ok": True})

    def _export(self, body):
        st = self.server.state
        headers = self._headers_dict()
        ctype = (headers.get("content-type") or "").split(";", 1)[0].strip().lower()
        is_json = ctype == "application/json"
        is_pb = ctype in ("application/x-protobuf", "application/protobuf")
        resp_ctype = "application/json" if is_json else "application/x-protobuf"

        control = st.take_control()
        with st.lock:
            st.counters["requests"] += 1

        def fail(status, message, counter=None, retry_after=None):
            with st.lock:
                st.counters["rejected"] += 1
                if counter:
                    st.counters[counter] += 1
            self._send_error(status, message, is_json, retry_after)

        if control["delayMs"]:
            threading.Event().wait(control["delayMs"] / 1000.0)

        if control["drop"]:
            with st.lock:
                st.counters["rejected"] += 1
                st.counters["dropped"] += 1
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return

        if not (is_json or is_pb):
            fail(415, "unsupported Content-Type %r; want application/x-protobuf or application/json" % ctype)
            return

        encoding = (headers.get("content-encoding") or "identity").strip().lower()
        try:
            if encoding == "gzip":
                try:
                    body = gzip.decompress(body)
                except (OSError, EOFError, zlib.error) as e:
                    raise Malformed("bad gzip body: %s" % e)
            elif encoding == "deflate":
                try:
                    body = zlib.decompress(body)
                except zlib.error as e:
                    raise Malformed("bad deflate body: %s" % e)
            elif encoding not in ("identity", ""):
                fail(415, "unsupported Content-Encoding %r" % encoding)
                return
            spans = decode_json(body) if is_json else decode_protobuf(body)
        except Malformed as e:
            fail(400, "malformed ExportTraceServiceRequest: %s" % e, "malformed")
            return
        except RecursionError:
            fail(400, "malformed ExportTraceServiceRequest: nested too deeply", "malformed")
            return

        status = control["status"]
        if not 200 <= status < 300:
            fail(status, "export refused by test control (status %d)" % status,
                 retry_after=control.get("retryAfter"))
            return

        for s in spans:
            s["headers"] = dict(headers)
        with st.lock:
            st.spans.extend(spans)
            st.counters["accepted"] += 1
        # Empty ExportTraceServiceResponse: no fields set.
        self._send(status, b"{}" if is_json else b"", resp_ctype)

    def _send_error(self, status, message, is_json, retry_after=None):
        extra = {}
        if retry_after is not None:
            extra["Retry-After"] = str(int(retry_after)) if isinstance(retry_after, (int, float)) else str(retry_after)
        if is_json:
            body = json.dumps({"code": 3 if status == 400 else 14, "message": message}).encode("utf-8")
            self._send(status, body, "application/json", extra)
        else:
            # google.rpc.Status { int32 code = 1; string message = 2; }
            msg = message.encode("utf-8")
            code = 3 if status == 400 else 14
            body = bytes([0x08, code, 0x12]) + _varint(len(msg)) + msg
            self._send(status, body, "application/x-protobuf", extra)


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = pick one)")
    ap.add_argument("--status", type=int, default=200, help="HTTP status for POST /v1/traces at start")
    ap.add_argument("--delay-ms", type=float, default=0, help="delay before answering an export at start")
    ap.add_argument("--retry-after", default=None, help="Retry-After value sent with failing answers")
    ap.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when standard input closes")
    ap.add_argument("--verbose", action="store_true", help="log each request on stderr")
    args = ap.parse_args()

    retry_after = args.retry_after
    if retry_after is not None:
        try:
            retry_after = int(retry_after)
        except ValueError:
            pass
    delay = int(args.delay_ms) if float(args.delay_ms).is_integer() else args.delay_ms
    state = State({"status": args.status, "delayMs": delay, "retryAfter": retry_after,
                   "drop": False, "times": None})

    httpd = Server(("127.0.0.1", args.port), Handler)
    httpd.state = state
    httpd.verbose = args.verbose

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    if args.exit_on_stdin_eof:
        def watch_stdin():
            try:
                while os.read(sys.stdin.fileno(), 4096):
                    pass
            except OSError:
                pass
            stop.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    t.start()
    sys.stdout.write("PORT %d\n" % httpd.server_address[1])
    sys.stdout.flush()
    # The line the C++ tests' start_listening() waits for.
    sys.stderr.write("listening on http://127.0.0.1:%d\n" % httpd.server_address[1])
    sys.stderr.flush()

    while not stop.wait(0.5):
        pass
    httpd.shutdown()
    httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
