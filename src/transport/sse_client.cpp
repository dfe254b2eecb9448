// The legacy HTTP+SSE client channel (2024-11-05): one long GET carries everything the server sends; the first
// `endpoint` event names where to POST; each message the client sends is its own POST, answered 202.
#include "http_client_channel.hpp"
#include "http_options.hpp"
#include "message_queue.hpp"

#include <switchboard/jsonrpc/message.hpp>
#include <switchboard/core/task_group.hpp>
#include <switchboard/http/client.hpp>
#include <switchboard/http/sse_parser.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace switchboard::transport {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using http::Fields;
using http::SseEvent;
using jsonrpc::Received;
namespace bhttp = boost::beast::http;

namespace {

struct SseState : std::enable_shared_from_this<SseState> {
    SseState(asio::any_io_executor e, HttpClientOptions o)
        : ex(e),
          opts(std::move(o)),
          inbox(e),
          client(std::make_shared<http::Client>(e, client_options(opts))),
          parser(opts.max_message_size),
          tasks(e) {}

    asio::any_io_executor ex;
    HttpClientOptions opts;
    detail::MessageQueue inbox;  // what read() hands out; ended when `closed` is set
    std::shared_ptr<http::Client> client;
    http::Url url, endpoint;
    std::unique_ptr<http::Exchange> stream;
    http::SseParser parser;
    core::TaskGroup tasks;  // the GET stream pump: close() cancels and joins it
    bool closed = false;

    const std::string& name() const { return opts.server_name; }

    void push(Received r) { inbox.push(std::move(r)); }

    void finish(std::string reason) {
        if (closed) return;
        closed = true;
        inbox.end(client->scrub(std::move(reason)));
        client->close();
    }

    // Events in the parser; false when the endpoint event was seen and `stop_at_endpoint`.
    void drain(bool stop_at_endpoint, std::optional<std::string>& endpoint_ref) {
        SseEvent ev;
        while (parser.next(ev)) {
            if (ev.kind == SseEvent::Kind::oversize) {
                detail::push_oversize(inbox, name(), ev, opts.max_message_size);
            } else if (ev.type == "endpoint") {
                endpoint_ref = std::string(ev.data);
                if (stop_at_endpoint) return;
            } else if (ev.type == "message") {
                push(Received{Received::Kind::message, std::string(ev.data), 0, {}, {}, {}, nullptr});
            }
        }
    }

    awaitable<void> pump() {
        auto self = shared_from_this();
        std::optional<std::string> ignored;
        drain(false, ignored);  // what arrived with the endpoint event
        for (;;) {
            auto piece = co_await stream->read_some();
            if (closed) co_return;
            if (!piece) {
                finish(piece.error().message);
                co_return;
            }
            if (piece->empty()) {
                finish(fmt::format("server \"{}\" ended the SSE stream", name()));
                co_return;
            }
            parser.feed(*piece);
            drain(false, ignored);
        }
    }

    awaitable<boost::system::error_code> write(std::string message) {
        if (closed) co_return asio::error::make_error_code(asio::error::not_connected);
        Fields f;
        f.emplace_back("Content-Type", "application/json");
        std::string id_json;
        boost::system::error_code parse_ec;
        if (auto v = json::parse(message, parse_ec); !parse_ec && v.is_object())
            if (const auto* id = v.get_object().if_contains("id"); id && v.get_object().contains("method"))
                id_json = json::serialize(*id);
        auto r = co_await client->send(endpoint, bhttp::verb::post, std::move(message), std::move(f));
        std::string problem;
        if (!r) {
            if (r.error().kind == http::Failure::Kind::connect || r.error().kind == http::Failure::Kind::tls) {
                finish(r.error().message);
                co_return boost::system::error_code{};
            }
            problem = r.error().message;
        } else {
            auto body = co_await (*r)->read_all(64 * 1024);
            if ((*r)->status() / 100 != 2)
                problem =
                    fmt::format("server \"{}\" refused a message: {}{}{}", name(),
                                http::status_text((*r)->status(), (*r)->reason()), body && !body->empty() ? ": " : "",
                                body ? jsonrpc::preview(*body, 200) : std::string());
        }
        if (!problem.empty()) {
            problem = client->scrub(std::move(problem));
            spdlog::warn("[{}] {}", name(), problem);
            if (!id_json.empty())
                inbox.push_message(detail::error_response(id_json, jsonrpc::code::transport_error, std::move(problem)));
        }
        co_return boost::system::error_code{};
    }

