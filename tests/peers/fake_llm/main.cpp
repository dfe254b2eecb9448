// switchboard-fake-llm SCRIPT [--port N]: replays SCRIPT (a JSON array of responses, or {"responses": [...],
// "models": [...]}) to successive POST /v1/chat/completions, one response each, then answers 500. Prints the port on
// its first stdout line and "listening on http://127.0.0.1:PORT/v1" on stderr.
//
// A response, besides what dialects.cpp reads: "status" (an error status) with "body" (else the dialect's own error
// body) and "retryAfter";
// "stream": false (one JSON body whatever was asked); "delayMs" before answering; "chunkDelayMs" between events;
// "cutAfterBytes" (close the connection after that many body bytes); "hangMs" (stall after "hangAfterEvents"
// events, 2 by default: the role chunk and the first piece of content; watching for the client to go away).
//
// A script object may set "contextTokens": a request whose messages and tools are over that many tokens (body bytes
// / 4) is answered 400 in the next response's dialect, as the servers word it, and the response is kept for the next
// request.
//
// For assertions: GET /_requests (every request: {"path","body","headers","clientPort"}), GET /_events ("request 1",
// "closed 1" when a client left during a hang, "cut 1", "done 1").
#include "fake_llm.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/http/server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace http = switchboard::http;
namespace bhttp = boost::beast::http;
using asio::awaitable;
using switchboard::core::as_tuple_awaitable;

struct State {
    json::array responses;
    json::array models;
    std::size_t next = 0;
    json::array requests;
    json::array events;
    std::int64_t context_tokens = 0;
};

std::int64_t number(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_number() ? v->to_number<std::int64_t>() : 0;
}

awaitable<void> sleep_ms(std::int64_t ms) {
    if (ms <= 0) co_return;
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
    co_await t.async_wait(as_tuple_awaitable);
}

// Stalls for `ms`, watching the socket: the client closing it ends the wait early. True when the client left.
awaitable<bool> hang(http::Responder& res, std::int64_t ms) {
    struct Watch {
        bool left = false, over = false;
        char byte = 0;
    };
    auto w = std::make_shared<Watch>();
    auto conn = res.connection();
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
    conn->socket.async_read_some(asio::buffer(&w->byte, 1),
                                          [w, &t](boost::system::error_code ec, std::size_t) {
                                              if (w->over) return;
                                              w->left = ec.failed();
                                              if (w->left) t.cancel();
                                          });
    co_await t.async_wait(as_tuple_awaitable);
    w->over = true;
    if (!w->left) conn->socket.cancel();
    co_return w->left;
}

json::object headers_of(const http::ServerRequest& req) {
    json::object h;
    for (const auto& f : req) {
        std::string name(f.name_string());
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        h[name] = std::string(f.value());
    }
    return h;
}

// Writes `text` as body bytes, stopping after `budget` of them (then the connection is closed). False: stop.
awaitable<bool> write_limited(http::Responder& res, std::string_view text, std::int64_t& budget) {
    if (budget >= 0 && static_cast<std::int64_t>(text.size()) >= budget) {
        co_await res.write_chunk(text.substr(0, static_cast<std::size_t>(budget)), {}, {});
        budget = 0;
        boost::system::error_code ec;
        res.connection()->socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
        res.connection()->socket.close(ec);
        co_return false;
    }
    if (budget >= 0) budget -= static_cast<std::int64_t>(text.size());
    co_return co_await res.write_chunk(text, {}, {});
}

