// Stateless Streamable HTTP (2026-07-28): every POST is checked against its Mcp-Method / Mcp-Name /
// MCP-Protocol-Version headers, then answered alone by the answerer (HttpServerOptions::answer) when there is one, or
// else (and always for subscriptions/listen, which stays open) by a session of its own; its one stream carries what
// is written for it (notifications, the listen stream, the answer); closing the response stream cancels the request.
#include "streamable_http_server_impl.hpp"

#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/text.hpp>

#include <boost/json/parse.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace switchboard::transport {

using namespace streamable;
using asio::awaitable;
using switchboard::http::header_value;
using switchboard::http::header_view;

namespace {

std::optional<std::string> base64_decode(std::string_view in) {
    auto val = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+' || c == '-') return 62;
        if (c == '/' || c == '_') return 63;
        return -1;
    };
    // Standard Base64 with its padding (the spec's test table rejects "SGVsbG8", which lacks it).
    if (in.size() % 4 != 0) return std::nullopt;
    const auto pad = in.find('=');
    if (pad != std::string_view::npos &&
        (in.size() - pad > 2 || in.substr(pad).find_first_not_of('=') != std::string_view::npos))
        return std::nullopt;
    std::string out;
    unsigned buf = 0;
    int bits = 0;
    for (char c : in) {
        if (c == '=') break;
        int v = val(c);
        if (v < 0) return std::nullopt;
        buf = (buf << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((buf >> bits) & 0xff);
        }
    }
    return out;
}

// A header value in the spec's "=?base64?...?=" sentinel form is decoded; anything else is taken as is.
std::optional<std::string> decode_header_value(std::string_view v) {
    constexpr std::string_view pre = "=?base64?", post = "?=";
    if (v.size() >= pre.size() + post.size() && v.starts_with(pre) && v.ends_with(post))
        return base64_decode(v.substr(pre.size(), v.size() - pre.size() - post.size()));
    for (char c : v)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return std::nullopt;
    return std::string(v);
}

// Checks a tools/call's Mcp-Param-* headers against its arguments (SEP-2243): what is wrong, or "".
std::string param_header_mismatch(const ServerRequest& req, const std::vector<ParamHeader>& headers,
                                  const json::value& params) {
    json::value arguments;
    if (const auto* p = params.if_object())
        if (const auto* a = p->if_contains("arguments")) arguments = *a;
    const auto expected = param_header_fields(headers, arguments);
    for (const auto& [field, encoded] : expected) {
        const auto raw = header_value(req, field);
        if (raw.empty()) return field + " header is required (the argument is in the body)";
        auto got = decode_header_value(raw);
        if (!got) return field + " header value is malformed";
        const auto want = decode_header_value(encoded).value_or(encoded);
        if (*got == want) continue;
        // Integers compare as numbers ("42.0" is 42).
        double a = 0, b = 0;
        const auto parse = [](const std::string& s, double& out) {
            auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
            return ec == std::errc() && end == s.data() + s.size();
        };
        if (parse(*got, a) && parse(want, b) && a == b) continue;
        return fmt::format("{} header value '{}' does not match body value '{}'", field, *got, want);
    }
    // A header for an argument the body does not have.
    for (const auto& h : headers) {
        const auto field = "Mcp-Param-" + h.name;
        const bool sent =
            std::any_of(expected.begin(), expected.end(), [&](const auto& e) { return core::iequals(e.first, field); });
        if (!sent && !header_value(req, field).empty())
            return field + " header is present but the body has no value for it";
    }
    return {};
}

// The required _meta field a modern request lacks ("" when it has both).
std::string missing_meta(const jsonrpc::Message& msg) {
    const json::object* meta = nullptr;
    if (const auto* p = msg.params.if_object())
        if (const auto* m = p->if_contains("_meta"); m && m->is_object()) meta = &m->get_object();
    if (!meta || !meta->contains(meta_protocol_version)) return std::string(meta_protocol_version);
    if (!meta->contains("io.modelcontextprotocol/clientCapabilities"))
        return "io.modelcontextprotocol/clientCapabilities";
    return {};
}

