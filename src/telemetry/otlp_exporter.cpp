#include <switchboard/telemetry/otlp_exporter.hpp>

#include <switchboard/core/backoff.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/http/client.hpp>
#include <switchboard/http/url.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

namespace switchboard::telemetry {

namespace asio = boost::asio;
using asio::awaitable;
using Clock = std::chrono::steady_clock;

namespace {

// What a collector's answer means for the batch (the OTLP spec's retryable statuses).
bool retryable(unsigned status) { return status == 429 || status == 502 || status == 503 || status == 504; }

}  // namespace

OtlpExporter::OtlpExporter(asio::any_io_executor ex, OtlpSettings settings)
    : ex_(ex), settings_(std::move(settings)), timer_(ex), tasks_(ex) {
    resource_ = resource_of(settings_);
    resource_.attributes.push_back({"telemetry.sdk.name", std::string("switchboard")});
    resource_.attributes.push_back({"telemetry.sdk.language", std::string("cpp")});
    resource_.attributes.push_back({"telemetry.sdk.version", std::string(SWITCHBOARD_VERSION)});
    http::ClientOptions o;
    o.server_name = "otlp";
    o.headers_secret = true;  // an API key under any name (x-honeycomb-team, x-api-key, ...)
    for (const auto& [k, v] : settings_.headers) o.headers[k] = v;
    o.connect_timeout = std::min<std::chrono::milliseconds>(settings_.timeout, std::chrono::milliseconds(5000));
    o.read_timeout = settings_.timeout;
    o.max_body_size = 1024 * 1024;
    o.follow_redirects = false;
    http_ = std::make_shared<http::Client>(ex, std::move(o));
    abort_ = std::make_shared<http::Abort>();
}

OtlpExporter::~OtlpExporter() {
    if (http_) http_->close();
}

void OtlpExporter::start() {
    tasks_.spawn(run(), "OTLP exporter");
}

void OtlpExporter::attach(trace::Tracer& tracer) {
    std::weak_ptr<OtlpExporter> weak = weak_from_this();
    tracer.set_sink([weak](std::shared_ptr<const trace::SpanData> span) {
        if (auto self = weak.lock()) self->enqueue(std::move(span));
    });
}

void OtlpExporter::enqueue(std::shared_ptr<const trace::SpanData> span) {
    bool wake_now = false;
    {
        std::lock_guard lock(mutex_);
        if (stopped_) {  // after the last flush: nobody would send it
            ++stats_.dropped;
            return;
        }
        if (queue_.size() >= settings_.max_queue) {
            ++stats_.dropped;  // a slow or absent collector costs spans, never a call
            return;
        }
        queue_.push_back(std::move(span));
        if (queue_.size() >= settings_.max_batch && !wake_posted_) wake_now = wake_posted_ = true;
    }
    if (wake_now) asio::post(ex_, [weak = weak_from_this()] {
            if (auto self = weak.lock()) self->wake();
        });
}

void OtlpExporter::wake() {
    {
        std::lock_guard lock(mutex_);
        wake_posted_ = false;
    }
    timer_.cancel();
}

std::vector<std::shared_ptr<const trace::SpanData>> OtlpExporter::take_batch() {
    std::lock_guard lock(mutex_);
    const auto n = std::min(queue_.size(), settings_.max_batch);
    std::vector<std::shared_ptr<const trace::SpanData>> batch(queue_.begin(),
                                                              queue_.begin() + static_cast<std::ptrdiff_t>(n));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    return batch;
}

ExportStats OtlpExporter::stats() const {
    std::lock_guard lock(mutex_);
    auto s = stats_;
    s.queued = queue_.size();
    return s;
}

awaitable<void> OtlpExporter::run() {
    std::uint64_t dropped_seen = 0;
    for (;;) {
        bool wait = false, stopping = false;
        {
            std::lock_guard lock(mutex_);
            stopping = stopping_;
            wait = !stopping && queue_.size() < settings_.max_batch;
        }
        if (wait) {
            timer_.expires_after(settings_.schedule_delay);
            co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));  // woken early: a full batch, a stop
        }
        if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) co_return;
        for (auto batch = take_batch(); !batch.empty(); batch = take_batch()) {
            co_await send_batch(std::move(batch), Clock::now() + settings_.timeout);
            if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none)
                co_return;
        }
        // Spans dropped because the queue was full are said while it happens, not only at exit.
        std::uint64_t dropped = 0;
        {
            std::lock_guard lock(mutex_);
            dropped = stats_.dropped;
            stopping = stopping_;
        }
        if (dropped > dropped_seen)
            warn("dropped", fmt::format("tracing: {} span{} dropped so far (the OTLP queue of {} was full or {} did "
                                        "not take them)",
                                        dropped, dropped == 1 ? "" : "s", settings_.max_queue,
                                        redact_url(settings_.endpoint)));
        dropped_seen = dropped;
        if (stopping) co_return;  // drained
    }
}

