// Telemetry: the OTLP protobuf request decoded back by a small wire-format reader (and one tiny request checked byte
// by byte), the OTLP/JSON shape, the OTEL_* settings' precedence and every error (none quoting a header value), the
// trace file's save/load/trim with its private mode, trace id prefixes and the tree `switchboard trace ID` prints.
#include <switchboard/core/text.hpp>
#include <switchboard/telemetry/otlp_encode.hpp>
#include <switchboard/telemetry/otlp_settings.hpp>
#include <switchboard/telemetry/trace_ring.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

// Named, not anonymous: in a unity batch another test file's helpers (slurp, mode_of, TempDir) would clash.
namespace telemetry_test {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace tel = switchboard::telemetry;
namespace trace = switchboard::trace;

namespace {

// ---- a protobuf wire-format reader, just enough to check the encoder ----

struct Field {
    std::uint32_t number = 0;
    std::uint32_t wire = 0;
    std::uint64_t value = 0;  // varint, fixed64, fixed32
    std::string bytes;        // length-delimited
};

std::uint64_t read_varint(std::string_view& in) {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (in.empty()) throw std::runtime_error("truncated varint");
        const auto b = static_cast<std::uint8_t>(in.front());
        in.remove_prefix(1);
        v |= std::uint64_t{b & 0x7fu} << shift;
        if (!(b & 0x80)) return v;
    }
    throw std::runtime_error("varint too long");
}

std::uint64_t read_fixed(std::string_view& in, int n) {
    if (in.size() < static_cast<std::size_t>(n)) throw std::runtime_error("truncated fixed");
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t{static_cast<std::uint8_t>(in[i])} << (8 * i);
    in.remove_prefix(n);
    return v;
}

std::vector<Field> decode(std::string_view in) {
    std::vector<Field> out;
    while (!in.empty()) {
        const auto key = read_varint(in);
        Field f;
        f.number = static_cast<std::uint32_t>(key >> 3);
        f.wire = static_cast<std::uint32_t>(key & 7);
        switch (f.wire) {
        case 0: f.value = read_varint(in); break;
        case 1: f.value = read_fixed(in, 8); break;
        case 5: f.value = read_fixed(in, 4); break;
        case 2: {
            const auto n = read_varint(in);
            if (n > in.size()) throw std::runtime_error("length past the end");
            f.bytes = std::string(in.substr(0, n));
            in.remove_prefix(n);
            break;
        }
        default: throw std::runtime_error("unknown wire type");
        }
        out.push_back(std::move(f));
    }
    return out;
}

std::vector<Field> all(const std::vector<Field>& fields, std::uint32_t number) {
    std::vector<Field> out;
    for (const auto& f : fields)
        if (f.number == number) out.push_back(f);
    return out;
}

const Field* find(const std::vector<Field>& fields, std::uint32_t number) {
    for (const auto& f : fields)
        if (f.number == number) return &f;
    return nullptr;
}

Field one(const std::vector<Field>& fields, std::uint32_t number) {
    auto found = all(fields, number);
    if (found.size() != 1) throw std::runtime_error("field " + std::to_string(number) + " not there exactly once");
    return found.front();
}

std::string bytes(std::initializer_list<int> b) {
    std::string s;
    for (int x : b) s.push_back(static_cast<char>(x));
    return s;
}

// A decoded KeyValue list as key → AnyValue fields.
std::map<std::string, std::vector<Field>> key_values(const std::vector<Field>& kvs) {
    std::map<std::string, std::vector<Field>> out;
    for (const auto& kv : kvs) {
        const auto fields = decode(kv.bytes);
        out[one(fields, 1).bytes] = decode(one(fields, 2).bytes);
    }
    return out;
}

// ---- spans ----

trace::TraceId trace_id(std::uint8_t first) {
    trace::TraceId id{};
    for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(first + i);
    return id;
}

trace::SpanId span_id(std::uint8_t first) {
    trace::SpanId id{};
    for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(first + i);
    return id;
}

std::shared_ptr<const trace::SpanData> shared(trace::SpanData s) {
    return std::make_shared<const trace::SpanData>(std::move(s));
}

trace::SpanData rich_span() {
    trace::SpanData s;
    s.name = "tools/call search";
    s.kind = trace::SpanKind::client;
    s.trace_id = trace_id(0xa0);
    s.span_id = span_id(0x10);
    s.parent_span_id = span_id(0x20);
    s.tracestate = "vendor=x";
    s.sampled = true;
    s.start_ns = 1'700'000'000'123'456'789ull;
    s.end_ns = 1'700'000'000'223'456'789ull;
    s.attributes = {{"gen_ai.tool.name", std::string("search")},
                    {"count", std::int64_t{-5}},
                    {"zero", std::int64_t{0}},
                    {"ratio", 0.25},
                    {"flag", false},
                    {"empty", std::string()}};
    s.events = {{"retry", 1'700'000'000'150'000'000ull, {{"attempt", std::int64_t{2}}}}};
    s.status = trace::SpanStatus::error;
    s.status_message = "upstream timed out";
    return s;
}

// ---- files and environment ----

struct TempDir {
    fs::path path;
    TempDir() {
        path =
            fs::temp_directory_path() / ("sb-telemetry-" + std::to_string(::getpid()) + "-" +
                                         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

mode_t mode_of(const fs::path& p) {
    struct ::stat st {};
    ::stat(p.c_str(), &st);
    return st.st_mode & 07777;
}

tel::EnvLookup env_of(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
        auto it = vars.find(std::string(name));
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

tel::OtlpSettingsResult parse_env(std::map<std::string, std::string> vars, const tel::OtlpSource& source = {}) {
    return tel::parse_otlp_settings(source, env_of(std::move(vars)));
}

// Sets (or unsets, with nullptr) an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_)
            ::setenv(name_.c_str(), old_->c_str(), 1);
        else
            ::unsetenv(name_.c_str());
    }

private:
    std::string name_;
    std::optional<std::string> old_;
};

}  // namespace

// ================================================================ protobuf

TEST(OtlpProtobuf, OneSpanIsExactlyTheBytesWorkedOutByHand) {
    trace::SpanData s;
    s.name = "n";
    s.kind = trace::SpanKind::server;
    s.trace_id = trace_id(0x01);  // 01..10
    s.span_id = span_id(0x11);    // 11..18
    s.sampled = true;
    s.start_ns = 1;
    s.end_ns = 2;
    tel::Resource resource{{{"k", std::string("v")}}};

    const std::string span = bytes({0x0a, 0x10, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                    0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,              // 1 trace_id
                                    0x12, 0x08, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,  // 2 span_id
                                    0x2a, 0x01, 'n',                                             // 5 name
                                    0x30, 0x02,                                                  // 6 kind server
                                    0x39, 1,    0,    0,    0,    0,    0,    0,    0,           // 7 start fixed64
                                    0x41, 2,    0,    0,    0,    0,    0,    0,    0,           // 8 end fixed64
                                    0x85, 0x01, 0x01, 0x01, 0x00, 0x00});  // 16 flags fixed32 0x101
    ASSERT_EQ(span.size(), 57u);
    const std::string scope_spans = bytes({0x0a, 0x07, 0x0a, 0x02, 's', 'c', 0x12, 0x01, '1', 0x12, 57}) + span;
    ASSERT_EQ(scope_spans.size(), 68u);
    const std::string resource_bytes = bytes({0x0a, 0x08, 0x0a, 0x01, 'k', 0x12, 0x03, 0x0a, 0x01, 'v'});
    const std::string resource_spans = bytes({0x0a, 0x0a}) + resource_bytes + bytes({0x12, 68}) + scope_spans;
    ASSERT_EQ(resource_spans.size(), 82u);
    const std::string expected = bytes({0x0a, 82}) + resource_spans;

    EXPECT_EQ(tel::encode_protobuf(resource, "sc", "1", {shared(s)}), expected);
}

TEST(OtlpProtobuf, DecodesBackToEveryField) {
    trace::SpanData root;
    root.name = "root";
    root.kind = trace::SpanKind::server;
    root.trace_id = trace_id(0xa0);
    root.span_id = span_id(0x20);
    root.sampled = true;
    root.start_ns = 100;
    root.end_ns = 200;
    trace::SpanData unsampled = rich_span();
    unsampled.sampled = false;
    unsampled.status = trace::SpanStatus::ok;
    unsampled.status_message.clear();

    tel::Resource resource{{{"service.name", std::string("switchboard")}, {"pid", std::int64_t{42}}}};
    const auto body =
        tel::encode_protobuf(resource, "switchboard", "0.9.0", {shared(rich_span()), shared(root), shared(unsampled)});

    const auto request = decode(body);
    ASSERT_EQ(request.size(), 1u);
    ASSERT_EQ(request[0].number, 1u);  // resource_spans
    const auto rs = decode(request[0].bytes);
    const auto res_attrs = key_values(all(decode(one(rs, 1).bytes), 1));
    EXPECT_EQ(one(res_attrs.at("service.name"), 1).bytes, "switchboard");
    EXPECT_EQ(one(res_attrs.at("pid"), 3).value, 42u);

    const auto ss = decode(one(rs, 2).bytes);
    const auto scope = decode(one(ss, 1).bytes);
    EXPECT_EQ(one(scope, 1).bytes, "switchboard");
    EXPECT_EQ(one(scope, 2).bytes, "0.9.0");
    const auto spans = all(ss, 2);
    ASSERT_EQ(spans.size(), 3u);

    // The rich span, field by field.
    const auto s = decode(spans[0].bytes);
    const auto want = rich_span();
    EXPECT_EQ(one(s, 1).bytes, std::string(reinterpret_cast<const char*>(want.trace_id.data()), 16));
    EXPECT_EQ(one(s, 2).bytes, std::string(reinterpret_cast<const char*>(want.span_id.data()), 8));
    EXPECT_EQ(one(s, 3).bytes, "vendor=x");
    EXPECT_EQ(one(s, 4).bytes, std::string(reinterpret_cast<const char*>(want.parent_span_id.data()), 8));
    EXPECT_EQ(one(s, 5).bytes, "tools/call search");
    EXPECT_EQ(one(s, 6).wire, 0u);
    EXPECT_EQ(one(s, 6).value, 3u);  // client
    EXPECT_EQ(one(s, 7).wire, 1u);
    EXPECT_EQ(one(s, 7).value, want.start_ns);
    EXPECT_EQ(one(s, 8).value, want.end_ns);
    EXPECT_EQ(one(s, 16).wire, 5u);
    EXPECT_EQ(one(s, 16).value, 0x01u);  // sampled; a child: whether its parent is remote is unknown

    const auto attrs = key_values(all(s, 9));
    ASSERT_EQ(attrs.size(), 6u);
    EXPECT_EQ(one(attrs.at("gen_ai.tool.name"), 1).bytes, "search");
    EXPECT_EQ(static_cast<std::int64_t>(one(attrs.at("count"), 3).value), -5);
    EXPECT_EQ(one(attrs.at("zero"), 3).value, 0u);  // a oneof member: written even when 0
    EXPECT_EQ(one(attrs.at("ratio"), 4).wire, 1u);
    EXPECT_EQ(std::bit_cast<double>(one(attrs.at("ratio"), 4).value), 0.25);
    EXPECT_EQ(one(attrs.at("flag"), 2).value, 0u);
    EXPECT_EQ(one(attrs.at("empty"), 1).bytes, "");

    const auto event = decode(one(s, 11).bytes);
    EXPECT_EQ(one(event, 1).value, want.events[0].time_ns);
    EXPECT_EQ(one(event, 2).bytes, "retry");
    EXPECT_EQ(one(key_values(all(event, 3)).at("attempt"), 3).value, 2u);

    const auto status = decode(one(s, 15).bytes);
    EXPECT_EQ(one(status, 2).bytes, "upstream timed out");
    EXPECT_EQ(one(status, 3).value, 2u);  // error

    // The root: no parent_span_id, no trace_state, flags "sampled, parent not remote", no status.
    const auto r = decode(spans[1].bytes);
    EXPECT_EQ(find(r, 4), nullptr);
    EXPECT_EQ(find(r, 3), nullptr);
    EXPECT_EQ(find(r, 15), nullptr);
    EXPECT_EQ(one(r, 6).value, 2u);
    EXPECT_EQ(one(r, 16).value, 0x101u);

    // Unsampled child: flags 0 (omitted), status ok without a message.
    const auto u = decode(spans[2].bytes);
    EXPECT_EQ(find(u, 16), nullptr);
    const auto ok = decode(one(u, 15).bytes);
    EXPECT_EQ(find(ok, 2), nullptr);
    EXPECT_EQ(one(ok, 3).value, 1u);
}

TEST(OtlpProtobuf, InvalidUtf8IsRepairedAndLengthsStillAgree) {
    trace::SpanData s = rich_span();
    s.status_message = "bad \xff byte";
    s.attributes = {{"k\xc3", std::string("\xe2\x82")}};
    const auto body = tel::encode_protobuf({}, "sc", "", {shared(s)});
    const auto rs = decode(one(decode(body), 1).bytes);
    EXPECT_EQ(find(rs, 1), nullptr);  // an empty resource is left out
    const auto span = decode(one(decode(one(rs, 2).bytes), 2).bytes);
    EXPECT_EQ(one(decode(one(span, 15).bytes), 2).bytes, "bad \xEF\xBF\xBD byte");
    const auto kv = decode(one(span, 9).bytes);
    EXPECT_EQ(one(kv, 1).bytes, "k\xEF\xBF\xBD");
    EXPECT_EQ(one(decode(one(kv, 2).bytes), 1).bytes, switchboard::core::to_valid_utf8("\xe2\x82"));
}

TEST(OtlpProtobuf, ABatchOf512SpansDecodesWhole) {
    std::vector<std::shared_ptr<const trace::SpanData>> batch;
    for (int i = 0; i < 512; ++i) {
        auto s = rich_span();
        s.name += std::string(static_cast<std::size_t>(i % 200), 'x');  // lengths across the 1- and 2-byte varints
        s.start_ns += static_cast<std::uint64_t>(i);
        batch.push_back(shared(std::move(s)));
    }
    const auto started = std::chrono::steady_clock::now();
    const auto body = tel::encode_protobuf({{{"service.name", std::string("s")}}}, "switchboard", "1", batch);
    const auto took = std::chrono::steady_clock::now() - started;
    const auto spans = all(decode(one(decode(one(decode(body), 1).bytes), 2).bytes), 2);
    ASSERT_EQ(spans.size(), 512u);
    EXPECT_EQ(one(decode(spans[511].bytes), 7).value, rich_span().start_ns + 511);
    EXPECT_EQ(one(decode(spans[300].bytes), 5).bytes.size(), std::string("tools/call search").size() + 100);
    EXPECT_LT(took, std::chrono::milliseconds(200));  // about 0.1 ms unoptimized; generous for sanitizers
}

// ================================================================ JSON

TEST(OtlpJson, HexIdsStringIntegersIntegerEnumsAndNoParentForARoot) {
    trace::SpanData root;
    root.name = "root";
    root.kind = trace::SpanKind::server;
    root.trace_id = trace_id(0xa0);
    root.span_id = span_id(0xf0);
    root.sampled = true;
    root.start_ns = 1'700'000'000'000'000'001ull;
    root.end_ns = 1'700'000'000'000'000'002ull;
    auto child = rich_span();
    child.attributes.push_back({"nan", std::numeric_limits<double>::quiet_NaN()});
    child.attributes.push_back({"reasons", std::vector<std::string>{"stop", "length"}});

    const auto text =
        tel::encode_json({{{"service.name", std::string("switchboard")}}}, "sb", "1.0", {shared(child), shared(root)});
    const auto doc = json::parse(text).as_object();
    const auto& rs = doc.at("resourceSpans").as_array().at(0).as_object();
    const auto& res_attr = rs.at("resource").at("attributes").as_array().at(0).as_object();
    EXPECT_EQ(res_attr.at("key"), "service.name");
    EXPECT_EQ(res_attr.at("value").at("stringValue"), "switchboard");
    const auto& ss = rs.at("scopeSpans").as_array().at(0).as_object();
    EXPECT_EQ(ss.at("scope").at("name"), "sb");
    EXPECT_EQ(ss.at("scope").at("version"), "1.0");
    const auto& spans = ss.at("spans").as_array();
    ASSERT_EQ(spans.size(), 2u);

    const auto& c = spans[0].as_object();
    EXPECT_EQ(c.at("traceId"), "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");  // lowercase hex, not base64
    EXPECT_EQ(c.at("spanId"), "1011121314151617");
    EXPECT_EQ(c.at("parentSpanId"), "2021222324252627");
    EXPECT_EQ(c.at("traceState"), "vendor=x");
    EXPECT_EQ(c.at("kind"), 3);
    EXPECT_EQ(c.at("flags"), 1);
    EXPECT_EQ(c.at("startTimeUnixNano"), "1700000000123456789");
    EXPECT_EQ(c.at("endTimeUnixNano"), "1700000000223456789");
    std::map<std::string, json::object> attrs;
    for (const auto& a : c.at("attributes").as_array())
        attrs[std::string(a.at("key").as_string())] = a.at("value").as_object();
    EXPECT_EQ(attrs["gen_ai.tool.name"].at("stringValue"), "search");
    EXPECT_EQ(attrs["count"].at("intValue"), "-5");
    EXPECT_EQ(attrs["ratio"].at("doubleValue"), 0.25);
    EXPECT_EQ(attrs["flag"].at("boolValue"), false);
    EXPECT_EQ(attrs["nan"].at("doubleValue"), "NaN");
    EXPECT_EQ(json::serialize(attrs["reasons"]),
              R"({"arrayValue":{"values":[{"stringValue":"stop"},{"stringValue":"length"}]}})");
    const auto& event = c.at("events").as_array().at(0).as_object();
    EXPECT_EQ(event.at("timeUnixNano"), "1700000000150000000");
    EXPECT_EQ(event.at("name"), "retry");
    EXPECT_EQ(event.at("attributes").as_array().at(0).at("value").at("intValue"), "2");
    EXPECT_EQ(c.at("status").at("code"), 2);
    EXPECT_EQ(c.at("status").at("message"), "upstream timed out");

    const auto& r = spans[1].as_object();
    EXPECT_FALSE(r.contains("parentSpanId"));
    EXPECT_FALSE(r.contains("traceState"));
    EXPECT_FALSE(r.contains("status"));
    EXPECT_FALSE(r.contains("attributes"));
    EXPECT_EQ(r.at("flags"), 0x101);
    EXPECT_EQ(r.at("kind"), 2);
}

// ================================================================ settings

TEST(OtlpSettings, NothingSetMeansNoExportAndTheDefaults) {
    const auto r = parse_env({});
    ASSERT_EQ(r.error, "");
    const auto& s = r.settings;
    EXPECT_FALSE(s.disabled);
    EXPECT_FALSE(s.exporting());
    EXPECT_EQ(s.endpoint, "");
    EXPECT_EQ(s.protocol, tel::OtlpSettings::Protocol::protobuf);
    EXPECT_EQ(s.service_name, "switchboard");
    EXPECT_EQ(s.sampler, trace::Sampler::parent_always_on);
    EXPECT_EQ(s.timeout, std::chrono::milliseconds(10'000));
    EXPECT_EQ(s.max_queue, 2048u);
    EXPECT_EQ(s.max_batch, 512u);
    EXPECT_EQ(s.schedule_delay, std::chrono::milliseconds(1000));
    EXPECT_EQ(tel::describe(s), "OTLP export off (no endpoint)");
}

TEST(OtlpSettings, TheBaseEndpointGetsV1TracesWithOneSlash) {
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"}}).settings.endpoint,
              "http://127.0.0.1:4318/v1/traces");
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"}}).settings.endpoint,
              "http://collector:4318/v1/traces");
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://otlp.example.com/otlp/"}}).settings.endpoint,
              "https://otlp.example.com/otlp/v1/traces");
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", " HTTPS://h/p?x=1 "}}).settings.endpoint,
              "HTTPS://h/p/v1/traces?x=1");
    // The traces variable is used as it is, and wins over the base.
    const auto r = parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318"},
                              {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:9999/custom"}});
    EXPECT_EQ(r.settings.endpoint, "http://traces:9999/custom");
    EXPECT_TRUE(r.settings.exporting());
}

TEST(OtlpSettings, TheConfigOrFlagEndpointWinsAndIsABaseUnlessItNamesTheTracesPath) {
    tel::OtlpSource src;
    src.endpoint = "http://from-config:4318";
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://env:1/v1/traces"}}, src).settings.endpoint,
              "http://from-config:4318/v1/traces");
    src.endpoint = "http://from-config:4318/v1/traces/";
    EXPECT_EQ(parse_env({}, src).settings.endpoint, "http://from-config:4318/v1/traces/");
}

