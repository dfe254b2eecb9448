#include <switchboard/core/base64.hpp>
#include <switchboard/jsonrpc/stream_parser.hpp>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value_stack.hpp>

#include <optional>
#include <vector>

namespace switchboard::jsonrpc {

namespace json = boost::json;
using json::error_code;
using json::string_view;

namespace {

constexpr std::size_t head_size = 256;

// The parser's events build the value the way json::parser does (a value_stack), except for a string that is a `blob`
// member: its first characters are held back, and once there are min_decoded_size of them the rest is decoded as it
// arrives. Anything that is not canonical base64 goes back to being text, unchanged.
class Handler {
public:
    explicit Handler(std::size_t max_text) : max_bytes_(max_text / 4 * 3) {}

    static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
    static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
    static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
    static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

    DecodedBlobs blobs;

    json::value release() { return stack_.release(); }

    bool on_document_begin(error_code&) {
        stack_.reset(json::make_shared_resource<json::monotonic_resource>());
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
        return true;
    }
    bool on_string_part(string_view s, std::size_t, error_code&) {
        part(s);
        return true;
    }
    bool on_string(string_view s, std::size_t, error_code&) {
        part(s);
        switch (state_) {
        case State::none:  // an empty string or one that is not a blob
        case State::text: stack_.push_string({}); break;
        case State::holding:
            stack_.push_string(held_);
            held_.clear();
            break;
        case State::decoding:
            if (decoder_->finish()) {
                blobs.push_back(DecodedBlob{pointer(), std::move(bytes_)});
                stack_.push_string({});
            } else {
                back_to_text();
                stack_.push_string({});
            }
            break;
        }
        state_ = State::none;
        decoder_.reset();
        bytes_ = std::string();
        value_done();
        return true;
    }
    bool on_number_part(string_view, error_code&) { return true; }
    bool on_int64(std::int64_t i, string_view, error_code&) {
        stack_.push_int64(i);
        value_done();
        return true;
    }
    bool on_uint64(std::uint64_t u, string_view, error_code&) {
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
    enum class State { none, text, holding, decoding };
    struct Level {
        bool array;
        std::size_t index;  // array: the element being read
        std::string key;    // object: the member being read
    };

    void value_done() {
        if (!path_.empty() && path_.back().array) ++path_.back().index;
    }

    bool in_blob_member() const { return !path_.empty() && !path_.back().array && path_.back().key == "blob"; }

    void part(string_view s) {
        if (state_ == State::none) state_ = in_blob_member() ? State::holding : State::text;
        switch (state_) {
        case State::none:
        case State::text:
            if (!s.empty()) stack_.push_chars(s);
            return;
        case State::holding:
            held_.append(s.data(), s.size());
            if (held_.size() < StreamParser::min_decoded_size) return;
            try {
                bytes_.reserve(max_bytes_);
            } catch (const std::exception&) {  // no address space for it: it grows as it goes instead
            }
            decoder_.emplace(bytes_);
            if (decoder_->feed(held_)) {
                state_ = State::decoding;
            } else {
                stack_.push_chars(held_);
                state_ = State::text;
                decoder_.reset();
            }
            held_ = std::string();
            return;
        case State::decoding:
            if (!decoder_->feed(std::string_view(s.data(), s.size()))) {
                back_to_text();
                stack_.push_chars(s);
            }
            return;
        }
    }

    // The base64 read so far was not a blob after all: it becomes text again, exactly as it came.
    void back_to_text() {
        std::string text = core::base64_encode(bytes_);
        bytes_ = std::string();
        text.append(decoder_->pending());
        stack_.push_chars(text);
        decoder_.reset();
        state_ = State::text;
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

    std::size_t max_bytes_;
    json::value_stack stack_;
    std::vector<Level> path_;
    std::string key_;
    State state_ = State::none;
    std::string held_;   // holding: the blob's first characters
    std::string bytes_;  // decoding: the blob's bytes so far
    std::optional<core::Base64Decoder> decoder_;
};

json::parse_options parse_options() {
    json::parse_options o;
    o.max_depth = max_message_depth;
    return o;
}

}  // namespace

struct StreamParser::Impl {
    explicit Impl(std::size_t max_text) : parser(parse_options(), max_text) {}
    json::basic_parser<Handler> parser;
    error_code ec;
    std::string head;  // the text's first bytes, for an error report
};

StreamParser::StreamParser(std::size_t max_text) : impl_(std::make_unique<Impl>(max_text)) {}
StreamParser::~StreamParser() = default;

void StreamParser::feed(std::string_view piece) {
    if (impl_->head.size() < head_size) impl_->head.append(piece.substr(0, head_size - impl_->head.size()));
    if (impl_->ec) return;
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
