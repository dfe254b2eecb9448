#include <switchboard/telemetry/otlp_encode.hpp>

#include <switchboard/core/text.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace switchboard::telemetry {

namespace json = boost::json;

namespace {

// The field numbers, from opentelemetry-proto (see the header).
namespace field {
// ExportTraceServiceRequest
constexpr std::uint32_t request_resource_spans = 1;
// ResourceSpans
constexpr std::uint32_t resource_spans_resource = 1;
constexpr std::uint32_t resource_spans_scope_spans = 2;
// Resource
constexpr std::uint32_t resource_attributes = 1;
// ScopeSpans
constexpr std::uint32_t scope_spans_scope = 1;
constexpr std::uint32_t scope_spans_spans = 2;
// InstrumentationScope
constexpr std::uint32_t scope_name = 1;
constexpr std::uint32_t scope_version = 2;
// Span
constexpr std::uint32_t span_trace_id = 1;
constexpr std::uint32_t span_span_id = 2;
constexpr std::uint32_t span_trace_state = 3;
constexpr std::uint32_t span_parent_span_id = 4;
constexpr std::uint32_t span_name = 5;
constexpr std::uint32_t span_kind = 6;
constexpr std::uint32_t span_start = 7;
constexpr std::uint32_t span_end = 8;
constexpr std::uint32_t span_attributes = 9;
constexpr std::uint32_t span_events = 11;
constexpr std::uint32_t span_status = 15;
constexpr std::uint32_t span_flags = 16;
// Span.Event
constexpr std::uint32_t event_time = 1;
constexpr std::uint32_t event_name = 2;
constexpr std::uint32_t event_attributes = 3;
// Status
constexpr std::uint32_t status_message = 2;
constexpr std::uint32_t status_code = 3;
// KeyValue
constexpr std::uint32_t kv_key = 1;
constexpr std::uint32_t kv_value = 2;
// AnyValue
constexpr std::uint32_t any_string = 1;
constexpr std::uint32_t any_bool = 2;
constexpr std::uint32_t any_int = 3;
constexpr std::uint32_t any_double = 4;
constexpr std::uint32_t any_array = 5;     // ArrayValue
constexpr std::uint32_t array_values = 1;  // ArrayValue.values: repeated AnyValue
}  // namespace field

enum class Wire : std::uint32_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& a) {
    for (auto b : a)
        if (b != 0) return false;
    return true;
}

// Plain ASCII (nearly every name, key and value) needs no closer look; checked 8 bytes at a time, because the size
// and write passes look at each string several times.
bool is_ascii(std::string_view s) {
    std::size_t i = 0;
    std::uint64_t high = 0;
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t word;
        std::memcpy(&word, s.data() + i, 8);
        high |= word;
    }
    for (; i < s.size(); ++i) high |= static_cast<unsigned char>(s[i]);
    return (high & 0x8080808080808080ull) == 0;
}

// The text as sent: itself when valid UTF-8 (nearly always; no copy), else a repaired copy in `scratch`. The size
// pass and the write pass both call it, so they agree on the length.
std::string_view clean(std::string_view s, std::string& scratch) {
    if (is_ascii(s) || core::is_valid_utf8(s)) return s;
    scratch = core::to_valid_utf8(s);
    return scratch;
}

std::size_t varint_size(std::uint64_t v) {
    std::size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

std::size_t tag_size(std::uint32_t number) { return varint_size(std::uint64_t{number} << 3); }

// A length-delimited field of `n` bytes, tag and length included.
std::size_t delimited_size(std::uint32_t number, std::size_t n) { return tag_size(number) + varint_size(n) + n; }

std::size_t text_size(std::uint32_t number, std::string_view s) {
    std::string scratch;
    return delimited_size(number, clean(s, scratch).size());
}

// Sizes are computed before writing so that every length prefix is known when it is written: one pass over the
// output, no nested buffers copied into their parents.

// An ArrayValue of strings: each a length-delimited AnyValue holding its string_value.
std::size_t array_size(const std::vector<std::string>& items) {
    std::size_t n = 0;
    for (const auto& s : items) n += delimited_size(field::array_values, text_size(field::any_string, s));
    return n;
}

std::size_t any_value_size(const trace::AttributeValue& v) {
    // A oneof member is written even when it holds its type's default (false, 0, ""): its presence is the value.
    return std::visit(
        [](const auto& x) -> std::size_t {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>)
                return text_size(field::any_string, x);
            else if constexpr (std::is_same_v<T, bool>)
                return tag_size(field::any_bool) + 1;
            else if constexpr (std::is_same_v<T, std::int64_t>)
                return tag_size(field::any_int) + varint_size(static_cast<std::uint64_t>(x));
            else if constexpr (std::is_same_v<T, double>)
                return tag_size(field::any_double) + 8;
            else
                return delimited_size(field::any_array, array_size(x));
        },
        v);
}

