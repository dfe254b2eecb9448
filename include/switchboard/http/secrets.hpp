// Which header values are secrets, and how they appear in logs.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace switchboard::http {

/// True for header names whose values are secrets: Authorization, Proxy-Authorization, Cookie, and any name that
/// contains "token", "key", "secret", "password", "auth", "session" or "credential" (case-insensitive).
bool is_secret_header(std::string_view name);
/// The value as it may appear in a log: secrets become "[redacted]" (an auth scheme such as "Bearer" is kept).
std::string redact_header_value(std::string_view name, std::string_view value);

}  // namespace switchboard::http
