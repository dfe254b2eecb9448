#include <switchboard/core/canonical_json.hpp>

#include <boost/json/object.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchboard::core {

namespace json = boost::json;

namespace {

// The UTF-16 code units of a UTF-8 name: JCS sorts members by them (a name past U+FFFF, a surrogate pair, sorts
// before one in U+E000..U+FFFF, unlike in UTF-8). Bytes that are no UTF-8 count as themselves.
std::u16string utf16(std::string_view s) {
    std::u16string out;
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::uint32_t cp = c;
        std::size_t n = 1;
        if (c >= 0xF0 && i + 3 < s.size()) {
            cp = ((c & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
                 ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
            n = 4;
        } else if (c >= 0xE0 && i + 2 < s.size()) {
            cp = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
                 (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
            n = 3;
        } else if (c >= 0xC0 && i + 1 < s.size()) {
            cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
            n = 2;
        }
        if (cp > 0xFFFF) {
            cp -= 0x10000;
            out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
            out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
        } else {
            out.push_back(static_cast<char16_t>(cp));
        }
        i += n;
    }
    return out;
}

// UTF-8 byte order is code point order, which is UTF-16 order below U+E000 (lead byte 0xEE): names without such a
// byte (nearly all) sort as bytes, without the conversion.
bool sorts_as_bytes(std::string_view s) {
    return std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0xEE; });
}

using Member = const json::key_value_pair*;

// The members of `o` in JCS order, in `small` when they fit (most objects: no allocation), else in `big`.
std::span<Member> sorted_members(const json::object& o, std::span<Member> small, std::vector<Member>& big) {
    std::span<Member> out = small;
    if (o.size() > small.size()) {
        big.resize(o.size());
        out = big;
    }
    out = out.first(o.size());
    bool bytes = true;
    std::size_t i = 0;
    for (const auto& kv : o) {
        out[i++] = &kv;
        bytes = bytes && sorts_as_bytes(kv.key());
    }
    if (bytes) {
        std::sort(out.begin(), out.end(), [](Member a, Member b) { return a->key() < b->key(); });
        return out;
    }
    std::vector<std::pair<std::u16string, Member>> keyed;
    keyed.reserve(o.size());
    for (const auto& kv : o) keyed.emplace_back(utf16(kv.key()), &kv);
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (i = 0; i < keyed.size(); ++i) out[i] = keyed[i].second;
    return out;
}

// Whether any of the 8 bytes in `w` is a control character, '"' or '\\': the ones a string escapes. (Exact: the
// zero-byte and less-than tests of "Bit Twiddling Hacks" say whether some byte matches, not which.)
constexpr bool needs_escape(std::uint64_t w) {
    constexpr std::uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    const auto zero_byte = [](std::uint64_t v) { return (v - ones) & ~v & highs; };
    const auto below_space = (w - ones * 0x20) & ~w & highs;
    return (below_space | zero_byte(w ^ (ones * '"')) | zero_byte(w ^ (ones * '\\'))) != 0;
}

void append_string(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    std::size_t plain = 0;  // the start of the run of characters written as they are
    for (std::size_t i = 0; i < s.size(); ++i) {
        // Eight bytes at a time while none needs escaping (nearly all text).
        while (i + 8 <= s.size()) {
            std::uint64_t w;
            std::memcpy(&w, s.data() + i, 8);
            if (needs_escape(w)) break;
            i += 8;
        }
        if (i >= s.size()) break;
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        out.append(s, plain, i - plain);
        plain = i + 1;
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 0xF];
        }
    }
    out.append(s, plain);
    out += '"';
}

// An integer exactly representable as a double (|n| <= 2^53) is written as ECMAScript writes it: its digits.
template <typename Int>
bool append_exact_integer(std::string& out, Int n) {
    constexpr std::int64_t exact = std::int64_t{1} << 53;
    if constexpr (std::is_signed_v<Int>) {
        if (n < -exact || n > exact) return false;
    } else {
        if (n > static_cast<std::uint64_t>(exact)) return false;
    }
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, n);
    out.append(buf, r.ptr);
    return true;
}

