#include <switchboard/auth/crypto.hpp>
#include <switchboard/core/base64.hpp>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace switchboard::auth {

// base64 is core's (the encoding of MCP's binary contents too); base64url (RFC 4648 §5) is it with two letters changed
// and no padding.
std::string base64url_encode(std::string_view bytes) {
    std::string out = core::base64_encode(bytes);
    while (!out.empty() && out.back() == '=') out.pop_back();
    for (auto& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
    return out;
}
std::string base64_encode(std::string_view bytes) { return core::base64_encode(bytes); }

std::optional<std::string> base64url_decode(std::string_view text) {
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    std::string out;
    out.reserve(text.size() * 3 / 4);
    unsigned acc = 0;
    int bits = 0;
    for (char c : text) {
        int v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '-' || c == '+')
            v = 62;
        else if (c == '_' || c == '/')
            v = 63;
        else
            return std::nullopt;
        acc = (acc << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    if (text.size() % 4 == 1) return std::nullopt;  // 6 bits cannot end a byte
    return out;
}

std::string sha256(std::string_view bytes) {
    std::array<unsigned char, 32> md{};
    unsigned len = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), md.data(), &len, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("SHA-256 failed");
    return std::string(reinterpret_cast<const char*>(md.data()), len);
}

std::string random_token(std::size_t bytes) {
    std::string raw(bytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(raw.size())) != 1)
        throw std::runtime_error("the system's random generator failed");
    return base64url_encode(raw);
}

Pkce make_pkce() {
    Pkce p;
    p.verifier = random_token(32);  // 43 characters, within RFC 7636's 43..128
    p.challenge = base64url_encode(sha256(p.verifier));
    return p;
}

std::string form_encode(std::string_view text) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string form_body(std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
    std::string out;
    for (const auto& [k, v] : fields) {
        if (!out.empty()) out += '&';
        out += form_encode(k);
        out += '=';
        out += form_encode(v);
    }
    return out;
}

}  // namespace switchboard::auth
