// Reading a JSON-RPC message (message.hpp): from its text, or from a value StreamParser built from pieces.
#include <switchboard/jsonrpc/message.hpp>

#include <fmt/format.h>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value_stack.hpp>

#include <algorithm>
#include <array>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cmath>
#include <optional>

namespace switchboard::jsonrpc {

namespace json = boost::json;

namespace {

Error invalid(std::string why) { return Error{code::invalid_request, "Invalid Request: " + std::move(why), {}, false}; }

bool valid_id(const json::value& id) { return id.is_int64() || id.is_uint64() || id.is_string(); }

// Whether every number in `v` is finite. Boost.JSON reads a number too big for a double (1e400) as infinity, and
// would write it back as `Infinity`, which is not JSON: such a message is refused instead of relayed broken.
bool all_finite(const json::value& v) {
    switch (v.kind()) {
    case json::kind::double_: return std::isfinite(v.get_double());
    case json::kind::object:
        for (const auto& kv : v.get_object())
            if (!all_finite(kv.value())) return false;
        return true;
    case json::kind::array:
        for (const auto& e : v.get_array())
            if (!all_finite(e)) return false;
        return true;
    default: return true;
    }
}

Error not_finite() { return Error{code::parse_error, "Parse error: a number too large for a double", {}, false}; }

// The envelope's members, wherever they were read from (null: absent).
enum Member : std::size_t { jsonrpc_member, id_member, method_member, params_member, result_member, error_member };
inline constexpr std::size_t member_count = 6;

std::optional<Member> member_of(std::string_view key) {
    if (key == "jsonrpc") return jsonrpc_member;
    if (key == "id") return id_member;
    if (key == "method") return method_member;
    if (key == "params") return params_member;
    if (key == "result") return result_member;
    if (key == "error") return error_member;
    return std::nullopt;
}

using Parts = std::array<json::value*, member_count>;

// The checks and the Message, the same for both ways in. Members are moved out of the parts: nothing is copied.
Outcome<Message> message_from(const Parts& p, DecodedBlobs blobs) {
    json::value *version = p[jsonrpc_member], *id = p[id_member], *method = p[method_member],
                *params = p[params_member], *result = p[result_member], *error = p[error_member];
    if (!version || !version->is_string() || version->as_string() != "2.0")
        return invalid("\"jsonrpc\" must be \"2.0\"");
    if (method) {
        if (!method->is_string()) return invalid("\"method\" must be a string");
        if (params && !params->is_object() && !params->is_array()) return invalid("\"params\" must be an object");
        if (id && !valid_id(*id)) return invalid("\"id\" must be a string or an integer");
        return Message{id ? Message::Kind::request : Message::Kind::notification,
                       id ? std::move(*id) : json::value(),
                       std::string(method->get_string()),
                       params ? std::move(*params) : json::value(),
                       json::value(),
                       std::nullopt,
                       {}};
    }
    json::value response_id = id ? std::move(*id) : json::value();
    if (result) {
        if (!id || !valid_id(response_id)) return invalid("response without a valid \"id\"");
        return Message{Message::Kind::response, std::move(response_id), {},
                       json::value(),           std::move(*result),     std::nullopt,
                       std::move(blobs)};
    }
    if (error) {
        Message m;
        m.kind = Message::Kind::response;
        m.id = std::move(response_id);
        m.error = Error::from_json(*error);
        return m;
    }
    return invalid("neither \"method\", \"result\" nor \"error\"");
}

// Boost.JSON's parse events (its SAX interface), turned into the envelope's members without building the envelope
// object: each member's value is built on its own with a value_stack, the way json::parser builds a whole document,
// and numbers too big for a double are noticed as they are read. A text that is not an object stops the parse; it,
// and a text with such a number, is then parsed the general way.
class EnvelopeHandler {
public:
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();

    EnvelopeHandler(unsigned char* temp, std::size_t size) : stack_(json::storage_ptr(), temp, size) {}

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }

    bool on_object_begin(json::error_code&) {
        if (depth_ == 0) {
            depth_ = 1;
            return true;
        }
        return open();
    }
    bool on_object_end(std::size_t n, json::error_code&) {
        if (depth_ == 1) {
            depth_ = 0;
            return true;
        }
        --depth_;
        stack_.push_object(n);
        return close();
    }
    bool on_array_begin(json::error_code& ec) { return depth_ == 0 ? not_object(ec) : open(); }
    bool on_array_end(std::size_t n, json::error_code&) {
        --depth_;
        stack_.push_array(n);
        return close();
    }

    bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
        if (depth_ == 1)
            key_.append(s.data(), s.size());
        else
            stack_.push_chars(s);
        return true;
    }
    bool on_key(json::string_view s, std::size_t, json::error_code&) {
        if (depth_ == 1) {
            if (key_.empty()) {
                member_ = member_of(s);
            } else {
                key_.append(s.data(), s.size());
                member_ = member_of(key_);
                key_.clear();
            }
        } else {
            stack_.push_key(s);
        }
        return true;
    }

    bool on_string_part(json::string_view s, std::size_t, json::error_code& ec) {
        if (depth_ == 0) return not_object(ec);
        if (depth_ == 1 && !in_string_) stack_.reset();
        in_string_ = true;
        stack_.push_chars(s);
        return true;
    }
    bool on_string(json::string_view s, std::size_t, json::error_code& ec) {
        if (!scalar(ec)) return false;
        in_string_ = false;
        stack_.push_string(s);
        return close();
    }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t i, json::string_view, json::error_code& ec) {
        if (!scalar(ec)) return false;
        stack_.push_int64(i);
        return close();
    }
    bool on_uint64(std::uint64_t u, json::string_view, json::error_code& ec) {
        if (!scalar(ec)) return false;
        stack_.push_uint64(u);
        return close();
    }
    bool on_double(double d, json::string_view, json::error_code& ec) {
        if (!scalar(ec)) return false;
        finite_ = finite_ && std::isfinite(d);
        stack_.push_double(d);
        return close();
    }
    bool on_bool(bool b, json::error_code& ec) {
        if (!scalar(ec)) return false;
        stack_.push_bool(b);
        return close();
    }
    bool on_null(json::error_code& ec) {
        if (!scalar(ec)) return false;
        stack_.push_null();
        return close();
    }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

    bool not_object() const { return not_object_; }
    bool finite() const { return finite_; }
    Parts& parts() { return parts_; }

private:
    // A member's value starts: its own stack.
    bool open() {
        if (depth_ == 1) stack_.reset();
        ++depth_;
        return true;
    }
    bool scalar(json::error_code& ec) {
        if (depth_ == 0) return not_object(ec);
        if (depth_ == 1 && !in_string_) stack_.reset();
        return true;
    }
    // A value ended: at the envelope's level it is a member's whole value, kept when it is one of ours (the last
    // of a key given twice wins, as in json::object).
    bool close() {
        if (depth_ != 1) return true;
        json::value v = stack_.release();
        if (member_) {
            values_[*member_] = std::move(v);
            parts_[*member_] = &values_[*member_];
        }
        return true;
    }
    bool not_object(json::error_code& ec) {
        not_object_ = true;
        ec = json::error::syntax;  // any error: it stops the parse
        return false;
    }

    json::value_stack stack_;
    Parts parts_{};
    std::array<json::value, member_count> values_;  // where parts_ points
    std::optional<Member> member_;                  // the envelope member being read (none: not one of ours)
    std::string key_;                               // an envelope key that came in parts
    std::size_t depth_ = 0;
    bool in_string_ = false;
    bool finite_ = true;
    bool not_object_ = false;
};

// The whole text parsed to a value, then read.
Outcome<Message> parse_whole(std::string_view text, const json::parse_options& options) {
    json::error_code ec;
    json::value v = json::parse(text, ec, json::storage_ptr(), options);
    if (ec) return parse_error(ec);
    return parse_message(std::move(v), {});
}

}  // namespace

Outcome<Message> parse_message(std::string_view text) {
    // Parsed in the default storage (mimalloc). A monotonic arena per message made the parse itself cheaper, but
    // every value then held a counted reference to it (an atomic increment per value parsed, a decrement per value
    // freed) and freeing still walked the tree. Measured on a stdio round trip: 1.1k fewer instructions in the host,
    // 0.6k in the demo server, about 0.15 µs less.
    // Real tool schemas nest deeper than Boost.JSON's default limit of 32; a hostile document of 100,000 levels is
    // still refused (the parser itself does not recurse, and nothing built from a message nests deeper than this).
    json::parse_options options;
    options.max_depth = max_message_depth;
    unsigned char temp[BOOST_JSON_STACK_BUFFER_SIZE];
    json::basic_parser<EnvelopeHandler> parser(options, temp, sizeof temp);
    json::error_code ec;
    const auto n = parser.write_some(false, text.data(), text.size(), ec);
    auto& handler = parser.handler();
    if (!ec && n < text.size()) ec = json::error::extra_data;
    // Not an object (an array, a string…), or a number too big for a double, which a later duplicate of its key may
    // have replaced: the general way says what the whole value is, for the same answer as before.
    if (handler.not_object() || (!ec && !handler.finite())) return parse_whole(text, options);
    if (ec) return parse_error(ec);
    return message_from(handler.parts(), {});
}

