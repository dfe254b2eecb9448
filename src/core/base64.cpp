#include <switchboard/core/base64.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

namespace switchboard::core {

namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// 0..63 for the alphabet, 64 for '=', 255 for anything else.
constexpr std::array<std::uint8_t, 256> make_values() {
    std::array<std::uint8_t, 256> t{};
    for (auto& v : t) v = 255;
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = static_cast<std::uint8_t>(i);
    t['='] = 64;
    return t;
}
constexpr auto values = make_values();

}  // namespace

void base64_append(std::string& out, std::string_view bytes) {
    const std::size_t start = out.size();
    out.resize(start + base64_size(bytes.size()));
    base64_write(out.data() + start, bytes);
}

void base64_write(char* o, std::string_view bytes) {
    const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3, o += 4) {
        const std::uint32_t v = std::uint32_t{in[i]} << 16 | std::uint32_t{in[i + 1]} << 8 | in[i + 2];
        o[0] = alphabet[v >> 18];
        o[1] = alphabet[(v >> 12) & 63];
        o[2] = alphabet[(v >> 6) & 63];
        o[3] = alphabet[v & 63];
    }
    if (const std::size_t rest = bytes.size() - i; rest > 0) {
        const std::uint32_t v = std::uint32_t{in[i]} << 16 | (rest == 2 ? std::uint32_t{in[i + 1]} << 8 : 0u);
        o[0] = alphabet[v >> 18];
        o[1] = alphabet[(v >> 12) & 63];
        o[2] = rest == 2 ? alphabet[(v >> 6) & 63] : '=';
        o[3] = '=';
    }
}

std::string base64_encode(std::string_view bytes) {
    std::string out;
    base64_append(out, bytes);
    return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size() / 4 * 3);
    Base64Decoder d(out);
    if (!d.feed(text) || !d.finish()) return std::nullopt;
    return out;
}

bool Base64Decoder::decode_group(const char* g) {
    const std::uint8_t a = values[static_cast<unsigned char>(g[0])], b = values[static_cast<unsigned char>(g[1])],
                       c = values[static_cast<unsigned char>(g[2])], d = values[static_cast<unsigned char>(g[3])];
    if ((a | b | c | d) < 64) {
        const std::uint32_t v = std::uint32_t{a} << 18 | std::uint32_t{b} << 12 | std::uint32_t{c} << 6 | d;
        const char bytes[3] = {static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
        out_.append(bytes, 3);
        return true;
    }
    // Padding: "xx==" or "xxx=", with the bits the padding leaves out zero (else two texts would decode alike).
    if (a >= 64 || b >= 64) return false;
    if (c == 64 && d == 64) {
        if (b & 15) return false;
        out_.push_back(static_cast<char>(a << 2 | b >> 4));
    } else if (c < 64 && d == 64) {
        if (c & 3) return false;
        const char bytes[2] = {static_cast<char>(a << 2 | b >> 4), static_cast<char>((b & 15) << 4 | c >> 2)};
        out_.append(bytes, 2);
    } else {
        return false;
    }
    padded_ = true;
    return true;
}

bool Base64Decoder::feed(std::string_view piece) {
    // A piece is taken whole or not at all, so that a caller who falls back to text has the text: the decoded bytes
    // encoded again, pending(), then the refused piece.
    const std::size_t out_before = out_.size(), pending_before = pending_size_, consumed_before = consumed_;
    char saved[4];
    std::copy(pending_, pending_ + 4, saved);
    const bool padded_before = padded_;
    auto refuse = [&] {
        out_.resize(out_before);
        std::copy(saved, saved + 4, pending_);
        pending_size_ = pending_before;
        consumed_ = consumed_before;
        padded_ = padded_before;
        return false;
    };
    std::size_t i = 0;
    while (pending_size_ > 0 && pending_size_ < 4 && i < piece.size()) pending_[pending_size_++] = piece[i++];
    if (pending_size_ == 4) {
        if (padded_ || !decode_group(pending_)) return refuse();
        pending_size_ = 0;
        consumed_ += 4;
    }
    if (i == piece.size()) return true;
    if (padded_) return refuse();
    // The bulk, four characters to three bytes, written straight into the output.
    const std::size_t groups = (piece.size() - i) / 4;
    const std::size_t start = out_.size();
    out_.resize(start + groups * 3);
    char* o = out_.data() + start;
    const char* in = piece.data() + i;
    std::size_t g = 0;
    for (; g < groups; ++g, in += 4, o += 3) {
        const std::uint8_t a = values[static_cast<unsigned char>(in[0])], b = values[static_cast<unsigned char>(in[1])],
                           c = values[static_cast<unsigned char>(in[2])], d = values[static_cast<unsigned char>(in[3])];
        if ((a | b | c | d) >= 64) break;  // padding or a stray character: the careful path decides
        const std::uint32_t v = std::uint32_t{a} << 18 | std::uint32_t{b} << 12 | std::uint32_t{c} << 6 | d;
        o[0] = static_cast<char>(v >> 16);
        o[1] = static_cast<char>(v >> 8);
        o[2] = static_cast<char>(v);
    }
    out_.resize(start + g * 3);
    consumed_ += g * 4;
    i += g * 4;
    if (g < groups) {  // the group that stopped the bulk: padding is fine only in the text's last group
        if (!decode_group(piece.data() + i) || i + 4 < piece.size()) return refuse();
        consumed_ += 4;
        return true;
    }
    for (; i < piece.size(); ++i) pending_[pending_size_++] = piece[i];
    return true;
}

bool Base64Decoder::finish() { return pending_size_ == 0; }

}  // namespace switchboard::core
