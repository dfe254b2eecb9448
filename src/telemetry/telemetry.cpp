#include <switchboard/telemetry/telemetry.hpp>

#include <switchboard/telemetry/trace_ring.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace switchboard::telemetry {

namespace asio = boost::asio;
using asio::awaitable;

std::unique_ptr<Telemetry> Telemetry::create(asio::any_io_executor ex, const OtlpSource& source,
                                             bool operation_metrics, std::string& error, const EnvLookup& env) {
    auto parsed = parse_otlp_settings(source, env);
    if (!parsed.error.empty()) {
        // A bad variable (a global OTEL_EXPORTER_OTLP_PROTOCOL=grpc meant for other programs) is warned about, as
        // OpenTelemetry's SDKs do, and the config and flag alone apply; a bad config key or flag is an error.
        auto own = parse_otlp_settings(source, [](std::string_view) { return std::optional<std::string>(); });
        if (!own.error.empty()) {
            error = "tracing: " + own.error;
            return nullptr;
        }
        spdlog::warn("tracing: {}; the OTEL_* variables are ignored", parsed.error);
        parsed = std::move(own);
    }
    // OTEL_TRACES_EXPORTER=none turns the variables' export off (an endpoint from the config or flag still counts).
    if (auto e = env("OTEL_TRACES_EXPORTER"); e && *e == "none" && source.endpoint.empty())
        parsed.settings.endpoint.clear();
    return std::unique_ptr<Telemetry>(new Telemetry(std::move(ex), std::move(parsed.settings), operation_metrics));
}

Telemetry::Telemetry(asio::any_io_executor ex, OtlpSettings settings, bool operation_metrics)
    : ex_(ex), settings_(std::move(settings)), ring_path_(default_ring_path()), tasks_(ex) {
    if (settings_.disabled) return;
    trace::TracerOptions o;
    o.sampler = settings_.sampler;
    o.ratio = settings_.ratio;
    o.exporting = settings_.exporting();
    o.operation_metrics = operation_metrics;
    tracer_ = std::make_unique<trace::Tracer>(o);
    installed_.emplace(tracer_.get());
    if (settings_.exporting()) {
        exporter_ = std::make_shared<OtlpExporter>(ex_, settings_);
        exporter_->attach(*tracer_);
        exporter_->start();
        spdlog::info("tracing: {}", describe(settings_));
    }
}

Telemetry::~Telemetry() {
    if (tracer_) tracer_->set_sink({});
}

void Telemetry::save_ring() {
    if (!tracer_ || ring_path_.empty()) return;
    auto spans = tracer_->take_unsaved();
    if (spans.empty()) return;
    if (auto e = save_spans(ring_path_, spans); !e.empty()) spdlog::warn("trace file {}: {}", ring_path_.string(), e);
}

void Telemetry::save_every(std::chrono::milliseconds period) {
    if (!tracer_ || exporter_) return;
    tasks_.spawn(save_loop(period), "trace file");
}

awaitable<void> Telemetry::save_loop(std::chrono::milliseconds period) {
    asio::steady_timer timer(ex_);
    for (;;) {
        timer.expires_after(period);
        auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec) co_return;
        save_ring();
    }
}

awaitable<void> Telemetry::finish(std::chrono::milliseconds deadline) {
    if (finished_) co_return;
    finished_ = true;
    co_await tasks_.shutdown();
    if (exporter_) {
        co_await exporter_->shutdown(deadline);
        const auto s = exporter_->stats();
        if (s.dropped > 0)
            spdlog::warn("tracing: {} span{} could not be exported to {} ({} sent)", s.dropped,
                         s.dropped == 1 ? "" : "s", redact_url(settings_.endpoint), s.exported);
    }
    save_ring();
}

}  // namespace switchboard::telemetry
