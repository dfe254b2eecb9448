// JSON-RPC error objects and the Outcome type every fallible async call returns.
//
// Thread-safety: plain values.
#pragma once

#include <boost/assert/source_location.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <exception>
#include <string>
#include <system_error>

namespace switchboard::jsonrpc {

/// Error codes: JSON-RPC 2.0, MCP, and local ones (raised here, never received from a peer; outside the JSON-RPC
/// range so they cannot be mistaken for the peer's, as the 2026-07-28 spec asks). The values are the wire values.
/// `Code` converts to std::error_code through error_category().
enum class Code : int {
    // JSON-RPC 2.0.
    parse_error = -32700,
    invalid_request = -32600,
    method_not_found = -32601,
    invalid_params = -32602,
    internal_error = -32603,
    // MCP.
    resource_not_found_legacy = -32002,
    header_mismatch = -32020,
    missing_required_client_capability = -32021,
    unsupported_protocol_version = -32022,
    url_elicitation_required = -32042,
    // Local.
    timeout = -1,
    cancelled = -2,
    connection_closed = -3,
    protocol_violation = -4,  ///< the peer sent something we cannot use
    transport_error = -5,
    unavailable = -6,  ///< the peer is there but cannot answer now (a stopped server process)
};

/// The category of Code ("jsonrpc"); message() names the code.
const std::error_category& error_category() noexcept;
inline std::error_code make_error_code(Code c) noexcept { return {static_cast<int>(c), error_category()}; }

/// The codes as plain ints, the type of Error::code and of the wire: `Error{code::invalid_params, ...}`.
namespace code {
inline constexpr int parse_error = static_cast<int>(Code::parse_error);
inline constexpr int invalid_request = static_cast<int>(Code::invalid_request);
inline constexpr int method_not_found = static_cast<int>(Code::method_not_found);
inline constexpr int invalid_params = static_cast<int>(Code::invalid_params);
inline constexpr int internal_error = static_cast<int>(Code::internal_error);
inline constexpr int resource_not_found_legacy = static_cast<int>(Code::resource_not_found_legacy);
inline constexpr int header_mismatch = static_cast<int>(Code::header_mismatch);
inline constexpr int missing_required_client_capability = static_cast<int>(Code::missing_required_client_capability);
inline constexpr int unsupported_protocol_version = static_cast<int>(Code::unsupported_protocol_version);
inline constexpr int url_elicitation_required = static_cast<int>(Code::url_elicitation_required);
inline constexpr int timeout = static_cast<int>(Code::timeout);
inline constexpr int cancelled = static_cast<int>(Code::cancelled);
inline constexpr int connection_closed = static_cast<int>(Code::connection_closed);
inline constexpr int protocol_violation = static_cast<int>(Code::protocol_violation);
inline constexpr int transport_error = static_cast<int>(Code::transport_error);
inline constexpr int unavailable = static_cast<int>(Code::unavailable);
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
    /// What a request's answer is when its handler threw `e`: an internal error naming it.
    static Error from_exception(const std::exception& e) {
        return Error{code::internal_error, std::string("Internal error: ") + e.what(), {}, false};
    }

    /// The code in error_category(); codes the enum does not name keep their value.
    std::error_code error_code() const noexcept { return {code, error_category()}; }

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

template <>
struct std::is_error_code_enum<switchboard::jsonrpc::Code> : std::true_type {};
