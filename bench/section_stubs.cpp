// Sections waiting for code that is built elsewhere: they print "not built yet" rows, never numbers. Each becomes a
// real section file (like section_stdio.cpp) when its dependency lands.
#include "harness.hpp"

namespace switchboard::bench {

namespace {

// 7. Gateway: requests/s and latency of Switchboard serving Streamable HTTP to clients.
std::vector<Row> run_gateway(const Context&) {
    const char* why = "awaits the gateway (Switchboard as a Streamable HTTP server)";
    return {not_built("gateway tools/call p50", why), not_built("gateway requests/s, 50 in flight", why)};
}

}  // namespace

SWITCHBOARD_BENCH_SECTION(Section{"gateway", "7. gateway over Streamable HTTP", 70, run_gateway});

}  // namespace switchboard::bench
