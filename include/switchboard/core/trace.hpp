// W3C trace context and spans: what every layer needs to take part in one trace, from a model's request to a
// server's work. A span is recorded only while a Tracer is installed and the trace is sampled; otherwise starting
// and ending one costs a branch, and its context() is the parent's, passed on unchanged (a client's traceparent
// still reaches the server behind a gateway that records nothing). Finished spans go to the tracer, which keeps a
// small ring of them (`switchboard trace ID`) and hands the sampled ones to an exporter (telemetry/otlp_exporter).
//
// Names and attributes follow OpenTelemetry's MCP and GenAI conventions (`{mcp.method.name} {target}`, CLIENT and
// SERVER kinds, `gen_ai.*`); see docs/gateway.md, "Tracing".
//
// Thread-safety: a Span is used by one owner; the Tracer takes finished spans from any thread.
#pragma once

#include <boost/json/object.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace switchboard::trace {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

/// Where a span sits in a trace, and what the next hop is told (traceparent, tracestate, baggage).
struct SpanContext {
    TraceId trace_id{};
    SpanId span_id{};
    bool sampled = false;   ///< the traceparent's sampled flag
    bool recorded = false;  ///< this process records the trace's spans (not sent; a remote context: = sampled)
    std::string tracestate;
    std::string baggage;

    bool valid() const;
    std::string traceparent() const;  ///< "00-<trace id>-<span id>-<flags>"
    std::string trace_id_hex() const;
    std::string span_id_hex() const;
    /// A W3C traceparent (version 00, or a later version's first four fields); nullopt when it is not valid.
    static std::optional<SpanContext> parse(std::string_view traceparent, std::string_view tracestate = {},
                                            std::string_view baggage = {});
    /// From a request's `_meta` (SEP-414: `traceparent`, `tracestate`, `baggage`); nullopt without a valid one.
    static std::optional<SpanContext> from_meta(const boost::json::object& meta);
    /// Writes traceparent (and tracestate, baggage when set) into `meta`, replacing what was there.
    void to_meta(boost::json::object& meta) const;
};

enum class SpanKind : std::uint8_t { internal = 1, server = 2, client = 3 };
class Tracer;
enum class SpanStatus : std::uint8_t { unset = 0, ok = 1, error = 2 };

/// A string list is an OTLP array of strings (`gen_ai.response.finish_reasons`).
using AttributeValue = std::variant<std::string, std::int64_t, double, bool, std::vector<std::string>>;
struct Attribute {
    std::string key;
    AttributeValue value;
};

struct SpanEvent {
    std::string name;
    std::uint64_t time_ns = 0;  ///< since the Unix epoch
    std::vector<Attribute> attributes;
};

/// A finished span, as exported.
struct SpanData {
    std::string name;
    SpanKind kind = SpanKind::internal;
    TraceId trace_id{};
    SpanId span_id{};
    SpanId parent_span_id{};  ///< zeros: a root
    std::string tracestate;
    bool sampled = false;  ///< exported (when an exporter is set), not only kept in the ring
    std::uint64_t start_ns = 0, end_ns = 0;  ///< since the Unix epoch
    std::vector<Attribute> attributes;
    std::vector<SpanEvent> events;
    SpanStatus status = SpanStatus::unset;
    std::string status_message;

    const AttributeValue* attribute(std::string_view key) const;
};

std::string to_hex(const std::uint8_t* bytes, std::size_t n);
template <std::size_t N>
std::string to_hex(const std::array<std::uint8_t, N>& a) {
    return to_hex(a.data(), N);
}
/// Lowercase or uppercase hex of exactly 2·N digits into `out`; false otherwise.
bool from_hex(std::string_view hex, std::uint8_t* out, std::size_t n);

/// One unit of work. Ends when end() is called or it is destroyed.
class Span {
public:
    Span() = default;
    Span(Span&& other) noexcept;
    Span& operator=(Span&& other) noexcept;
    ~Span() { end(); }

    /// A span named `name` (with " " and `target` when one is given) under `parent`, which is this process's own
    /// (it was recorded or not: so is this one). An invalid parent makes a root, recorded when an exporter is set and
    /// the sampler keeps it (background work: a listing at connect, a health ping).
    static Span start(std::string_view name, std::string_view target, SpanKind kind, const SpanContext& parent);
    /// A span continuing a remote parent (a client's traceparent, or none): the sampler decides (parent-based by
    /// default: the client's sampled flag).
    static Span start_remote(std::string_view name, std::string_view target, SpanKind kind,
                             const std::optional<SpanContext>& parent);
    /// A root for what a person started here (a run, a call, a chat turn): recorded whenever a tracer is installed
    /// (in the ring at least; exported when sampled).
    static Span start_local_root(std::string_view name, std::string_view target, SpanKind kind);

    bool recording() const { return data_ != nullptr; }
    /// For children and for the next hop: this span's context when recorded, else the parent's as it came.
    const SpanContext& context() const { return ctx_; }

