#include <switchboard/core/text.hpp>

#include <fmt/format.h>
#include <boost/json/value.hpp>

#include <algorithm>

namespace switchboard::core {

namespace {
char lower_char(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool ascii_letter(char c) { return lower_char(c) >= 'a' && lower_char(c) <= 'z'; }
}  // namespace

void append_sized(std::string& key, std::string_view item) {
    key.append(std::to_string(item.size()));
    key.push_back(':');
    key.append(item);
}

std::string size_text(std::size_t bytes) {
    constexpr std::size_t kib = 1024, mib = 1024 * 1024;
    if (bytes >= mib && bytes % mib == 0) return fmt::format("{} MiB", bytes / mib);
    if (bytes >= mib) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / mib);
    if (bytes >= kib) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / kib);
    return fmt::format("{} bytes", bytes);
}

std::string ascii_lower(std::string_view text) {
    std::string out(text);
    for (auto& c : out) c = lower_char(c);
    return out;
}

bool icontains(std::string_view haystack, std::string_view needle) {
    // As written first (headers nearly always are): a plain search is a fraction of the case-blind one, and for a
    // needle without letters ("*/*") it is the whole answer.
    if (needle.empty()) return !haystack.empty();  // as std::search answers it
    if (haystack.find(needle) != std::string_view::npos) return true;
    if (std::none_of(needle.begin(), needle.end(), ascii_letter)) return false;
    return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                       [](char x, char y) { return lower_char(x) == lower_char(y); }) != haystack.end();
}

bool glob_match(std::string_view pattern, std::string_view text) {
    // Greedy with one backtrack point (the last `*`): enough for globs, linear in practice, never exponential.
    std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

namespace {

// The length of the well-formed UTF-8 sequence at the start of `t`, or 0 when it is ill-formed (Unicode 15, table 3-7).
std::size_t utf8_sequence_length(std::string_view t) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(t[i]); };
    const auto c0 = b(0);
    if (c0 < 0x80) return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c0 >= 0xC2 && c0 <= 0xDF) {
        n = 2;
    } else if (c0 >= 0xE0 && c0 <= 0xEF) {
        n = 3;
        if (c0 == 0xE0) lo = 0xA0;  // no overlong forms
        if (c0 == 0xED) hi = 0x9F;  // no surrogates
    } else if (c0 >= 0xF0 && c0 <= 0xF4) {
        n = 4;
        if (c0 == 0xF0) lo = 0x90;  // no overlong forms
        if (c0 == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
    } else {
        return 0;
    }
    if (t.size() < n) return 0;
    if (b(1) < lo || b(1) > hi) return 0;
    for (std::size_t i = 2; i < n; ++i)
        if (b(i) < 0x80 || b(i) > 0xBF) return 0;
    return n;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto n = utf8_sequence_length(text.substr(i));
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string to_valid_utf8(std::string_view text) {
    if (is_valid_utf8(text)) return std::string(text);
    std::string out;
    out.reserve(text.size() + 8);
    for (std::size_t i = 0; i < text.size();) {
        const auto n = utf8_sequence_length(text.substr(i));
        if (n == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::string shorten(std::string_view text, std::size_t max) {
    if (text.size() <= max) return std::string(text);
    std::size_t cut = max;
    // Back up to the start of a UTF-8 sequence: continuation bytes are 10xxxxxx.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + "…";
}

std::string first_line(std::string_view text, std::size_t max) { return shorten(text.substr(0, text.find('\n')), max); }

void make_valid_utf8(boost::json::value& v) {
    if (auto* s = v.if_string()) {
        if (!is_valid_utf8(*s)) *s = to_valid_utf8(*s);
    } else if (auto* a = v.if_array()) {
        for (auto& item : *a) make_valid_utf8(item);
    } else if (auto* o = v.if_object()) {
        boost::json::object fixed;
        bool keys_changed = false;
        for (auto& item : *o) {
            make_valid_utf8(item.value());
            keys_changed = keys_changed || !is_valid_utf8(item.key());
        }
        if (!keys_changed) return;
        for (auto& item : *o) fixed[to_valid_utf8(item.key())] = std::move(item.value());
        *o = std::move(fixed);
    }
}

}  // namespace switchboard::core
