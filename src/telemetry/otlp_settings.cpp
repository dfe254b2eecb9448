#include <switchboard/telemetry/otlp_settings.hpp>

#include <switchboard/core/text.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace switchboard::telemetry {

namespace {

std::string_view trim(std::string_view s) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!s.empty() && blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && blank(s.back())) s.remove_suffix(1);
    return s;
}

// %XX sequences decoded; a "%" not followed by two hex digits is kept as it is (Go's SDK does the same), and "+" is a
// plus (the W3C baggage format these variables follow, not a form encoding).
std::string percent_decode(std::string_view s) {
    const auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out.push_back(static_cast<char>(hex(s[i + 1]) << 4 | hex(s[i + 2])));
            i += 2;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

// RFC 9110's token: what a header name may be made of.
bool is_header_name(std::string_view s) {
    if (s.empty()) return false;
    for (unsigned char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
        if (!ok) return false;
    }
    return true;
}

// A line break or NUL in a value would end the header early (and start another): refused.
bool is_header_value(std::string_view s) {
    return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// "k=v,k=v": entries are trimmed, keys and values percent-decoded, empty entries skipped. The error never quotes an
// entry's text: a header entry without "=" may well be a bare token.
std::string parse_pairs(std::string_view text, std::string_view name,
                        std::vector<std::pair<std::string, std::string>>& out) {
    std::size_t index = 0;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const auto entry = trim(text.substr(0, comma));
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
        ++index;
        if (entry.empty()) continue;
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos) return fmt::format("{}: entry {} is not key=value", name, index);
        auto key = percent_decode(trim(entry.substr(0, eq)));
        if (key.empty()) return fmt::format("{}: entry {} has an empty key", name, index);
        out.emplace_back(std::move(key), percent_decode(trim(entry.substr(eq + 1))));
    }
    return {};
}

// Sets `key` to `value`, replacing an entry of the same name (header names are case-insensitive).
void put_header(std::vector<std::pair<std::string, std::string>>& headers, std::string key, std::string value) {
    for (auto& h : headers)
        if (core::iequals(h.first, key)) {
            h = {std::move(key), std::move(value)};
            return;
        }
    headers.emplace_back(std::move(key), std::move(value));
}

std::string check_header(std::string_view name, std::string_view key, std::string_view value) {
    // The key is shown only when it is a valid name (an invalid one may be a pasted "Authorization: Bearer ...").
    if (!is_header_name(key)) return fmt::format("{}: a header name is not a valid HTTP header name", name);
    if (!is_header_value(value)) return fmt::format("{}: the value of header {} contains a line break", name, key);
    return {};
}


std::string check_url(std::string_view url, std::string_view name) {
    const auto lower = core::ascii_lower(url.substr(0, 8));
    const std::size_t scheme = lower.starts_with("http://") ? 7 : lower.starts_with("https://") ? 8 : 0;
    const auto host_end = url.find_first_of("/?#", scheme);
    auto authority = url.substr(scheme, host_end == std::string_view::npos ? url.size() - scheme : host_end - scheme);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
    const bool spaces = url.find_first_of(" \t\r\n") != std::string_view::npos;
    if (scheme == 0 || authority.empty() || authority.front() == ':' || spaces)
        return fmt::format("{}: \"{}\" is not an http:// or https:// URL", name, redact_url(url));
    return {};
}

// OTEL_EXPORTER_OTLP_ENDPOINT's rule: "v1/traces" appended to the base's path, with one slash between (a query, rare
// in a base URL, stays at the end).
std::string traces_url(std::string_view base) {
    const auto scheme = base.find("://");
    const auto query = base.find_first_of("?#", scheme == std::string_view::npos ? 0 : scheme + 3);
    auto path = base.substr(0, query);
    const auto rest = query == std::string_view::npos ? std::string_view() : base.substr(query);
    while (path.ends_with('/')) path.remove_suffix(1);
    return fmt::format("{}/v1/traces{}", path, rest);
}

// A base URL, unless it already names the traces path.
std::string source_traces_url(std::string_view url) {
    const auto scheme = url.find("://");
    auto path = url.substr(0, url.find_first_of("?#", scheme == std::string_view::npos ? 0 : scheme + 3));
    while (path.ends_with('/')) path.remove_suffix(1);
    return path.ends_with("/v1/traces") ? std::string(url) : traces_url(url);
}

std::optional<std::uint64_t> positive_integer(std::string_view text) {
    text = trim(text);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v == 0) return std::nullopt;
    return v;
}

std::optional<double> ratio_of(std::string_view text) {
    text = trim(text);
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
}

bool is_ratio_sampler(trace::Sampler s) { return s == trace::Sampler::ratio || s == trace::Sampler::parent_ratio; }

class Reader {
public:
    Reader(const OtlpSource& source, const EnvLookup& env) : source_(source), env_(env) {}

