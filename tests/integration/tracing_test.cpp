// One trace from the model's request to the server's work, against a real OpenTelemetry SDK on the other side: the
// official TypeScript MCP server instrumented with the OpenTelemetry JS SDK (tests/peers/otel_server.mjs) continues
// the trace from `_meta.traceparent` and exports its spans to a test collector (tests/peers/scripts/otlp_receiver.py),
// which also receives Switchboard's. Checked in `run`, through `serve` (client → gateway → upstream, from `_meta` and
// from the header), and in an agent's fork with a lazy server; and a collector that is down, slow or failing costs
// no call.
#include "agent_harness.hpp"
#include "host_harness.hpp"
#include "net_harness.hpp"
#include "raw_http.hpp"

#include <switchboard/telemetry/otlp_exporter.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

namespace switchboard::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using boost::asio::awaitable;

// The client's context of the gateway tests (W3C's own example ids).
constexpr const char* client_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* client_span = "00f067aa0ba902b7";

struct Span {
    std::string trace_id, span_id, parent, name, service, encoding;
    int kind = 0;
    json::object attributes;
    json::array events;
};

class Tracing : public ::testing::Test {
protected:
    TempDir dir;
    std::unique_ptr<ListeningServer> receiver;

    void SetUp() override {
        receiver = start_listening("/usr/bin/python3", {std::string(PEERS_DIR) + "/scripts/otlp_receiver.py", "--port", "0"});
        ASSERT_TRUE(receiver);
        ::setenv("SWITCHBOARD_TRACE_FILE", (dir.path / "traces.jsonl").c_str(), 1);
        ::setenv("OTEL_BSP_SCHEDULE_DELAY", "100", 1);  // a gateway's batches go out at once
    }
    void TearDown() override {
        ::unsetenv("SWITCHBOARD_TRACE_FILE");
        ::unsetenv("OTEL_BSP_SCHEDULE_DELAY");
    }

    std::string collector() const { return "http://127.0.0.1:" + std::to_string(receiver->port); }

    /// The instrumented TS SDK server as a config entry (its spans go to the collector), `extra` inside the object.
    std::string peer_entry(const std::string& extra = "") const {
        return R"({"command": )" + q(peers_node()) + R"(, "args": [)" + q(std::string(PEERS_DIR) + "/otel_server.mjs") +
               R"(], "env": {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": )" + q(collector() + "/v1/traces") + "}" + extra +
               "}";
    }

    json::object receiver_get(const std::string& target) {
        json::object out;
        const auto port = receiver->port;
        run([&, port]() -> awaitable<void> {
            auto r = co_await http_exchange(port, "GET", target, {}, "");
            EXPECT_EQ(r.status, 200) << r.body;
            json::error_code ec;
            auto v = json::parse(r.body, ec);
            if (!ec && v.is_object()) out = v.as_object();
        });
        return out;
    }
    void receiver_post(const std::string& target, const std::string& body) {
        const auto port = receiver->port;
        run([&, port]() -> awaitable<void> {
            Headers h{{"Content-Type", "application/json"}};
            auto r = co_await http_exchange(port, "POST", target, h, body);
            EXPECT_EQ(r.status, 200) << r.body;
        });
    }

    /// The spans of `trace_id`, waiting (at most 10 s) until there are at least `at_least`.
    std::vector<Span> spans(const std::string& trace_id, std::size_t at_least) {
        std::vector<Span> out;
        for (int i = 0; i < 100; ++i) {
            out.clear();
            auto v = receiver_get("/spans?traceId=" + trace_id);
            if (const auto* list = v.if_contains("spans"))
                for (const auto& s : list->as_array()) {
                    const auto& o = s.as_object();
                    Span sp;
                    sp.trace_id = text_of(o.at("traceId"));
                    sp.span_id = text_of(o.at("spanId"));
                    sp.parent = text_of(o.at("parentSpanId"));
                    sp.name = text_of(o.at("name"));
                    sp.service = text_of(o.at("service"));
                    sp.encoding = text_of(o.at("encoding"));
                    sp.kind = static_cast<int>(o.at("kind").to_number<std::int64_t>());
                    sp.attributes = o.at("attributes").as_object();
                    sp.events = o.at("events").as_array();
                    out.push_back(std::move(sp));
                }
            if (out.size() >= at_least) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return out;
    }

    static const Span* find(const std::vector<Span>& spans, const std::string& name, const std::string& service,
                            int kind = 0) {
        for (const auto& s : spans)
            if (s.name == name && s.service == service && (kind == 0 || s.kind == kind)) return &s;
        return nullptr;
    }
    static std::string describe(const std::vector<Span>& spans) {
        std::string out;
        for (const auto& s : spans)
            out += s.service + ": " + s.name + " kind " + std::to_string(s.kind) + " span " + s.span_id + " parent " +
                   s.parent + "\n";
        return out;
    }

    int cli(const std::string& args, std::string& out, const std::string& redirect = "2>/dev/null") {
        return run_command("cd '" + dir.path.string() + "' && XDG_CACHE_HOME='" + (dir.path / "cache").string() +
                               "' " + SWITCHBOARD_CLI + " " + args + " " + redirect,
                           out);
    }
};

