// Finished spans as an OTLP ExportTraceServiceRequest, the body of a POST to a collector's /v1/traces: binary
// protobuf (written by hand: two message types' worth of wire format does not justify a protobuf dependency) or the
// OTLP/JSON mapping (hex ids, 64-bit integers as decimal strings, enums as integers). One resource, one scope, all
// the spans of a batch.
//
// Field numbers are those of opentelemetry-proto's collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
// common/v1/common.proto and resource/v1/resource.proto. Strings that are not valid UTF-8 (a server's error text)
// are sent with U+FFFD in place of the bad bytes: a collector rejects the whole request otherwise.
//
// Thread-safety: pure functions.
#pragma once

#include <switchboard/core/trace.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::telemetry {

/// What produced the spans: service.name and the other OTEL_RESOURCE_ATTRIBUTES.
struct Resource {
    std::vector<trace::Attribute> attributes;
};

inline constexpr std::string_view protobuf_content_type = "application/x-protobuf";
inline constexpr std::string_view json_content_type = "application/json";

/// Span.flags: the W3C trace flags (sampled) in bits 0-7; for a root also bit 8 (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE):
/// its parent is known not to be remote, since it has none. A child's parent may be local or a client's
/// traceparent, which SpanData does not record, so bit 8 stays clear: "unknown".
std::uint32_t span_flags(const trace::SpanData& span);

/// The binary protobuf ExportTraceServiceRequest (Content-Type application/x-protobuf).
std::string encode_protobuf(const Resource& resource, std::string_view scope_name, std::string_view scope_version,
                            const std::vector<std::shared_ptr<const trace::SpanData>>& spans);

/// The same request in OTLP/JSON (Content-Type application/json).
std::string encode_json(const Resource& resource, std::string_view scope_name, std::string_view scope_version,
                        const std::vector<std::shared_ptr<const trace::SpanData>>& spans);

}  // namespace switchboard::telemetry
