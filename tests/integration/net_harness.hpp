// Helpers for tests over real sockets: a server process that listens on a port it picked itself (the HTTP client is
// in tests/support/raw_http.hpp).
#pragma once

#include "raw_http.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace switchboard::test {

/// A child process started with stderr in a file; it printed "listening on URL".
class ListeningServer {
public:
    ~ListeningServer();
    pid_t pid = -1;
    std::uint16_t port = 0;
    std::string url;
    std::string log_path;
    /// SIGKILL now and reap.
    void kill_now();
    /// Everything the process wrote to stderr so far.
    std::string log() const;
};

/// Starts `program args` and waits up to 10 s for its "listening on URL" line (nullptr and a test failure if not).
std::unique_ptr<ListeningServer> start_listening(const std::string& program, const std::vector<std::string>& args);

/// A port that was free a moment ago (bind to 0, read it, close).
std::uint16_t free_port();

/// A legacy `initialize` request body (2025-11-25) for raw HTTP tests.
inline constexpr const char* init_body =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},)"
    R"("clientInfo":{"name":"raw","version":"1"}}})";

/// The headers of an MCP POST: JSON body, JSON or SSE answer.
inline Headers post_headers() {
    Headers h;
    h.emplace_back("Content-Type", "application/json");
    h.emplace_back("Accept", "application/json, text/event-stream");
    return h;
}

/// The headers of a 2026-07-28 tools/call of `tool` (no session; version, method and name in headers).
inline Headers modern_call_headers(const std::string& tool) {
    auto h = post_headers();
    h.emplace_back("MCP-Protocol-Version", "2026-07-28");
    h.emplace_back("Mcp-Method", "tools/call");
    h.emplace_back("Mcp-Name", tool);
    return h;
}

}  // namespace switchboard::test
