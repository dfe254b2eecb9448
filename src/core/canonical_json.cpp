#include <switchboard/core/canonical_json.hpp>

#include <boost/json/object.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>
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

std::vector<const json::key_value_pair*> sorted_members(const json::object& o) {
    std::vector<std::pair<std::u16string, const json::key_value_pair*>> keyed;
    keyed.reserve(o.size());
    for (const auto& kv : o) keyed.emplace_back(utf16(kv.key()), &kv);
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<const json::key_value_pair*> out;
    out.reserve(keyed.size());
    for (const auto& [key, kv] : keyed) out.push_back(kv);
    return out;
}

void append_string(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                out += "\\u00";
                out += hex[c >> 4];
                out += hex[c & 0xF];
            } else {
                out += ch;
            }
        }
    }
    out += '"';
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

void write(std::string& out, const json::value& v, int indent, int depth) {
    const auto newline = [&](int level) {
        if (indent < 0) return;
        out += '\n';
        out.append(static_cast<std::size_t>(level * indent), ' ');
    };
    switch (v.kind()) {
    case json::kind::null: out += "null"; break;
    case json::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
    case json::kind::int64: append_number(out, static_cast<double>(v.get_int64())); break;
    case json::kind::uint64: append_number(out, static_cast<double>(v.get_uint64())); break;
    case json::kind::double_: append_number(out, v.get_double()); break;
    case json::kind::string: append_string(out, v.get_string()); break;
    case json::kind::array: {
        const auto& a = v.get_array();
        out += '[';
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (i) out += ',';
            newline(depth + 1);
            write(out, a[i], indent, depth + 1);
        }
        if (!a.empty()) newline(depth);
        out += ']';
        break;
    }
    case json::kind::object: {
        const auto members = sorted_members(v.get_object());
        out += '{';
        for (std::size_t i = 0; i < members.size(); ++i) {
            if (i) out += ',';
            newline(depth + 1);
            append_string(out, members[i]->key());
            out += indent < 0 ? ":" : ": ";
            write(out, members[i]->value(), indent, depth + 1);
        }
        if (!members.empty()) newline(depth);
        out += '}';
        break;
    }
    }
}

}  // namespace

std::string canonical_json(const json::value& v) {
    std::string out;
    write(out, v, -1, 0);
    return out;
}

std::string pretty_json(const json::value& v) {
    std::string out;
    write(out, v, 2, 0);
    return out;
}

}  // namespace switchboard::core
