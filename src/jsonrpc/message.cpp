#include <switchboard/core/base64.hpp>
#include <switchboard/jsonrpc/message.hpp>

#include <fmt/format.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/serializer.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace switchboard::jsonrpc {

namespace json = boost::json;

namespace {

// Messages are written straight into one string in the order {"jsonrpc","id","method"|"result"|"error","params"}, the
// same bytes as serializing a json::object built that way, without copying params or result into such an object
// first (a 64 MiB result used to be copied whole before being serialized). One spare byte is reserved for the
// newline the stdio framing appends.

// Serializes into `out` straight from the serializer (a string with escapes, a double; append_value walks the
// rest). The string is resized a piece at a time so that the zero-fill resize() does stays in cache just before the
// serializer overwrites it. With `max`, it stops (returns false) once `out` is longer than that.
template <class Source>
bool append_serialized(std::string& out, const Source& source, std::size_t max = std::string::npos) {
    json::serializer sr;
    sr.reset(source);
    std::size_t len = out.size();
    while (!sr.done()) {
        if (len > max) {
            out.resize(len);
            return false;
        }
        if (out.capacity() - len < 64) out.reserve(std::max<std::size_t>(out.capacity() * 2, len + 256));
        out.resize(std::min(out.capacity(), len + 64 * 1024));
        len += sr.read(out.data() + len, out.size() - len).size();
    }
    out.resize(len);
    return len <= max;
}

// Whether Boost.JSON writes `s` as it is between quotes: nothing to escape (it escapes '"', '\\' and the control
// characters, and writes every other byte as it is). Most strings written are short keys and values, so the end of a
// string is what costs: a byte-by-byte loop took about 5 instructions per byte, eight bytes at a time still about 65
// per string.

// The same test a byte at a time, for what is left over.
bool plain_bytes(const char* p, std::size_t n) {
    for (; n > 0; ++p, --n) {
        const auto c = static_cast<unsigned char>(*p);
        if (c == '"' || c == '\\' || c < 0x20) return false;
    }
    return true;
}

#if defined(__SSE2__)
// A bit set for each of the 16 bytes at `p` that must be escaped.
__attribute__((no_sanitize_address, no_sanitize_thread)) unsigned flagged(const char* p) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);  // v <= 0x1f, unsigned
    const __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    const __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(control, quote), backslash)));
}

// Sixteen bytes at a time. The last 1-15 bytes are read with one load of 16 when that stays within the page (reading
// the bytes after the string there cannot fault; they are masked out), which the address and thread sanitizers would
// report as an overflow.
__attribute__((no_sanitize_address, no_sanitize_thread)) bool plain(std::string_view s) {
    const char* p = s.data();
    std::size_t n = s.size();
    for (; n >= 16; p += 16, n -= 16)
        if (flagged(p) != 0) return false;
    if (n == 0) return true;
    if (s.size() >= 16) return flagged(s.data() + s.size() - 16) == 0;  // the last 16, overlapping what was checked
    if ((reinterpret_cast<std::uintptr_t>(p) & 4095) <= 4096 - 16) return (flagged(p) & ((1u << n) - 1)) == 0;
    return plain_bytes(p, n);
}
#else
// Eight bytes at a time.
bool plain(std::string_view s) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    const auto has_zero = [](std::uint64_t w) { return ((w - ones) & ~w & highs) != 0; };
    const char* p = s.data();
    std::size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        // A byte below 0x20 (the bytes from 0x80 up are excluded by ~w), or a byte equal to '"' or '\\'.
        if (((w - 0x20 * ones) & ~w & highs) != 0 || has_zero(w ^ ('"' * ones)) || has_zero(w ^ ('\\' * ones)))
            return false;
    }
    return plain_bytes(p, n);
}
#endif

// The envelope's parts (ids, method names, keys, short strings) are written here without a serializer of their own,
// the same bytes as Boost.JSON's: a request has half a dozen of them, and each serializer cost a few hundred
// instructions to set up.
// False once `out` is longer than `max`. A long string is reserved once (a 64 MiB one is not grown by doubling), up to
// the cap.
bool append_string(std::string& out, std::string_view s, std::size_t max) {
    if (s.size() <= 256 && plain(s)) {
        out.push_back('"');
        out.append(s);
        out.push_back('"');
        return out.size() <= max;
    }
    if (s.size() > 4096) out.reserve(out.size() + std::min(s.size(), max) + 64);
    return append_serialized(out, s, max);
}

