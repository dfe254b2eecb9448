// Incremental Server-Sent Events parser (the WHATWG event-stream format): `data:` over several lines, `event:`,
// `id:`, `retry:`, comments, LF / CRLF / CR line ends, a leading BOM. Memory stays bounded: an event whose data
// grows past the size limit is discarded as it streams in and reported once as oversize (length, first and last
// bytes), like LineFramer does for stdio. Steady state allocates nothing: buffers keep their capacity.
//
// Events with empty data (the priming event `id: 1\ndata:\n\n` that servers send to hand out a resumption id) are
// not dispatched, but their id becomes last_event_id() as the format prescribes.
//
// Thread-safety: not thread-safe; owned by one reader.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::http {

struct SseEvent {
    enum class Kind { event, oversize };
    Kind kind = Kind::event;
    std::string_view type;  ///< `event:` field; "message" when absent
    std::string_view data;  ///< lines joined with "\n"
    std::string_view id;    ///< the last event id in effect after this event
    bool has_id = false;    ///< this event carried an `id:` field
    // oversize only
    std::size_t length = 0;       ///< data bytes seen
    std::string_view head, tail;  ///< first and last bytes of the data (up to 256 each)
};

class SseParser {
public:
    explicit SseParser(std::size_t max_event_size);

    /// Appends received bytes. Views returned by next() stay valid until the next feed() or next().
    void feed(std::string_view bytes);
    /// The next complete event, if any.
    bool next(SseEvent& out);

    const std::string& last_event_id() const { return last_id_; }
    /// The last `retry:` value received.
    std::optional<std::chrono::milliseconds> retry() const { return retry_; }
    std::size_t max_event_size() const { return max_; }
    /// Bytes held (unparsed input plus the event being built); never much more than the limit.
    std::size_t buffered() const { return input_.size() - pos_ + data_.size(); }
    /// True when an event has started but not ended (useful to tell "cut mid-event" at end of stream).
    bool in_event() const { return in_event_; }

private:
    // Returns true when the line ended an event that must be dispatched.
    bool process_line(std::string_view line);
    void append_data(std::string_view value);
    void reset_event();

    std::size_t max_;
    std::string input_;  // unparsed bytes from input_[pos_]
    std::size_t pos_ = 0;
    // input_[pos_, scanned_) holds no line terminator: a line arriving in many pieces is scanned once, not once per
    // piece (which made one large event quadratic).
    std::size_t scanned_ = 0;
    bool skip_lf_ = false;  // the previous chunk ended with CR: a leading LF belongs to it
    bool bom_checked_ = false;
    bool discarding_line_ = false;  // inside a line longer than the limit

    // The event being built.
    std::string type_, data_, out_type_, out_data_;
    bool has_id_ = false, in_event_ = false, oversize_ = false, data_started_ = false;
    std::size_t seen_ = 0;
    std::string head_, tail_, tail_copy_;

    std::string last_id_;
    std::optional<std::chrono::milliseconds> retry_;
};

}  // namespace switchboard::http
