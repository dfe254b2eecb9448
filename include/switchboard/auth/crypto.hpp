// The few cryptographic pieces OAuth needs, over OpenSSL: base64url (RFC 4648 §5, no padding), SHA-256, random
// tokens, and PKCE (RFC 7636, S256 only).
//
// Thread-safety: pure functions (OpenSSL's RAND is thread-safe).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace switchboard::auth {

std::string base64url_encode(std::string_view bytes);
/// Accepts base64url with or without padding; nullopt on any other character.
std::optional<std::string> base64url_decode(std::string_view text);
/// Plain base64 (RFC 4648 §4), for HTTP Basic credentials.
std::string base64_encode(std::string_view bytes);

/// The 32-byte SHA-256 digest.
std::string sha256(std::string_view bytes);

/// `bytes` random bytes from the system's CSPRNG, base64url-encoded.
std::string random_token(std::size_t bytes = 32);

/// A PKCE pair: the verifier stays with the client, the challenge (base64url(SHA-256(verifier))) goes to the
/// authorization endpoint with code_challenge_method=S256.
struct Pkce {
    std::string verifier;
    std::string challenge;
};
Pkce make_pkce();

/// `text` percent-encoded for a query or form value (RFC 3986 unreserved characters kept).
std::string form_encode(std::string_view text);
/// "a=1&b=2" from pairs, each side form_encode()d.
std::string form_body(std::initializer_list<std::pair<std::string_view, std::string_view>> fields);

}  // namespace switchboard::auth
