// Tracing for every command that does work (cli::traced) and `switchboard trace [ID]`, which reads the local trace
// file: the recent traces, or one trace's span tree.
#include "cli.hpp"

#include <switchboard/telemetry/telemetry.hpp>
#include <switchboard/telemetry/trace_ring.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <ctime>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

// The config's `tracing` object as an OtlpSource (the flag wins over it); bad types are reported by name.
telemetry::OtlpSource tracing_source(const host::Config& config, const std::string& otlp_endpoint,
                                     std::string& error) {
    telemetry::OtlpSource s;
    s.origin = fmt::format("{}: \"tracing\"", config.source);
    const auto& t = config.tracing;
    auto text = [&](const char* key, std::string& out) {
        if (const auto* v = t.if_contains(key)) {
            if (v->is_string())
                out = std::string(v->get_string());
            else if (error.empty())
                error = fmt::format("tracing: {}.{} must be a string", s.origin, key);
        }
    };
    text("endpoint", s.endpoint);
    text("protocol", s.protocol);
    text("serviceName", s.service_name);
    text("sampler", s.sampler);
    if (const auto* v = t.if_contains("samplerArg")) {
        if (v->is_number())
            s.sampler_arg = v->to_number<double>();
        else if (error.empty())
            error = fmt::format("tracing: {}.samplerArg must be a number", s.origin);
    }
    if (const auto* v = t.if_contains("enabled")) {
        if (v->is_bool())
            s.enabled = v->get_bool();
        else if (error.empty())
            error = fmt::format("tracing: {}.enabled must be true or false", s.origin);
    }
    if (const auto* v = t.if_contains("headers")) {
        if (const auto* h = v->if_object()) {
            for (const auto& [k, hv] : *h)
                if (hv.is_string()) s.headers[std::string(k)] = std::string(hv.get_string());
                else if (error.empty())
                    error = fmt::format("tracing: {}.headers.{} must be a string", s.origin, std::string(k));
        } else if (error.empty()) {
            error = fmt::format("tracing: {}.headers must be an object", s.origin);
        }
    }
    for (const auto& [k, v] : t) {
        (void)v;
        static constexpr std::string_view known[] = {"endpoint", "protocol", "serviceName", "sampler",
                                                     "samplerArg", "enabled", "headers"};
        if (std::find(std::begin(known), std::end(known), std::string_view(k)) == std::end(known) && error.empty())
            error = fmt::format("tracing: {} has an unknown key \"{}\" (known: endpoint, protocol, headers, "
                                "serviceName, sampler, samplerArg, enabled)",
                                s.origin, std::string(k));
    }
    if (!otlp_endpoint.empty()) {
        s.endpoint = otlp_endpoint;
        s.names["endpoint"] = "flag --otlp-endpoint";
    }
    return s;
}

std::string local_time(std::uint64_t ns) {
    const std::time_t t = static_cast<std::time_t>(ns / 1'000'000'000);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

}  // namespace

awaitable<int> traced(const host::Config& config, std::string otlp_endpoint, Traced kind,
                      std::function<awaitable<int>()> command) {
    std::string error;
    auto source = tracing_source(config, otlp_endpoint, error);
    if (!error.empty()) {
        fmt::print(stderr, "switchboard: {}\n", error);
        co_return 2;
    }
    auto telemetry = telemetry::Telemetry::create(co_await asio::this_coro::executor, source, kind == Traced::serving,
                                                  error);
    if (!telemetry) {
        fmt::print(stderr, "switchboard: {}\n", error);
        co_return 2;
    }
    if (kind != Traced::once) telemetry->save_every(std::chrono::seconds(5));
    // What was recorded is flushed and saved however the command ends (an exception included).
    int status = 70;
    std::exception_ptr failure;
    try {
        status = co_await command();
    } catch (...) {
        failure = std::current_exception();
    }
    co_await telemetry->finish(std::chrono::seconds(5));
    if (failure) std::rethrow_exception(failure);
    co_return status;
}

int trace_command(const std::string& id, bool json_output) {
    const auto path = telemetry::default_ring_path();
    const auto spans = path.empty() ? std::vector<trace::SpanData>{} : telemetry::load_spans(path);
    if (id.empty()) {
        const auto recent = telemetry::recent_traces(spans, 20);
        if (json_output) {
            json::array out;
            for (const auto& t : recent)
                out.push_back(json::object{{"traceId", t.trace_id},
                                           {"root", t.root_name},
                                           {"startUnixNano", std::to_string(t.start_ns)},
                                           {"durationMs", static_cast<double>(t.end_ns - t.start_ns) / 1e6},
                                           {"spans", t.spans},
                                           {"error", t.error}});
            fmt::print("{}\n", json::serialize(out));
            return 0;
        }
        if (recent.empty()) {
            fmt::print("No traces in {} yet: `run`, `call`, `chat` and the web UI's chats record theirs there.\n",
                       path.empty() ? std::string("the trace file") : path.string());
            return 0;
        }
        for (const auto& t : recent)
            fmt::print("{}  {}  {:>9.1f} ms  {:>3} spans  {}{}\n", t.trace_id, local_time(t.start_ns),
                       static_cast<double>(t.end_ns - t.start_ns) / 1e6, t.spans, t.root_name,
                       t.error ? "  [error]" : "");
        fmt::print("\n`switchboard trace ID` shows one (the first 8 digits are enough).\n");
        return 0;
    }
    std::string error;
    auto found = telemetry::spans_of_trace(spans, id, &error);
    if (found.empty()) {
        fmt::print(stderr, "switchboard trace: {}\n",
                   error.empty() ? fmt::format("no trace {} in {}", id, path.string()) : error);
        return 1;
    }
    if (json_output) {
        json::array out;
        for (const auto* s : found) out.push_back(telemetry::span_to_json(*s));
        fmt::print("{}\n", json::serialize(out));
        return 0;
    }
    fmt::print("trace {}\n{}", found.front()->trace_id == trace::TraceId{} ? id : trace::to_hex(found.front()->trace_id),
               telemetry::render_tree(found));
    return 0;
}

}  // namespace switchboard::cli
