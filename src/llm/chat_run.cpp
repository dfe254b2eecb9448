// One chat completion over HTTP: the attempts with their retries, then the answer read as SSE or as one JSON body.
#include "chat.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/http/sse_parser.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace switchboard::llm::detail {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using Kind = Error::Kind;

namespace {

constexpr std::size_t excerpt_limit = 300;

// http::Client words a read timeout this way (it has no failure kind of its own).
bool is_timeout(const http::Failure& f) {
    return f.message.find("sent nothing for") != std::string::npos ||
           f.message.find("did not answer within") != std::string::npos;
}

// A failure before any response byte: connecting, or the connection dropped before the header.
Error send_failure(const Chat& c, const http::Failure& f, bool& retryable) {
    retryable = false;
    if (f.kind == http::Failure::Kind::aborted) return c.cancelled_error();
    if (is_timeout(f)) return c.error(Kind::timeout, 0, f.message);
    retryable = f.kind == http::Failure::Kind::connect || f.kind == http::Failure::Kind::io;
    return c.error(Kind::connect, 0, f.message);
}

// A failure while reading the body: the answer is incomplete.
Error read_failure(const Chat& c, const http::Failure& f) {
    if (f.kind == http::Failure::Kind::aborted || c.cancelled) return c.cancelled_error();
    if (is_timeout(f)) return c.error(Kind::timeout, 0, f.message);
    return c.error(Kind::stream_cut, 0, f.message);
}

ChatResponse finish(Chat& c) {
    ChatResponse r;
    r.message = c.assembler.message();
    c.timings.total_ms = c.elapsed_ms();
    r.message.timings = c.timings;
    r.finish_reason = c.assembler.finish_reason();
    return r;
}

// The non-streamed answer (or a server that answered a streamed request with plain JSON).
awaitable<Result<ChatResponse>> read_whole(Chat& c, http::Exchange& ex) {
    auto body = co_await ex.read_all(c.http->options().max_body_size);
    if (c.cancelled) co_return c.cancelled_error();
    if (!body) co_return read_failure(c, body.error());
    json::error_code ec;
    auto v = json::parse(*body, ec);
    if (ec || !v.is_object())
        co_return c.error(Kind::bad_response, 0,
                          fmt::format("the answer is not a JSON object: {}", core::shorten(*body, excerpt_limit)));
    if (auto e = c.assembler.add_response(v.get_object())) co_return c.error(Kind::bad_response, 0, *e);
    co_return finish(c);
}

// After [DONE] the server ends the body at once (the last chunk follows in the same write or the next): reading it
// lets the connection go back to the pool, so the next turn skips a connect (and a TLS handshake). A server that
// does not end it within 100 ms loses the connection, not the answer.
awaitable<void> keep_connection(Chat& c, http::Exchange& ex) {
    if (ex.done()) co_return;
    auto live = std::make_shared<bool>(true);
    asio::steady_timer guard(c.http->executor(), std::chrono::milliseconds(100));
    guard.async_wait([live, &ex](boost::system::error_code ec) {
        if (!ec && *live) ex.abort();
    });
    for (int i = 0; i < 16 && !ex.done() && !c.cancelled; ++i) {
        auto piece = co_await ex.read_some();
        if (!piece || piece->empty()) break;
    }
    *live = false;
    guard.cancel();
}

awaitable<Result<ChatResponse>> read_stream(Chat& c, http::Exchange& ex) {
    http::SseParser parser(c.http->options().max_body_size);
    http::SseEvent ev;
    for (;;) {
        auto piece = co_await ex.read_some();
        if (c.cancelled) co_return c.cancelled_error();
        if (!piece) co_return read_failure(c, piece.error());
        if (piece->empty()) break;
        parser.feed(*piece);
        while (parser.next(ev)) {
            if (ev.kind == http::SseEvent::Kind::oversize)
                co_return c.error(Kind::bad_response, 0,
                                  fmt::format("an event of {} is over the limit", core::size_text(ev.length)));
            if (ev.data == "[DONE]") {
                co_await keep_connection(c, ex);
                co_return finish(c);
            }
            // Some proxies send `data: ` with only blanks as a keep-alive: nothing to parse.
            if (ev.data.find_first_not_of(" \t\r\n") == std::string_view::npos) continue;
            json::error_code ec;
            auto v = json::parse(ev.data, ec);
            const bool object = !ec && v.is_object();
            std::optional<std::string> e;
            if (object) e = c.assembler.add_chunk(v.get_object());
            // `event: error` (OpenAI's SDK honours it) is an error whatever its data looks like.
            if (!e && ev.type == "error") e = core::shorten(ev.data, excerpt_limit);
            if (e) co_return c.error(Kind::bad_response, 0, fmt::format("error in the stream: {}", *e));
            if (!object)
                co_return c.error(
                    Kind::bad_response, 0,
                    fmt::format("a stream event is not a JSON object: {}", core::shorten(ev.data, excerpt_limit)));
        }
    }
    // No [DONE]: complete if the server said how the answer finished, cut otherwise.
    if (!c.assembler.finish_reason().empty()) co_return finish(c);
    co_return c.error(Kind::stream_cut, 0, "the connection ended before the answer was complete");
}

std::string excerpt(const std::string& body) {
    std::string one_line = body;
    for (auto& ch : one_line)
        if (ch == '\n' || ch == '\r') ch = ' ';
    return core::shorten(core::to_valid_utf8(one_line), excerpt_limit);
}

}  // namespace

