#include <switchboard/core/base64.hpp>
#include <switchboard/jsonrpc/stream_parser.hpp>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

#include <optional>
#include <vector>

namespace switchboard::jsonrpc {

namespace json = boost::json;
using json::error_code;
using json::string_view;

namespace {

constexpr std::size_t head_size = 256;

// The parser's events build the value the way json::parser does (a value_stack), except for big strings. A string's
// first characters are held back; once there are min_decoded_size of them, a `blob` member (of a reply its requester
// wants the bytes of, see BlobPolicy) is decoded as the rest arrives, and any other string is built straight into a
// json::string reserved for the most it could be, moved into the value at the end (the value_stack would hold it
// twice). Anything that is not canonical base64 goes back to being text, unchanged.
class Handler {
public:
    explicit Handler(BlobPolicy policy) : policy_(std::move(policy)) {}

    static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
    static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
    static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
    static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

    DecodedBlobs blobs;
    std::size_t remaining = 0;  // the most the rest of the text can be

    // The value, with the big strings moved in (the same storage: no copy).
    json::value release() {
        json::value v = stack_.release();
        for (auto& [pointer, text] : big_) {
            json::error_code ec;
            json::value* at = v.find_pointer(pointer, ec);
            if (at && at->is_string() && at->get_string().empty()) *at = std::move(text);
        }
        big_.clear();
        return v;
    }

    bool on_document_begin(error_code&) {
        // The default storage, which the big strings have too, so that moving them into the value copies nothing, as in
        // parse_message. Not a monotonic arena: one that holds an 85 MiB string touched 85 MiB more (measured).
        stack_.reset();
        return true;
    }
    bool on_document_end(error_code&) { return true; }
    bool on_object_begin(error_code&) {
        path_.push_back(Level{false, 0, {}});
        return true;
    }
    bool on_object_end(std::size_t n, error_code&) {
        stack_.push_object(n);
        path_.pop_back();
        value_done();
        return true;
    }
    bool on_array_begin(error_code&) {
        path_.push_back(Level{true, 0, {}});
        return true;
    }
    bool on_array_end(std::size_t n, error_code&) {
        stack_.push_array(n);
        path_.pop_back();
        value_done();
        return true;
    }
    bool on_key_part(string_view s, std::size_t, error_code&) {
        stack_.push_chars(s);
        key_.append(s.data(), s.size());
        return true;
    }
    bool on_key(string_view s, std::size_t, error_code&) {
        stack_.push_key(s);
        key_.append(s.data(), s.size());
        path_.back().key = std::move(key_);
        key_.clear();
        if (top_level() && path_.back().key == "method") request_ = true;
        if (!big_.empty() || !blobs.empty()) forget_replaced();
        return true;
    }
    bool on_string_part(string_view s, std::size_t, error_code&) {
        part(s);
        return true;
    }
    bool on_string(string_view s, std::size_t, error_code&) {
        part(s);
        switch (state_) {
        case State::none:
        case State::holding:
            if (at_top_level_id()) id_ = json::string(held_);
            stack_.push_string(held_);
            held_.clear();
            break;
        case State::decoding:
            if (decoder_->finish()) {
                blobs.push_back(DecodedBlob{pointer(), std::move(bytes_)});
                stack_.push_string({});
                break;
            }
            back_to_text();
            [[fallthrough]];
        case State::big:
            big_.emplace_back(pointer(), std::move(text_));
            stack_.push_string({});
            break;
        }
        state_ = State::none;
        decoder_.reset();
        bytes_ = std::string();
        text_ = json::string();
        value_done();
        return true;
    }
    bool on_number_part(string_view, error_code&) { return true; }
    bool on_int64(std::int64_t i, string_view, error_code&) {
        if (at_top_level_id()) id_ = i;
        stack_.push_int64(i);
        value_done();
        return true;
    }
    bool on_uint64(std::uint64_t u, string_view, error_code&) {
        if (at_top_level_id()) id_ = u;
        stack_.push_uint64(u);
        value_done();
        return true;
    }
    bool on_double(double d, string_view, error_code&) {
        stack_.push_double(d);
        value_done();
        return true;
    }
    bool on_bool(bool b, error_code&) {
        stack_.push_bool(b);
        value_done();
        return true;
    }
    bool on_null(error_code&) {
        stack_.push_null();
        value_done();
        return true;
    }
    bool on_comment_part(string_view, error_code&) { return true; }
    bool on_comment(string_view, error_code&) { return true; }

private:
    enum class State { none, holding, decoding, big };
    struct Level {
        bool array;
        std::size_t index;  // array: the element being read
        std::string key;    // object: the member being read
    };

    // A key given twice: the object keeps the last value (as Boost.JSON does), so what was taken out of the earlier
    // one is dropped.
    void forget_replaced() {
        const std::string at = pointer();
        auto under = [&](const std::string& p) {
            return p == at || (p.size() > at.size() && p.compare(0, at.size(), at) == 0 && p[at.size()] == '/');
        };
        std::erase_if(big_, [&](const auto& entry) { return under(entry.first); });
        std::erase_if(blobs, [&](const DecodedBlob& b) { return under(b.pointer); });
    }

    bool top_level() const { return path_.size() == 1 && !path_.back().array; }
    bool at_top_level_id() const { return top_level() && path_.back().key == "id"; }

    void value_done() {
        if (!path_.empty() && path_.back().array) ++path_.back().index;
    }

