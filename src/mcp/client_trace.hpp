// What a request's span does (client_session.cpp, client_session_tasks.cpp, server.cpp): the next hop's context in
// `_meta`, and a span's end as OTel's MCP conventions say.
#pragma once

#include <switchboard/core/trace.hpp>
#include <switchboard/jsonrpc/error.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>

namespace switchboard::mcp::detail {

namespace json = boost::json;
using jsonrpc::Outcome;

// The next hop's context, in the request's _meta (SEP-414), replacing what a client we forward for had put there.
inline void inject_trace(json::object& params, const trace::SpanContext& context) {
    auto& meta = params["_meta"];
    if (meta.is_null()) meta = json::object();
    if (auto* m = meta.if_object()) context.to_meta(*m);
}

// error.type as OTel's MCP conventions say: the JSON-RPC code, or "tool_error" for a tool's own error result.
inline std::string error_type(const Outcome<json::value>& r) {
    if (!r) return std::to_string(r.error().code);
    if (const auto* o = r->if_object())
        if (const auto* e = o->if_contains("isError"); e && e->is_bool() && e->get_bool()) return "tool_error";
    return {};
}

inline void end_span(trace::Span& span, const Outcome<json::value>& r, trace::OperationTimer* timer = nullptr) {
    if (timer && (!r || r->is_object())) {
        if (auto type = error_type(r); !type.empty()) timer->set_error(type);
    }
    if (!span.recording()) return;
    if (!r) {
        span.set("rpc.response.status_code", std::to_string(r.error().code));
        span.set_error(std::to_string(r.error().code), r.error().message);
        return;
    }
    if (const auto* o = r->if_object())
        if (const auto* e = o->if_contains("isError"); e && e->is_bool() && e->get_bool()) {
            span.set_error("tool_error", "the tool answered with isError");
            return;
        }
    span.set_ok();
}

/// end_span for a result that came as text (CallOptions::result_text): `is_error` is its isError.
inline void end_span_text(trace::Span& span, bool is_error, trace::OperationTimer* timer = nullptr) {
    if (is_error) {
        if (timer) timer->set_error("tool_error");
        if (span.recording()) span.set_error("tool_error", "the tool answered with isError");
        return;
    }
    if (span.recording()) span.set_ok();
}

}  // namespace switchboard::mcp::detail
