// Where and how spans are exported: OpenTelemetry's standard environment variables (OTEL_EXPORTER_OTLP_*,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER*, OTEL_BSP_*, OTEL_SDK_DISABLED), so that the
// settings a user already has for their other services work here too, overridden by what the config file's
// `tracing` object and the flags say.
//
// Errors name where the bad value came from (the variable, "config key tracing.endpoint", "flag --otlp-endpoint")
// and never quote a header's value: those are usually credentials. A URL's user:password is not quoted either.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <switchboard/core/trace.hpp>
#include <switchboard/telemetry/otlp_encode.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchboard::telemetry {

struct OtlpSettings {
    enum class Protocol { protobuf, json };

    bool disabled = false;  ///< OTEL_SDK_DISABLED or `enabled: false`: no export, and nothing else was read
    std::string endpoint;   ///< the full traces URL; empty: no export
    Protocol protocol = Protocol::protobuf;
    std::vector<std::pair<std::string, std::string>> headers;  ///< values are secrets: never log them
    std::string service_name = "switchboard";
    std::vector<trace::Attribute> resource_attributes;  ///< OTEL_RESOURCE_ATTRIBUTES without service.name
    trace::Sampler sampler = trace::Sampler::parent_always_on;
    double ratio = 1.0;                              ///< for the ratio samplers
    std::chrono::milliseconds timeout{10'000};       ///< one export request
    std::size_t max_queue = 2048;                    ///< spans waiting; more are dropped
    std::size_t max_batch = 512;                     ///< spans per request (at most max_queue)
    std::chrono::milliseconds schedule_delay{1000};  ///< between exports of a partial batch

    bool exporting() const { return !disabled && !endpoint.empty(); }
};

/// What the config file and the flags say, each field empty (or nullopt) when not given; the caller fills a field
/// from the flag first, then from the config. Every field given here wins over the environment.
struct OtlpSource {
    /// What to call this source in errors: a field is named `origin + "." + field` ("config key tracing" gives
    /// "config key tracing.endpoint") unless `names` has a name for it.
    std::string origin = "config key tracing";
    /// Names for single fields, by the field names below ("endpoint" → "flag --otlp-endpoint").
    std::map<std::string, std::string> names;

    /// A base URL like OTEL_EXPORTER_OTLP_ENDPOINT ("/v1/traces" is appended), or the full traces URL when its path
    /// already ends in /v1/traces.
    std::string endpoint;
    std::string protocol;                        ///< "protocol": "http/protobuf" or "http/json"
    std::map<std::string, std::string> headers;  ///< "headers": each wins over the environment's of the same name
    std::string service_name;                    ///< "serviceName"
    std::string sampler;                         ///< "sampler": OTEL_TRACES_SAMPLER's names
    std::optional<double> sampler_arg;           ///< "samplerArg": the ratio
    std::optional<bool> enabled;                 ///< "enabled": false disables, true overrides OTEL_SDK_DISABLED
};

/// Looks up an environment variable; nullopt when unset (as host::EnvLookup, which this layer cannot include).
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

/// The process environment.
EnvLookup process_environment();

struct OtlpSettingsResult {
    OtlpSettings settings;
    std::string error;  ///< non-empty: the settings are unusable, and why (naming the variable or key)
};

/// The settings from `source` over the environment. A variable set to "" counts as unset (as the OpenTelemetry
/// spec says). Invalid values are errors, not warnings: a user who set them expects them to apply.
OtlpSettingsResult parse_otlp_settings(const OtlpSource& source, const EnvLookup& env = process_environment());

/// "always_on", "parentbased_traceidratio", ...: OTEL_TRACES_SAMPLER's name for `sampler`.
std::string_view sampler_name(trace::Sampler sampler);

/// One line for logs and status: `OTLP http/protobuf → http://127.0.0.1:4318/v1/traces (service switchboard, sampler
/// parentbased_always_on, headers Authorization)`. Header names only, never their values.
std::string describe(const OtlpSettings& settings);

/// `url` as it may be shown in logs and errors: without a user:password@ before the host.
std::string redact_url(std::string_view url);
/// The resource the exporter sends: service.name, then the other resource attributes.
Resource resource_of(const OtlpSettings& settings);

}  // namespace switchboard::telemetry
