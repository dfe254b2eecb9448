// A conversation's messages in the OpenAI chat-completions shape, plus what Switchboard keeps beside them: the
// model's reasoning (shown apart, never sent back as content), usage and timings of the turn that produced them.
//
// to_openai() is what goes into a request; to_json()/from_json() is the complete record (the store keeps it).
//
// Thread-safety: plain values.
#pragma once

#include <switchboard/llm/tool_result.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::llm {

enum class Role { system, user, assistant, tool };
std::string_view to_string(Role r);
std::optional<Role> role_from_string(std::string_view s);

/// Token counts as the endpoint reported them (absent when it did not).
struct Usage {
    std::int64_t prompt_tokens = 0;
    std::int64_t completion_tokens = 0;
    /// Saturating: the counts come from the endpoint, and a sum that overflows would be undefined behaviour.
    Usage& operator+=(const Usage& o) {
        add(prompt_tokens, o.prompt_tokens);
        add(completion_tokens, o.completion_tokens);
        return *this;
    }
    bool operator==(const Usage&) const = default;

private:
    static void add(std::int64_t& to, std::int64_t n) {
        if (__builtin_add_overflow(to, n, &to)) to = n > 0 ? INT64_MAX : INT64_MIN;
    }
};

/// How long one model turn took, measured by the client.
struct Timings {
    std::int64_t first_byte_ms = 0;  ///< request sent → first response byte (after retries)
    std::int64_t total_ms = 0;       ///< request sent → last byte
    int attempts = 1;                ///< 1 + retries
    bool operator==(const Timings&) const = default;
};

struct Message {
    Role role = Role::user;
    std::vector<MessagePart> content;
    std::string reasoning;             ///< assistant: reasoning_content, kept apart
    std::vector<ToolCall> tool_calls;  ///< assistant
    std::string tool_call_id;          ///< tool
    std::string name;                  ///< tool: the function name that was called
    std::optional<Usage> usage;        ///< assistant: the turn's usage
    std::optional<Timings> timings;    ///< assistant: the turn's timings

    static Message system(std::string text);
    static Message user(std::string text);
    static Message assistant(std::string text);
    /// A tool message from an executed call (its parts; a plain string when all are text).
    static Message tool(const ToolExecutionResult& result);

    /// The text parts joined (media described as "[image/png, N bytes]").
    std::string text() const;

    /// The request shape: {"role", "content", "tool_calls", "tool_call_id"}; reasoning is never included. Content is a
    /// string when every part is text; an assistant message with tool calls and no text has content null.
    boost::json::object to_openai() const;
    /// Everything, for storage: to_openai() plus "reasoning", "usage", "timings", "name".
    boost::json::object to_json() const;
    /// Reads to_json() output (and plain OpenAI messages). nullopt when there is no valid role.
    static std::optional<Message> from_json(const boost::json::value& v);

    bool operator==(const Message&) const;
};

}  // namespace switchboard::llm