// How a 2026-07-28 error answer maps to an HTTP status (the spec's table; clients detect the era from it).
bhttp::status modern_status(const json::object& response) {
    const auto* e = response.if_contains("error");
    if (!e || !e->is_object()) return bhttp::status::ok;
    const auto* c = e->get_object().if_contains("code");
    if (!c || !c->is_int64()) return bhttp::status::ok;
    switch (c->get_int64()) {
    case code_header_mismatch:
    case code_missing_capability:
    case code_unsupported_version: return bhttp::status::bad_request;
    case -32601: return bhttp::status::not_found;
    default: return bhttp::status::ok;
    }
}

}  // namespace

void HttpServer::Impl::route_modern(const std::weak_ptr<Stream>& weak, std::string text) {
    auto st = weak.lock();
    if (!st || st->done) return;
    bool response = false;
    auto status = bhttp::status::ok;
    // What the session writes is read from its first bytes; only an error is parsed, for its HTTP status.
    if (auto peek = jsonrpc::peek_envelope(text); peek && !peek->error) {
        response = peek->kind == jsonrpc::Message::Kind::response;
    } else {
        boost::system::error_code ec;
        auto v = json::parse(text, ec);
        if (ec || !v.is_object()) return;
        const auto& o = v.get_object();
        response = o.contains("id") && !o.contains("method");
        if (response) status = modern_status(o);
    }
    st->emit(std::make_shared<const std::string>(std::move(text)), response, status);
    if (response && st->channel) st->channel->end("request answered");
}

// The answer goes out as the session's would have (route_modern); none (cancelled) ends the stream without one.
awaitable<void> HttpServer::Impl::answer_alone(awaitable<std::string> answer, std::weak_ptr<Stream> weak) {
    core::ScopeExit ended([weak] { finish_stream(weak.lock()); });  // also when it throws: nobody waits forever
    std::string text = co_await std::move(answer);
    if (!text.empty()) route_modern(weak, std::move(text));
}

