#include "plain_request.hpp"

#include <switchboard/core/text.hpp>

#include <boost/beast/http/field.hpp>
#include <boost/container/small_vector.hpp>

#include <array>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace switchboard::http::detail {

namespace {

// RFC 7230's tchar, the same table as Beast's is_token_char.
constexpr std::array<bool, 256> token_chars = [] {
    std::array<bool, 256> t{};
    for (int c = '0'; c <= '9'; ++c) t[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
    for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
    return t;
}();

// The first byte at or after `i` that is not printable ASCII or a space (a control character, DEL or a byte of
// 0x80 and up); `n` when there is none. Sixteen bytes at a time.
std::size_t first_unprintable(const char* d, std::size_t i, std::size_t n) {
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
        // Signed: the bytes of 0x80 and up are below the space too.
        const auto m =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, del))));
        if (m != 0) return i + static_cast<std::size_t>(__builtin_ctz(m));
    }
#endif
    for (; i < n; ++i) {
        const auto c = static_cast<unsigned char>(d[i]);
        if (c < 0x20 || c >= 0x7f) return i;
    }
    return n;
}

// The end of the line that starts at `i` when it ends in CRLF and holds printable ASCII and spaces only; npos else.
std::size_t plain_line_end(std::string_view data, std::size_t i) {
    const auto end = first_unprintable(data.data(), i, data.size());
    if (end + 1 >= data.size() || data[end] != '\r' || data[end + 1] != '\n') return std::string_view::npos;
    return end;
}

struct Field {
    bhttp::field known;  // found once: inserting by name would look it up again (string_to_field, ~100 instructions)
    std::string_view name, value;
};

}  // namespace

std::size_t read_plain_request(std::string_view data, std::size_t max_header, std::size_t max_body,
                               ServerRequest& out) {
    constexpr auto npos = std::string_view::npos;
    // The request line: method SP target SP HTTP/1.x CRLF.
    const auto line_end = plain_line_end(data, 0);
    if (line_end == npos) return 0;
    const auto line = data.substr(0, line_end);
    const auto sp1 = line.find(' ');
    const auto sp2 = sp1 == npos ? npos : line.find(' ', sp1 + 1);
    if (sp1 == npos || sp1 == 0 || sp2 == npos || sp2 == sp1 + 1) return 0;
    const auto method = line.substr(0, sp1);
    for (char c : method)
        if (!token_chars[static_cast<unsigned char>(c)]) return 0;
    const auto verb = bhttp::string_to_verb(method);
    if (verb == bhttp::verb::unknown) return 0;
    const auto target = line.substr(sp1 + 1, sp2 - sp1 - 1);  // printable, no space: Beast's path characters
    const auto version_text = line.substr(sp2 + 1);
    unsigned version = 0;
    if (version_text == "HTTP/1.1")
        version = 11;
    else if (version_text == "HTTP/1.0")
        version = 10;
    else
        return 0;

    // The fields, up to the empty line.
    boost::container::small_vector<Field, 16> fields;
    std::size_t i = line_end + 2;
    bool has_length = false;
    std::uint64_t length = 0;
    for (;;) {
        if (i >= max_header) return 0;
        if (i + 1 < data.size() && data[i] == '\r' && data[i + 1] == '\n') {
            i += 2;
            break;
        }
        const auto end = plain_line_end(data, i);
        if (end == npos || end >= max_header) return 0;
        // name ":" spaces value spaces
        const char* d = data.data();
        std::size_t colon = i;
        while (colon < end && token_chars[static_cast<unsigned char>(d[colon])]) ++colon;
        if (colon == i || colon == end || d[colon] != ':') return 0;  // a folded line starts with a space
        std::size_t first = colon + 1, last = end;
        while (first < last && d[first] == ' ') ++first;
        while (last > first && d[last - 1] == ' ') --last;
        const std::string_view name(d + i, colon - i);
        const Field f{bhttp::string_to_field(name), name, std::string_view(d + first, last - first)};
        switch (f.known) {
        case bhttp::field::content_length:
            if (has_length || f.value.empty() || f.value.size() > 18) return 0;
            for (char c : f.value) {
                if (c < '0' || c > '9') return 0;
                length = length * 10 + static_cast<std::uint64_t>(c - '0');
            }
            has_length = true;
            break;
        case bhttp::field::connection:
            if (!core::iequals(f.value, "keep-alive") && !core::iequals(f.value, "close")) return 0;
            break;
        case bhttp::field::transfer_encoding:
        case bhttp::field::upgrade:
        case bhttp::field::proxy_connection: return 0;
        default: break;
        }
        fields.push_back(f);
        i = end + 2;
    }
    if (i + 4 > max_header || length >= max_body || data.size() - i < length) return 0;  // Beast words the refusals

    // All of it is there and plain: the message Beast's parser would have made.
    out.method(verb);
    out.target(target);
    out.version(version);
    for (const auto& f : fields) out.insert(f.known, f.name, f.value);
    out.body().assign(data.data() + i, static_cast<std::size_t>(length));
    return i + static_cast<std::size_t>(length);
}

}  // namespace switchboard::http::detail
