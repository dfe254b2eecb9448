#include <switchboard/gateway/metrics.hpp>

#include <switchboard/host/pool.hpp>

#include <fmt/format.h>

namespace switchboard::gateway {

std::string prometheus_label(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

void Metrics::record_call(const std::string& server, const std::string& tool, std::chrono::steady_clock::duration took,
                          bool error) {
    auto& t = tools_[{server, tool}];
    ++t.calls;
    if (error) ++t.errors;
    const double s = std::chrono::duration<double>(took).count();
    t.sum += s;
    for (std::size_t i = 0; i < buckets.size(); ++i)
        if (s <= buckets[i]) {
            ++t.bucket[i];
            break;
        }
}

void Metrics::record_http(unsigned status, std::size_t bytes_in, std::size_t bytes_out) {
    ++http_requests_[status];
    bytes_in_ += bytes_in;
    bytes_out_ += bytes_out;
}

std::string Metrics::render(const host::ServerPool& pool, std::size_t sessions) const {
    std::string out;
    auto labels = [](const std::pair<std::string, std::string>& k) {
        return fmt::format("server=\"{}\",tool=\"{}\"", prometheus_label(k.first), prometheus_label(k.second));
    };
    out +=
        "# HELP switchboard_tool_calls_total Tool calls forwarded by the gateway.\n"
        "# TYPE switchboard_tool_calls_total counter\n";
    for (const auto& [k, t] : tools_) out += fmt::format("switchboard_tool_calls_total{{{}}} {}\n", labels(k), t.calls);
    out +=
        "# HELP switchboard_tool_errors_total Forwarded tool calls that ended in an error.\n"
        "# TYPE switchboard_tool_errors_total counter\n";
    for (const auto& [k, t] : tools_)
        out += fmt::format("switchboard_tool_errors_total{{{}}} {}\n", labels(k), t.errors);
    out +=
        "# HELP switchboard_tool_call_duration_seconds Time of forwarded tool calls.\n"
        "# TYPE switchboard_tool_call_duration_seconds histogram\n";
    for (const auto& [k, t] : tools_) {
        const auto l = labels(k);
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < buckets.size(); ++i) {
            cumulative += t.bucket[i];
            out += fmt::format("switchboard_tool_call_duration_seconds_bucket{{{},le=\"{}\"}} {}\n", l, buckets[i],
                               cumulative);
        }
        out += fmt::format("switchboard_tool_call_duration_seconds_bucket{{{},le=\"+Inf\"}} {}\n", l, t.calls);
        out += fmt::format("switchboard_tool_call_duration_seconds_sum{{{}}} {}\n", l, t.sum);
        out += fmt::format("switchboard_tool_call_duration_seconds_count{{{}}} {}\n", l, t.calls);
    }

    const auto status = pool.status();
    out +=
        "# HELP switchboard_server_up Whether the server is connected.\n"
        "# TYPE switchboard_server_up gauge\n";
    for (const auto& s : status)
        out += fmt::format("switchboard_server_up{{server=\"{}\"}} {}\n", prometheus_label(s.name),
                           s.phase == host::Phase::connected ? 1 : 0);
    out +=
        "# HELP switchboard_server_phase The server's current health phase (1) among all phases (0).\n"
        "# TYPE switchboard_server_phase gauge\n";
    for (const auto& s : status)
        for (int p = 0; p < host::phase_count; ++p) {
            const auto phase = static_cast<host::Phase>(p);
            out += fmt::format("switchboard_server_phase{{server=\"{}\",phase=\"{}\"}} {}\n", prometheus_label(s.name),
                               host::to_string(phase), s.phase == phase ? 1 : 0);
        }
    out += fmt::format(
        "# HELP switchboard_active_calls Requests to servers in flight.\n"
        "# TYPE switchboard_active_calls gauge\n"
        "switchboard_active_calls {}\n"
        "# HELP switchboard_gateway_sessions Client sessions being served.\n"
        "# TYPE switchboard_gateway_sessions gauge\n"
        "switchboard_gateway_sessions {}\n",
        pool.active_calls(), sessions);
    out +=
        "# HELP switchboard_http_requests_total HTTP requests answered, by status code.\n"
        "# TYPE switchboard_http_requests_total counter\n";
    for (const auto& [code, n] : http_requests_)
        out += fmt::format("switchboard_http_requests_total{{code=\"{}\"}} {}\n", code, n);
    out += fmt::format(
        "# HELP switchboard_http_request_bytes_total Request body bytes received.\n"
        "# TYPE switchboard_http_request_bytes_total counter\n"
        "switchboard_http_request_bytes_total {}\n"
        "# HELP switchboard_http_response_bytes_total Response bytes sent.\n"
        "# TYPE switchboard_http_response_bytes_total counter\n"
        "switchboard_http_response_bytes_total {}\n",
        bytes_in_, bytes_out_);
    render_operations(out);
    return out;
}

// OTel's MCP duration histograms, in Prometheus's names for them (dots become underscores, the unit a suffix).
void Metrics::render_operations(std::string& out) {
    auto* tracer = trace::tracer();
    if (!tracer) return;
    const auto ops = tracer->operations();
    for (const bool server : {false, true}) {
        const auto* name = server ? "mcp_server_operation_duration_seconds" : "mcp_client_operation_duration_seconds";
        out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name,
                           server ? "Requests the gateway answered (mcp.server.operation.duration)."
                                  : "Requests sent to servers (mcp.client.operation.duration).",
                           name);
        for (const auto& h : ops) {
            if (h.server != server) continue;
            auto l = fmt::format("mcp_method_name=\"{}\"", prometheus_label(h.method));
            if (!h.error_type.empty()) l += fmt::format(",error_type=\"{}\"", prometheus_label(h.error_type));
            std::uint64_t cumulative = 0;
            for (std::size_t i = 0; i < trace::OperationHistogram::bounds.size(); ++i) {
                cumulative += h.counts[i];
                out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, l, trace::OperationHistogram::bounds[i],
                                   cumulative);
            }
            out += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, l, h.count);
            out += fmt::format("{}_sum{{{}}} {}\n", name, l, h.sum);
            out += fmt::format("{}_count{{{}}} {}\n", name, l, h.count);
        }
    }
}

}  // namespace switchboard::gateway