awaitable<void> run_chat(std::shared_ptr<Chat> chat) {
    auto& c = *chat;
    http::Fields extra;
    extra.emplace_back("Content-Type", "application/json");
    extra.emplace_back("Accept", c.settings.stream ? "text/event-stream, application/json" : "application/json");
    // The endpoint may trace too (vLLM, a proxy): the model request continues the same trace.
    if (c.span.context().valid()) extra.emplace_back("traceparent", c.span.context().traceparent());
    for (int attempt = 0;; ++attempt) {
        c.timings.attempts = attempt + 1;
        bool retryable = false;
        std::optional<std::chrono::milliseconds> retry_after;
        Error failure;
        {
            auto sent = co_await c.http->send(c.url, http::bhttp::verb::post, c.body, extra, c.abort);
            if (c.cancelled) {
                c.result = c.cancelled_error();
                co_return;
            }
            if (!sent) {
                failure = send_failure(c, sent.error(), retryable);
            } else {
                auto& ex = **sent;
                c.timings.first_byte_ms = c.elapsed_ms();
                if (ex.status() < 300) {
                    // A streamed request answered with plain JSON is the non-streamed shape.
                    const bool whole = !c.settings.stream || ex.media_type() == "application/json";
                    if (whole)
                        c.result = co_await read_whole(c, ex);
                    else
                        c.result = co_await read_stream(c, ex);
                    co_return;
                }
                auto body = co_await ex.read_all(64 * 1024);
                if (c.cancelled) {
                    c.result = c.cancelled_error();
                    co_return;
                }
                const auto status = ex.status();
                failure = c.error(Kind::status, status,
                                  fmt::format("HTTP {}{}{}", status, body && !body->empty() ? ": " : "",
                                              body ? excerpt(*body) : std::string()));
                if (body) failure.context_overflow = parse_context_overflow(status, *body);
                retryable = retryable_status(status);
                retry_after = parse_retry_after(ex.header("Retry-After"), std::chrono::system_clock::now());
            }
        }
        if (!retryable || attempt >= c.settings.max_retries) {
            c.result = std::move(failure);
            co_return;
        }
        const auto delay = retry_delay(attempt, retry_after, c.settings.max_retry_delay);
        spdlog::info("{}; retrying in {}", failure.message, http::duration_text(delay));
        if (c.span.recording())
            c.span.add_event("retry", {{"attempt", std::int64_t{attempt + 1}},
                                       {"http.response.status_code", std::int64_t{failure.status}},
                                       {"retry.delay_ms", static_cast<std::int64_t>(delay.count())}});
        const bool stopped = co_await c.stop.wait_for(delay);
        if (stopped || c.cancelled) {
            c.result = c.cancelled_error();
            co_return;
        }
    }
}

}  // namespace switchboard::llm::detail
