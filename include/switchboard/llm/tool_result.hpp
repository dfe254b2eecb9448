// Tool calls in the OpenAI style and their results formatted for an LLM. Pure, unit-testable. The host hands out
// MCP results; this layer owns the shapes a model sees.
//
// A result keeps text, image and audio as typed parts (vision and audio models take them as such); embedded resources
// become text blocks headed with their URI; resource links are described; `structuredContent` is used as text when no
// text is given; `isError` is kept.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <switchboard/core/trace.hpp>
#include <switchboard/mcp/types.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <vector>

namespace switchboard::llm {

/// `{id, type: "function", function: {name, arguments}}`; `arguments` is the JSON text the LLM produced.
struct ToolCall {
    std::string id;
    std::string type = "function";
    std::string name;
    std::string arguments;
    /// The model turn that asked for it (its `chat` span): the call's spans are its children. Not sent.
    trace::SpanContext trace;
    /// Parses the OpenAI object; nullopt when it has no function name.
    static std::optional<ToolCall> from_json(const boost::json::value& v);
    boost::json::object to_json() const;
};

/// One part of a message: text, or base64 media with its MIME type.
struct MessagePart {
    enum class Kind { text, image, audio } kind = Kind::text;
    std::string text;       ///< text
    std::string mime_type;  ///< image, audio
    std::string data;       ///< image, audio: base64

    static MessagePart make_text(std::string t) { return MessagePart{Kind::text, std::move(t), {}, {}}; }
    /// OpenAI content part: {type:"text"}, {type:"image_url", image_url:{url:"data:..."}}, {type:"input_audio"}.
    boost::json::object to_openai() const;
    bool operator==(const MessagePart&) const = default;
};

struct ToolExecutionResult {
    /// ok and tool_error carry the server's result; the others are the host's own error text for the LLM.
    enum class Status { ok, tool_error, unknown_tool, bad_arguments, failed, cancelled };
    Status status = Status::ok;
    std::string tool_call_id;
    std::string name;    ///< the exposed name that was called
    std::string server;  ///< empty when the name did not resolve
    bool is_error = false;
    std::vector<MessagePart> parts;
    std::optional<boost::json::value> structured_content;
    boost::json::object raw;  ///< the server's CallToolResult, when there is one

    /// The text parts joined with blank lines; media described as "[image/png, 70 bytes]".
    std::string text() const;
    /// {"role":"tool","tool_call_id":id,"content":[parts]} (a plain string when every part is text).
    boost::json::object to_openai_message() const;
};

/// Formats a CallToolResult for an LLM.
std::vector<MessagePart> format_tool_content(const mcp::CallToolResult& result);
ToolExecutionResult format_tool_result(const ToolCall& call, std::string server, const mcp::CallToolResult& result);
/// An error result the LLM can read (unknown tool, bad arguments, server failure).
ToolExecutionResult error_result(const ToolCall& call, std::string server, std::string message,
                                 ToolExecutionResult::Status status = ToolExecutionResult::Status::failed);

/// A resource's contents as message parts: text under a "Resource <uri>" header; image/audio blobs as typed parts;
/// other blobs described.
std::vector<MessagePart> format_resource_contents(const std::vector<mcp::ResourceContents>& contents);

/// Parses the LLM's arguments string: "" means {}; anything but a JSON object is an error naming the problem.
std::optional<boost::json::object> parse_tool_arguments(std::string_view text, std::string& error);

}  // namespace switchboard::llm
