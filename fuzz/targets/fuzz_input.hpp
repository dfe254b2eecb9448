// Splitting one fuzz input into the pieces a target needs (chunk sizes, a mode byte, text), without coroutines: the
// targets build with clang and libFuzzer (Clang 14 cannot compile Asio coroutines with libstdc++ 12).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace switchboard::fuzz {

class Input {
public:
    Input(const std::uint8_t* data, std::size_t size) : text_(reinterpret_cast<const char*>(data), size) {}

    /// One byte off the front (0 when empty).
    std::uint8_t byte() {
        if (text_.empty()) return 0;
        const auto b = static_cast<std::uint8_t>(text_.front());
        text_.remove_prefix(1);
        return b;
    }
    /// Up to `n` bytes off the front.
    std::string_view take(std::size_t n) {
        const auto piece = text_.substr(0, n);
        text_.remove_prefix(piece.size());
        return piece;
    }
    std::string_view rest() const { return text_; }
    bool empty() const { return text_.empty(); }

private:
    std::string_view text_;
};

}  // namespace switchboard::fuzz
