// Sends finished spans to an OTLP/HTTP collector in the background: a bounded queue filled by the tracer's sink
// (never blocking a call: past OtlpSettings::max_queue a span is dropped and counted), batches of at most max_batch
// sent every schedule_delay or as soon as a batch is full, retries of 429/502/503/504 and lost connections with
// backoff (Retry-After honoured) within the export timeout, then the batch is dropped and counted. shutdown() sends
// what is queued, bounded by a deadline (at exit). Failures are logged once per kind of failure, then every minute,
// naming the endpoint and never a header's value.
//
// Thread-safety: enqueue() from any thread; everything else on the executor.
#pragma once

#include <switchboard/core/task_group.hpp>
#include <switchboard/core/trace.hpp>
#include <switchboard/telemetry/otlp_encode.hpp>
#include <switchboard/telemetry/otlp_settings.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

namespace switchboard::http {
class Client;
struct Abort;
}

namespace switchboard::telemetry {

struct ExportStats {
    std::uint64_t exported = 0;       ///< spans a collector accepted
    std::uint64_t dropped = 0;        ///< spans dropped: the queue was full, or their batch failed for good
    std::uint64_t failed_batches = 0;
    std::uint64_t retries = 0;
    std::size_t queued = 0;
};

class OtlpExporter : public std::enable_shared_from_this<OtlpExporter> {
public:
    OtlpExporter(boost::asio::any_io_executor ex, OtlpSettings settings);
    ~OtlpExporter();

    /// Starts the sending loop; installs nothing (see attach()).
    void start();
    /// Makes `tracer` hand its sampled spans to this exporter.
    void attach(trace::Tracer& tracer);
    /// Queues one span (any thread). Never blocks: a full queue drops it.
    void enqueue(std::shared_ptr<const trace::SpanData> span);
    /// Sends what is queued, waiting at most `deadline`, then stops the loop.
    boost::asio::awaitable<void> shutdown(std::chrono::milliseconds deadline);

    ExportStats stats() const;
    const OtlpSettings& settings() const { return settings_; }

private:
    boost::asio::awaitable<void> run();
    /// Sends one batch, with retries; false when it was dropped.
    boost::asio::awaitable<bool> send_batch(std::vector<std::shared_ptr<const trace::SpanData>> batch,
                                            std::chrono::steady_clock::time_point give_up);
    std::vector<std::shared_ptr<const trace::SpanData>> take_batch();
    void warn(const std::string& kind, const std::string& message);
    void wake();

    boost::asio::any_io_executor ex_;
    OtlpSettings settings_;
    Resource resource_;
    std::shared_ptr<http::Client> http_;
    std::shared_ptr<http::Abort> abort_;  // fired at shutdown's deadline
    boost::asio::steady_timer timer_;
    core::TaskGroup tasks_;
    mutable std::mutex mutex_;  // queue_ and stats_: enqueue() may come from another thread
    std::deque<std::shared_ptr<const trace::SpanData>> queue_;
    ExportStats stats_;
    bool wake_posted_ = false;
    bool stopping_ = false;  // shutdown(): the loop drains the queue and ends
    bool stopped_ = false;   // after it: a span that comes now is dropped
    std::string last_warning_kind_;
    std::chrono::steady_clock::time_point last_warning_{};
};

}  // namespace switchboard::telemetry