TEST_F(Tracing, RunIsOneTraceFromTheModelRequestToTheServersWork) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo", R"({"text":"hi"})") +
                               R"(], "usage": {"prompt_tokens": 20, "completion_tokens": 3}}, {"content": "Done."}])");
    ASSERT_TRUE(fake.running());
    std::ofstream(dir.path / "config.json") << R"({"mcpServers": {"peer": )" << peer_entry() << R"(},
        "llm": {"baseUrl": )" << q(fake.url()) << R"(, "model": "test-model"}})";
    std::string out;
    ASSERT_EQ(cli("--config config.json --otlp-endpoint " + collector() + " run 'say hi' --yes --json --no-store", out),
              0)
        << out;
    const auto result = json::parse(out).as_object();
    const auto trace_id = text_of(result.at("traceId"));
    ASSERT_EQ(trace_id.size(), 32u);

    const auto all = spans(trace_id, 4);
    const auto* agent = find(all, "invoke_agent switchboard", "switchboard");
    const auto* chat = find(all, "chat test-model", "switchboard");
    const auto* call = find(all, "tools/call echo", "switchboard", 3);
    const auto* server = find(all, "tools/call echo", "otel-peer", 2);
    ASSERT_TRUE(agent && chat && call && server) << describe(all);
    EXPECT_EQ(agent->parent, "");  // the run is the root
    EXPECT_EQ(chat->parent, agent->span_id);
    EXPECT_EQ(call->parent, chat->span_id);  // the model turn that asked for it
    EXPECT_EQ(server->parent, call->span_id);  // the OTel JS SDK continued it from _meta.traceparent
    EXPECT_EQ(chat->encoding, "protobuf");     // OTLP's default
    EXPECT_EQ(chat->kind, 3);
    EXPECT_EQ(text_of(chat->attributes.at("gen_ai.request.model")), "test-model");
    EXPECT_EQ(chat->attributes.at("gen_ai.usage.input_tokens").to_number<std::int64_t>(), 20);
    // A string array, as the convention says (OTLP ArrayValue), decoded by the collector.
    EXPECT_EQ(json::serialize(chat->attributes.at("gen_ai.response.finish_reasons")), R"(["tool_calls"])");
    EXPECT_EQ(text_of(call->attributes.at("mcp.method.name")), "tools/call");
    EXPECT_EQ(text_of(call->attributes.at("gen_ai.tool.name")), "echo");
    EXPECT_EQ(text_of(call->attributes.at("gen_ai.operation.name")), "execute_tool");
    EXPECT_EQ(text_of(call->attributes.at("network.transport")), "pipe");
    EXPECT_EQ(text_of(call->attributes.at("mcp.protocol.version")), "2026-07-28");

    // Without a collector the same tree is in the local trace file.
    ASSERT_EQ(cli("trace " + trace_id.substr(0, 8), out), 0) << out;
    EXPECT_NE(out.find("invoke_agent switchboard"), std::string::npos) << out;
    EXPECT_NE(out.find("└─ tools/call echo"), std::string::npos) << out;
}