    // A `blob` is decoded unless this is a request or a notification, or a reply whose requester (known when its id
    // came first, as it does from every SDK) wants the text: a gateway forwarding it, say.
    bool decode_here() const {
        if (path_.empty() || path_.back().array || path_.back().key != "blob" || request_) return false;
        return !policy_ || id_.is_null() || policy_(id_);
    }

    // Room for the most the rest of the text can hold: address space, not memory, and no copy as it grows. Only the
    // message's first big string gets it (the usual message has one), so that many of them do not each hold the
    // line's limit of address space; the others grow as they go.
    template <class Buffer>
    void reserve(Buffer& b, std::size_t n) {
        if (reserved_) return;
        try {
            b.reserve(std::min(n, static_cast<std::size_t>(b.max_size())));
            reserved_ = true;
        } catch (const std::exception&) {  // no address space for it: it grows as it goes instead
        }
    }

    void part(string_view s) {
        if (state_ == State::none) state_ = State::holding;
        switch (state_) {
        case State::none:
        case State::holding:
            held_.append(s.data(), s.size());
            if (held_.size() >= StreamParser::min_decoded_size) start_big();
            return;
        case State::decoding:
            if (!decoder_->feed(std::string_view(s.data(), s.size()))) {
                back_to_text();
                text_.append(s);
            }
            return;
        case State::big: text_.append(s); return;
        }
    }

    void start_big() {
        if (decode_here()) {
            reserve(bytes_, (held_.size() + remaining) / 4 * 3);
            decoder_.emplace(bytes_);
            if (decoder_->feed(held_)) {
                state_ = State::decoding;
                held_ = std::string();
                return;
            }
            decoder_.reset();
            bytes_ = std::string();
        }
        text_ = json::string();
        reserve(text_, held_.size() + remaining);
        text_.append(held_);
        held_ = std::string();
        state_ = State::big;
    }

    // The base64 read so far was not a blob after all: it becomes text again, exactly as it came.
    void back_to_text() {
        text_ = json::string();
        reserve(text_, core::base64_size(bytes_.size()) + decoder_->pending().size() + remaining);
        const std::size_t n = core::base64_size(bytes_.size());
        text_.resize(n);
        core::base64_write(text_.data(), bytes_);
        bytes_ = std::string();
        text_.append(decoder_->pending());
        decoder_.reset();
        state_ = State::big;
    }

    // RFC 6901: "~" is written "~0" and "/" "~1".
    std::string pointer() const {
        std::string out;
        for (const auto& level : path_) {
            out.push_back('/');
            if (level.array) {
                out += std::to_string(level.index);
                continue;
            }
            for (char c : level.key) {
                if (c == '~')
                    out += "~0";
                else if (c == '/')
                    out += "~1";
                else
                    out.push_back(c);
            }
        }
        return out;
    }

    BlobPolicy policy_;
    json::value_stack stack_;
    bool reserved_ = false;  // a big string got its reservation
    std::vector<Level> path_;
    std::string key_;
    bool request_ = false;  // a top-level "method" was seen
    json::value id_;        // the top-level "id", once seen
    State state_ = State::none;
    std::string held_;   // holding: the string's first characters
    std::string bytes_;  // decoding: the blob's bytes so far
    std::optional<core::Base64Decoder> decoder_;
    json::string text_;                                      // big: the string so far
    std::vector<std::pair<std::string, json::string>> big_;  // pointer and text of each big string
};

json::parse_options parse_options() {
    json::parse_options o;
    o.max_depth = max_message_depth;
    return o;
}

}  // namespace

struct StreamParser::Impl {
    Impl(std::size_t max, BlobPolicy policy) : parser(parse_options(), std::move(policy)), max_text(max) {}
    json::basic_parser<Handler> parser;
    std::size_t max_text;
    std::size_t fed = 0;
    error_code ec;
    std::string head;  // the text's first bytes, for an error report
};

StreamParser::StreamParser(std::size_t max_text, BlobPolicy policy)
    : impl_(std::make_unique<Impl>(max_text, std::move(policy))) {}
StreamParser::~StreamParser() = default;

void StreamParser::feed(std::string_view piece) {
    if (impl_->head.size() < head_size) impl_->head.append(piece.substr(0, head_size - impl_->head.size()));
    if (impl_->ec) return;
    // What this piece and the rest can still be: the bound a big string is reserved to.
    impl_->parser.handler().remaining = impl_->max_text > impl_->fed ? impl_->max_text - impl_->fed : 0;
    impl_->fed += piece.size();
    try {
        // After a whole document the parser takes nothing more: what it leaves is data after the message.
        const std::size_t n = impl_->parser.write_some(true, piece.data(), piece.size(), impl_->ec);
        if (!impl_->ec && n < piece.size()) impl_->ec = json::error::extra_data;
    } catch (const std::exception&) {  // out of memory in the value: this message fails, not the reader
        impl_->ec = json::error::exception;
    }
}

StreamedMessage StreamParser::finish() {
    StreamedMessage out;
    out.head = std::move(impl_->head);
    try {
        if (!impl_->ec) impl_->parser.write_some(false, nullptr, 0, impl_->ec);
    } catch (const std::exception&) {
        impl_->ec = json::error::exception;
    }
    if (impl_->ec || !impl_->parser.done()) {
        out.error = parse_error(impl_->ec ? impl_->ec : make_error_code(json::error::incomplete));
        return out;
    }
    out.value = impl_->parser.handler().release();
    out.blobs = std::move(impl_->parser.handler().blobs);
    return out;
}

}  // namespace switchboard::jsonrpc
