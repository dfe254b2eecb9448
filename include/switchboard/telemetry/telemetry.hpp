// A front end's tracing for one process: the tracer installed for every layer to record into, the OTLP exporter when
// one is configured, and the local trace file (`switchboard trace`) that finished spans are saved to. Built from the
// config's `tracing` object, the flag and the OTEL_* environment (telemetry/otlp_settings.hpp).
//
// Without an endpoint the tracer still records what a person started here (a run, a call, a chat turn: local roots)
// for the trace file, and nothing for requests from outside (a gateway client's, unless it sent a sampled
// traceparent): no cost beyond a branch on the gateway's path. OTEL_SDK_DISABLED=true (or `enabled: false`) installs
// no tracer at all.
//
// Thread-safety: single owner, on its executor.
#pragma once

#include <switchboard/core/task_group.hpp>
#include <switchboard/core/trace.hpp>
#include <switchboard/telemetry/otlp_exporter.hpp>
#include <switchboard/telemetry/otlp_settings.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace switchboard::telemetry {

class Telemetry {
public:
    /// The process's tracing as `source` and the environment say; nullptr and `error` when a setting is bad.
    /// `operation_metrics`: record OTel's duration histograms (for a `serve`'s /metrics).
    static std::unique_ptr<Telemetry> create(boost::asio::any_io_executor ex, const OtlpSource& source,
                                             bool operation_metrics, std::string& error,
                                             const EnvLookup& env = process_environment());
    ~Telemetry();
    Telemetry(const Telemetry&) = delete;
    Telemetry& operator=(const Telemetry&) = delete;

    /// Null when tracing is disabled.
    trace::Tracer* tracer() { return tracer_.get(); }
    const OtlpSettings& settings() const { return settings_; }
    bool exporting() const { return exporter_ != nullptr; }
    const std::filesystem::path& ring_path() const { return ring_path_; }

    /// Saves the spans finished since the last save to the trace file (nothing when there are none).
    void save_ring();
    /// Saves the trace file every `period` while spans come in (a long-running `serve`). Not when exporting: the
    /// collector has the spans, and the file is rewritten on each save.
    void save_every(std::chrono::milliseconds period);
    /// Sends what the exporter holds (at most `deadline`), saves the trace file, and stops.
    boost::asio::awaitable<void> finish(std::chrono::milliseconds deadline);

private:
    Telemetry(boost::asio::any_io_executor ex, OtlpSettings settings, bool operation_metrics);
    boost::asio::awaitable<void> save_loop(std::chrono::milliseconds period);

    boost::asio::any_io_executor ex_;
    OtlpSettings settings_;
    std::unique_ptr<trace::Tracer> tracer_;
    std::optional<trace::InstallTracer> installed_;
    std::shared_ptr<OtlpExporter> exporter_;
    std::filesystem::path ring_path_;
    core::TaskGroup tasks_;
    bool finished_ = false;
};

}  // namespace switchboard::telemetry
