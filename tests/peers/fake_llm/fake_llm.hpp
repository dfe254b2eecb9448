// switchboard-fake-llm: a scripted OpenAI-compatible server for tests. Each POST /chat/completions is answered with the
// next response of the script, in the wire format of the dialect it names (dialects.cpp).
#pragma once

#include <boost/json/object.hpp>

#include <string>
#include <vector>

namespace fake_llm {

/// One scripted answer as SSE `data:` payloads (ending with "[DONE]"), or one JSON body when not streamed.
struct Answer {
    std::vector<std::string> events;
    std::string body;  // the non-streamed shape
};

/// `response`: {"dialect","content","reasoning","toolCalls":[{"name","arguments","id"}],"finishReason","usage",
/// "noToolCallIds","argumentsAsObject","errorMidStream"}. `request` is what the client sent (model, stream_options).
Answer make_answer(const boost::json::object& response, const boost::json::object& request, int sequence);

}  // namespace fake_llm
