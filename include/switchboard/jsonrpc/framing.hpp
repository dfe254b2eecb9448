// Newline-delimited framing with a maximum message size: memory stays bounded whatever the peer writes.
//
// Thread-safety: not thread-safe; owned by one reader.
#pragma once

#include <switchboard/jsonrpc/stream_parser.hpp>

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::jsonrpc {

inline constexpr std::size_t default_max_message_size = 64u * 1024 * 1024;

/// Splits a byte stream into lines. A line longer than the limit is discarded as it streams in (never buffered whole)
/// and reported once as an oversize frame with its total length and its first and last bytes, so that the caller can
/// say what it was.
class LineFramer {
public:
    struct Frame {
        enum class Kind { message, oversize };
        Kind kind = Kind::message;
        std::string text;        ///< message: the line without "\n" (and without a trailing "\r")
        std::size_t length = 0;  ///< oversize: bytes in the discarded line
        std::string head, tail;  ///< oversize: its first and last bytes (up to 256 each)
        /// message: a line longer than the streaming threshold, parsed as it arrived (`text` stays empty).
        std::shared_ptr<StreamedMessage> streamed;
    };

    /// Lines that grow past `stream_above` bytes are parsed as they arrive instead of being held whole (StreamParser).
    explicit LineFramer(std::size_t max_message_size = default_max_message_size,
                        std::size_t stream_above = default_stream_above)
        : max_(max_message_size), stream_above_(stream_above) {}
    static constexpr std::size_t default_stream_above = 1u << 20;

    /// Appends received bytes; complete lines become frames.
    void feed(std::string_view bytes);
    /// Next complete frame, if any. Blank lines are skipped.
    std::optional<Frame> next();
    /// Bytes of an incomplete trailing line (never more than the limit).
    std::size_t buffered() const { return partial_.size() + streamed_; }
    std::size_t max_message_size() const { return max_; }
    /// Given to the parser of each long line (see BlobPolicy).
    void set_blob_policy(BlobPolicy policy) { blob_policy_ = std::move(policy); }

private:
    void complete_line(std::string_view piece);
    void start_streaming();
    void stream(std::string_view piece);
    void finish_streaming();
    void start_discard(std::string_view first_bytes);
    void note_discarded(std::string_view bytes);
    void keep_tail(std::string_view bytes);
    void finish_discard();

    std::size_t max_;
    std::size_t stream_above_;
    BlobPolicy blob_policy_;
    std::string partial_;      // incomplete trailing line
    std::unique_ptr<StreamParser> streaming_;  // a long incomplete line, parsed as it arrives
    std::size_t streamed_ = 0;                 // its length so far
    std::deque<Frame> ready_;  // complete frames not yet taken
    bool discarding_ = false;  // inside an oversize line
    std::size_t discarded_ = 0;
    std::string head_, tail_;  // of the line being discarded or streamed
};

}  // namespace switchboard::jsonrpc
