// Base64 (RFC 4648 §4, the standard alphabet with padding), the encoding of MCP's binary contents, and a decoder that
// takes the text in pieces as it arrives, so that a big blob is decoded once into its final buffer.
//
// Thread-safety: free functions; a Base64Decoder has one owner.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::core {

std::string base64_encode(std::string_view bytes);
/// The length of the base64 of `bytes` bytes.
constexpr std::size_t base64_size(std::size_t bytes) { return (bytes + 2) / 3 * 4; }
/// Writes the base64 of `bytes` at `out`, which has room for base64_size(bytes.size()) characters.
void base64_write(char* out, std::string_view bytes);
/// Appends the base64 of `bytes` to `out`.
void base64_append(std::string& out, std::string_view bytes);
/// Decodes canonical base64 (no whitespace, padding only at the end, unused bits zero); nullopt otherwise.
std::optional<std::string> base64_decode(std::string_view text);

/// Decodes base64 given in pieces into `out`. It accepts exactly the texts base64_encode writes, so that what it
/// decoded is the text again byte for byte: finish() fails on anything else.
class Base64Decoder {
public:
    explicit Base64Decoder(std::string& out) : out_(out) {}
    /// False when the piece cannot continue canonical base64 (a character outside the alphabet, data after padding);
    /// a refused piece changes nothing, so the text so far is the output encoded again, then pending().
    bool feed(std::string_view piece);
    /// After the last piece: false when the text's length is not a multiple of 4 or its last bits are not zero.
    bool finish();
    /// The characters fed but not yet decoded (at most 3 of a group, or a group with padding).
    std::string_view pending() const { return {pending_, pending_size_}; }
    /// Characters accepted so far.
    std::size_t consumed() const { return consumed_; }

private:
    bool decode_group(const char* group);

    std::string& out_;
    char pending_[4] = {};
    std::size_t pending_size_ = 0;
    std::size_t consumed_ = 0;
    bool padded_ = false;  // a group with '=' was decoded: nothing may follow
};

}  // namespace switchboard::core