    // A variable's value; "" counts as unset.
    std::optional<std::string> env(std::string_view name) const {
        if (!env_) return std::nullopt;
        auto v = env_(name);
        if (v && trim(*v).empty()) return std::nullopt;
        return v;
    }
    std::string name(std::string_view field) const {
        if (auto it = source_.names.find(std::string(field)); it != source_.names.end()) return it->second;
        return fmt::format("{}.{}", source_.origin, field);
    }

private:
    const OtlpSource& source_;
    const EnvLookup& env_;
};

std::string parse_protocol(std::string_view text, std::string_view name, OtlpSettings::Protocol& out) {
    text = trim(text);
    if (text == "http/protobuf") {
        out = OtlpSettings::Protocol::protobuf;
    } else if (text == "http/json") {
        out = OtlpSettings::Protocol::json;
    } else if (text == "grpc") {
        return fmt::format(
            "{}: grpc is not supported; only http/protobuf and http/json are (point it at the "
            "collector's HTTP port, usually 4318)",
            name);
    } else {
        return fmt::format("{}: unknown protocol \"{}\" (http/protobuf or http/json)", name, text);
    }
    return {};
}

std::string count_setting(const Reader& r, const char* var, std::uint64_t max, std::uint64_t& out) {
    const auto text = r.env(var);
    if (!text) return {};
    const auto v = positive_integer(*text);
    if (!v || *v > max) return fmt::format("{}: \"{}\" is not a whole number from 1 to {}", var, trim(*text), max);
    out = *v;
    return {};
}

}  // namespace

std::string redact_url(std::string_view url) {
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) return std::string(url);
    const auto authority_start = scheme_end + 3;
    const auto authority_end = url.find_first_of("/?#", authority_start);
    const auto authority = url.substr(authority_start, authority_end - authority_start);
    const auto at = authority.rfind('@');
    if (at == std::string_view::npos) return std::string(url);
    return fmt::format("{}***@{}", url.substr(0, authority_start), url.substr(authority_start + at + 1));
}

EnvLookup process_environment() {
    return [](std::string_view name) -> std::optional<std::string> {
        const std::string key(name);  // getenv needs a NUL-terminated name
        const char* value = std::getenv(key.c_str());
        if (!value) return std::nullopt;
        return std::string(value);
    };
}

std::string_view sampler_name(trace::Sampler sampler) {
    switch (sampler) {
    case trace::Sampler::always_on: return "always_on";
    case trace::Sampler::always_off: return "always_off";
    case trace::Sampler::ratio: return "traceidratio";
    case trace::Sampler::parent_always_on: return "parentbased_always_on";
    case trace::Sampler::parent_always_off: return "parentbased_always_off";
    case trace::Sampler::parent_ratio: return "parentbased_traceidratio";
    }
    return "?";
}

