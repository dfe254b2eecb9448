// Section "payload": a 64 MiB binary resource (demo://blob/{bytes}) read end to end through ClientSession over stdio,
// decoded and checked, and a 64 MiB tool result (the demo's big_text), each in a fresh child process so that its peak
// RSS is the transfer's alone.
#include "harness.hpp"
#include "sync.hpp"

#include <switchboard/core/base64.hpp>
#include <switchboard/mcp/client_session.hpp>
#include <switchboard/transport/stdio_process.hpp>

#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

namespace switchboard::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t payload_bytes = 64u << 20;

// Checks the demo server's pattern (byte i is i * 7 mod 251) every 4,099 bytes; returns the size.
std::size_t check(std::string_view bytes) {
    for (std::size_t i = 0; i < bytes.size(); i += 4099)
        if (static_cast<unsigned char>(bytes[i]) != (i * 7) % 251) throw std::runtime_error("payload mismatch");
    return bytes.size();
}

// Decodes base64 and checks the demo server's pattern as it goes, holding nothing: the peak RSS measured is the
// read's, not this check's. Returns the decoded size.
std::size_t decode_and_check(std::string_view b64) {
    std::string group;
    std::size_t n = 0;
    constexpr std::size_t piece = 1u << 20;  // whole groups of four
    for (std::size_t at = 0; at < b64.size(); at += piece) {
        auto bytes = core::base64_decode(b64.substr(at, piece));
        if (!bytes) throw std::runtime_error("bad base64");
        for (std::size_t i = (4099 - n % 4099) % 4099; i < bytes->size(); i += 4099)
            if (static_cast<unsigned char>((*bytes)[i]) != ((n + i) * 7) % 251)
                throw std::runtime_error("payload mismatch");
        n += bytes->size();
    }
    return n;
}

struct DemoSession {
    std::shared_ptr<mcp::ClientSession> session;
    int server_pid = -1;
};

// The demo server with its large-payload aids (demo://blob/{bytes}, the big_text tool), connected.
asio::awaitable<DemoSession> connect_demo(asio::any_io_executor ex, std::string demo) {
    transport::StdioProcessOptions po;
    po.name = "demo";
    po.command = demo;
    po.args = {"--page-size", "0", "--blob-template"};
    po.max_message_size = 256u << 20;  // the base64 of 64 MiB is 85.3 MiB, over the default limit
    auto ch = transport::StdioProcessChannel::spawn(ex, po);
    if (!ch) throw std::runtime_error("spawn: " + ch.error().message);
    const int server_pid = (*ch)->pid();
    mcp::ClientOptions co;
    co.server_name = "demo";
    auto session = co_await mcp::ClientSession::connect(ex, *ch, co);
    if (!session) throw std::runtime_error("connect: " + session.error().message);
    co_return DemoSession{std::move(*session), server_pid};
}

asio::awaitable<json::object> read_blob(asio::any_io_executor ex, std::string demo, std::size_t bytes, bool typed) {
    auto demo_session = co_await connect_demo(ex, std::move(demo));
    auto& session = demo_session.session;
    const int server_pid = demo_session.server_pid;
    json::object out;
    out["rss_before_kib"] = rss_kib();
    const auto t0 = clock::now();
    std::size_t decoded = 0;
    const auto uri = fmt::format("demo://blob/{}", bytes);
    if (typed) {  // ReadResourceResult: a big blob arrives decoded (blob_bytes), a small one as base64
        auto r = co_await session->read_resource(uri);
        if (!r) throw std::runtime_error("read: " + r.error().message);
        if (r->contents.empty() || !r->contents[0].has_blob()) throw std::runtime_error("no blob in the result");
        out["read_ms"] = seconds_since(t0) * 1000;
        const auto& c = r->contents[0];
        decoded = c.blob_bytes ? check(*c.blob_bytes) : decode_and_check(*c.blob);
    } else {  // the result as JSON, as a gateway forwards it
        json::object params;
        params["uri"] = uri;
        auto r = co_await session->request("resources/read", std::move(params));
        if (!r) throw std::runtime_error("read: " + r.error().message);
        out["read_ms"] = seconds_since(t0) * 1000;
        const auto* contents = r->is_object() ? r->get_object().if_contains("contents") : nullptr;
        const auto* first = contents && contents->is_array() && !contents->get_array().empty()
                                ? contents->get_array()[0].if_object()
                                : nullptr;
        const auto* blob = first ? first->if_contains("blob") : nullptr;
        if (!blob || !blob->is_string()) throw std::runtime_error("no blob in the result");
        decoded = decode_and_check(blob->get_string());
    }
    out["total_ms"] = seconds_since(t0) * 1000;
    out["decoded_bytes"] = decoded;
    out["peak_kib"] = peak_rss_kib();
    out["server_peak_kib"] = peak_rss_kib(server_pid);
    co_await session->close();
    co_return out;
}

