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

/// A request's span and timer ended on a result whose isError is `is_error`: for a result read as a value (end_span)
/// and one that came as text (CallOptions::result_text), read for isError without a value.
inline void end_span_text(trace::Span& span, bool is_error, trace::OperationTimer* timer = nullptr) {
    if (is_error) {
        if (timer) timer->set_error("tool_error");
        if (span.recording()) span.set_error("tool_error", "the tool answered with isError");
        return;
    }
    if (span.recording()) span.set_ok();
}

inline void end_span(trace::Span& span, const Outcome<json::value>& r, trace::OperationTimer* timer = nullptr) {
    if (!r) {
        if (timer) timer->set_error(std::to_string(r.error().code));
        if (!span.recording()) return;
        span.set("rpc.response.status_code", std::to_string(r.error().code));
        span.set_error(std::to_string(r.error().code), r.error().message);
        return;
    }
    const auto* o = r->if_object();
    const auto* e = o ? o->if_contains("isError") : nullptr;
    end_span_text(span, e && e->is_bool() && e->get_bool(), timer);
}

}  // namespace switchboard::mcp::detail
