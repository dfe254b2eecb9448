// JSON-RPC error objects and the Outcome type every fallible async call returns.
//
// Thread-safety: plain values.
#pragma once

#include <boost/assert/source_location.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <string>

namespace switchboard::jsonrpc {

namespace code {
// JSON-RPC 2.0.
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
// MCP.
inline constexpr int resource_not_found_legacy = -32002;
inline constexpr int header_mismatch = -32020;
inline constexpr int missing_required_client_capability = -32021;
inline constexpr int unsupported_protocol_version = -32022;
inline constexpr int url_elicitation_required = -32042;

// Local errors: raised here, never received from a peer. Outside the JSON-RPC range so they cannot be mistaken
// for the peer's (the 2026-07-28 spec asks for that).
inline constexpr int timeout = -1;
inline constexpr int cancelled = -2;
inline constexpr int connection_closed = -3;
inline constexpr int protocol_violation = -4;  ///< the peer sent something we cannot use
inline constexpr int transport_error = -5;
}  // namespace code

/// A JSON-RPC error, from the peer (`local == false`) or raised by this process.
struct Error {
    // Constructors (not an aggregate) so that Outcome<bool> and friends stay unambiguous.
    Error() = default;
    Error(int c, std::string msg, boost::json::value d = nullptr, bool is_local = false)
        : code(c), message(std::move(msg)), data(std::move(d)), local(is_local) {}

    int code = code::internal_error;
    std::string message;
    boost::json::value data;  ///< null when absent
    bool local = false;

    static Error make_local(int c, std::string msg) { return Error{c, std::move(msg), {}, true}; }

    /// Human-readable, e.g. "Method not found (-32601)" or "timed out after 30 s".
    std::string describe() const;

    boost::json::object to_json() const;
    static Error from_json(const boost::json::value& v);
};

[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc);

/// Exception form of Error, thrown only by Outcome::value() on misuse.
class ErrorException : public std::runtime_error {
public:
    explicit ErrorException(Error e) : std::runtime_error(e.describe()), error_(std::move(e)) {}
    const Error& error() const noexcept { return error_; }

private:
    Error error_;
};

/// Result of a fallible call: a value or an Error.
template <class T>
using Outcome = boost::system::result<T, Error>;

}  // namespace switchboard::jsonrpc