TEST_F(Tracing, TheConfigKeyExportsJsonWithItsHeadersAndTheTraceFileKeepsARunWithoutACollector) {
    std::ofstream(dir.path / "config.json") << R"({"mcpServers": {"demo": )" << demo_entry("") << R"(},
        "tracing": {"endpoint": )" << q(collector()) << R"(, "protocol": "http/json",
                    "headers": {"x-collector-key": "sekrit-value-123"}, "serviceName": "sb-test"}})";
    std::string out;
    ASSERT_EQ(cli("--config config.json call echo '{\"message\":\"m\"}' --json", out, "2>&1"), 0) << out;
    EXPECT_EQ(out.find("sekrit-value-123"), std::string::npos) << out;
    const auto trace_id = text_of(json::parse(out.substr(out.find('{'))).at("traceId"));
    const auto all = spans(trace_id, 2);
    const auto* root = find(all, "call echo", "sb-test");
    const auto* call = find(all, "tools/call echo", "sb-test", 3);
    ASSERT_TRUE(root && call) << describe(all);
    EXPECT_EQ(call->parent, root->span_id);
    EXPECT_EQ(root->encoding, "json");
    auto v = receiver_get("/spans?traceId=" + trace_id);
    const auto& headers = v.at("spans").as_array()[0].at("headers").as_object();
    EXPECT_EQ(text_of(headers.at("x-collector-key")), "sekrit-value-123");
    EXPECT_EQ(text_of(headers.at("content-type")), "application/json");

    // No collector at all: nothing is exported, the file has the call.
    std::ofstream(dir.path / "plain.json") << R"({"mcpServers": {"demo": )" << demo_entry("") << "}}";
    ASSERT_EQ(cli("--config plain.json call echo '{\"message\":\"m\"}' --json", out), 0) << out;
    const auto local = text_of(json::parse(out).at("traceId"));
    ASSERT_EQ(cli("trace --json", out), 0) << out;
    EXPECT_NE(out.find(local), std::string::npos) << out;
    EXPECT_EQ(receiver_get("/spans?traceId=" + local).at("spans").as_array().size(), 0u);
}

