// Integers read from JSON that someone else wrote. A plain cast of a double such as 1e300 to an integer is undefined
// behaviour, and peers do send such numbers (a fuzzer found `"index": 1e300` in an LLM stream), so every reader of
// an outside integer goes through these.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>

namespace switchboard::core {

/// `v` as an integer: int64 as is; uint64 and doubles clamped to int64's range, a double's fraction dropped;
/// nullopt for NaN and for anything that is not a number.
std::optional<std::int64_t> json_integer(const boost::json::value& v);

/// `v` as an integer only when it is exactly one within int64's range (5000.0 is, 1.5 and 1e300 are not).
std::optional<std::int64_t> json_exact_integer(const boost::json::value& v);

/// `d` clamped to int64's range, the fraction dropped; 0 for NaN.
std::int64_t clamp_to_int64(double d);

}  // namespace switchboard::core
