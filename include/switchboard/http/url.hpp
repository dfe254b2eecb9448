// Absolute http:// and https:// URLs as the client uses them: parsing, resolving a reference (a redirect's Location,
// an SSE `endpoint` event), and a form safe for logs.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace switchboard::http {

struct Url {
    bool tls = false;
    std::string host;    ///< without brackets
    std::string port;    ///< always set
    std::string target;  ///< path and query, "/" at least
    /// "https://host[:port]" (the port only when not the scheme's default).
    std::string origin() const;
    std::string text() const;
    /// The Host header value.
    std::string host_header() const;
};

/// Parses an absolute http:// or https:// URL; nullopt with `error` set otherwise.
std::optional<Url> parse_url(std::string_view text, std::string& error);
/// Resolves a reference (a redirect's Location, an `endpoint` event) against `base`.
std::optional<Url> resolve_reference(const Url& base, std::string_view ref, std::string& error);
/// The URL with secret-looking query parameters redacted, for logs and errors.
std::string redact_url(const Url& url);

/// "HTTP 404 Not Found" (the standard reason phrase when `reason` is empty).
std::string status_text(unsigned status, std::string_view reason);

}  // namespace switchboard::http