// Writer::attributes says the same with the value's size at hand.
std::size_t key_value_size(const trace::Attribute& a) {
    std::size_t n = a.key.empty() ? 0 : text_size(field::kv_key, a.key);
    return n + delimited_size(field::kv_value, any_value_size(a.value));
}

std::size_t attributes_size(std::uint32_t number, const std::vector<trace::Attribute>& attributes) {
    std::size_t n = 0;
    for (const auto& a : attributes) n += delimited_size(number, key_value_size(a));
    return n;
}

std::size_t event_size(const trace::SpanEvent& e) {
    std::size_t n = 0;
    if (e.time_ns != 0) n += tag_size(field::event_time) + 8;
    if (!e.name.empty()) n += text_size(field::event_name, e.name);
    return n + attributes_size(field::event_attributes, e.attributes);
}

bool has_status(const trace::SpanData& s) { return s.status != trace::SpanStatus::unset || !s.status_message.empty(); }

std::size_t status_size(const trace::SpanData& s) {
    std::size_t n = 0;
    if (!s.status_message.empty()) n += text_size(field::status_message, s.status_message);
    if (s.status != trace::SpanStatus::unset) n += tag_size(field::status_code) + 1;
    return n;
}

std::size_t span_size(const trace::SpanData& s) {
    std::size_t n = delimited_size(field::span_trace_id, 16) + delimited_size(field::span_span_id, 8);
    if (!s.tracestate.empty()) n += text_size(field::span_trace_state, s.tracestate);
    if (!all_zero(s.parent_span_id)) n += delimited_size(field::span_parent_span_id, 8);
    if (!s.name.empty()) n += text_size(field::span_name, s.name);
    n += tag_size(field::span_kind) + varint_size(static_cast<std::uint64_t>(s.kind));
    if (s.start_ns != 0) n += tag_size(field::span_start) + 8;
    if (s.end_ns != 0) n += tag_size(field::span_end) + 8;
    n += attributes_size(field::span_attributes, s.attributes);
    for (const auto& e : s.events) n += delimited_size(field::span_events, event_size(e));
    if (has_status(s)) n += delimited_size(field::span_status, status_size(s));
    if (span_flags(s) != 0) n += tag_size(field::span_flags) + 4;
    return n;
}

std::size_t scope_size(std::string_view name, std::string_view version) {
    return (name.empty() ? 0 : text_size(field::scope_name, name)) +
           (version.empty() ? 0 : text_size(field::scope_version, version));
}

class Writer {
public:
    // Writes into `out`, already sized to the whole message by the size pass.
    explicit Writer(std::string& out) : at_(out.data()), end_(out.data() + out.size()) {}
    bool full() const { return at_ == end_; }

    void varint(std::uint64_t v) {
        char buf[10];
        std::size_t n = 0;
        while (v >= 0x80) {
            buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
            v >>= 7;
        }
        buf[n++] = static_cast<char>(v);
        put(buf, n);
    }
    void tag(std::uint32_t number, Wire wire) { varint(std::uint64_t{number} << 3 | static_cast<std::uint32_t>(wire)); }
    // Opens a length-delimited field whose content, `n` bytes, is written next.
    void open(std::uint32_t number, std::size_t n) {
        tag(number, Wire::length_delimited);
        varint(n);
    }
    void bytes(std::uint32_t number, const std::uint8_t* data, std::size_t n) {
        open(number, n);
        put(data, n);
    }
    void text(std::uint32_t number, std::string_view s) {
        std::string scratch;
        s = clean(s, scratch);
        open(number, s.size());
        put(s.data(), s.size());
    }
    void uint(std::uint32_t number, std::uint64_t v) {
        tag(number, Wire::varint);
        varint(v);
    }
    // Little-endian, as the wire format requires whatever the host's order.
    void fixed64(std::uint32_t number, std::uint64_t v) {
        tag(number, Wire::fixed64);
        char buf[8];
        for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>(v >> (8 * i));
        put(buf, 8);
    }
    void fixed32(std::uint32_t number, std::uint32_t v) {
        tag(number, Wire::fixed32);
        char buf[4];
        for (int i = 0; i < 4; ++i) buf[i] = static_cast<char>(v >> (8 * i));
        put(buf, 4);
    }

