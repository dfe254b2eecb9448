// A context's tools in the OpenAI function-tool format, with input schemas normalised so that strict endpoints
// (OpenAI strict mode, llama-server's grammar, vLLM's guided decoding) accept them: the top level is an object schema
// with `properties` present; `$schema` and `$id` are dropped (several endpoints reject unknown keywords there).
//
// Thread-safety: pure functions.
#pragma once

#include <switchboard/host/tool_index.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace switchboard::agent {

boost::json::object normalise_schema(const boost::json::object& schema);
/// {"type":"function","function":{"name","description","parameters"}} for every tool of the index, in its order.
boost::json::array openai_tools(const host::ToolIndex& index);

}  // namespace switchboard::agent