// A double as ECMAScript's Number::toString writes it (ECMA-262, 6.1.6.1.20), from the shortest digits that read back
// as the same double.
void append_number(std::string& out, double d) {
    if (!std::isfinite(d)) {
        out += "null";
        return;
    }
    if (d == 0) {  // -0 too
        out += '0';
        return;
    }
    if (d < 0) {
        out += '-';
        d = -d;
    }
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    const std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));  // "d.ddde+XX" or "de-XX"
    const auto e_at = sci.find('e');
    std::string digits;
    for (char c : sci.substr(0, e_at))
        if (c != '.') digits += c;
    int exponent = 0;
    std::from_chars(sci.data() + e_at + (sci[e_at + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
    const int k = static_cast<int>(digits.size());
    const int n = exponent + 1;  // the value is 0.digits × 10^n
    if (k <= n && n <= 21) {
        out += digits;
        out.append(static_cast<std::size_t>(n - k), '0');
    } else if (0 < n && n <= 21) {
        out.append(digits, 0, static_cast<std::size_t>(n));
        out += '.';
        out.append(digits, static_cast<std::size_t>(n));
    } else if (-6 < n && n <= 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-n), '0');
        out += digits;
    } else {
        out += digits[0];
        if (k > 1) {
            out += '.';
            out.append(digits, 1);
        }
        out += 'e';
        out += n - 1 >= 0 ? '+' : '-';
        out += std::to_string(std::abs(n - 1));
    }
}

void write(std::string& out, const json::value& v, int indent, int depth);

void newline(std::string& out, int indent, int level) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<std::size_t>(level * indent), ' ');
}

void write_object(std::string& out, const json::object& o, int indent, int depth) {
    std::array<Member, 16> small;
    std::vector<Member> big;
    const auto members = sorted_members(o, small, big);
    out += '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (i) out += ',';
        newline(out, indent, depth + 1);
        append_string(out, members[i]->key());
        out += ':';
        if (indent >= 0) out += ' ';
        write(out, members[i]->value(), indent, depth + 1);
    }
    if (!members.empty()) newline(out, indent, depth);
    out += '}';
}

void write(std::string& out, const json::value& v, int indent, int depth) {
    switch (v.kind()) {
    case json::kind::null: out += "null"; break;
    case json::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
    case json::kind::int64:
        if (!append_exact_integer(out, v.get_int64())) append_number(out, static_cast<double>(v.get_int64()));
        break;
    case json::kind::uint64:
        if (!append_exact_integer(out, v.get_uint64())) append_number(out, static_cast<double>(v.get_uint64()));
        break;
    case json::kind::double_: append_number(out, v.get_double()); break;
    case json::kind::string: append_string(out, v.get_string()); break;
    case json::kind::array: {
        const auto& a = v.get_array();
        out += '[';
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (i) out += ',';
            newline(out, indent, depth + 1);
            write(out, a[i], indent, depth + 1);
        }
        if (!a.empty()) newline(out, indent, depth);
        out += ']';
        break;
    }
    case json::kind::object: write_object(out, v.get_object(), indent, depth); break;
    }
}

}  // namespace

std::string canonical_json(const json::value& v) {
    std::string out;
    out.reserve(256);
    write(out, v, -1, 0);
    return out;
}

void append_canonical_json(std::string& out, const json::value& v) { write(out, v, -1, 0); }

void append_canonical_json(std::string& out, const json::object& o) { write_object(out, o, -1, 0); }

void append_canonical_string(std::string& out, std::string_view s) { append_string(out, s); }

std::string pretty_json(const json::value& v) {
    std::string out;
    write(out, v, 2, 0);
    return out;
}

}  // namespace switchboard::core
