// Reading the loosely typed JSON of OAuth documents (metadata, token responses, the token file). Private to auth.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace switchboard::auth::detail {

/// The string member `key`, or "" when absent or not a string.
inline std::string str(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

/// The number member `key` (some servers send "3600" as a string), or 0.
inline std::int64_t num(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v) return 0;
    if (v->is_int64()) return v->get_int64();
    if (v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
    if (v->is_double()) return static_cast<std::int64_t>(v->get_double());
    if (v->is_string()) return std::atoll(v->get_string().c_str());
    return 0;
}

}  // namespace switchboard::auth::detail