awaitable<void> chat(State& s, http::ServerRequest& req, http::Responder& res) {
    json::error_code ec;
    auto parsed = json::parse(req.body(), ec);
    json::object request = !ec && parsed.is_object() ? parsed.get_object() : json::object{};
    boost::system::error_code port_ec;
    const auto client = res.connection()->socket.remote_endpoint(port_ec);
    s.requests.push_back(json::object{{"path", std::string(req.target())},
                                      {"body", parsed},
                                      {"headers", headers_of(req)},
                                      {"clientPort", port_ec ? 0 : client.port()}});
    const auto n = static_cast<int>(s.next) + 1;
    s.events.push_back(json::string("request " + std::to_string(n)));
    if (s.next >= s.responses.size()) throw http::HttpError(bhttp::status::internal_server_error, "script exhausted");
    if (s.context_tokens > 0) {
        std::size_t prompt_bytes = 0;
        if (const auto* m = request.if_contains("messages")) prompt_bytes += json::serialize(*m).size();
        if (const auto* t = request.if_contains("tools")) prompt_bytes += json::serialize(*t).size();
        const auto prompt_tokens = static_cast<std::int64_t>(prompt_bytes / 4);
        auto body = fake_llm::context_error_body(s.responses[s.next].as_object(), s.context_tokens, prompt_tokens);
        if (prompt_tokens > s.context_tokens && !body.empty()) {
            s.events.push_back(json::string("context " + std::to_string(n)));
            http::Reply reply;
            reply.status = bhttp::status::bad_request;
            reply.body = std::move(body);
            co_await res.send(std::move(reply));
            co_return;
        }
    }
    const auto& r = s.responses[s.next++].as_object();
    co_await sleep_ms(number(r, "delayMs"));

    if (auto status = number(r, "status"); status >= 300) {
        http::Reply reply;
        reply.status = static_cast<bhttp::status>(status);
        const auto* body = r.if_contains("body");
        reply.body = !body               ? fake_llm::error_body(r, static_cast<int>(status), "scripted error")
                     : body->is_string() ? std::string(body->get_string())
                                         : json::serialize(*body);
        if (const auto* ra = r.if_contains("retryAfter"))
            reply.headers.emplace_back("Retry-After", ra->is_string() ? std::string(ra->get_string())
                                                                      : std::to_string(ra->to_number<std::int64_t>()));
        co_await res.send(std::move(reply));
        co_return;
    }
    const auto answer = fake_llm::make_answer(r, request, n);
    const auto* stream_override = r.if_contains("stream");
    const bool asked_stream =
        request.contains("stream") && request.at("stream").is_bool() && request.at("stream").get_bool();
    if (!asked_stream || (stream_override && stream_override->is_bool() && !stream_override->get_bool())) {
        http::Reply reply;
        reply.body = answer.body;
        co_await res.send(std::move(reply));
        s.events.push_back(json::string("done " + std::to_string(n)));
        co_return;
    }
    http::Fields headers;
    headers.emplace_back("Cache-Control", "no-cache");
    if (!co_await res.begin_stream("text/event-stream", headers)) co_return;
    std::int64_t budget = r.contains("cutAfterBytes") ? number(r, "cutAfterBytes") : -1;
    for (std::size_t i = 0; i < answer.events.size(); ++i) {
        if (i > 0) co_await sleep_ms(number(r, "chunkDelayMs"));
        const auto& e = answer.events[i];
        const bool raw = e.starts_with(":") || e.starts_with("event:");
        const auto event = (raw ? e : "data: " + e) + "\n\n";
        const bool ok = co_await write_limited(res, event, budget);
        if (!ok) {
            s.events.push_back(json::string((budget == 0 ? "cut " : "closed ") + std::to_string(n)));
            co_return;
        }
        const auto hang_after = r.contains("hangAfterEvents") ? number(r, "hangAfterEvents") : 2;
        if (static_cast<std::int64_t>(i) + 1 == hang_after && number(r, "hangMs") > 0) {
            const bool left = co_await hang(res, number(r, "hangMs"));
            if (left) {
                s.events.push_back(json::string("closed " + std::to_string(n)));
                co_return;
            }
        }
    }
    co_await res.end_stream();
    s.events.push_back(json::string("done " + std::to_string(n)));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: switchboard-fake-llm SCRIPT [--port N]\n");
        return 2;
    }
    std::signal(SIGPIPE, SIG_IGN);
    std::ifstream in(argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    json::error_code ec;
    auto script = json::parse(text.str(), ec);
    if (ec) {
        std::fprintf(stderr, "switchboard-fake-llm: %s: %s\n", argv[1], ec.message().c_str());
        return 2;
    }
    State s;
    if (script.is_array()) {
        s.responses = script.get_array();
    } else if (script.is_object()) {
        if (const auto* r = script.get_object().if_contains("responses"); r && r->is_array())
            s.responses = r->get_array();
        if (const auto* m = script.get_object().if_contains("models"); m && m->is_array()) s.models = m->get_array();
        if (const auto* c = script.get_object().if_contains("contextTokens"); c && c->is_int64())
            s.context_tokens = c->get_int64();
    }
    if (s.models.empty())
        s.models.push_back(json::object{
            {"id", "fake-model"}, {"object", "model"}, {"owned_by", "switchboard"}, {"meta", {{"n_ctx_train", 4096}}}});

    http::ServerOptions options;
    options.name = "fake-llm";
    for (int i = 2; i + 1 < argc; ++i)
        if (std::string_view(argv[i]) == "--port") options.port = static_cast<std::uint16_t>(std::stoi(argv[i + 1]));

    http::Router routes;
    auto chat_route = [&s](http::ServerRequest& req, http::Responder& res) { return chat(s, req, res); };
    routes.add(bhttp::verb::post, "/v1/chat/completions", chat_route);
    routes.add(bhttp::verb::post, "/chat/completions", chat_route);
    auto models = [&s](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        json::object body{{"object", "list"}, {"data", s.models}};
        http::Reply reply;
        reply.body = json::serialize(body);
        co_await res.send(std::move(reply));
    };
    routes.add(bhttp::verb::get, "/v1/models", models);
    routes.add(bhttp::verb::get, "/models", models);
    routes.add(bhttp::verb::get, "/_requests", [&s](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        http::Reply reply;
        reply.body = json::serialize(s.requests);
        co_await res.send(std::move(reply));
    });
    routes.add(bhttp::verb::get, "/_events", [&s](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
        http::Reply reply;
        reply.body = json::serialize(s.events);
        co_await res.send(std::move(reply));
    });

    asio::io_context ctx;
    http::Server server(ctx.get_executor(), std::move(routes), options);
    if (auto e = server.listen()) {
        std::fprintf(stderr, "switchboard-fake-llm: listen: %s\n", e.message().c_str());
        return 1;
    }
    std::printf("%u\n", server.port());
    std::fflush(stdout);
    std::fprintf(stderr, "listening on http://127.0.0.1:%u/v1\n", server.port());
    asio::co_spawn(ctx, server.run(), asio::detached);
    ctx.run();
}
