// Builds one assistant message from the chunks of a streamed chat completion, whatever the server's dialect:
// - tool calls assembled by `index`; `name` and `id` sent once and `arguments` in fragments (OpenAI, llama-server
//   with --jinja); a whole call in one chunk without `index` (older Ollama: each such call is a new one);
// - an id that never comes (vLLM) becomes `call_<index>`;
// - tool calls with finish_reason "stop" (Ollama, some OpenAI models) are still a tool turn;
// - `reasoning_content` (llama-server, vLLM, DeepSeek) and `reasoning` (Ollama, OpenRouter) kept apart;
// - the usage chunk (stream_options.include_usage: empty choices) and llama-server's `timings`;
// - OpenAI's `refusal` deltas shown as content; errors as {"error": ...} or old vLLM's {"object": "error"}.
// Not handled: `<think>` tags in content (llama-server with --reasoning-format none, or a model without a reasoning
// parser) stay in the content, as the server was configured to send them; only choice 0 is read (n > 1 is never
// asked for).
// The same class reads a whole non-streamed response (add_response).
//
// Thread-safety: single owner; pure (no I/O).
#pragma once

#include <switchboard/llm/message.hpp>

#include <boost/json/object.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::llm {

/// What a caller sees while a turn streams in.
struct StreamCallbacks {
    std::function<void(std::string_view)> on_content;
    std::function<void(std::string_view)> on_reasoning;
    /// A tool call's name became known (its arguments may still be coming).
    std::function<void(const ToolCall&)> on_tool_call;
};

class StreamAssembler {
public:
    explicit StreamAssembler(StreamCallbacks callbacks = {}) : callbacks_(std::move(callbacks)) {}

    /// One `data:` payload of the stream, parsed. Returns an error message for a chunk that is not a chat completion
    /// chunk (an `{"error": ...}` object sent mid-stream, say); the caller decides whether that ends the turn.
    std::optional<std::string> add_chunk(const boost::json::object& chunk);
    /// A whole non-streamed response ({"choices":[{"message":...,"finish_reason"}], "usage"}).
    std::optional<std::string> add_response(const boost::json::object& response);

    /// Whether any content, reasoning or tool call has arrived.
    bool started() const { return started_; }
    /// The finish_reason seen ("stop", "tool_calls", "length", ...); empty when the stream did not say.
    const std::string& finish_reason() const { return finish_reason_; }
    const std::optional<Usage>& usage() const { return usage_; }
    /// The message so far: content, reasoning, tool calls in index order with ids filled in.
    Message message() const;
    /// Whether this is a tool turn: there are tool calls, whatever finish_reason says.
    bool has_tool_calls() const { return !calls_.empty(); }

private:
    struct PartialCall {
        int index = 0;
        ToolCall call;
        bool announced = false;
    };
    PartialCall& call_at(int index);
    void add_delta_tool_calls(const boost::json::array& calls);

    StreamCallbacks callbacks_;
    std::string content_;
    std::string reasoning_;
    std::vector<PartialCall> calls_;  // in order of first appearance
    std::string finish_reason_;
    std::optional<Usage> usage_;
    bool started_ = false;
    int next_unindexed_ = 0;           // index given to calls that come without one
    bool usage_from_timings_ = false;  // usage_ came from llama-server's `timings`, not a `usage` object
};

}  // namespace switchboard::llm