OtlpSettingsResult parse_otlp_settings(const OtlpSource& source, const EnvLookup& env) {
    OtlpSettingsResult result;
    auto& s = result.settings;
    const Reader r(source, env);
    const auto fail = [&](std::string error) {
        result.error = std::move(error);
        return std::move(result);
    };

    // Disabled: nothing else is read, so a broken variable cannot stop a user who turned export off.
    if (source.enabled)
        s.disabled = !*source.enabled;
    else if (auto v = r.env("OTEL_SDK_DISABLED"))
        s.disabled = core::iequals(trim(*v), "true");
    if (s.disabled) return result;

    if (!source.protocol.empty()) {
        if (auto e = parse_protocol(source.protocol, r.name("protocol"), s.protocol); !e.empty()) return fail(e);
    } else {
        for (const char* var : {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"})
            if (auto v = r.env(var)) {
                if (auto e = parse_protocol(*v, var, s.protocol); !e.empty()) return fail(e);
                break;
            }
    }

    if (!source.endpoint.empty()) {
        const auto url = trim(source.endpoint);
        if (auto e = check_url(url, r.name("endpoint")); !e.empty()) return fail(e);
        s.endpoint = source_traces_url(url);
    } else if (auto v = r.env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
        const auto url = trim(*v);
        if (auto e = check_url(url, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); !e.empty()) return fail(e);
        s.endpoint = std::string(url);  // the per-signal variable is used as it is
    } else if (auto v = r.env("OTEL_EXPORTER_OTLP_ENDPOINT")) {
        const auto url = trim(*v);
        if (auto e = check_url(url, "OTEL_EXPORTER_OTLP_ENDPOINT"); !e.empty()) return fail(e);
        s.endpoint = traces_url(url);
    }

    // Headers: the general variable, then the traces one, then the config or flag, each winning per name.
    for (const char* var : {"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}) {
        auto v = r.env(var);
        if (!v) continue;
        std::vector<std::pair<std::string, std::string>> pairs;
        if (auto e = parse_pairs(*v, var, pairs); !e.empty()) return fail(e);
        for (auto& [key, value] : pairs) {
            if (auto e = check_header(var, key, value); !e.empty()) return fail(e);
            put_header(s.headers, std::move(key), std::move(value));
        }
    }
    for (const auto& [key, value] : source.headers) {
        if (auto e = check_header(r.name("headers"), key, value); !e.empty()) return fail(e);
        put_header(s.headers, key, value);
    }

    // The service's name: the config or flag, else OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES.
    std::optional<std::string> resource_service;
    if (auto v = r.env("OTEL_RESOURCE_ATTRIBUTES")) {
        std::vector<std::pair<std::string, std::string>> pairs;
        if (auto e = parse_pairs(*v, "OTEL_RESOURCE_ATTRIBUTES", pairs); !e.empty()) return fail(e);
        for (auto& [key, value] : pairs) {
            if (key == "service.name") {
                resource_service = std::move(value);
                continue;
            }
            auto same = [&](const trace::Attribute& a) { return a.key == key; };
            std::erase_if(s.resource_attributes, same);  // the last of a repeated key wins
            s.resource_attributes.push_back({std::move(key), std::move(value)});
        }
    }
    if (!trim(source.service_name).empty())
        s.service_name = std::string(trim(source.service_name));
    else if (auto v = r.env("OTEL_SERVICE_NAME"))
        s.service_name = std::string(trim(*v));
    else if (resource_service && !resource_service->empty())
        s.service_name = *resource_service;

    std::string sampler_source;
    std::optional<std::string> sampler_text;
    if (!source.sampler.empty()) {
        sampler_source = r.name("sampler");
        sampler_text = source.sampler;
    } else if (auto v = r.env("OTEL_TRACES_SAMPLER")) {
        sampler_source = "OTEL_TRACES_SAMPLER";
        sampler_text = std::move(v);
    }
    if (sampler_text) {
        const auto name = trim(*sampler_text);
        const auto parsed = trace::parse_sampler(name);
        if (!parsed)
            return fail(
                fmt::format("{}: unknown sampler \"{}\" (always_on, always_off, traceidratio, "
                            "parentbased_always_on, parentbased_always_off, parentbased_traceidratio)",
                            sampler_source, name));
        s.sampler = *parsed;
    }
    if (is_ratio_sampler(s.sampler)) {
        if (source.sampler_arg) {
            const double v = *source.sampler_arg;
            if (!(v >= 0.0 && v <= 1.0))
                return fail(fmt::format("{}: the sampling ratio must be from 0 to 1, not {}", r.name("samplerArg"), v));
            s.ratio = v;
        } else if (auto text = r.env("OTEL_TRACES_SAMPLER_ARG")) {
            const auto v = ratio_of(*text);
            if (!v || !(*v >= 0.0 && *v <= 1.0))
                return fail(
                    fmt::format("OTEL_TRACES_SAMPLER_ARG: \"{}\" is not a sampling ratio from 0 to 1", trim(*text)));
            s.ratio = *v;
        }
    }

    // Counts and times; a day is far more than any export should wait.
    constexpr std::uint64_t day_ms = 86'400'000;
    for (const char* var : {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"}) {
        if (!r.env(var)) continue;
        std::uint64_t ms = 0;
        if (auto e = count_setting(r, var, day_ms, ms); !e.empty()) return fail(e);
        s.timeout = std::chrono::milliseconds(ms);
        break;
    }
    std::uint64_t queue = s.max_queue, batch = s.max_batch,
                  delay = static_cast<std::uint64_t>(s.schedule_delay.count());
    if (auto e = count_setting(r, "OTEL_BSP_MAX_QUEUE_SIZE", 1'000'000, queue); !e.empty()) return fail(e);
    if (auto e = count_setting(r, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1'000'000, batch); !e.empty()) return fail(e);
    if (auto e = count_setting(r, "OTEL_BSP_SCHEDULE_DELAY", day_ms, delay); !e.empty()) return fail(e);
    s.max_queue = static_cast<std::size_t>(queue);
    s.max_batch = static_cast<std::size_t>(std::min(batch, queue));  // the spec: a batch is at most the queue
    s.schedule_delay = std::chrono::milliseconds(delay);
    return result;
}

std::string describe(const OtlpSettings& s) {
    if (s.disabled) return "OTLP export disabled";
    if (s.endpoint.empty()) return "OTLP export off (no endpoint)";
    std::string sampler(sampler_name(s.sampler));
    if (is_ratio_sampler(s.sampler)) sampler += fmt::format(" {:g}", s.ratio);
    std::string headers;
    for (const auto& h : s.headers) headers += (headers.empty() ? ", headers " : ", ") + h.first;
    return fmt::format("OTLP {} → {} (service {}, sampler {}{})",
                       s.protocol == OtlpSettings::Protocol::json ? "http/json" : "http/protobuf",
                       redact_url(s.endpoint), s.service_name, sampler, headers);
}

Resource resource_of(const OtlpSettings& s) {
    Resource r;
    r.attributes.reserve(s.resource_attributes.size() + 1);
    r.attributes.push_back({"service.name", s.service_name});
    for (const auto& a : s.resource_attributes)
        if (a.key != "service.name") r.attributes.push_back(a);
    return r;
}

}  // namespace switchboard::telemetry