void append_json(std::string& out, std::string_view s) { append_string(out, s, std::string::npos); }

// Writes `v` with the same bytes as Boost.JSON's serializer, except for a number that is not finite: Boost.JSON
// writes `Infinity`, `-Infinity` or `NaN`, which is not JSON and which the peer would refuse as a whole message; it is
// written as null here, as JSON.stringify does. Containers are walked here (a serializer per message cost more to set
// up than these few appends); doubles and strings that need escapes go to the serializer. False once `out` is longer
// than `max`.
bool append_value(std::string& out, const json::value& v, std::size_t max) {
    switch (v.kind()) {
    case json::kind::object: {
        out.push_back('{');
        bool first = true;
        for (const auto& kv : v.get_object()) {
            if (!first) out.push_back(',');
            first = false;
            append_json(out, std::string_view(kv.key()));
            out.push_back(':');
            if (!append_value(out, kv.value(), max)) return false;
        }
        out.push_back('}');
        break;
    }
    case json::kind::array: {
        out.push_back('[');
        bool first = true;
        for (const auto& e : v.get_array()) {
            if (!first) out.push_back(',');
            first = false;
            if (!append_value(out, e, max)) return false;
        }
        out.push_back(']');
        break;
    }
    case json::kind::string: return append_string(out, v.get_string(), max);
    case json::kind::double_:
        if (!std::isfinite(v.get_double()))
            out.append("null");
        else
            append_serialized(out, &v);
        break;
    case json::kind::int64: out.append(fmt::format_int(v.get_int64()).c_str()); break;
    case json::kind::uint64: out.append(fmt::format_int(v.get_uint64()).c_str()); break;
    case json::kind::bool_: out.append(v.get_bool() ? "true" : "false"); break;
    case json::kind::null: out.append("null"); break;
    }
    return out.size() <= max;
}

void append_json(std::string& out, const json::value& v) { append_value(out, v, std::string::npos); }

// Non-finite numbers in `v` become null (see append_value), for a result serialized by a streaming serializer.
void null_non_finite(json::value& v) {
    switch (v.kind()) {
    case json::kind::double_:
        if (!std::isfinite(v.get_double())) v = nullptr;
        return;
    case json::kind::object:
        for (auto& kv : v.get_object()) null_non_finite(kv.value());
        return;
    case json::kind::array:
        for (auto& e : v.get_array()) null_non_finite(e);
        return;
    default: return;
    }
}

// `room`: what the whole message is likely to need, reserved at once (each doubling is an allocation and a copy).
std::string start(const Id* id, std::size_t room = 256) {
    std::string out;
    out.reserve(room);
    out.append(R"({"jsonrpc":"2.0")");
    if (id) {
        out.append(R"(,"id":)");
        append_json(out, *id);
    }
    return out;
}

void finish(std::string& out) {
    out.push_back('}');
    if (out.size() == out.capacity()) out.reserve(out.size() + 1);  // room for the framing's newline
}

// The start of a request (`id` given) or a notification (none): the envelope, the id, the method.
inline std::string start_call(const Id* id, std::string_view method, std::size_t room = 256) {
    std::string out = start(id, room);
    out.append(R"(,"method":)");
    append_json(out, method);
    return out;
}

// A request or a notification whose params are written as they are (null: none).
inline std::string serialize_call(const Id* id, std::string_view method, const json::value& params) {
    std::string out = start_call(id, method);
    if (!params.is_null()) {
        out.append(R"(,"params":)");
        append_json(out, params);
    }
    finish(out);
    return out;
}

}  // namespace

std::string serialize_request(const Id& id, std::string_view method, const json::value& params) {
    return serialize_call(&id, method, params);
}

std::string serialize_members(const json::object& o) {
    std::string out;
    for (const auto& kv : o) {
        if (!out.empty()) out.push_back(',');
        append_json(out, std::string_view(kv.key()));
        out.push_back(':');
        append_json(out, kv.value());
    }
    return out;
}

MetaMembers::MetaMembers(const json::object& members) : json(serialize_members(members)) {
    for (const auto& kv : members) keys.emplace_back(kv.key());
}