// A tool result of one big text block (the demo's big_text), through ClientSession::call_tool: the CallToolResult a
// host gets. The check reads the text where the result holds it (Content::text() would copy it).
asio::awaitable<json::object> call_big_tool(asio::any_io_executor ex, std::string demo, std::size_t bytes) {
    auto demo_session = co_await connect_demo(ex, std::move(demo));
    auto& session = *demo_session.session;
    json::object out;
    out["rss_before_kib"] = rss_kib();
    const auto t0 = clock::now();
    json::object args;
    args["bytes"] = bytes;
    mcp::CallOptions options;
    options.timeout = std::chrono::minutes(10);
    auto r = co_await session.call_tool("big_text", std::move(args), options);
    if (!r) throw std::runtime_error("call: " + r.error().message);
    out["read_ms"] = seconds_since(t0) * 1000;
    const auto* text = r->content.empty() ? nullptr : r->content[0].raw.if_contains("text");
    if (r->is_error || !text || !text->is_string()) throw std::runtime_error("no text in the result");
    const auto& t = text->get_string();
    for (std::size_t i = 0; i < t.size(); i += 4099)
        if (t[i] != static_cast<char>('a' + (i * 7) % 26)) throw std::runtime_error("payload mismatch");
    out["total_ms"] = seconds_since(t0) * 1000;
    out["decoded_bytes"] = t.size();
    out["peak_kib"] = peak_rss_kib();
    out["server_peak_kib"] = peak_rss_kib(demo_session.server_pid);
    co_await session.close();
    co_return out;
}

json::object big_tool_child(const std::vector<std::string>& args) {
    asio::io_context io;
    return run_sync(io,
                    call_big_tool(io.get_executor(), args.at(0) + "/switchboard-demo-server", std::stoull(args.at(1))));
}

json::object blob_child(const std::vector<std::string>& args) {
    asio::io_context io;
    return run_sync(io, read_blob(io.get_executor(), args.at(0) + "/switchboard-demo-server", std::stoull(args.at(1)),
                                  args.at(2) == "typed"));
}