TEST_F(Tracing, ServeContinuesTheClientsTraceFromMetaThenTheHeaderAndTheUpstreamContinuesTheGateways) {
    std::ofstream(dir.path / "config.json") << R"({"mcpServers": {"peer": )" << peer_entry() << "}}";
    auto gateway = start_listening(SWITCHBOARD_CLI, {"--config", (dir.path / "config.json").string(), "--otlp-endpoint",
                                                     collector(), "serve", "--port", "0"});
    ASSERT_TRUE(gateway);
    const auto port = gateway->port;
    auto call = [port](const std::string& meta_extra, Headers extra_headers) {
        int status = 0;
        std::string body;
        run([&]() -> awaitable<void> {
            auto h = modern_call_headers("echo");
            for (auto& e : extra_headers) h.push_back(e);
            auto r = co_await http_exchange(
                port, "POST", "/mcp", h,
                R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m"},)"
                R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                R"("io.modelcontextprotocol/clientCapabilities":{})" +
                    meta_extra + "}}}");
            status = r.status;
            body = r.body;
        });
        EXPECT_EQ(status, 200) << body;
        return body;
    };
    // From _meta (SEP-414).
    call(std::string(R"(,"traceparent":"00-)") + client_trace + "-" + client_span + R"(-01")", {});
    auto all = spans(client_trace, 3);
    const auto* gw_server = find(all, "tools/call echo", "switchboard", 2);
    const auto* gw_client = find(all, "tools/call echo", "switchboard", 3);
    const auto* upstream = find(all, "tools/call echo", "otel-peer", 2);
    ASSERT_TRUE(gw_server && gw_client && upstream) << describe(all);
    EXPECT_EQ(gw_server->parent, client_span);
    EXPECT_EQ(gw_client->parent, gw_server->span_id);
    EXPECT_EQ(upstream->parent, gw_client->span_id);

    // From the header only (SEP-2028's form).
    const std::string header_trace = "0af7651916cd43dd8448eb211c80319c";
    call("", {{"traceparent", "00-" + header_trace + "-b7ad6b7169203331-01"}});
    all = spans(header_trace, 3);
    gw_server = find(all, "tools/call echo", "switchboard", 2);
    upstream = find(all, "tools/call echo", "otel-peer", 2);
    ASSERT_TRUE(gw_server && upstream) << describe(all);
    EXPECT_EQ(gw_server->parent, "b7ad6b7169203331");

    // /metrics has OTel's duration histograms.
    std::string metrics;
    run([&]() -> awaitable<void> {
        auto r = co_await http_exchange(port, "GET", "/metrics", {}, "");
        metrics = r.body;
    });
    EXPECT_NE(metrics.find("mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\"} 2"),
              std::string::npos)
        << metrics;
    EXPECT_NE(metrics.find("mcp_client_operation_duration_seconds_bucket{mcp_method_name=\"tools/call\",le=\"+Inf\"}"),
              std::string::npos)
        << metrics;
}

TEST_F(Tracing, AnAgentsForkAndItsLazyServerAreSpansOfTheSameTrace) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("agent__helper", R"({"task":"echo hi"})") + R"(]},
        {"toolCalls": [)" + tool_call("echo", R"({"text":"hi"})") + R"(]},
        {"content": "The helper echoed."}, {"content": "Done."}])");
    ASSERT_TRUE(fake.running());
    std::ofstream(dir.path / "config.json") << R"({"mcpServers": {"peer": )"
                                            << peer_entry(R"(, "lazy": true, "keepWarmSeconds": 0)") << R"(},
        "llm": {"baseUrl": )" << q(fake.url()) << R"(, "model": "test-model"}})";
    fs::create_directories(dir.path / ".switchboard/agents");
    std::ofstream(dir.path / ".switchboard/agents/helper.md")
        << "---\nname: helper\ndescription: Echoes.\nmcp: [peer]\n---\nUse echo.\n";
    std::string out;
    ASSERT_EQ(cli("--config config.json --otlp-endpoint " + collector() + " run 'ask the helper' --yes --json --no-store",
                  out),
              0)
        << out;
    const auto trace_id = text_of(json::parse(out).at("traceId"));
    const auto all = spans(trace_id, 8);
    const auto* main_agent = find(all, "invoke_agent switchboard", "switchboard");
    const auto* fork = find(all, "invoke_agent helper", "switchboard");
    const auto* load = find(all, "load peer", "switchboard");
    const auto* call = find(all, "tools/call echo", "switchboard", 3);
    const auto* server = find(all, "tools/call echo", "otel-peer", 2);
    ASSERT_TRUE(main_agent && fork && load && call && server) << describe(all);
    // The fork is under the model turn that called it, and its load, requests and calls under the fork.
    std::map<std::string, const Span*> by_id;
    for (const auto& s : all) by_id[s.span_id] = &s;
    ASSERT_TRUE(by_id.count(fork->parent));
    EXPECT_EQ(by_id[fork->parent]->name, "chat test-model");
    EXPECT_EQ(by_id[fork->parent]->parent, main_agent->span_id);
    EXPECT_EQ(load->parent, fork->span_id);
    EXPECT_EQ(text_of(load->attributes.at("switchboard.server.phase")), "dormant");
    ASSERT_TRUE(by_id.count(call->parent));
    EXPECT_EQ(by_id[call->parent]->parent, fork->span_id);  // the fork's own model turn
    EXPECT_EQ(server->parent, call->span_id);
}

