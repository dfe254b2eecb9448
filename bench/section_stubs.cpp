// Sections waiting for code that is built elsewhere: they print "not built yet" rows, never numbers. Each becomes a
// real section file (like section_stdio.cpp) when its dependency lands.
#include "harness.hpp"

namespace switchboard::bench {

namespace {

// 2. Streamable HTTP: ours through transport::make_streamable_http_channel against server-everything in
// streamableHttp mode, next to the TS SDK client (bench/peers: add streamable_http_roundtrip.mjs).
std::vector<Row> run_http(const Context&) {
    const char* why = "awaits the Streamable HTTP client (transport::make_streamable_http_channel)";
    return {not_built("tools/call p50 (vs TS SDK)", why), not_built("tools/call p99 (vs TS SDK)", why),
            not_built("calls/s, 1 in flight (vs TS SDK)", why), not_built("calls/s, 50 in flight (vs TS SDK)", why)};
}

// 7. Gateway: requests/s and latency of Switchboard serving Streamable HTTP to clients.
std::vector<Row> run_gateway(const Context&) {
    const char* why = "awaits the gateway (Switchboard as a Streamable HTTP server)";
    return {not_built("gateway tools/call p50", why), not_built("gateway requests/s, 50 in flight", why)};
}

}  // namespace

SWITCHBOARD_BENCH_SECTION(Section{"http", "2. Streamable HTTP tools/call round trip (server-everything)", 20,
                                  run_http});
SWITCHBOARD_BENCH_SECTION(Section{"gateway", "7. gateway over Streamable HTTP", 70, run_gateway});

}  // namespace switchboard::bench