namespace {

// Boost.JSON's parse events, answered without building anything: json_text_is_valid's parser.
struct CheckHandler {
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();
    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code&) { return true; }
    bool on_object_end(std::size_t, json::error_code&) { return true; }
    bool on_array_begin(json::error_code&) { return true; }
    bool on_array_end(std::size_t, json::error_code&) { return true; }
    bool on_key_part(std::string_view, std::size_t, json::error_code&) { return true; }
    bool on_key(std::string_view, std::size_t, json::error_code&) { return true; }
    bool on_string_part(std::string_view, std::size_t, json::error_code&) { return true; }
    bool on_string(std::string_view, std::size_t, json::error_code&) { return true; }
    bool on_number_part(std::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t, std::string_view, json::error_code&) { return true; }
    bool on_uint64(std::uint64_t, std::string_view, json::error_code&) { return true; }
    // parse_message refuses a number too big for a double (not_finite): so does this.
    bool on_double(double d, std::string_view, json::error_code& ec) {
        if (std::isfinite(d)) return true;
        ec = json::error::exponent_overflow;
        return false;
    }
    bool on_bool(bool, json::error_code&) { return true; }
    bool on_null(json::error_code&) { return true; }
    bool on_comment_part(std::string_view, json::error_code&) { return true; }
    bool on_comment(std::string_view, json::error_code&) { return true; }
};

bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The first quote or backslash at or after text[i]; npos when there is none. Sixteen bytes at a time.
std::size_t find_quote_or_backslash(std::string_view text, std::size_t i) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    for (; i + 16 <= text.size(); i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
        const auto m = static_cast<unsigned>(
            _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash))));
        if (m != 0) return i + __builtin_ctz(m);
    }
#endif
    for (; i < text.size(); ++i)
        if (text[i] == '"' || text[i] == '\\') return i;
    return std::string_view::npos;
}

// One past the closing quote of the string whose opening quote is at text[i]; npos when it does not close.
std::size_t string_end(std::string_view text, std::size_t i) {
    for (i = find_quote_or_backslash(text, i + 1); i != std::string_view::npos; i = find_quote_or_backslash(text, i)) {
        if (text[i] == '"') return i + 1;
        i += 2;  // a backslash and the character it escapes, whatever it is
    }
    return std::string_view::npos;
}

// One past the string, object or array that starts at text[i]; npos when it does not end inside `text`. The quotes
// and brackets of sixteen bytes are found at once and walked as bits (a block with a backslash is walked a byte at a
// time): object_members reads a forwarded result three times (the envelope, the session, the gateway), and a byte
// at a time that cost about 12 instructions a byte.
std::size_t nested_end(std::string_view text, std::size_t i) {
    const char* d = text.data();
    const std::size_t n = text.size();
    std::size_t depth = 0;
    bool in_string = false, escaped = false;
    while (i < n) {
#if defined(__SSE2__)
        if (i + 16 <= n && !escaped) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
            const auto eq = [&v](char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
            if (_mm_movemask_epi8(eq('\\')) == 0) {
                const auto quotes = static_cast<unsigned>(_mm_movemask_epi8(eq('"')));
                const auto opens = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(eq('{'), eq('['))));
                const auto closes = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(eq('}'), eq(']'))));
                for (unsigned bits = quotes | opens | closes; bits != 0; bits &= bits - 1) {
                    const unsigned k = static_cast<unsigned>(__builtin_ctz(bits)), bit = 1u << k;
                    if (in_string || (quotes & bit)) {
                        if (!(quotes & bit)) continue;  // a bracket inside a string
                        in_string = !in_string;
                        if (!in_string && depth == 0) return i + k + 1;  // the string that was the value
                    } else if (opens & bit) {
                        ++depth;
                    } else if (--depth == 0) {
                        return i + k + 1;
                    }
                }
                i += 16;
                continue;
            }
        }
#endif
        // A byte at a time, to the end of this block of sixteen (or of the text).
        for (const std::size_t stop = std::min(n, i + 16); i < stop; ++i) {
            const char c = d[i];
            if (in_string) {
                if (escaped) {
                    escaped = false;
                } else if (c == '\\') {
                    escaped = true;
                } else if (c == '"') {
                    in_string = false;
                    if (depth == 0) return i + 1;  // the string that was the value
                }
            } else if (c == '"') {
                in_string = true;
            } else if (c == '{' || c == '[') {
                ++depth;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return i + 1;
            }
        }
    }
    return std::string_view::npos;
}