awaitable<void> HttpServer::Impl::handle_modern(ServerRequest& req, Responder& res, jsonrpc::Message msg,
                                                std::string header_version, std::optional<std::string> body_version,
                                                bool sse_ok) {
    if (msg.kind != jsonrpc::Message::Kind::request) {
        // 2026-07-28 defines no client notifications over HTTP (closing a stream cancels); accept and drop.
        Reply r;
        r.status = bhttp::status::accepted;
        co_await res.send(std::move(r));
        co_return;
    }
    std::string mismatch;
    const std::string body_v = body_version.value_or("");
    if (header_version.empty())
        mismatch = "MCP-Protocol-Version header is required";
    else if (body_version && header_version != body_v)
        mismatch = fmt::format("MCP-Protocol-Version header value '{}' does not match body value '{}'", header_version,
                               body_v);
    if (mismatch.empty()) {
        auto m = header_view(req, "Mcp-Method");
        if (m.empty())
            mismatch = "Mcp-Method header is required";
        else if (m != msg.method)
            mismatch = fmt::format("Mcp-Method header value '{}' does not match body value '{}'", m, msg.method);
    }
    if (mismatch.empty() &&
        (msg.method == "tools/call" || msg.method == "prompts/get" || msg.method == "resources/read")) {
        const char* field = msg.method == "resources/read" ? "uri" : "name";
        std::string_view expected;  // in msg.params, which outlive it
        if (const auto* p = msg.params.if_object())
            if (const auto* v = p->if_contains(field); v && v->is_string()) expected = v->get_string();
        auto raw = header_view(req, "Mcp-Name");
        auto decoded = decode_header_value(raw);
        if (raw.empty())
            mismatch = "Mcp-Name header is required for " + msg.method;
        else if (!decoded)
            mismatch = "Mcp-Name header value is malformed";
        else if (*decoded != expected)
            mismatch = fmt::format("Mcp-Name header value '{}' does not match body value '{}'", *decoded, expected);
    }
    // The Tasks extension routes tasks/get, tasks/update and tasks/cancel by Mcp-Name: the taskId. A request without the
    // header is served (a client may not know the extension's header); a wrong one is refused like any mismatch.
    if (mismatch.empty() && msg.method.starts_with("tasks/")) {
        std::string expected;
        if (const auto* p = msg.params.if_object())
            if (const auto* v = p->if_contains("taskId"); v && v->is_string()) expected = std::string(v->get_string());
        auto raw = header_view(req, "Mcp-Name");
        auto decoded = decode_header_value(raw);
        if (!raw.empty() && !decoded)
            mismatch = "Mcp-Name header value is malformed";
        else if (!raw.empty() && *decoded != expected)
            mismatch = fmt::format("Mcp-Name header value '{}' does not match body taskId '{}'", *decoded, expected);
    }
    if (mismatch.empty() && msg.method == "tools/call" && opt.tool_param_headers) {
        std::string tool;
        if (const auto* p = msg.params.if_object())
            if (const auto* n = p->if_contains("name"); n && n->is_string()) tool = std::string(n->get_string());
        if (auto headers = opt.tool_param_headers(tool); headers && !headers->empty())
            mismatch = param_header_mismatch(req, *headers, msg.params);
    }
    if (!mismatch.empty()) {
        auto r = json_reply(bhttp::status::bad_request,
                            error_body(code_header_mismatch, "Header mismatch: " + mismatch, msg.id, nullptr));
        co_await res.send(std::move(r));
        co_return;
    }
    // A request without the _meta fields every 2026-07-28 request carries is malformed: -32602 with 400 (answered
    // here, so the status is right whatever the session would say).
    if (auto missing = missing_meta(msg); !missing.empty()) {
        auto r = json_reply(
            bhttp::status::bad_request,
            error_body(-32602, fmt::format("Invalid params: the request's _meta has no {}", missing), msg.id, nullptr));
        co_await res.send(std::move(r));
        co_return;
    }

    auto st = std::make_shared<Stream>();
    auto pipe = std::make_shared<Pipe>(ex, pipe_limit());
    st->pipe = pipe;
    std::weak_ptr<Stream> weak = st;
    DeliverOptions d;
    d.sse_ok = sse_ok;
    d.unanswered_code = -32603;
    d.unanswered_message = "Internal error: the request ended without an answer";
    if (opt.answer && msg.method != "subscriptions/listen") {
        // Answered on its own: no session, channel or connection for it. Started here, so that an answer ready at once
        // is in the pipe before delivery begins.
        d.unanswered_id = msg.id;
        auto send = [weak](std::string text) { route_modern(weak, std::move(text)); };
        auto running = tasks.start(answer_alone(opt.answer(std::move(msg), std::move(send)), weak), "http: request");
        // Empty right after start() only when refused (an ended task's entry goes later, by a post): stopping.
        if (running.expired()) finish_stream(st);
        const auto cancel = [running] {
            if (auto signal = running.lock()) signal->emit(asio::cancellation_type::terminal);
        };
        // Closing the response stream is the cancellation signal of 2026-07-28; however the delivery ends (a stop
        // throws out of it), nothing runs on.
        d.on_disconnect = cancel;
        core::ScopeExit gave_up(cancel);
        co_await deliver(res, st, pipe, std::move(d));
        co_return;
    }
    st->request_id = msg.id;
    st->channel = std::make_shared<detail::PushChannel>(
        ex, opt.max_message_size, [weak](std::string text) { route_modern(weak, std::move(text)); });
    spawn_session(st->channel, [weak] { finish_stream(weak.lock()); });
    // The request goes in as it was parsed above (moved): not put back together and parsed a second time.
    st->channel->push_parsed(std::move(msg));

    d.unanswered_id = st->request_id;
    d.on_disconnect = [weak] {
        // Closing the response stream is the cancellation signal of 2026-07-28.
        auto sp = weak.lock();
        if (!sp || sp->done) return;
        json::object params{{"requestId", sp->request_id}, {"reason", "the client closed the HTTP stream"}};
        sp->channel->push(jsonrpc::serialize_notification("notifications/cancelled", params));
        sp->channel->end("the client closed the HTTP stream");
    };
    co_await deliver(res, st, pipe, std::move(d));
    st->channel->end("request finished");
}

}  // namespace switchboard::transport