TEST(OtlpSettings, EmptyVariablesCountAsUnset) {
    const auto r = parse_env({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ""},
                              {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318"},
                              {"OTEL_SERVICE_NAME", " "},
                              {"OTEL_TRACES_SAMPLER", ""}});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.endpoint, "http://base:4318/v1/traces");
    EXPECT_EQ(r.settings.service_name, "switchboard");
}

TEST(OtlpSettings, HeadersAreDecodedTrimmedAndTheMoreSpecificWinsPerName) {
    tel::OtlpSource src;
    src.headers = {{"x-from-config", "c"}, {"X-TEAM", "config-team"}};
    const auto r = parse_env({{"OTEL_EXPORTER_OTLP_HEADERS", " Authorization = Basic%20abc%3D%3D , x-team=a,x-keep=1 "},
                              {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "authorization=Bearer%20t+k,x-team=b,"}},
                             src);
    ASSERT_EQ(r.error, "");
    const std::vector<std::pair<std::string, std::string>> want = {
        {"authorization", "Bearer t+k"}, {"X-TEAM", "config-team"}, {"x-keep", "1"}, {"x-from-config", "c"}};
    EXPECT_EQ(r.settings.headers, want);
}

TEST(OtlpSettings, ProtocolAndItsErrors) {
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"}}).settings.protocol,
              tel::OtlpSettings::Protocol::json);
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
                         {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"}})
                  .settings.protocol,
              tel::OtlpSettings::Protocol::protobuf);
    tel::OtlpSource src;
    src.protocol = "http/json";
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"}}, src).settings.protocol,
              tel::OtlpSettings::Protocol::json);

    const auto grpc = parse_env({{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}}).error;
    EXPECT_NE(grpc.find("OTEL_EXPORTER_OTLP_PROTOCOL"), std::string::npos) << grpc;
    EXPECT_NE(grpc.find("only http/protobuf and http/json"), std::string::npos) << grpc;
    const auto traces = parse_env({{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"}}).error;
    EXPECT_NE(traces.find("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), std::string::npos) << traces;
    src.protocol = "thrift";
    EXPECT_EQ(parse_env({}, src).error,
              "config key tracing.protocol: unknown protocol \"thrift\" (http/protobuf or http/json)");
}

TEST(OtlpSettings, ServiceNamePrecedenceAndResourceAttributes) {
    std::map<std::string, std::string> env = {
        {"OTEL_RESOURCE_ATTRIBUTES", "service.name=from-resource, deployment.environment=dev%20box,team=a,team=b"}};
    auto r = parse_env(env);
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.service_name, "from-resource");
    ASSERT_EQ(r.settings.resource_attributes.size(), 2u);
    EXPECT_EQ(r.settings.resource_attributes[0].key, "deployment.environment");
    EXPECT_EQ(std::get<std::string>(r.settings.resource_attributes[0].value), "dev box");
    EXPECT_EQ(std::get<std::string>(r.settings.resource_attributes[1].value), "b");

    env["OTEL_SERVICE_NAME"] = "from-env";
    EXPECT_EQ(parse_env(env).settings.service_name, "from-env");
    tel::OtlpSource src;
    src.service_name = "from-config";
    r = parse_env(env, src);
    EXPECT_EQ(r.settings.service_name, "from-config");

    const auto resource = tel::resource_of(r.settings);
    ASSERT_EQ(resource.attributes.size(), 3u);
    EXPECT_EQ(resource.attributes[0].key, "service.name");
    EXPECT_EQ(std::get<std::string>(resource.attributes[0].value), "from-config");

    const auto bad = parse_env({{"OTEL_RESOURCE_ATTRIBUTES", "a=1,oops"}}).error;
    EXPECT_EQ(bad, "OTEL_RESOURCE_ATTRIBUTES: entry 2 is not key=value");
    EXPECT_EQ(parse_env({{"OTEL_RESOURCE_ATTRIBUTES", "=1"}}).error,
              "OTEL_RESOURCE_ATTRIBUTES: entry 1 has an empty key");
}

TEST(OtlpSettings, SamplerAndRatio) {
    auto r = parse_env({{"OTEL_TRACES_SAMPLER", "parentbased_traceidratio"}, {"OTEL_TRACES_SAMPLER_ARG", "0.25"}});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.sampler, trace::Sampler::parent_ratio);
    EXPECT_EQ(r.settings.ratio, 0.25);
    // A ratio for a sampler that takes none is ignored, even a bad one.
    r = parse_env({{"OTEL_TRACES_SAMPLER", "always_off"}, {"OTEL_TRACES_SAMPLER_ARG", "lots"}});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.sampler, trace::Sampler::always_off);
    // The config's sampler and ratio win.
    tel::OtlpSource src;
    src.sampler = "traceidratio";
    src.sampler_arg = 0.5;
    r = parse_env({{"OTEL_TRACES_SAMPLER", "always_off"}, {"OTEL_TRACES_SAMPLER_ARG", "0.1"}}, src);
    EXPECT_EQ(r.settings.sampler, trace::Sampler::ratio);
    EXPECT_EQ(r.settings.ratio, 0.5);
    // The config's sampler with the environment's ratio.
    src.sampler_arg.reset();
    EXPECT_EQ(parse_env({{"OTEL_TRACES_SAMPLER_ARG", "0.1"}}, src).settings.ratio, 0.1);
    // No ratio: all.
    EXPECT_EQ(parse_env({}, src).settings.ratio, 1.0);
}

TEST(OtlpSettings, SamplerErrorsNameTheVariableAndTheValue) {
    EXPECT_EQ(parse_env({{"OTEL_TRACES_SAMPLER", "jaeger_remote"}}).error,
              "OTEL_TRACES_SAMPLER: unknown sampler \"jaeger_remote\" (always_on, always_off, traceidratio, "
              "parentbased_always_on, parentbased_always_off, parentbased_traceidratio)");
    EXPECT_EQ(parse_env({{"OTEL_TRACES_SAMPLER", "traceidratio"}, {"OTEL_TRACES_SAMPLER_ARG", "1.5"}}).error,
              "OTEL_TRACES_SAMPLER_ARG: \"1.5\" is not a sampling ratio from 0 to 1");
    EXPECT_EQ(parse_env({{"OTEL_TRACES_SAMPLER", "traceidratio"}, {"OTEL_TRACES_SAMPLER_ARG", "half"}}).error,
              "OTEL_TRACES_SAMPLER_ARG: \"half\" is not a sampling ratio from 0 to 1");
    tel::OtlpSource src;
    src.origin = "config key tracing";
    src.names["sampler"] = "flag --trace-sampler";
    src.sampler = "sometimes";
    EXPECT_EQ(parse_env({}, src).error.substr(0, 50), "flag --trace-sampler: unknown sampler \"sometimes\" ");
    src.sampler = "traceidratio";
    src.sampler_arg = -0.1;
    EXPECT_EQ(parse_env({}, src).error,
              "config key tracing.samplerArg: the sampling ratio must be from 0 to 1, not -0.1");
}

TEST(OtlpSettings, TimeoutsAndBatchingAndTheirErrors) {
    auto r = parse_env({{"OTEL_EXPORTER_OTLP_TIMEOUT", "5000"},
                        {"OTEL_BSP_MAX_QUEUE_SIZE", "100"},
                        {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "512"},
                        {"OTEL_BSP_SCHEDULE_DELAY", "250"}});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.settings.timeout, std::chrono::milliseconds(5000));
    EXPECT_EQ(r.settings.max_queue, 100u);
    EXPECT_EQ(r.settings.max_batch, 100u);  // at most the queue
    EXPECT_EQ(r.settings.schedule_delay, std::chrono::milliseconds(250));
    r = parse_env({{"OTEL_EXPORTER_OTLP_TIMEOUT", "5000"}, {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700"}});
    EXPECT_EQ(r.settings.timeout, std::chrono::milliseconds(700));

    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s"}}).error,
              "OTEL_EXPORTER_OTLP_TIMEOUT: \"10s\" is not a whole number from 1 to 86400000");
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "0"}}).error,
              "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: \"0\" is not a whole number from 1 to 86400000");
    EXPECT_EQ(parse_env({{"OTEL_BSP_MAX_QUEUE_SIZE", "-1"}}).error,
              "OTEL_BSP_MAX_QUEUE_SIZE: \"-1\" is not a whole number from 1 to 1000000");
    EXPECT_EQ(parse_env({{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "many"}}).error,
              "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: \"many\" is not a whole number from 1 to 1000000");
    EXPECT_EQ(parse_env({{"OTEL_BSP_SCHEDULE_DELAY", "1.5"}}).error,
              "OTEL_BSP_SCHEDULE_DELAY: \"1.5\" is not a whole number from 1 to 86400000");
}

