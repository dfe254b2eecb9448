// JSON written one way only. canonical_json is RFC 8785 (JCS): members sorted by their names' UTF-16 code units,
// numbers as ECMAScript writes a double, strings with the fewest escapes, no whitespace. Two equal values give the same
// bytes however they were written (key order, 1.0 or 1, "\u0041" or "A"), which is what a hash of a definition needs.
// pretty_json is the same with line breaks and two-space indents, for files people read and diff.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace switchboard::core {

/// RFC 8785 canonical JSON. A number that is not finite (which JSON cannot hold) is written as null.
std::string canonical_json(const boost::json::value& v);
/// canonical_json(v) appended to `out`: for a writer that puts a value together from parts (host/tool_pins.cpp).
void append_canonical_json(std::string& out, const boost::json::value& v);
/// The same for an object (without making a json::value of it, which would copy it).
void append_canonical_json(std::string& out, const boost::json::object& o);
/// A string as canonical_json writes it, quotes included, appended to `out`.
void append_canonical_string(std::string& out, std::string_view s);
/// canonical_json with a line per member and element, indented by two spaces (no trailing newline).
std::string pretty_json(const boost::json::value& v);

}  // namespace switchboard::core