namespace {

// `o`'s members (null: none) with its _meta last and `meta`'s members (null: none) added to it: the JSON of merging
// `meta` into a copy of `o` and serializing that (ours win over same-named keys, other _meta keys stay, a _meta that is
// no object is replaced), without the copy. With `token`, _meta.progressToken is that number. False once `out` is
// longer than `max`. `lead`: members written first, as JSON text (serialize_result's `members`).
bool append_with_meta(std::string& out, const json::object* o, const MetaMembers* meta, std::size_t max,
                      std::string_view lead = {}, std::optional<std::int64_t> token = std::nullopt) {
    out.push_back('{');
    out.append(lead);
    bool first = lead.empty();
    auto member = [&](std::string_view key, const json::value& value) {
        if (!first) out.push_back(',');
        first = false;
        append_json(out, key);
        out.push_back(':');
        return append_value(out, value, max);
    };
    const json::object* own_meta = nullptr;
    if (o)
        for (const auto& kv : *o) {
            if (kv.key() == "_meta") {
                if (kv.value().is_object()) own_meta = &kv.value().get_object();
            } else if (!member(std::string_view(kv.key()), kv.value())) {
                return false;
            }
        }
    if (!first) out.push_back(',');
    out.append(R"("_meta":{)");
    first = true;
    auto ours = [&](std::string_view key) {
        return (token && key == "progressToken") ||
               (meta && std::find(meta->keys.begin(), meta->keys.end(), key) != meta->keys.end());
    };
    if (own_meta)
        for (const auto& kv : *own_meta)
            if (!ours(kv.key()) && !member(std::string_view(kv.key()), kv.value())) return false;
    if (token) {
        if (!first) out.push_back(',');
        first = false;
        out.append(R"("progressToken":)");
        out.append(fmt::format_int(*token).c_str());
    }
    if (meta && !meta->json.empty()) {
        if (!first) out.push_back(',');
        out.append(meta->json);
    }
    out.append("}}");
    return out.size() <= max;
}

}  // namespace

std::string serialize_request(const Id& id, std::string_view method, const json::value& params,
                              const MetaMembers& meta) {
    return serialize_request(id, method, params, &meta, std::nullopt);
}

std::string serialize_request(const Id& id, std::string_view method, const json::value& params, const MetaMembers* meta,
                              std::optional<std::int64_t> progress_token) {
    const auto* o = params.if_object();
    if (!o && !params.is_null()) return serialize_request(id, method, params);  // MCP params are objects
    // A 2026-07-28 request's _meta alone is a few hundred bytes: room for it besides the usual.
    std::string out = start_call(&id, method, 256 + (meta ? meta->json.size() : 0));
    out.append(R"(,"params":)");
    append_with_meta(out, o, meta, std::string::npos, {}, progress_token);
    finish(out);
    return out;
}

std::string serialize_notification(std::string_view method, const json::value& params) {
    return serialize_call(nullptr, method, params);
}

std::string serialize_result(const Id& id, const json::value& result) {
    return *serialize_result(id, result, std::string::npos);  // no cap: never nullopt
}

std::optional<std::string> serialize_result(const Id& id, const json::value& result, std::size_t max,
                                            const MetaMembers* meta, std::string_view members) {
    std::string out = start(&id);
    out.append(R"(,"result":)");
    const auto* o = result.if_object();
    if (o && !members.empty()) {
        out.reserve(out.size() + members.size() + (meta ? meta->json.size() : 0) + 256);
        if (meta) {
            if (!append_with_meta(out, o, meta, max, members)) return std::nullopt;
        } else {
            out.push_back('{');
            out.append(members);
            for (const auto& kv : *o) {
                out.push_back(',');
                append_json(out, std::string_view(kv.key()));
                out.push_back(':');
                if (!append_value(out, kv.value(), max)) return std::nullopt;
            }
            out.push_back('}');
        }
    } else if (meta && o) {
        if (!append_with_meta(out, o, meta, max)) return std::nullopt;
    } else if (result.is_null()) {
        out.append("{}");
    } else if (!append_value(out, result, max)) {
        return std::nullopt;
    }
    finish(out);
    return out;
}

void merge_meta(json::value& result, const MetaMembers& meta) {
    auto* o = result.if_object();
    if (!o) return;
    const json::value members = json::parse("{" + meta.json + "}");
    auto& m = (*o)["_meta"];
    if (!m.is_object()) m = json::object(o->storage());
    for (const auto& kv : members.get_object()) m.get_object()[kv.key()] = kv.value();
}

