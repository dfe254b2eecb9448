#include <switchboard/llm/client.hpp>

#include "chat.hpp"

#include <switchboard/core/spawn.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <algorithm>

namespace switchboard::llm {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

void throw_exception_from_error(const Error& e, const boost::source_location&) { throw std::runtime_error(e.message); }

namespace detail {

Chat::Chat(std::shared_ptr<http::Client> http_client, Settings s, http::Url u, std::string b, StreamCallbacks cb)
    : http(std::move(http_client)),
      settings(std::move(s)),
      url(std::move(u)),
      body(std::move(b)),
      callbacks(std::move(cb)) {
    // A cancelled caller has moved on: what still trickles in must not reach its callbacks.
    StreamCallbacks guarded;
    if (callbacks.on_content)
        guarded.on_content = [this](std::string_view t) {
            if (!cancelled) callbacks.on_content(t);
        };
    if (callbacks.on_reasoning)
        guarded.on_reasoning = [this](std::string_view t) {
            if (!cancelled) callbacks.on_reasoning(t);
        };
    if (callbacks.on_tool_call)
        guarded.on_tool_call = [this](const ToolCall& c) {
            if (!cancelled) callbacks.on_tool_call(c);
        };
    assembler = StreamAssembler(std::move(guarded));
}

void Chat::cancel() {
    cancelled = true;
    stop.set();
    abort->fire();
}

std::int64_t Chat::elapsed_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

std::string Chat::describe(std::string_view what) const {
    // The HTTP layer names its peer `server "llm"`; the prefix here already says which endpoint it is.
    std::string detail(what);
    for (const std::string_view tag : {std::string_view("server \"llm\": "), std::string_view("server \"llm\" ")})
        if (detail.starts_with(tag)) detail.erase(0, tag.size());
    auto text = http->scrub(fmt::format("llm {}: {}", settings.base_url, detail));
    // scrub() skips very short values; the key never appears, whatever its length.
    if (!settings.api_key.empty())
        for (auto pos = text.find(settings.api_key); pos != std::string::npos; pos = text.find(settings.api_key, pos))
            text.replace(pos, settings.api_key.size(), "[redacted]");
    return text;
}

Error Chat::error(Error::Kind kind, unsigned status, std::string_view what) const {
    return Error{kind, status, describe(what), partial(), std::nullopt};
}

Error Chat::cancelled_error() const { return error(Error::Kind::cancelled, 0, "cancelled"); }

std::optional<Message> Chat::partial() const {
    if (!assembler.started()) return std::nullopt;
    auto m = assembler.message();
    auto t = timings;
    t.total_ms = elapsed_ms();
    m.timings = t;
    return m;
}

}  // namespace detail

Client::Client(asio::any_io_executor ex, Settings settings) : ex_(std::move(ex)), settings_(std::move(settings)) {
    while (!settings_.base_url.empty() && settings_.base_url.back() == '/') settings_.base_url.pop_back();
    http_ = make_http();
}

Client::~Client() {
    for (auto& w : active_)
        if (auto c = w.lock()) c->cancel();
    if (http_) http_->close();
}

std::shared_ptr<http::Client> Client::make_http() const {
    http::ClientOptions o;
    o.server_name = "llm";
    o.headers = settings_.headers;
    // A secret header by name (http/secrets.hpp): redacted in logs, scrubbed from errors, dropped on a redirect
    // to another origin.
    if (!settings_.api_key.empty()) o.headers["Authorization"] = "Bearer " + settings_.api_key;
    o.connect_timeout = settings_.connect_timeout;
    o.read_timeout = settings_.timeout;
    return std::make_shared<http::Client>(ex_, std::move(o));
}

void Client::close() {
    for (auto& w : active_)
        if (auto c = w.lock()) c->cancel();
    active_.clear();
    if (http_) http_->close();
    http_ = make_http();  // closed for good: later calls get a fresh one
}

std::string Client::request_body(const ChatRequest& request) const {
    json::object body;
    body["model"] = request.model.empty() ? settings_.model : request.model;
    json::array messages;
    for (const auto& m : request.messages) messages.push_back(m.to_openai());
    body["messages"] = std::move(messages);
    body["stream"] = settings_.stream;
    if (settings_.stream) body["stream_options"] = {{"include_usage", true}};
    if (!request.tools.empty()) body["tools"] = request.tools;
    if (settings_.temperature) body["temperature"] = *settings_.temperature;
    if (settings_.max_tokens) body["max_tokens"] = *settings_.max_tokens;
    for (const auto& item : request.extra) body[item.key()] = item.value();
    return json::serialize(body);
}

namespace {

std::string kind_name(Error::Kind k) {
    switch (k) {
    case Error::Kind::not_configured: return "not_configured";
    case Error::Kind::connect: return "connect";
    case Error::Kind::status: return "status";
    case Error::Kind::timeout: return "timeout";
    case Error::Kind::stream_cut: return "stream_cut";
    case Error::Kind::bad_response: return "bad_response";
    case Error::Kind::cancelled: return "cancelled";
    }
    return "error";
}

// The GenAI conventions' response attributes, or the error's kind.
void end_chat_span(trace::Span& span, const Result<ChatResponse>& result) {
    if (!span.recording()) return;
    if (!result) {
        const auto& e = result.error();
        span.set_error(e.status ? std::to_string(e.status) : kind_name(e.kind), e.message);
        return;
    }
    if (const auto& u = result->message.usage) {
        span.set("gen_ai.usage.input_tokens", u->prompt_tokens);
        span.set("gen_ai.usage.output_tokens", u->completion_tokens);
    }
    if (!result->finish_reason.empty())
        span.set("gen_ai.response.finish_reasons", std::vector<std::string>{result->finish_reason});
    if (!result->message.tool_calls.empty())
        span.set("gen_ai.response.tool_calls", static_cast<std::int64_t>(result->message.tool_calls.size()));
}

}  // namespace

awaitable<Result<ChatResponse>> Client::chat(ChatRequest request, StreamCallbacks callbacks) {
    if (!settings_.configured())
        co_return Error{Error::Kind::not_configured, 0, not_configured_help(settings_), std::nullopt, std::nullopt};
    std::string url_error;
    auto url = http::parse_url(settings_.base_url + "/chat/completions", url_error);
    if (!url)
        co_return Error{Error::Kind::not_configured, 0, fmt::format("llm: bad baseUrl: {}", url_error), std::nullopt,
                        std::nullopt};
    auto chat =
        std::make_shared<detail::Chat>(http_, settings_, std::move(*url), request_body(request), std::move(callbacks));
    const auto& model = request.model.empty() ? settings_.model : request.model;
    chat->span = trace::Span::start("chat", model, trace::SpanKind::client, request.trace);
    if (chat->span.recording()) {
        chat->span.set("gen_ai.operation.name", "chat");
        chat->span.set("gen_ai.provider.name", "openai");
        chat->span.set("gen_ai.request.model", model);
        chat->span.set("server.address", chat->url.host);
        if (!request.tools.empty()) chat->span.set("gen_ai.request.tool_count", static_cast<std::int64_t>(request.tools.size()));
    }
    std::erase_if(active_, [](const auto& w) { return w.expired(); });
    active_.push_back(chat);

    asio::co_spawn(ex_, detail::run_chat(chat), [chat](std::exception_ptr e) {
        if (e) {
            core::log_exception(e, "llm chat");
            if (!chat->result) chat->result = chat->error(Error::Kind::bad_response, 0, "internal error");
        }
        chat->done.set();
    });
    // Returns when the exchange is done, or at once when this coroutine is cancelled (its slot cancels the wait).
    co_await chat->done.wait();
    if (!chat->done.is_set() || !chat->result) {
        chat->cancel();
        chat->span.set_error("cancelled", "cancelled");
        chat->span.end();
        co_return chat->cancelled_error();
    }
    auto result = std::move(*chat->result);
    end_chat_span(chat->span, result);
    if (result) result->trace = chat->span.context();
    chat->span.end();
    co_return result;
}

}  // namespace switchboard::llm
