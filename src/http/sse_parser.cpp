#include <switchboard/http/sse_parser.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace switchboard::http {

namespace {
constexpr std::size_t edge_bytes = 256;

void keep_tail(std::string& tail, std::string_view more) {
    if (more.size() >= edge_bytes) {
        tail.assign(more.substr(more.size() - edge_bytes));
        return;
    }
    tail.append(more);
    if (tail.size() > edge_bytes) tail.erase(0, tail.size() - edge_bytes);
}

std::size_t find_eol(std::string_view s) {
    // memchr twice beats find_first_of's per-byte set test on long data lines.
    const void* lf = std::memchr(s.data(), '\n', s.size());
    const std::size_t lf_at = lf ? static_cast<const char*>(lf) - s.data() : std::string_view::npos;
    const void* cr = std::memchr(s.data(), '\r', lf ? lf_at : s.size());
    return cr ? static_cast<const char*>(cr) - s.data() : lf_at;
}
}  // namespace

SseParser::SseParser(std::size_t max_event_size) : max_(max_event_size) {}

void SseParser::feed(std::string_view bytes) {
    if (bytes.empty()) return;
    if (skip_lf_) {
        skip_lf_ = false;
        if (bytes.front() == '\n') bytes.remove_prefix(1);
    }
    if (discarding_line_) {
        const auto eol = find_eol(bytes);
        if (eol == std::string_view::npos) {
            seen_ += bytes.size();
            keep_tail(tail_, bytes);
            return;
        }
        seen_ += eol;
        keep_tail(tail_, bytes.substr(0, eol));
        discarding_line_ = false;
        // The terminator ends the discarded line; a CR may pair with a following LF.
        const bool cr = bytes[eol] == '\r';
        bytes.remove_prefix(eol + 1);
        if (cr) {
            if (bytes.empty())
                skip_lf_ = true;
            else if (bytes.front() == '\n')
                bytes.remove_prefix(1);
        }
    }
    if (pos_ == input_.size()) {
        input_.clear();
        pos_ = scanned_ = 0;
    } else if (pos_ > 4096 && pos_ * 2 > input_.size()) {
        input_.erase(0, pos_);
        scanned_ = scanned_ > pos_ ? scanned_ - pos_ : 0;
        pos_ = 0;
    }
    input_.append(bytes);
    if (!bom_checked_ && input_.size() - pos_ >= 3) {
        bom_checked_ = true;
        if (std::string_view(input_).substr(pos_, 3) == "\xEF\xBB\xBF") pos_ += 3;
    }
}

bool SseParser::next(SseEvent& out) {
    for (;;) {
        std::string_view rest = std::string_view(input_).substr(pos_);
        const std::size_t from = scanned_ > pos_ ? scanned_ - pos_ : 0;
        auto eol = find_eol(rest.substr(from));
        if (eol != std::string_view::npos) eol += from;
        scanned_ = eol == std::string_view::npos ? input_.size() : pos_;
        if (eol == std::string_view::npos) {
            if (rest.size() + data_.size() > max_ + 16) {
                // A line longer than any event may be: drop it as it streams, the event becomes oversize.
                in_event_ = true;
                std::size_t sep = 0;
                if (rest.starts_with("data:")) {  // count and show the value, not the field name
                    rest.remove_prefix(5);
                    if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
                    sep = data_started_ ? 1 : 0;
                }
                if (!oversize_) {
                    oversize_ = true;
                    if (head_.empty())
                        head_.assign(data_.empty() ? rest.substr(0, edge_bytes)
                                                   : std::string_view(data_).substr(0, edge_bytes));
                    seen_ = data_.size() + sep;
                    data_.clear();
                }
                seen_ += rest.size();
                keep_tail(tail_, rest);
                input_.clear();
                pos_ = scanned_ = 0;
                discarding_line_ = true;
            }
            return false;
        }
        const std::string_view line = rest.substr(0, eol);
        std::size_t advance = eol + 1;
        if (rest[eol] == '\r') {
            if (eol + 1 == rest.size())
                skip_lf_ = true;
            else if (rest[eol + 1] == '\n')
                ++advance;
        }
        const bool dispatch = process_line(line);
        pos_ += advance;
        if (!dispatch) continue;
        if (oversize_) {
            out = SseEvent{};
            out.kind = SseEvent::Kind::oversize;
            out_type_.swap(type_);
            out.type = out_type_.empty() ? std::string_view("message") : std::string_view(out_type_);
            out.length = seen_;
            out_data_.swap(head_);
            out.head = out_data_;
            tail_copy_.swap(tail_);
            out.tail = tail_copy_;
        } else {
            out = SseEvent{};
            out_type_.swap(type_);
            out_data_.swap(data_);
            out.type = out_type_.empty() ? std::string_view("message") : std::string_view(out_type_);
            out.data = out_data_;
        }
        out.id = last_id_;
        out.has_id = has_id_;
        reset_event();
        return true;
    }
}

bool SseParser::process_line(std::string_view line) {
    if (line.empty()) {
        if (!in_event_) return false;
        if (!oversize_ && !data_started_) {  // no data at all: nothing to dispatch (its id still counts)
            reset_event();
            return false;
        }
        if (!oversize_ && data_.empty()) {  // the priming event: `data:` with nothing
            reset_event();
            return false;
        }
        return true;
    }
    if (line.front() == ':') return false;  // comment / keep-alive
    in_event_ = true;
    std::string_view field = line, value;
    if (const auto colon = line.find(':'); colon != std::string_view::npos) {
        field = line.substr(0, colon);
        value = line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    }
    if (field == "data") {
        append_data(value);
    } else if (field == "event") {
        type_.assign(value);
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) {
            last_id_.assign(value);
            has_id_ = true;
        }
    } else if (field == "retry") {
        std::uint64_t ms = 0;
        auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (ec == std::errc() && p == value.data() + value.size() && !value.empty())
            retry_ = std::chrono::milliseconds(ms);
    }
    return false;
}

void SseParser::append_data(std::string_view value) {
    const std::size_t extra = (data_started_ ? 1 : 0) + value.size();
    if (oversize_) {
        seen_ += extra;
        keep_tail(tail_, value);
        return;
    }
    if (data_.size() + extra > max_) {
        oversize_ = true;
        seen_ = data_.size() + extra;
        head_.assign(data_.empty() ? value.substr(0, edge_bytes) : std::string_view(data_).substr(0, edge_bytes));
        tail_.clear();
        keep_tail(tail_, std::string_view(data_).substr(data_.size() - std::min(data_.size(), edge_bytes)));
        keep_tail(tail_, value);
        data_.clear();
        return;
    }
    if (data_started_) data_.push_back('\n');
    data_.append(value);
    data_started_ = true;
}

void SseParser::reset_event() {
    type_.clear();
    data_.clear();
    head_.clear();
    tail_.clear();
    data_started_ = has_id_ = in_event_ = oversize_ = false;
    seen_ = 0;
}

}  // namespace switchboard::http
