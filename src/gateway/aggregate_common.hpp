// What the files of gateway::AggregateHandler share: their names for the JSON-RPC types, and strip_upstream_meta.
// The files: aggregate_handler.cpp (creation, capabilities, events, errors, and Gateway), aggregate_tools.cpp,
// aggregate_resources.cpp, aggregate_prompts.cpp (prompts and completion).
#pragma once

#include <switchboard/gateway/aggregate_handler.hpp>
#include <switchboard/mcp/version.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

namespace switchboard::gateway {

namespace json = boost::json;
using boost::asio::awaitable;
using jsonrpc::Error;
using jsonrpc::Outcome;
namespace code = jsonrpc::code;
using Reply = mcp::ServerHandler::Reply<json::object>;

namespace detail {

// What an upstream adds to a result for its own era; the gateway's session adds its own.
inline void strip_upstream_meta(boost::json::object& result) {
    result.erase("resultType");
    if (auto* m = result.if_contains("_meta"); m && m->is_object()) {
        m->get_object().erase(mcp::meta::server_info);
        if (m->get_object().empty()) result.erase("_meta");
    }
}

}  // namespace detail
}  // namespace switchboard::gateway
