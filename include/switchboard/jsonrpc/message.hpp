// JSON-RPC 2.0 messages: parse one text into a Message, serialize requests, notifications and responses.
//
// Thread-safety: plain values and free functions.
#pragma once

#include <switchboard/jsonrpc/error.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::jsonrpc {

/// A request id: an integer or a string (never null in MCP).
using Id = boost::json::value;

struct Message {
    enum class Kind { request, notification, response };
    Kind kind = Kind::notification;
    Id id;                       ///< request, response
    std::string method;          ///< request, notification
    boost::json::value params;   ///< request, notification (null when absent)
    boost::json::value result;   ///< response on success
    std::optional<Error> error;  ///< response on failure
};

/// Parses one JSON-RPC message. Batches are not part of MCP since 2025-06-18 and are rejected.
/// On failure returns an Error with code parse_error or invalid_request.
/// How deep a message may nest (objects and arrays): hundreds of levels for real schemas, bounded for hostile input.
inline constexpr std::size_t max_message_depth = 1000;

Outcome<Message> parse_message(std::string_view text);

std::string serialize_request(const Id& id, std::string_view method, const boost::json::value& params);

/// Members a request's params._meta gets when it is written, serialized once and reused: the 2026-07-28 `_meta` a
/// client sends with every request would otherwise be copied into each request's params and serialized again.
struct MetaMembers {
    explicit MetaMembers(const boost::json::object& members);
    std::string json;               ///< `"k":v,"k2":v2`, no braces
    std::vector<std::string> keys;  ///< where params._meta has one of these keys, ours wins
};

/// serialize_request with `meta` added to params._meta (params must be an object or null). The same JSON as merging
/// `meta` into a copy of params and serializing that; `_meta` comes last among the params.
std::string serialize_request(const Id& id, std::string_view method, const boost::json::value& params,
                              const MetaMembers& meta);
std::string serialize_notification(std::string_view method, const boost::json::value& params);
std::string serialize_result(const Id& id, const boost::json::value& result);
std::string serialize_error(const Id& id, const Error& error);

/// For logs and error messages: a text cut to `max` bytes with "…" appended when cut.
std::string preview(std::string_view text, std::size_t max = 120);

}  // namespace switchboard::jsonrpc