// The rows of one 64 MiB transfer: time, throughput, the host's peak RSS and (a `server_row` name) the demo server's.
// `then`: what the time row's time includes besides the transfer.
void add_rows(std::vector<Row>& rows, const std::string& what, const std::string& then, const std::string& how,
              const json::object& out, const std::optional<json::object>& ts, const char* server_row) {
    Row t;
    t.metric = what + " + " + then + " via " + how;
    t.unit = "ms";
    t.ours = number(out, "total_ms");
    t.note = fmt::format("read alone {:.0f} ms", *number(out, "read_ms"));
    if (ts) {
        t.peer = number(*ts, "total_ms");
        t.peer_name = "TS SDK client";
    }
    rows.push_back(std::move(t));
    const double mib_per_s = 64.0 / (*number(out, "read_ms") / 1000);
    Row speed;
    speed.metric = what + " throughput via " + how;
    speed.unit = "MiB/s";
    speed.ours = mib_per_s;
    speed.higher_is_better = true;
    speed.target = ">= 400 MiB/s";
    if (ts && number(*ts, "read_ms")) {
        speed.peer = 64.0 / (*number(*ts, "read_ms") / 1000);
        speed.peer_name = "TS SDK client";
    }
    judge(speed, mib_per_s, 400, false, "400 MiB/s");
    rows.push_back(std::move(speed));
    Row m;
    m.metric = "host peak RSS via " + how;
    m.unit = "MiB";
    m.ours = *number(out, "peak_kib") / 1024.0;
    m.target = "<= 2x payload (128 MiB)";
    if (ts) {
        m.peer = number(*ts, "peak_kib").value_or(0) / 1024.0;
        m.peer_name = "TS SDK client (node)";
    }
    judge(m, *m.ours, 128, true, "2x");
    m.note += fmt::format("; {:.2f}x the payload", *m.ours / 64.0);
    rows.push_back(std::move(m));
    if (server_row) {
        Row sr;
        sr.metric = server_row;
        sr.unit = "MiB";
        sr.ours = *number(out, "server_peak_kib") / 1024.0;
        sr.note = fmt::format("{:.2f}x the payload", *sr.ours / 64.0);
        rows.push_back(std::move(sr));
    }
}

std::vector<Row> run(const Context& ctx) {
    std::vector<Row> rows;
    // The TS SDK client on the same transfers, in the same run.
    auto ts = run_json({ctx.node, ctx.peers_dir + "/stdio_blob_read.mjs", "--command", ctx.demo(), "--args",
                        "--page-size 0 --blob-template", "--uri", fmt::format("demo://blob/{}", payload_bytes)});
    if (ts && number(*ts, "decoded_bytes") != static_cast<double>(payload_bytes)) ts.reset();
    if (!ts) rows.push_back(failed("TS SDK client: 64 MiB read", "the peer did not run (node and tests/peers?)"));
    for (std::string mode : {"raw", "typed"}) {
        const std::string how = mode == "raw" ? "ClientSession::request, JSON result" : "ClientSession::read_resource";
        auto out = run_child(ctx, "blob", {std::to_string(payload_bytes), mode});
        if (!out || *number(*out, "decoded_bytes") != static_cast<double>(payload_bytes)) {
            rows.push_back(failed("64 MiB read via " + how, out ? "wrong size" : "child run failed"));
            continue;
        }
        add_rows(rows, "64 MiB read", "decode", how, *out, ts,
                 mode == "raw" ? "demo server peak RSS (serving it)" : nullptr);
    }
    // A 64 MiB tool result: one text block.
    auto ts_tool = run_json({ctx.node, ctx.peers_dir + "/stdio_big_tool_result.mjs", "--command", ctx.demo(), "--args",
                             "--page-size 0 --blob-template", "--bytes", std::to_string(payload_bytes)});
    if (ts_tool && number(*ts_tool, "text_bytes") != static_cast<double>(payload_bytes)) ts_tool.reset();
    if (!ts_tool)
        rows.push_back(failed("TS SDK client: 64 MiB tool result", "the peer did not run (node and tests/peers?)"));
    const std::string how = "ClientSession::call_tool (text)";
    auto out = run_child(ctx, "big_tool", {std::to_string(payload_bytes)});
    if (!out || *number(*out, "decoded_bytes") != static_cast<double>(payload_bytes))
        rows.push_back(failed("64 MiB tool result via " + how, out ? "wrong size" : "child run failed"));
    else
        add_rows(rows, "64 MiB tool result", "check", how, *out, ts_tool,
                 "demo server peak RSS (serving the tool result)");
    return rows;
}

}  // namespace

SWITCHBOARD_BENCH_SECTION(Section{"payload", "5. large payload: 64 MiB binary resource and tool result over stdio", 50,
                                  run});
static ChildRegistrar blob_child_registrar("blob", blob_child);
static ChildRegistrar big_tool_child_registrar("big_tool", big_tool_child);

}  // namespace switchboard::bench