    // For StateChannel: close() ends the stream and waits for the pump; abandon() (on destruction) does not wait.
    awaitable<void> close() {
        finish("closed");
        co_await tasks.shutdown();
    }
    void abandon() {
        finish("closed");
        tasks.cancel();
    }
};

using SseChannel = detail::StateChannel<SseState>;

}  // namespace

awaitable<jsonrpc::Outcome<std::shared_ptr<jsonrpc::Channel>>> connect_sse_channel(asio::any_io_executor ex,
                                                                                   std::string url_text,
                                                                                   HttpClientOptions options) {
    auto st = std::make_shared<SseState>(ex, std::move(options));
    const std::string name = st->name();
    auto error = [&](std::string why) {
        return jsonrpc::Error::make_local(jsonrpc::code::transport_error, st->client->scrub(std::move(why)));
    };
    std::string url_error;
    auto url = http::parse_url(url_text, url_error);
    if (!url) co_return error(fmt::format("server \"{}\": {}", name, url_error));
    st->url = *url;

    // The whole set-up (connect, the stream's header, the endpoint event) within the connect timeout.
    auto timed_out = std::make_shared<bool>(false);
    auto limit = std::make_shared<asio::steady_timer>(ex, st->opts.connect_timeout);
    limit->async_wait([weak = std::weak_ptr<SseState>(st), timed_out](boost::system::error_code ec) {
        if (ec) return;
        *timed_out = true;
        if (auto s = weak.lock()) s->client->close();
    });
    Fields f;
    f.emplace_back("Accept", "text/event-stream");
    auto r = co_await st->client->send(*url, bhttp::verb::get, std::string(), std::move(f));
    const auto wait_text = fmt::format("{} ms", st->opts.connect_timeout.count());
    if (!r) {
        limit->cancel();
        co_return error(*timed_out ? fmt::format("server \"{}\": no answer from {} within {}", name,
                                                 http::redact_url(*url), wait_text)
                                   : r.error().message);
    }
    st->stream = std::move(*r);
    auto& x = *st->stream;
    if (x.status() / 100 != 2 || x.media_type() != "text/event-stream") {
        limit->cancel();
        co_return error(fmt::format("server \"{}\": GET {} answered {} ({}), not an SSE stream", name,
                                    http::redact_url(*url), http::status_text(x.status(), x.reason()),
                                    x.header("Content-Type").empty() ? "no content type" : x.header("Content-Type")));
    }
    std::optional<std::string> endpoint;
    while (!endpoint) {
        auto piece = co_await x.read_some();
        if (!piece || piece->empty()) {
            limit->cancel();
            if (*timed_out)
                co_return error(fmt::format("server \"{}\" sent no endpoint event within {}", name, wait_text));
            co_return error(piece ? fmt::format("server \"{}\" ended the SSE stream before the endpoint event", name)
                                  : piece.error().message);
        }
        st->parser.feed(*piece);
        st->drain(true, endpoint);
    }
    limit->cancel();
    auto resolved = http::resolve_reference(*url, *endpoint, url_error);
    if (!resolved) co_return error(fmt::format("server \"{}\" sent a bad endpoint: {}", name, url_error));
    if (resolved->origin() != url->origin())
        co_return error(
            fmt::format("server \"{}\" sent an endpoint on another origin ({}); refused", name, resolved->origin()));
    st->endpoint = std::move(*resolved);
    spdlog::debug("[{}] HTTP+SSE endpoint: {}", name, http::redact_url(st->endpoint));
    st->tasks.spawn(st->pump(), fmt::format("[{}] SSE transport", name));
    co_return std::shared_ptr<jsonrpc::Channel>(std::make_shared<SseChannel>(st));
}

}  // namespace switchboard::transport