TEST(OtlpSettings, EndpointErrorsNameWhereTheUrlCameFromWithoutItsPassword) {
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318"}}).error,
              "OTEL_EXPORTER_OTLP_ENDPOINT: \"localhost:4318\" is not an http:// or https:// URL");
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "grpc://h:4317"}}).error,
              "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: \"grpc://h:4317\" is not an http:// or https:// URL");
    EXPECT_EQ(parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http:///v1/traces"}}).error,
              "OTEL_EXPORTER_OTLP_ENDPOINT: \"http:///v1/traces\" is not an http:// or https:// URL");
    tel::OtlpSource src;
    src.names["endpoint"] = "flag --otlp-endpoint";
    src.endpoint = "ftp://user:hunter2@h/";
    const auto e = parse_env({}, src).error;
    EXPECT_EQ(e, "flag --otlp-endpoint: \"ftp://***@h/\" is not an http:// or https:// URL");
    src.names.clear();
    src.endpoint = "collector";
    EXPECT_EQ(parse_env({}, src).error, "config key tracing.endpoint: \"collector\" is not an http:// or https:// URL");
}

TEST(OtlpSettings, HeaderErrorsNeverQuoteAValue) {
    const std::string secret = "s3cr3t-token";
    const auto no_eq = parse_env({{"OTEL_EXPORTER_OTLP_HEADERS", "x=1,Bearer " + secret}}).error;
    EXPECT_EQ(no_eq, "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value");
    const auto bad_name = parse_env({{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "Authorization: Bearer=" + secret}}).error;
    EXPECT_EQ(bad_name, "OTEL_EXPORTER_OTLP_TRACES_HEADERS: a header name is not a valid HTTP header name");
    const auto crlf = parse_env({{"OTEL_EXPORTER_OTLP_HEADERS", "api-key=" + secret + "%0D%0AX-Evil: 1"}}).error;
    EXPECT_EQ(crlf, "OTEL_EXPORTER_OTLP_HEADERS: the value of header api-key contains a line break");
    tel::OtlpSource src;
    src.headers["x-api-key"] = secret + "\n";
    const auto from_config = parse_env({}, src).error;
    EXPECT_EQ(from_config, "config key tracing.headers: the value of header x-api-key contains a line break");
    for (const auto& e : {no_eq, bad_name, crlf, from_config}) EXPECT_EQ(e.find(secret), std::string::npos) << e;
}

