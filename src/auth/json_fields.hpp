// Reading the loosely typed JSON of OAuth documents (metadata, token responses, the token file). Private to auth.
#pragma once

#include <switchboard/core/json_number.hpp>

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
    if (auto n = core::json_integer(*v)) return *n;
    if (v->is_string()) return core::clamp_to_int64(std::strtod(v->get_string().c_str(), nullptr));
    return 0;
}

}  // namespace switchboard::auth::detail
