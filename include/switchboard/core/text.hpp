// Small text helpers used across layers: sizes for messages, ASCII case folding, shortening for previews.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace switchboard::core {

/// "512 bytes", "4.0 KiB", "64 MiB" (whole MiB without a decimal), "1.5 MiB".
std::string size_text(std::size_t bytes);

/// ASCII lower case; other bytes unchanged (header names, URL schemes, MIME types).
std::string ascii_lower(std::string_view text);

/// Case-insensitive ASCII comparison. Inline, with a byte-equal fast path: header names are looked up many times a
/// request, and most are sent in the case they are asked for.
inline bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const char x = a[i], y = b[i];
        if (x == y) continue;
        const char lx = static_cast<char>(x | 0x20);  // a letter in either case, lower; checked to be a letter below
        if (lx != static_cast<char>(y | 0x20) || lx < 'a' || lx > 'z') return false;
    }
    return true;
}

/// Whether `haystack` contains `needle`, ignoring ASCII case.
bool icontains(std::string_view haystack, std::string_view needle);

/// Shell-style glob: `*` any run of characters, `?` one character, everything else literal. Linear time.
bool glob_match(std::string_view pattern, std::string_view text);

/// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);

/// `text` with every ill-formed UTF-8 sequence replaced by U+FFFD (JSON output must be valid UTF-8; a server's stderr
/// or garbage output is not).
std::string to_valid_utf8(std::string_view text);

/// Every string (and key) of `v` made valid UTF-8, in place: a server's stderr tail or garbage it printed ends up in
/// errors, and one invalid byte would make a JSON parser reject the whole document we print or serve.
void make_valid_utf8(boost::json::value& v);

/// At most `max` bytes of `text` (cut on a UTF-8 boundary) with "…" appended when cut.
std::string shorten(std::string_view text, std::size_t max);

/// The first line of `text`, shortened to `max` bytes.
std::string first_line(std::string_view text, std::size_t max = 80);

/// Appends `item` to a cache key after its length, so that no two different lists of items read the same.
void append_sized(std::string& key, std::string_view item);

}  // namespace switchboard::core
