// The gateway's counters, rendered in the Prometheus text exposition format (version 0.0.4) for GET /metrics:
//
//   switchboard_tool_calls_total{server,tool}                 tools/call forwarded by the gateway
//   switchboard_tool_errors_total{server,tool}                 of those, ended in an error (JSON-RPC error, isError
//                                                              result, upstream failure, cancelled)
//   switchboard_tool_call_duration_seconds{server,tool}        histogram (_bucket{le}, _sum, _count)
//   switchboard_server_up{server}                              1 when connected, else 0
//   switchboard_server_phase{server,phase}                     1 for the server's current phase, 0 for the others
//   switchboard_active_calls                                   requests in flight in the pool
//   switchboard_gateway_sessions                               client sessions being served
//   switchboard_http_requests_total{code}                      requests answered on the listener, by status
//   switchboard_http_request_bytes_total                       request bodies received
//   switchboard_http_response_bytes_total                      bytes sent (headers, bodies, chunk framing)
//   mcp_client_operation_duration_seconds{mcp_method_name,error_type}  requests to servers (OTel's MCP histogram)
//   mcp_server_operation_duration_seconds{mcp_method_name,error_type}  requests the gateway answered
//
// `tool` is the upstream's own tool name. Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/core/trace.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace switchboard::host {
class ServerPool;
}

namespace switchboard::gateway {

class Metrics {
public:
    /// Upper bounds of the latency buckets, in seconds (+Inf implied).
    static constexpr std::array<double, 13> buckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

    void record_call(const std::string& server, const std::string& tool, std::chrono::steady_clock::duration took,
                     bool error);
    void record_http(unsigned status, std::size_t bytes_in, std::size_t bytes_out);

    /// The exposition text: these counters, plus the pool's phases and `sessions` active client sessions.
    std::string render(const host::ServerPool& pool, std::size_t sessions) const;

private:
    static void render_operations(std::string& out);
    struct Tool {
        std::uint64_t calls = 0, errors = 0;
        std::array<std::uint64_t, buckets.size()> bucket{};  // not cumulative; summed when rendered
        double sum = 0;
    };
    std::map<std::pair<std::string, std::string>, Tool> tools_;
    std::map<unsigned, std::uint64_t> http_requests_;
    std::uint64_t bytes_in_ = 0, bytes_out_ = 0;
};

/// A Prometheus label value: backslash, double quote and newline escaped.
std::string prometheus_label(std::string_view value);

}  // namespace switchboard::gateway
