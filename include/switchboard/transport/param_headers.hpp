// SEP-2243 custom headers (2026-07-28, Streamable HTTP): a tool's inputSchema may mark properties with
// `x-mcp-header: Name`, and a client mirrors their values into `Mcp-Param-Name` headers on tools/call. A tool whose
// annotations break the rules (empty or non-token name, duplicate names ignoring case, a non-primitive or `number`
// property, a property not reachable through `properties` alone) must be left out of tools/list.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchboard::transport {

struct ParamHeader {
    std::vector<std::string> path;  ///< property names from the schema root to the annotated property
    std::string name;               ///< the x-mcp-header value; the header is `Mcp-Param-<name>`
};

struct ParamHeaderSpec {
    std::vector<ParamHeader> headers;
    std::string error;  ///< non-empty: the tool definition is invalid, and why
};

/// Reads and validates every `x-mcp-header` annotation of `input_schema`.
ParamHeaderSpec parse_param_headers(const boost::json::value& input_schema);

/// The `Mcp-Param-*` header fields for a call's `arguments`; a header whose value is absent or null is omitted.
std::vector<std::pair<std::string, std::string>> param_header_fields(const std::vector<ParamHeader>& headers,
                                                                     const boost::json::value& arguments);

/// The spec's header value encoding: the value itself when it is visible ASCII (spaces inside only), else
/// `=?base64?<Base64 of the UTF-8>?=` (also for a plain value that looks like that form).
std::string encode_header_value(std::string_view value);

}  // namespace switchboard::transport
