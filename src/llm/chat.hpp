// One chat() in flight, shared by the caller's coroutine (client.cpp) and the exchange that runs it (chat_run.cpp).
// The exchange runs as its own coroutine so that a cancelled caller can return at once with what had arrived, while
// the exchange winds down (the connection closed) on its own.
#pragma once

#include <switchboard/llm/client.hpp>

#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/http/client.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace switchboard::llm::detail {

struct Chat {
    Chat(std::shared_ptr<http::Client> http, Settings settings, http::Url url, std::string body,
         StreamCallbacks callbacks);

    std::shared_ptr<http::Client> http;
    Settings settings;  // a copy: the exchange may outlive the Client once its caller has gone
    http::Url url;
    std::string body;
    StreamCallbacks callbacks;
    StreamAssembler assembler;  // calls `callbacks` until cancelled
    std::shared_ptr<http::Abort> abort = std::make_shared<http::Abort>();
    core::OneShotEvent stop;  // cuts a retry wait short
    core::OneShotEvent done;
    bool cancelled = false;
    std::optional<Result<ChatResponse>> result;
    Timings timings;
    trace::Span span;  // `chat {model}`; its retries are events
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

    /// Ends the exchange now (the caller was cancelled, or the client closed).
    void cancel();
    std::int64_t elapsed_ms() const;
    /// "llm <baseUrl>: <what>", with every secret removed.
    std::string describe(std::string_view what) const;
    Error error(Error::Kind kind, unsigned status, std::string_view what) const;
    Error cancelled_error() const;
    /// What has arrived, with timings; nullopt when nothing has.
    std::optional<Message> partial() const;
};

/// Runs the exchange with its retries and sets `result` and `done`.
boost::asio::awaitable<void> run_chat(std::shared_ptr<Chat> chat);

}  // namespace switchboard::llm::detail