// One past the value that starts at text[i] (not whitespace); npos when it does not end inside `text`.
std::size_t value_end(std::string_view text, std::size_t i) {
    const char c = text[i];
    if (c == '"' || c == '{' || c == '[') return nested_end(text, i);
    // A number, true, false or null: up to what may follow a value.
    while (i < text.size() && !json_space(text[i]) && text[i] != ',' && text[i] != '}' && text[i] != ']') ++i;
    return i;
}

std::size_t skip_space(std::string_view text, std::size_t i) {
    while (i < text.size() && json_space(text[i])) ++i;
    return i;
}

}  // namespace

bool json_text_is_valid(std::string_view text, std::size_t max_depth) {
    json::parse_options options;
    options.max_depth = max_depth;
    json::basic_parser<CheckHandler> parser(options);
    json::error_code ec;
    const auto n = parser.write_some(false, text.data(), text.size(), ec);
    return !ec && n == text.size();
}

json::value parse_json_text(std::string_view text) {
    json::parse_options options;
    options.max_depth = max_message_depth;
    return json::parse(text, json::storage_ptr(), options);
}

std::optional<TextMembers> object_members(std::string_view text) {
    constexpr auto npos = std::string_view::npos;
    // One object returned from every path (no copy of the members into the optional).
    std::optional<TextMembers> out;
    std::size_t i = skip_space(text, 0);
    if (i == text.size() || text[i] != '{') return out;
    auto& members = out.emplace();
    i = skip_space(text, i + 1);
    if (i < text.size() && text[i] == '}') {
        if (skip_space(text, i + 1) != text.size()) out.reset();
        return out;
    }
    for (;;) {
        bool ok = i < text.size() && text[i] == '"';
        const auto key_end = ok ? string_end(text, i) : npos;
        const auto key = key_end == npos ? std::string_view() : text.substr(i + 1, key_end - i - 2);
        // A key with an escape is left to a parser (compared as written it could not be found).
        ok = key_end != npos && std::find(key.begin(), key.end(), '\\') == key.end();
        if (ok) i = skip_space(text, key_end);
        ok = ok && i < text.size() && text[i] == ':';
        if (ok) i = skip_space(text, i + 1);
        const auto end = ok && i < text.size() ? value_end(text, i) : npos;
        if (end == npos || end == i) break;
        members.push_back(TextMember{key, text.substr(i, end - i)});
        i = skip_space(text, end);
        if (i >= text.size()) break;
        if (text[i] == '}') {
            if (skip_space(text, i + 1) != text.size()) out.reset();
            return out;
        }
        if (text[i] != ',') break;
        i = skip_space(text, i + 1);
    }
    out.reset();
    return out;
}

Error parse_error(const boost::system::error_code& ec) {
    if (ec == json::error::too_deep)
        return Error{
            code::parse_error, fmt::format("Parse error: nested deeper than {} levels", max_message_depth), {}, false};
    return Error{code::parse_error, "Parse error: " + ec.message(), {}, false};
}

Outcome<Message> parse_message(json::value v, DecodedBlobs blobs) {
    if (!all_finite(v)) return not_finite();
    auto* o = v.if_object();
    if (!o) {
        if (v.is_array()) return invalid("batches are not supported");
        return invalid("not an object");
    }
    // One pass over the members finds the envelope's parts (a lookup each scanned the object again).
    Parts parts{};
    for (auto& kv : *o)
        if (auto m = member_of(kv.key())) parts[*m] = &kv.value();
    if (!blobs.empty() && (parts[method_member] || !parts[result_member])) {
        // A response's blobs stay apart (pointers from its result); anywhere else they go back in as base64.
        restore_blobs(v, std::move(blobs));
        blobs.clear();
    } else if (!blobs.empty()) {
        for (auto& b : blobs) {
            if (b.pointer.rfind("/result/", 0) != 0) {  // not inside the result: put it back where it was
                DecodedBlobs one;
                one.push_back(std::move(b));
                restore_blobs(v, std::move(one));
                b.pointer.clear();
            } else {
                b.pointer.erase(0, 7);
            }
        }
        std::erase_if(blobs, [](const DecodedBlob& b) { return b.pointer.empty(); });
    }
    return message_from(parts, std::move(blobs));
}

}  // namespace switchboard::jsonrpc
