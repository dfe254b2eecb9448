// The OpenAI-compatible client: POST {baseUrl}/chat/completions (streamed over SSE with
// stream_options.include_usage, or the non-streamed fallback) and GET {baseUrl}/models, over http::Client.
//
// Retries with backoff on 429 and 5xx, and on connection failures before any response byte, honouring Retry-After
// (seconds or an HTTP date), at most Settings::max_retries times; a failure once the answer has started streaming is
// not retried (the caller already showed part of it): it is an error carrying the partial message.
//
// Cancellation: cancelling the awaiting coroutine (Asio per-operation cancellation, e.g. Ctrl-C) closes the
// connection at once and returns Error::Kind::cancelled with what had arrived.
//
// Errors say what the endpoint said (status and an excerpt of its body) and never contain the API key.
//
// Thread-safety: single owner, on its executor.
#pragma once

#include <switchboard/llm/message.hpp>
#include <switchboard/llm/settings.hpp>
#include <switchboard/llm/stream_assembler.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <switchboard/core/trace.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::http {
class Client;
}

namespace switchboard::llm {

namespace detail {
struct Chat;  // one chat() in flight (client.cpp)
}

/// The endpoint said the request is larger than the model's context window (llama-server's
/// exceed_context_size_error, OpenAI's context_length_exceeded, vLLM's "maximum context length is N tokens").
struct ContextOverflow {
    std::optional<std::int64_t> window;  ///< the window in tokens, when the answer says it
};

struct Error {
    enum class Kind {
        not_configured,  ///< no baseUrl or model
        connect,         ///< could not reach the endpoint (after retries)
        status,          ///< an HTTP error status (after retries for 429/5xx)
        timeout,         ///< no byte for Settings::timeout
        stream_cut,      ///< the connection ended before the response was complete
        bad_response,    ///< not a chat completion (bad JSON, an error object mid-stream)
        cancelled,
    } kind = Kind::connect;
    unsigned status = 0;  ///< HTTP status, when there was one
    std::string message;  ///< "llm http://127.0.0.1:8080/v1: HTTP 500: {\"error\":...}" (key never included)
    /// What had arrived before the failure (an answer cut mid-stream); nullopt when nothing had.
    std::optional<Message> partial;
    /// Kind::status: the answer says the request did not fit the context window.
    std::optional<ContextOverflow> context_overflow;
};

template <class T>
using Result = boost::system::result<T, Error>;
[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc);

struct ChatRequest {
    std::vector<Message> messages;
    boost::json::array tools;  ///< OpenAI function tools; empty: none sent
    std::string model;         ///< empty: Settings::model
    /// Extra top-level fields merged into the request body (e.g. stop sequences from a sampling request).
    boost::json::object extra;
    /// The span the request belongs to (an agent's run, a fork): its `chat {model}` span is a child.
    trace::SpanContext trace;
};

struct ChatResponse {
    Message message;            ///< role assistant, with usage and timings filled in
    std::string finish_reason;  ///< as sent; a turn with tool calls is a tool turn whatever this says
    /// The turn's `chat {model}` span: the parent of the tool calls it asks for (which model turn asked).
    trace::SpanContext trace;
};

struct ModelInfo {
    std::string id;
    std::string owned_by;
    std::optional<std::int64_t> context_window;  ///< when the endpoint says (llama-server meta.n_ctx_train, ...)
};

class Client {
public:
    Client(boost::asio::any_io_executor ex, Settings settings);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    const Settings& settings() const { return settings_; }
    void set_model(std::string model) { settings_.model = std::move(model); }

    /// One model turn. `callbacks` see the answer as it streams in.
    boost::asio::awaitable<Result<ChatResponse>> chat(ChatRequest request, StreamCallbacks callbacks);
    /// GET {baseUrl}/models.
    boost::asio::awaitable<Result<std::vector<ModelInfo>>> models();

    /// The JSON body chat() would send (for tests and for measuring what tool definitions cost).
    std::string request_body(const ChatRequest& request) const;

    /// Closes idle connections; an exchange in progress ends with Kind::cancelled.
    void close();

private:
    std::shared_ptr<http::Client> make_http() const;

    boost::asio::any_io_executor ex_;
    Settings settings_;
    std::shared_ptr<http::Client> http_;
    std::vector<std::weak_ptr<detail::Chat>> active_;  // for close()
};

/// Reads an error answer (status and body) as a context overflow; nullopt when it is something else.
std::optional<ContextOverflow> parse_context_overflow(unsigned status, std::string_view body);

/// Whether a retry can help: 408, 429 and 5xx (but 501 and 505).
bool retryable_status(unsigned status);
/// A Retry-After value, in seconds or as an HTTP date (relative to `now`); nullopt when it is neither.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now);
/// The wait before retry `attempt` (0-based): Retry-After when given, else backoff; never more than `max`.
std::chrono::milliseconds retry_delay(int attempt, std::optional<std::chrono::milliseconds> retry_after,
                                      std::chrono::milliseconds max);

}  // namespace switchboard::llm