awaitable<bool> OtlpExporter::send_batch(std::vector<std::shared_ptr<const trace::SpanData>> batch,
                                         Clock::time_point give_up) {
    const bool json = settings_.protocol == OtlpSettings::Protocol::json;
    const auto body = json ? encode_json(resource_, "switchboard", SWITCHBOARD_VERSION, batch)
                           : encode_protobuf(resource_, "switchboard", SWITCHBOARD_VERSION, batch);
    std::string url_error;
    auto url = http::parse_url(settings_.endpoint, url_error);
    bool settled = false;  // counted as exported or dropped; a batch cut off by a stop is counted dropped here
    core::ScopeExit count_cut([&] {
        if (settled) return;
        std::lock_guard lock(mutex_);
        stats_.dropped += batch.size();
    });
    auto drop = [&](const std::string& kind, const std::string& why) {
        settled = true;
        {
            std::lock_guard lock(mutex_);
            stats_.dropped += batch.size();
            ++stats_.failed_batches;
        }
        warn(kind, fmt::format("OTLP export to {} failed: {}; {} span{} dropped", redact_url(settings_.endpoint), why,
                               batch.size(), batch.size() == 1 ? "" : "s"));
    };
    if (!url) {
        drop("url", url_error);
        co_return false;
    }
    http::Fields fields;
    fields.emplace_back("Content-Type", std::string(json ? json_content_type : protobuf_content_type));
    core::BackoffPolicy backoff;
    backoff.base = std::chrono::milliseconds(200);
    backoff.max = std::chrono::milliseconds(5000);
    for (int attempt = 0;; ++attempt) {
        std::string why;
        std::optional<std::chrono::milliseconds> retry_after;
        bool again = false;
        auto sent = co_await http_->send(*url, http::bhttp::verb::post, body, fields, abort_);
        if (!sent) {
            why = sent.error().message;
            again = sent.error().kind == http::Failure::Kind::connect || sent.error().kind == http::Failure::Kind::io;
        } else {
            auto& ex = **sent;
            const auto status = ex.status();
            auto answer = co_await ex.read_all(64 * 1024);  // read to the end: the connection is reused
            if (status >= 200 && status < 300) {
                settled = true;
                std::lock_guard lock(mutex_);
                stats_.exported += batch.size();
                co_return true;
            }
            why = fmt::format("HTTP {}", status);
            again = retryable(status);
            if (const auto ra = ex.header("Retry-After"); !ra.empty()) {
                int seconds = 0;
                if (std::from_chars(ra.data(), ra.data() + ra.size(), seconds).ec == std::errc() && seconds >= 0)
                    retry_after = std::chrono::seconds(seconds);
            }
        }
        if (!again) {
            drop("status", why);
            co_return false;
        }
        // A Retry-After of 0 must not make it hammer a collector that is struggling: never sooner than the backoff.
        auto delay = core::backoff_delay(backoff, attempt);
        if (retry_after) delay = std::max(delay, *retry_after);
        if (Clock::now() + delay >= give_up) {
            drop("retry", why + " (retries ran out of the export timeout)");
            co_return false;
        }
        {
            std::lock_guard lock(mutex_);
            ++stats_.retries;
        }
        asio::steady_timer wait(ex_);
        wait.expires_after(delay);
        auto [ec] = co_await wait.async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec) {
            drop("cancelled", why + " (stopped while waiting to retry)");
            co_return false;
        }
    }
}

awaitable<void> OtlpExporter::shutdown(std::chrono::milliseconds deadline) {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    // The loop sends what is queued and ends; at the deadline a slow collector is cut off (the request in flight is
    // aborted, a retry's wait cancelled): exit waits for it no longer.
    asio::steady_timer cut(ex_);
    cut.expires_after(deadline);
    cut.async_wait([this](boost::system::error_code ec) {
        if (ec) return;
        abort_->fire();
        tasks_.cancel();
    });
    timer_.cancel();  // the loop wakes at once
    co_await tasks_.join();
    cut.cancel();
    {
        std::lock_guard lock(mutex_);
        stopped_ = true;
        stats_.dropped += queue_.size();  // what the loop did not get to
        queue_.clear();
    }
    http_->close();
}

void OtlpExporter::warn(const std::string& kind, const std::string& message) {
    const auto now = Clock::now();
    if (kind == last_warning_kind_ && now - last_warning_ < std::chrono::minutes(1)) return;
    last_warning_kind_ = kind;
    last_warning_ = now;
    spdlog::warn("{}", http_->scrub(message));
}

}  // namespace switchboard::telemetry