TEST_F(Tracing, ATasksPollsAreSpansOfItsCallInTheTraceFile) {
    std::ofstream(dir.path / "config.json") << R"({"mcpServers": {"reports": )" << demo_entry(R"("--tasks")") << "}}";
    std::string out;
    ASSERT_EQ(cli("--config config.json call reports__report '{\"seconds\": 1}' --json", out), 0) << out;
    const auto trace_id = text_of(json::parse(out).at("traceId"));
    ASSERT_EQ(cli("trace " + trace_id + " --json", out), 0) << out;
    std::string call_span;
    int polls = 0;
    const auto spans = json::parse(out).as_array();
    for (const auto& s : spans)
        if (text_of(s.at("name")) == "tools/call report") call_span = text_of(s.at("spanId"));
    ASSERT_FALSE(call_span.empty()) << out;
    for (const auto& s : spans)
        if (text_of(s.at("name")) == "tasks/get") {
            ++polls;
            EXPECT_EQ(text_of(s.at("parentSpanId")), call_span);
            EXPECT_EQ(text_of(s.at("attributes").at("mcp.method.name")), "tasks/get");
        }
    EXPECT_GE(polls, 1) << out;
}

TEST_F(Tracing, ACollectorThatIsDownSlowOrFailingCostsNoCall) {
    std::ofstream(dir.path / "config.json") << R"({"mcpServers": {"demo": )" << demo_entry("") << "}}";
    const auto down = "http://127.0.0.1:" + std::to_string(free_port());
    struct Case {
        std::string name, endpoint, control;
    };
    const std::vector<Case> cases{{"down", down, ""},
                                  {"500", collector(), R"({"status": 500})"},
                                  {"429", collector(), R"({"status": 429, "retryAfter": 1})"},
                                  {"slow", collector(), R"({"status": 200, "delayMs": 20000})"}};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        if (!c.control.empty()) receiver_post("/control", c.control);
        const auto start = std::chrono::steady_clock::now();
        std::string out;
        EXPECT_EQ(cli("--config config.json --otlp-endpoint " + c.endpoint + " call echo '{\"message\":\"m\"}' --json",
                      out, "2>&1"),
                  0)
            << out;
        const auto took = std::chrono::steady_clock::now() - start;
        EXPECT_NE(out.find("\"text\":\"m\""), std::string::npos) << out;
        // The exit flush is bounded (5 s), whatever the collector does.
        EXPECT_LT(took, std::chrono::seconds(9)) << out;
        if (c.name != "slow") {
            EXPECT_NE(out.find("could not be exported"), std::string::npos) << out;  // said once, at exit
        }
    }
    receiver_post("/control", R"({"status": 200, "delayMs": 0})");
}

TEST_F(Tracing, TheExportQueueIsBoundedWhileTheCollectorIsDown) {
    boost::asio::io_context io;
    telemetry::OtlpSettings s;
    s.endpoint = "http://127.0.0.1:" + std::to_string(free_port()) + "/v1/traces";
    s.max_queue = 100;
    s.max_batch = 50;
    s.schedule_delay = std::chrono::milliseconds(10);
    s.timeout = std::chrono::milliseconds(300);
    auto exporter = std::make_shared<telemetry::OtlpExporter>(io.get_executor(), s);
    exporter->start();
    for (int i = 0; i < 10'000; ++i) {
        auto span = std::make_shared<trace::SpanData>();
        span->name = "s";
        span->trace_id = trace::random_trace_id();
        span->span_id = trace::random_span_id();
        span->sampled = true;
        exporter->enqueue(std::move(span));
        EXPECT_LE(exporter->stats().queued, 100u);
    }
    io.run_for(std::chrono::milliseconds(800));
    const auto stats = exporter->stats();
    EXPECT_EQ(stats.exported, 0u);
    EXPECT_GE(stats.dropped, 9'900u);  // every span past the bound, and what the failed batches held
    EXPECT_LE(stats.queued, 100u);
    bool done = false;
    boost::asio::co_spawn(io, exporter->shutdown(std::chrono::milliseconds(500)), [&](std::exception_ptr) { done = true; });
    io.restart();
    io.run_for(std::chrono::seconds(3));
    EXPECT_TRUE(done);
    EXPECT_EQ(exporter->stats().queued, 0u);
    EXPECT_EQ(exporter->stats().dropped, 10'000u);  // each counted once
}

}  // namespace
}  // namespace switchboard::test