std::optional<EnvelopePeek> peek_envelope(std::string_view text) {
    constexpr std::string_view head = R"({"jsonrpc":"2.0",)";
    if (!text.starts_with(head)) return std::nullopt;
    std::string_view rest = text.substr(head.size());
    EnvelopePeek peek;
    if (rest.starts_with(R"("id":)")) {
        rest.remove_prefix(5);
        std::size_t end = 0;
        if (rest.starts_with('"')) {  // a string without escapes (one with them is left to the parser)
            end = rest.find_first_of("\\\"", 1);
            if (end == std::string_view::npos || rest[end] != '"') return std::nullopt;
            ++end;
        } else {
            while (end < rest.size() && (rest[end] == '-' || (rest[end] >= '0' && rest[end] <= '9'))) ++end;
            if (end == 0) return std::nullopt;  // null, or a number written otherwise
        }
        peek.id = rest.substr(0, end);
        rest.remove_prefix(end);
        if (!rest.starts_with(',')) return std::nullopt;
        rest.remove_prefix(1);
        if (rest.starts_with(R"("method":)")) {
            peek.kind = Message::Kind::request;
        } else if (rest.starts_with(R"("result":)")) {
            peek.kind = Message::Kind::response;
        } else if (rest.starts_with(R"("error":)")) {
            peek.kind = Message::Kind::response;
            peek.error = true;
        } else {
            return std::nullopt;
        }
        return peek;
    }
    if (!rest.starts_with(R"("method":)")) return std::nullopt;
    return peek;  // a notification
}

std::string serialize_error(const Id& id, const Error& error) {
    std::string out = start(&id);  // a null id when the request's id could not be read
    out.append(R"(,"error":)");
    append_json(out, error.to_json());
    finish(out);
    return out;
}

struct ResultStream::Impl {
    // Move-constructed: the result keeps its storage instead of being copied.
    Impl(const Id& id, json::value r) : head(start(&id)), result(std::move(r)) {
        head.append(R"(,"result":)");
        if (result.is_null()) result = json::object();
        null_non_finite(result);  // the serializer would write them as `Infinity` and `NaN`
        sr.reset(&result);
    }
    std::string head;  // {"jsonrpc":"2.0","id":…,"result":
    std::size_t head_at = 0;
    json::value result;
    json::serializer sr;
    bool closed = false;  // the final "}" written
};

ResultStream::ResultStream(const Id& id, json::value result)
    : impl_(std::make_unique<Impl>(id, std::move(result))) {}

std::string ResultStream::text() {
    std::string out = std::move(impl_->head);
    append_json(out, impl_->result);
    out.push_back('}');
    impl_->closed = true;
    return out;
}

ResultStream::~ResultStream() = default;

bool ResultStream::done() const { return impl_->closed; }

std::size_t ResultStream::read(char* buf, std::size_t size) {
    auto& s = *impl_;
    std::size_t n = 0;
    if (s.head_at < s.head.size()) {
        n = std::min(size, s.head.size() - s.head_at);
        std::copy_n(s.head.data() + s.head_at, n, buf);
        s.head_at += n;
    }
    if (n < size && !s.sr.done()) n += s.sr.read(buf + n, size - n).size();
    if (n < size && s.sr.done() && !s.closed) {
        buf[n++] = '}';
        s.closed = true;
    }
    return n;
}

void restore_blobs(json::value& root, DecodedBlobs blobs) {
    for (auto& b : blobs) {
        json::error_code ec;
        json::value* at = root.find_pointer(b.pointer, ec);
        // Only into the empty string left in its place (with a key given twice, the value kept may be another).
        if (!at || !at->is_string() || !at->get_string().empty()) continue;
        json::string text(at->storage());
        text.resize(core::base64_size(b.bytes.size()));
        core::base64_write(text.data(), b.bytes);
        b.bytes = std::string();  // one copy at a time
        *at = std::move(text);
    }
}

std::string preview(std::string_view text, std::size_t max) {
    if (text.size() <= max) return std::string(text);
    // Do not cut inside a UTF-8 sequence.
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + "…";
}

}  // namespace switchboard::jsonrpc