    void any_value(const trace::AttributeValue& v) {
        std::visit(
            [&](const auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, std::string>)
                    text(field::any_string, x);
                else if constexpr (std::is_same_v<T, bool>)
                    uint(field::any_bool, x ? 1 : 0);
                else if constexpr (std::is_same_v<T, std::int64_t>)
                    uint(field::any_int, static_cast<std::uint64_t>(x));  // int64: two's complement, 10 bytes if < 0
                else if constexpr (std::is_same_v<T, double>)
                    fixed64(field::any_double, std::bit_cast<std::uint64_t>(x));
                else {
                    open(field::any_array, array_size(x));
                    for (const auto& s : x) {
                        open(field::array_values, text_size(field::any_string, s));
                        text(field::any_string, s);
                    }
                }
            },
            v);
    }
    void attributes(std::uint32_t number, const std::vector<trace::Attribute>& attributes) {
        for (const auto& a : attributes) {
            const auto value_size = any_value_size(a.value);
            open(number,
                 (a.key.empty() ? 0 : text_size(field::kv_key, a.key)) + delimited_size(field::kv_value, value_size));
            if (!a.key.empty()) text(field::kv_key, a.key);
            open(field::kv_value, value_size);
            any_value(a.value);
        }
    }
    void span(const trace::SpanData& s, std::size_t size) {
        open(field::scope_spans_spans, size);
        bytes(field::span_trace_id, s.trace_id.data(), s.trace_id.size());
        bytes(field::span_span_id, s.span_id.data(), s.span_id.size());
        if (!s.tracestate.empty()) text(field::span_trace_state, s.tracestate);
        if (!all_zero(s.parent_span_id))
            bytes(field::span_parent_span_id, s.parent_span_id.data(), s.parent_span_id.size());
        if (!s.name.empty()) text(field::span_name, s.name);
        uint(field::span_kind, static_cast<std::uint64_t>(s.kind));
        if (s.start_ns != 0) fixed64(field::span_start, s.start_ns);
        if (s.end_ns != 0) fixed64(field::span_end, s.end_ns);
        attributes(field::span_attributes, s.attributes);
        for (const auto& e : s.events) {
            open(field::span_events, event_size(e));
            if (e.time_ns != 0) fixed64(field::event_time, e.time_ns);
            if (!e.name.empty()) text(field::event_name, e.name);
            attributes(field::event_attributes, e.attributes);
        }
        if (has_status(s)) {
            open(field::span_status, status_size(s));
            if (!s.status_message.empty()) text(field::status_message, s.status_message);
            if (s.status != trace::SpanStatus::unset) uint(field::status_code, static_cast<std::uint64_t>(s.status));
        }
        if (const auto flags = span_flags(s); flags != 0) fixed32(field::span_flags, flags);
    }

private:
    // The bounds check costs a compare; a size pass that disagreed with this one would otherwise write past the end.
    void put(const void* data, std::size_t n) {
        if (static_cast<std::size_t>(end_ - at_) < n) throw std::logic_error("OTLP encoder: size pass too small");
        std::memcpy(at_, data, n);
        at_ += n;
    }

    char* at_;
    char* end_;
};

// JSON strings must be valid UTF-8 too (Boost.JSON writes the bytes as they are).
json::string_view json_text(std::string_view s, std::string& scratch) { return clean(s, scratch); }

json::object any_value_json(const trace::AttributeValue& v) {
    json::object o;
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
                std::string scratch;
                o["stringValue"] = json_text(x, scratch);
            } else if constexpr (std::is_same_v<T, bool>) {
                o["boolValue"] = x;
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                o["intValue"] = std::to_string(x);  // int64: a decimal string in proto3 JSON
            } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                json::array values;
                for (const auto& s : x) {
                    std::string scratch;
                    values.push_back(json::object{{"stringValue", json_text(s, scratch)}});
                }
                o["arrayValue"] = json::object{{"values", std::move(values)}};
            } else if (std::isnan(x)) {
                o["doubleValue"] = "NaN";  // proto3 JSON's names for what JSON numbers cannot say
            } else if (std::isinf(x)) {
                o["doubleValue"] = x > 0 ? "Infinity" : "-Infinity";
            } else {
                o["doubleValue"] = x;
            }
        },
        v);
    return o;
}

json::array attributes_json(const std::vector<trace::Attribute>& attributes) {
    json::array a;
    a.reserve(attributes.size());
    for (const auto& attr : attributes) {
        std::string scratch;
        a.push_back(json::object{{"key", json_text(attr.key, scratch)}, {"value", any_value_json(attr.value)}});
    }
    return a;
}

