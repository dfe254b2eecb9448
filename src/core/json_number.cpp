#include <switchboard/core/json_number.hpp>

#include <cmath>
#include <limits>

namespace switchboard::core {

namespace {
constexpr auto int64_max = std::numeric_limits<std::int64_t>::max();
constexpr auto int64_min = std::numeric_limits<std::int64_t>::min();
// 2^63 exactly: every double below it (and at or above -2^63) converts without overflow.
constexpr double two_to_63 = 9223372036854775808.0;
}  // namespace

std::int64_t clamp_to_int64(double d) {
    if (std::isnan(d)) return 0;
    if (d >= two_to_63) return int64_max;
    if (d < -two_to_63) return int64_min;
    return static_cast<std::int64_t>(d);
}

std::optional<std::int64_t> json_integer(const boost::json::value& v) {
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64())
        return v.get_uint64() > static_cast<std::uint64_t>(int64_max) ? int64_max
                                                                      : static_cast<std::int64_t>(v.get_uint64());
    if (v.is_double() && !std::isnan(v.get_double())) return clamp_to_int64(v.get_double());
    return std::nullopt;
}

std::optional<std::int64_t> json_exact_integer(const boost::json::value& v) {
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64()) {
        if (v.get_uint64() > static_cast<std::uint64_t>(int64_max)) return std::nullopt;
        return static_cast<std::int64_t>(v.get_uint64());
    }
    if (v.is_double()) {
        const double d = v.get_double();
        if (!(d >= -two_to_63 && d < two_to_63) || std::trunc(d) != d) return std::nullopt;
        return static_cast<std::int64_t>(d);
    }
    return std::nullopt;
}

}  // namespace switchboard::core
