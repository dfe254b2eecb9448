// Runs one tool call of a model through a context: resolve the exposed name, parse the arguments, call, format the
// result. Never fails: an unknown tool, arguments that are not a JSON object, a server error or a cancellation all
// become a result the model can read (ToolExecutionResult::Status says which).
//
// Thread-safety: on the context's executor.
#pragma once

#include <switchboard/host/context.hpp>
#include <switchboard/llm/tool_result.hpp>

#include <boost/asio/awaitable.hpp>

namespace switchboard::agent {

boost::asio::awaitable<llm::ToolExecutionResult> execute_tool(host::Context& context, llm::ToolCall call,
                                                              host::ToolCallOptions options);

/// Media parts replaced by a short description ("[image/png, 70 KiB: not shown, the model is not vision-capable]"),
/// for models that take text only.
std::vector<llm::MessagePart> describe_media(std::vector<llm::MessagePart> parts);

}  // namespace switchboard::agent
