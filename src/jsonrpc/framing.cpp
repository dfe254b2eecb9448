#include <switchboard/jsonrpc/framing.hpp>

namespace switchboard::jsonrpc {

namespace {
constexpr std::size_t snippet_size = 256;
}

void LineFramer::feed(std::string_view bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
        const auto nl = bytes.find('\n', off);
        const auto end = nl == std::string_view::npos ? bytes.size() : nl;
        const auto piece = bytes.substr(off, end - off);
        if (discarding_) {
            note_discarded(piece);
            if (nl != std::string_view::npos) finish_discard();
        } else if (streaming_ && streamed_ + piece.size() > max_) {
            // Over the limit while streaming: the head and tail kept so far describe it.
            streaming_.reset();
            discarding_ = true;
            discarded_ = streamed_;
            streamed_ = 0;
            note_discarded(piece);
            if (nl != std::string_view::npos) finish_discard();
        } else if (streaming_) {
            stream(piece);
            if (nl != std::string_view::npos) finish_streaming();
        } else if (partial_.size() + piece.size() > max_) {
            // Over the limit: keep only a head and a tail of it from now on.
            std::string first = std::move(partial_);
            partial_.clear();
            first.append(piece.substr(0, snippet_size));
            start_discard(first);
            if (piece.size() > snippet_size) note_discarded(piece.substr(snippet_size));
            if (nl != std::string_view::npos) finish_discard();
        } else if (nl == std::string_view::npos) {
            if (partial_.size() + piece.size() > stream_above_) {
                start_streaming();
                stream(piece);
            } else {
                partial_.append(piece);
            }
        } else {
            complete_line(piece);
        }
        if (nl == std::string_view::npos) break;
        off = nl + 1;
    }
}

void LineFramer::complete_line(std::string_view piece) {
    std::string line;
    if (partial_.empty()) {
        line.assign(piece);
    } else {
        line = std::move(partial_);
        partial_.clear();
        line.append(piece);
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    ready_.push_back(Frame{Frame::Kind::message, std::move(line), 0, {}, {}, nullptr});
}

// A long line is not held: its pieces go to a parser as they come (a 64 MiB blob's text is never in memory whole).
void LineFramer::start_streaming() {
    streaming_ = std::make_unique<StreamParser>(max_, blob_policy_);
    streamed_ = 0;
    head_.clear();
    tail_.clear();
    const std::string first = std::move(partial_);
    partial_ = std::string();
    stream(first);
}

void LineFramer::stream(std::string_view piece) {
    streaming_->feed(piece);
    if (head_.size() < snippet_size) head_.append(piece.substr(0, snippet_size - head_.size()));
    keep_tail(piece);
    streamed_ += piece.size();
}

void LineFramer::finish_streaming() {
    auto message = std::make_shared<StreamedMessage>(streaming_->finish());
    streaming_.reset();
    streamed_ = 0;
    head_.clear();
    tail_.clear();
    ready_.push_back(Frame{Frame::Kind::message, {}, 0, {}, {}, std::move(message)});
}

void LineFramer::start_discard(std::string_view first_bytes) {
    discarding_ = true;
    discarded_ = first_bytes.size();
    head_.assign(first_bytes.substr(0, snippet_size));
    tail_.assign(first_bytes.size() > snippet_size ? first_bytes.substr(first_bytes.size() - snippet_size)
                                                   : first_bytes);
}

void LineFramer::note_discarded(std::string_view bytes) {
    discarded_ += bytes.size();
    keep_tail(bytes);
}

void LineFramer::keep_tail(std::string_view bytes) {
    if (bytes.size() >= snippet_size) {
        tail_.assign(bytes.substr(bytes.size() - snippet_size));
    } else {
        tail_.append(bytes);
        if (tail_.size() > snippet_size) tail_.erase(0, tail_.size() - snippet_size);
    }
}

void LineFramer::finish_discard() {
    if (!tail_.empty() && tail_.back() == '\r') tail_.pop_back();
    ready_.push_back(Frame{Frame::Kind::oversize, {}, discarded_, std::move(head_), std::move(tail_), nullptr});
    discarding_ = false;
    discarded_ = 0;
    head_.clear();
    tail_.clear();
}

std::optional<LineFramer::Frame> LineFramer::next() {
    if (ready_.empty()) return std::nullopt;
    Frame f = std::move(ready_.front());
    ready_.pop_front();
    return f;
}

}  // namespace switchboard::jsonrpc