TEST(OtlpSettings, DisabledReadsNothingElseAndTheConfigCanOverrideIt) {
    auto r = parse_env({{"OTEL_SDK_DISABLED", "TRUE"},
                        {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"},
                        {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}});
    ASSERT_EQ(r.error, "");
    EXPECT_TRUE(r.settings.disabled);
    EXPECT_FALSE(r.settings.exporting());
    EXPECT_EQ(tel::describe(r.settings), "OTLP export disabled");
    EXPECT_FALSE(parse_env({{"OTEL_SDK_DISABLED", "false"}}).settings.disabled);
    EXPECT_FALSE(parse_env({{"OTEL_SDK_DISABLED", "1"}}).settings.disabled);  // only "true" is true

    tel::OtlpSource src;
    src.enabled = true;
    r = parse_env({{"OTEL_SDK_DISABLED", "true"}, {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"}}, src);
    EXPECT_FALSE(r.settings.disabled);
    EXPECT_TRUE(r.settings.exporting());
    src.enabled = false;
    EXPECT_TRUE(parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"}}, src).settings.disabled);
}

TEST(OtlpSettings, DescribeShowsHeaderNamesNeverValues) {
    const auto r = parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://me:pw@otlp.example.com"},
                              {"OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20xyz,x-team=abc"},
                              {"OTEL_TRACES_SAMPLER", "parentbased_traceidratio"},
                              {"OTEL_TRACES_SAMPLER_ARG", "0.1"}});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(tel::describe(r.settings),
              "OTLP http/protobuf → https://***@otlp.example.com/v1/traces (service switchboard, sampler "
              "parentbased_traceidratio 0.1, headers Authorization, x-team)");
    EXPECT_EQ(tel::describe(parse_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"},
                                       {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"}})
                                .settings),
              "OTLP http/json → http://127.0.0.1:4318/v1/traces (service switchboard, sampler parentbased_always_on)");
}

// ================================================================ the trace file

TEST(TraceRing, SpanJsonRoundTrips) {
    const auto s = rich_span();
    const auto line = json::serialize(tel::span_to_json(s));
    const auto back = tel::span_from_json(json::parse(line));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->name, s.name);
    EXPECT_EQ(back->kind, s.kind);
    EXPECT_EQ(back->trace_id, s.trace_id);
    EXPECT_EQ(back->span_id, s.span_id);
    EXPECT_EQ(back->parent_span_id, s.parent_span_id);
    EXPECT_EQ(back->tracestate, s.tracestate);
    EXPECT_EQ(back->sampled, s.sampled);
    EXPECT_EQ(back->start_ns, s.start_ns);
    EXPECT_EQ(back->end_ns, s.end_ns);
    EXPECT_EQ(back->status, s.status);
    EXPECT_EQ(back->status_message, s.status_message);
    ASSERT_EQ(back->attributes.size(), s.attributes.size());
    for (std::size_t i = 0; i < s.attributes.size(); ++i) {
        EXPECT_EQ(back->attributes[i].key, s.attributes[i].key);
        EXPECT_EQ(back->attributes[i].value, s.attributes[i].value) << s.attributes[i].key;
    }
    ASSERT_EQ(back->events.size(), 1u);
    EXPECT_EQ(back->events[0].name, "retry");
    EXPECT_EQ(back->events[0].time_ns, s.events[0].time_ns);
    EXPECT_EQ(std::get<std::int64_t>(back->events[0].attributes.at(0).value), 2);

    // The flat form: hex ids, numbers of ns, a plain attributes object; no status or parent when there is none.
    const auto o = tel::span_to_json(s);
    EXPECT_EQ(o.at("parentSpanId"), "2021222324252627");
    EXPECT_EQ(o.at("start").as_uint64(), s.start_ns);
    EXPECT_EQ(o.at("attributes").at("count"), -5);
    trace::SpanData root;
    root.trace_id = trace_id(1);
    root.span_id = span_id(1);
    const auto r = tel::span_to_json(root);
    EXPECT_FALSE(r.contains("parentSpanId"));
    EXPECT_FALSE(r.contains("status"));

    EXPECT_FALSE(tel::span_from_json(json::parse(R"({"traceId":"zz","spanId":"0102030405060708"})")));
    EXPECT_FALSE(tel::span_from_json(json::parse("[1]")));
}

TEST(TraceRing, DefaultPathFollowsTheEnvironment) {
    ScopedEnv file("SWITCHBOARD_TRACE_FILE", nullptr);
    ScopedEnv state("XDG_STATE_HOME", "/state");
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(tel::default_ring_path(), fs::path("/state/switchboard/traces.jsonl"));
    {
        ScopedEnv no_state("XDG_STATE_HOME", "");
        EXPECT_EQ(tel::default_ring_path(), fs::path("/home/u/.local/state/switchboard/traces.jsonl"));
    }
    ScopedEnv override_file("SWITCHBOARD_TRACE_FILE", "/tmp/t.jsonl");
    EXPECT_EQ(tel::default_ring_path(), fs::path("/tmp/t.jsonl"));
}

TEST(TraceRing, SavesPrivatelyAppendsTrimsAndSkipsBadLines) {
    TempDir tmp;
    const auto dir = tmp.path / "state" / "switchboard";
    const auto file = dir / "traces.jsonl";

    std::vector<std::shared_ptr<const trace::SpanData>> first;
    for (int i = 0; i < 3; ++i) {
        auto s = rich_span();
        s.span_id = span_id(static_cast<std::uint8_t>(0x30 + i));
        s.name = "first " + std::to_string(i);
        first.push_back(shared(s));
    }
    const auto old_mask = ::umask(0);  // the modes must not depend on the umask
    EXPECT_EQ(tel::save_spans(file, first, 5), "");
    ::umask(old_mask);
    EXPECT_EQ(mode_of(file), 0600u);
    EXPECT_EQ(mode_of(dir), 0700u);
    EXPECT_EQ(mode_of(tmp.path / "state"), 0700u);
    ASSERT_EQ(tel::load_spans(file).size(), 3u);

    // A line that is not a span is dropped; the oldest go once there are more than max_spans.
    {
        std::ofstream out(file, std::ios::app);
        out << "not json\n{\"traceId\":\"00\"}\n";
    }
    EXPECT_EQ(tel::load_spans(file).size(), 3u);

    // A reader that opened the file before a save keeps reading the whole old file: it is replaced, not rewritten.
    std::ifstream before(file, std::ios::binary);
    const auto old_text = slurp(file);

    std::vector<std::shared_ptr<const trace::SpanData>> second;
    for (int i = 0; i < 3; ++i) {
        auto s = rich_span();
        s.span_id = span_id(static_cast<std::uint8_t>(0x40 + i));
        s.name = "second " + std::to_string(i);
        second.push_back(shared(s));
    }
    EXPECT_EQ(tel::save_spans(file, second, 5), "");
    std::ostringstream seen;
    seen << before.rdbuf();
    EXPECT_EQ(seen.str(), old_text);

    const auto loaded = tel::load_spans(file);
    ASSERT_EQ(loaded.size(), 5u);
    EXPECT_EQ(loaded.front().name, "first 1");
    EXPECT_EQ(loaded.back().name, "second 2");
    EXPECT_EQ(slurp(file).find("not json"), std::string::npos);
    EXPECT_EQ(mode_of(file), 0600u);

    // More new spans than fit: the newest of them.
    EXPECT_EQ(tel::save_spans(file, second, 2), "");
    const auto trimmed = tel::load_spans(file);
    ASSERT_EQ(trimmed.size(), 2u);
    EXPECT_EQ(trimmed[0].name, "second 1");

    // Nothing left behind but the file and its lock.
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{".traces.jsonl.lock", "traces.jsonl"}));

    EXPECT_TRUE(tel::load_spans(tmp.path / "missing.jsonl").empty());
    EXPECT_NE(tel::save_spans({}, first), "");
}

namespace {

// A server span under a client's remote span, a tool call it made (which failed, with a retry event), a model call
// under that with GenAI attributes, and an internal step: four spans, one trace.
std::vector<trace::SpanData> four_span_trace() {
    const std::uint64_t t0 = 1'700'000'000'000'000'000ull;
    const auto id = trace_id(0x4b);
    std::vector<trace::SpanData> out(4);
    auto& server = out[0];
    server.name = "tools/call search";
    server.kind = trace::SpanKind::server;
    server.trace_id = id;
    server.span_id = span_id(0x10);
    server.parent_span_id = span_id(0xc0);  // the remote client's span
    server.start_ns = t0;
    server.end_ns = t0 + 312'400'000;
    server.attributes = {{"mcp.session.id", std::string("abc")}, {"gen_ai.tool.name", std::string("search")}};

    auto& model = out[1];
    model.name = "chat qwen3";
    model.kind = trace::SpanKind::client;
    model.trace_id = id;
    model.span_id = span_id(0x30);
    model.parent_span_id = span_id(0x20);
    model.start_ns = t0 + 20'000'000;
    model.end_ns = t0 + 140'000'000;
    model.attributes = {{"gen_ai.request.model", std::string("qwen3")},
                        {"gen_ai.usage.input_tokens", std::int64_t{120}},
                        {"gen_ai.usage.output_tokens", std::int64_t{45}},
                        {"gen_ai.response.finish_reasons", std::string("stop")}};

    auto& call = out[2];
    call.name = "tools/call search";
    call.kind = trace::SpanKind::client;
    call.trace_id = id;
    call.span_id = span_id(0x20);
    call.parent_span_id = span_id(0x10);
    call.start_ns = t0 + 5'200'000;
    call.end_ns = t0 + 305'300'000;
    call.attributes = {{"error.type", std::string("timeout")}};
    call.status = trace::SpanStatus::error;
    call.status_message = "no answer in 300 s";
    call.events = {{"retry", t0 + 150'000'000, {{"attempt", std::int64_t{2}}}}};

    auto& step = out[3];
    step.name = "pins check";
    step.kind = trace::SpanKind::internal;
    step.trace_id = id;
    step.span_id = span_id(0x40);
    step.parent_span_id = span_id(0x10);
    step.start_ns = t0 + 1'000'000;
    step.end_ns = t0 + 1'500'000;
    return out;
}

}  // namespace

TEST(TraceRing, RecentTracesNewestFirstWithTheirRoots) {
    auto spans = four_span_trace();
    trace::SpanData other;
    other.name = "agent run";
    other.trace_id = trace_id(0x10);
    other.span_id = span_id(0x99);
    other.start_ns = spans[0].start_ns + 1'000'000'000;
    other.end_ns = other.start_ns + 5;
    spans.push_back(other);

    const auto traces = tel::recent_traces(spans, 10);
    ASSERT_EQ(traces.size(), 2u);
    EXPECT_EQ(traces[0].root_name, "agent run");
    EXPECT_EQ(traces[0].spans, 1u);
    EXPECT_FALSE(traces[0].error);
    EXPECT_EQ(traces[1].trace_id, trace::to_hex(trace_id(0x4b)));
    EXPECT_EQ(traces[1].root_name, "tools/call search");
    EXPECT_EQ(traces[1].spans, 4u);
    EXPECT_TRUE(traces[1].error);
    EXPECT_EQ(traces[1].start_ns, spans[0].start_ns);
    EXPECT_EQ(traces[1].end_ns, spans[0].end_ns);
    EXPECT_EQ(tel::recent_traces(spans, 1).size(), 1u);
}

TEST(TraceRing, TraceIdsByFullIdOrUniquePrefix) {
    auto spans = four_span_trace();
    trace::SpanData near;  // shares the first 8 hex digits with the four-span trace
    near.trace_id = trace_id(0x4b);
    near.trace_id[5] = 0;
    near.span_id = span_id(1);
    spans.push_back(near);

    const auto full = trace::to_hex(trace_id(0x4b));
    std::string error;
    EXPECT_EQ(tel::spans_of_trace(spans, full, &error).size(), 4u);
    EXPECT_EQ(tel::spans_of_trace(spans, "4B4C4D4E4F505152535455565758595A", &error).size(), 4u);
    EXPECT_EQ(tel::spans_of_trace(spans, full.substr(0, 30), &error).size(), 4u);

    EXPECT_TRUE(tel::spans_of_trace(spans, "4b4c4d4e", &error).empty());
    EXPECT_EQ(error.substr(0, 28), "4b4c4d4e matches 2 traces: 4");
    EXPECT_TRUE(tel::spans_of_trace(spans, "4b4c4d", &error).empty());
    EXPECT_EQ(error, "\"4b4c4d\" is not a trace id (32 hex digits, or the first 8 or more)");
    EXPECT_TRUE(tel::spans_of_trace(spans, "4b4c4d4x", &error).empty());
    EXPECT_NE(error.find("is not a trace id"), std::string::npos);
    EXPECT_TRUE(tel::spans_of_trace(spans, "deadbeef", &error).empty());
    EXPECT_EQ(error, "no trace deadbeef in the trace file");
    EXPECT_TRUE(tel::spans_of_trace(spans, "deadbeef").empty());  // no error wanted: fine too
}

TEST(TraceRing, TreeShowsChildrenByStartEventsErrorsAndTheMissingParent) {
    const auto spans = four_span_trace();
    std::vector<const trace::SpanData*> pointers;
    for (const auto& s : spans) pointers.push_back(&s);
    const auto tree = tel::render_tree(pointers);
    const std::string want =
        "tools/call search  server  312.4 ms  +0.0 ms  (parent c0c1c2c3c4c5c6c7 not here)\n"
        "├─ pins check  internal  0.5 ms  +1.0 ms\n"
        "└─ tools/call search  client  300.1 ms  +5.2 ms  [timeout: no answer in 300 s]\n"
        "   │  · retry  +150.0 ms  attempt=2\n"
        "   └─ chat qwen3  client  120.0 ms  +20.0 ms  in_tokens=120  out_tokens=45  finish=stop\n";
    EXPECT_EQ(tree, want) << tree;
    std::istringstream lines(tree);
    for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;

    // Another tool's name is shown; so is a span whose parent is missing in the middle of a trace.
    auto copy = spans;
    copy[0].attributes[1].value = std::string("other");
    copy.erase(copy.begin() + 2);  // the call: the model's parent is gone
    pointers.clear();
    for (const auto& s : copy) pointers.push_back(&s);
    const auto partial = tel::render_tree(pointers);
    EXPECT_NE(partial.find("+0.0 ms  tool=other  (parent c0c1c2c3c4c5c6c7 not here)\n"), std::string::npos) << partial;
    EXPECT_NE(partial.find("\nchat qwen3  client  120.0 ms  +20.0 ms  in_tokens=120  out_tokens=45  finish=stop  "
                           "(parent 2021222324252627 not here)\n"),
              std::string::npos)
        << partial;
    EXPECT_EQ(tel::render_tree({}), "");
}

}  // namespace telemetry_test