json::object span_json(const trace::SpanData& s) {
    std::string scratch;
    json::object o;
    o.reserve(14);
    o["traceId"] = trace::to_hex(s.trace_id);
    o["spanId"] = trace::to_hex(s.span_id);
    if (!s.tracestate.empty()) o["traceState"] = json_text(s.tracestate, scratch);
    if (!all_zero(s.parent_span_id)) o["parentSpanId"] = trace::to_hex(s.parent_span_id);
    if (const auto flags = span_flags(s); flags != 0) o["flags"] = flags;
    o["name"] = json_text(s.name, scratch);
    o["kind"] = static_cast<int>(s.kind);
    o["startTimeUnixNano"] = std::to_string(s.start_ns);
    o["endTimeUnixNano"] = std::to_string(s.end_ns);
    if (!s.attributes.empty()) o["attributes"] = attributes_json(s.attributes);
    if (!s.events.empty()) {
        json::array events;
        events.reserve(s.events.size());
        for (const auto& e : s.events) {
            json::object event{{"timeUnixNano", std::to_string(e.time_ns)}, {"name", json_text(e.name, scratch)}};
            if (!e.attributes.empty()) event["attributes"] = attributes_json(e.attributes);
            events.push_back(std::move(event));
        }
        o["events"] = std::move(events);
    }
    if (has_status(s)) {
        json::object status;
        if (!s.status_message.empty()) status["message"] = json_text(s.status_message, scratch);
        if (s.status != trace::SpanStatus::unset) status["code"] = static_cast<int>(s.status);
        o["status"] = std::move(status);
    }
    return o;
}

}  // namespace

std::uint32_t span_flags(const trace::SpanData& span) {
    constexpr std::uint32_t sampled = 0x01;         // W3C trace flags, bits 0-7
    constexpr std::uint32_t has_is_remote = 0x100;  // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
    std::uint32_t flags = span.sampled ? sampled : 0;
    if (all_zero(span.parent_span_id)) flags |= has_is_remote;  // and IS_REMOTE (0x200) clear: no parent at all
    return flags;
}

std::string encode_protobuf(const Resource& resource, std::string_view scope_name, std::string_view scope_version,
                            const std::vector<std::shared_ptr<const trace::SpanData>>& spans) {
    std::vector<std::size_t> span_sizes;
    span_sizes.reserve(spans.size());
    std::size_t spans_total = 0;
    for (const auto& s : spans) {
        span_sizes.push_back(s ? span_size(*s) : 0);
        if (s) spans_total += delimited_size(field::scope_spans_spans, span_sizes.back());
    }
    const auto scope = scope_size(scope_name, scope_version);
    const auto scope_spans = (scope == 0 ? 0 : delimited_size(field::scope_spans_scope, scope)) + spans_total;
    const auto resource_body = attributes_size(field::resource_attributes, resource.attributes);
    const auto resource_spans =
        (resource_body == 0 ? 0 : delimited_size(field::resource_spans_resource, resource_body)) +
        delimited_size(field::resource_spans_scope_spans, scope_spans);

    std::string out(delimited_size(field::request_resource_spans, resource_spans), '\0');
    Writer w(out);
    w.open(field::request_resource_spans, resource_spans);
    if (resource_body != 0) {
        w.open(field::resource_spans_resource, resource_body);
        w.attributes(field::resource_attributes, resource.attributes);
    }
    w.open(field::resource_spans_scope_spans, scope_spans);
    if (scope != 0) {
        w.open(field::scope_spans_scope, scope);
        if (!scope_name.empty()) w.text(field::scope_name, scope_name);
        if (!scope_version.empty()) w.text(field::scope_version, scope_version);
    }
    for (std::size_t i = 0; i < spans.size(); ++i)
        if (spans[i]) w.span(*spans[i], span_sizes[i]);
    if (!w.full()) throw std::logic_error("OTLP encoder: size pass too large");
    return out;
}

std::string encode_json(const Resource& resource, std::string_view scope_name, std::string_view scope_version,
                        const std::vector<std::shared_ptr<const trace::SpanData>>& spans) {
    std::string scratch;
    json::array span_array;
    span_array.reserve(spans.size());
    for (const auto& s : spans)
        if (s) span_array.push_back(span_json(*s));
    json::object scope;
    if (!scope_name.empty()) scope["name"] = json_text(scope_name, scratch);
    if (!scope_version.empty()) scope["version"] = json_text(scope_version, scratch);
    // Moved into place one level at a time (an initializer list would copy the spans).
    json::object scope_spans;
    scope_spans["scope"] = std::move(scope);
    scope_spans["spans"] = std::move(span_array);
    json::object resource_spans;
    resource_spans["resource"].emplace_object()["attributes"] = attributes_json(resource.attributes);
    resource_spans["scopeSpans"].emplace_array().push_back(std::move(scope_spans));
    json::object request;
    request["resourceSpans"].emplace_array().push_back(std::move(resource_spans));
    return json::serialize(request);
}

}  // namespace switchboard::telemetry