    void set(std::string_view key, std::string_view value);
    void set(std::string_view key, const char* value) { set(key, std::string_view(value)); }
    void set(std::string_view key, std::int64_t value);
    void set(std::string_view key, int value) { set(key, static_cast<std::int64_t>(value)); }
    void set(std::string_view key, double value);
    void set(std::string_view key, bool value);
    void set(std::string_view key, std::vector<std::string> value);
    void add_event(std::string_view name, std::vector<Attribute> attributes = {});
    /// `error.type` (e.g. "tool_error", "timeout", a JSON-RPC code) and the error status with `message`.
    void set_error(std::string_view type, std::string_view message);
    void set_ok();
    void end();

private:
    static Span unsampled(const TraceId& id);
    static Span sampled_root(Tracer& t, std::string_view name, std::string_view target, SpanKind kind);

    std::shared_ptr<SpanData> data_;  // made shared from the start: one allocation with its count
    SpanContext ctx_;
};

enum class Sampler { always_on, always_off, ratio, parent_always_on, parent_always_off, parent_ratio };

struct TracerOptions {
    Sampler sampler = Sampler::parent_always_on;
    double ratio = 1.0;  ///< for the ratio samplers
    /// Whether sampled spans are exported (an exporter takes them through set_sink).
    bool exporting = false;
    std::size_t ring_spans = 2048;  ///< finished spans kept for `switchboard trace`
    /// Whether OperationTimer records the duration histograms (someone reads them: `serve`'s /metrics).
    bool operation_metrics = false;
};

/// One of the duration histograms OTel's MCP conventions name: `mcp.client.operation.duration` (requests to
/// servers) and `mcp.server.operation.duration` (requests `serve` answered), by method and error.type.
struct OperationHistogram {
    static constexpr std::array<double, 14> bounds{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300};
    bool server = false;
    std::string method;
    std::string error_type;  ///< empty: success
    std::array<std::uint64_t, bounds.size() + 1> counts{};  ///< per bucket, the last one past every bound
    std::uint64_t count = 0;
    double sum = 0;  ///< seconds
};

/// Parses OTEL_TRACES_SAMPLER's values ("always_on", "parentbased_traceidratio", ...); nullopt when unknown.
std::optional<Sampler> parse_sampler(std::string_view name);

class Tracer {
public:
    explicit Tracer(TracerOptions options);
    const TracerOptions& options() const { return options_; }
    /// Whether a root with this trace id is sampled.
    bool sample_root(const TraceId& id) const;
    /// Whether a span continuing this remote parent is sampled.
    bool sample_remote(const SpanContext& parent) const;

    /// Takes a finished span: into the ring, and to the sink when it is sampled and exporting.
    void finish(std::shared_ptr<SpanData> span);
    /// Receives the sampled spans as they finish (the exporter's queue); called on the finishing thread.
    void set_sink(std::function<void(std::shared_ptr<const SpanData>)> sink);
    /// The spans finished since the last call (for the ring file), oldest first.
    std::vector<std::shared_ptr<const SpanData>> take_unsaved();
    /// The ring's spans of one trace, oldest first.
    std::vector<std::shared_ptr<const SpanData>> spans_of(const TraceId& id) const;

    void record_operation(bool server, std::string_view method, std::string_view error_type, double seconds);
    std::vector<OperationHistogram> operations() const;

private:
    TracerOptions options_;
    mutable std::mutex mutex_;
    std::vector<OperationHistogram> operations_;
    std::deque<std::shared_ptr<const SpanData>> ring_;
    std::size_t unsaved_ = 0;
    std::function<void(std::shared_ptr<const SpanData>)> sink_;
};

/// The process's tracer, or null: tracing off.
Tracer* tracer();
/// Whether a tracer is installed and exports (a root of a request from outside may then be sampled).
bool exporting();
/// Installs `t` as the process's tracer for the scope's life.
class InstallTracer {
public:
    explicit InstallTracer(Tracer* t);
    ~InstallTracer();
    InstallTracer(const InstallTracer&) = delete;
    InstallTracer& operator=(const InstallTracer&) = delete;

private:
    Tracer* previous_;
};

/// Times one MCP operation into the tracer's histograms (nothing without a tracer).
class OperationTimer {
public:
    OperationTimer(bool server, std::string_view method);
    ~OperationTimer();
    OperationTimer(const OperationTimer&) = delete;
    OperationTimer& operator=(const OperationTimer&) = delete;
    void set_error(std::string_view type) {
        if (on_) error_type_ = std::string(type);
    }

private:
    bool on_ = false;
    bool server_;
    std::string_view method_;  // the caller's, alive as long as this
    std::string error_type_;
    std::chrono::steady_clock::time_point start_{};
};

/// Nanoseconds since the Unix epoch, now.
std::uint64_t now_ns();
TraceId random_trace_id();
SpanId random_span_id();

}  // namespace switchboard::trace
