// Section "agent": what the agent loop costs besides the model, and what the tool definitions cost per request.
//
// 1. Turn time excluding the model. agent::Conversation with the real llm::Client against switchboard-fake-llm (a
//    scripted OpenAI-compatible server, zero delay) and one demo server over stdio in a host::ServerPool +
//    host::Context. The script asks for `echo` on every turn (200 turns), then answers. Per turn: from the moment
//    llm::Client::chat returned (Observer::on_model_response) to the next request being handed to chat()
//    (Observer::on_model_request) = tool resolution + approval check + the tool call + result formatting + copying the
//    history and building the tools array of the next request. The serialization of the body happens inside chat()
//    and so counts as model time; it has a row of its own. Peer: a direct host::Context::call_tool("echo") round trip
//    on the same server in the same run (the floor: the tool call itself). Rounds interleave the two, best kept.
// 2. Tool definitions per request: agent::openai_tools(context->tools()) serialized, for examples/switchboard.json
//    (its build/switchboard-demo-server replaced by the bench's own build) and for 20 demo servers with
//    `--extra-tools 50`; and the body of a first request (llm::Client::request_body) with those tools. Tokens are
//    estimated as bytes / 4 (no tokenizer).
#include "harness.hpp"
#include "server_process.hpp"
#include "sync.hpp"

#include <switchboard/agent/conversation.hpp>
#include <switchboard/agent/fork.hpp>
#include <switchboard/agent/tool_schema.hpp>
#include <switchboard/host/config.hpp>
#include <switchboard/host/context.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/llm/client.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace switchboard::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using clock = std::chrono::steady_clock;

namespace {

double us_between(clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Rig {
    std::shared_ptr<host::ServerPool> pool;
    std::shared_ptr<host::Context> context;

    static Rig start(asio::io_context& io, host::Config cfg) {
        Rig r;
        r.pool = host::ServerPool::create(io.get_executor(), std::move(cfg), host::PoolOptions{});
        r.context = host::Context::create(r.pool, host::ContextOptions{});
        r.pool->start();
        run_sync(io, r.pool->wait_until_settled(std::chrono::seconds(30)));
        r.context->tools();
        return r;
    }
    std::size_t connected() const {
        std::size_t n = 0;
        for (const auto& st : pool->status()) n += st.phase == host::Phase::connected;
        return n;
    }
    void stop(asio::io_context& io) {
        context.reset();
        run_sync(io, pool->shutdown());
    }
};

host::ServerConfig demo_server(const std::string& name, const std::string& demo, int extra_tools) {
    host::ServerConfig s;
    s.name = name;
    s.command = demo;
    s.args = {"--page-size", "0"};
    if (extra_tools > 0) {
        s.args.push_back("--extra-tools");
        s.args.push_back(std::to_string(extra_tools));
    }
    return s;
}

// n sequential tools/call echo through the context; one sample (µs) per call.
awaitable<void> direct_calls(host::Context& context, int n, std::vector<double>& out) {
    for (int i = 0; i < n; ++i) {
        json::object args;
        args["message"] = "x";
        std::string name = "echo";
        host::ToolCallOptions options;
        const auto t0 = clock::now();
        auto r = co_await context.call_tool(std::move(name), std::move(args), std::move(options));
        const auto t1 = clock::now();
        if (!r || r->is_error) throw std::runtime_error("direct echo call failed");
        out.push_back(us_between(t0, t1));
    }
}

struct AgentRun {
    std::vector<double> turn_us;   ///< response complete → next request handed to chat(), per tool turn
    std::vector<double> tool_us;   ///< on_tool_start → on_tool_end within that turn
    std::vector<double> model_us;  ///< chat() called → returned
    std::int64_t timings_total_ms = 0;
    std::vector<llm::Message> history;  ///< the conversation's messages at the end
};

AgentRun run_conversation(asio::io_context& io, Rig& rig, const std::shared_ptr<llm::Client>& llm, int turns) {
    agent::LoopOptions options;
    options.max_turns = turns + 1;
    agent::Conversation conversation(rig.context, llm, options);
    conversation.approvals().all = true;
    std::vector<clock::time_point> requests, responses, tool_start, tool_end;
    requests.reserve(turns + 1);
    responses.reserve(turns + 1);
    agent::Observer observer;
    observer.on_model_request = [&] { requests.push_back(clock::now()); };
    observer.on_model_response = [&] { responses.push_back(clock::now()); };
    observer.on_tool_start = [&](const llm::ToolCall&, const std::string&) { tool_start.push_back(clock::now()); };
    observer.on_tool_end = [&](const agent::ToolCallRecord&, const llm::ToolExecutionResult&) {
        tool_end.push_back(clock::now());
    };
    auto result = run_sync(io, conversation.send("Call echo, again and again.", observer));
    if (result.stop != agent::StopReason::done || result.turns != turns + 1)
        throw std::runtime_error(fmt::format("agent run stopped: {} after {} turns {}", agent::to_string(result.stop),
                                             result.turns, result.error));
    for (const auto& c : result.tool_calls)
        if (c.is_error) throw std::runtime_error("an echo call of the agent run failed");
    AgentRun out;
    for (std::size_t k = 0; k + 1 < requests.size() && k < responses.size(); ++k)
        out.turn_us.push_back(us_between(responses[k], requests[k + 1]));
    for (std::size_t k = 0; k < tool_start.size() && k < tool_end.size(); ++k)
        out.tool_us.push_back(us_between(tool_start[k], tool_end[k]));
    for (std::size_t k = 0; k < requests.size() && k < responses.size(); ++k)
        out.model_us.push_back(us_between(requests[k], responses[k]));
    for (const auto& m : conversation.messages())
        if (m.timings) out.timings_total_ms += m.timings->total_ms;
    out.history = conversation.messages();
    return out;
}

std::string script(int warmup, int turns, int rounds) {
    const std::string call = R"({"toolCalls":[{"name":"echo","arguments":"{\"message\":\"x\"}"}]})";
    const std::string answer = R"({"content":"Done."})";
    std::string s = "[";
    auto conversation = [&](int n) {
        for (int i = 0; i < n; ++i) s += call + ",";
        s += answer + ",";
    };
    conversation(warmup);
    for (int r = 0; r < rounds; ++r) conversation(turns);
    s.back() = ']';
    return s;
}

// switchboard-fake-llm on a script (written to a temporary file, removed at the end) and a client of it.
struct FakeModel {
    FakeModel(const std::string& fake, const std::string& tag, const std::string& script, asio::io_context& io)
        : file(std::filesystem::temp_directory_path() / fmt::format("switchboard-bench-{}-{}.json", tag, ::getpid())),
          server(written(file, script, fake), {}) {
        llm::Settings settings;
        settings.base_url = server.wait_listening();
        settings.model = "bench-model";
        settings.max_retries = 0;
        llm = std::make_shared<llm::Client>(io.get_executor(), settings);
    }
    // The script in its file, then the fake's command line.
    static std::vector<std::string> written(const std::filesystem::path& file, const std::string& script,
                                            const std::string& fake) {
        std::ofstream(file) << script;
        return {fake, file.string()};
    }
    ~FakeModel() {
        std::error_code ec;
        std::filesystem::remove(file, ec);
    }
    std::filesystem::path file;
    ServerProcess server;
    std::shared_ptr<llm::Client> llm;
};

std::vector<Row> turn_rows(const Context& ctx, asio::io_context& io) {
    const std::string fake = ctx.bin_dir + "/switchboard-fake-llm";
    if (!std::filesystem::exists(fake))
        return {failed("agent turn excl. model", fake + " not built (scripts/bench builds it)")};
    const int turns = 200, warmup = 20, rounds = ctx.quick ? 2 : 3;
    FakeModel model(fake, "llm", script(warmup, turns, rounds), io);
    auto llm = model.llm;

    host::Config cfg;
    cfg.source = "<bench>";
    cfg.servers.push_back(demo_server("demo", ctx.demo(), 0));
    auto rig = Rig::start(io, cfg);

    std::vector<double> warm;
    run_sync(io, direct_calls(*rig.context, 200, warm));
    run_conversation(io, rig, llm, warmup);

    // Best round by p50, for each of ours and the floor.
    Latencies best_turn, best_floor;
    AgentRun best_run;
    for (int r = 0; r < rounds; ++r) {
        Latencies floor;
        run_sync(io, direct_calls(*rig.context, turns, floor.us));
        auto run = run_conversation(io, rig, llm, turns);
        Latencies turn{run.turn_us};
        if (best_turn.us.empty() || turn.percentile(50) < best_turn.percentile(50)) {
            best_turn = turn;
            best_run = std::move(run);
        }
        if (best_floor.us.empty() || floor.percentile(50) < best_floor.percentile(50)) best_floor = floor;
    }

    // The body chat() serializes for the last request of the best run (the longest history), timed on its own.
    llm::ChatRequest last;
    last.messages = best_run.history;
    if (!last.messages.empty()) last.messages.pop_back();  // the final answer came after the last request
    last.tools = agent::openai_tools(rig.context->tools());
    Latencies serialize;
    std::size_t body_bytes = 0;
    for (int i = 0; i < (ctx.quick ? 50 : 200); ++i) {
        const auto t0 = clock::now();
        body_bytes = llm->request_body(last).size();
        serialize.us.push_back(us_between(t0, clock::now()));
    }
    llm->close();
    rig.stop(io);

    const std::string peer_name = "direct Context::call_tool echo (floor)";
    std::vector<Row> rows;
    for (double p : {50.0, 99.0}) {
        Row r;
        r.metric = fmt::format("agent turn excl. model p{:.0f} ({} echo turns)", p, turns);
        r.unit = "µs";
        r.ours = best_turn.percentile(p);
        r.peer = best_floor.percentile(p);
        r.peer_name = peer_name;
        if (p == 50) {
            const std::size_t n = std::min<std::size_t>(20, best_run.turn_us.size());
            std::vector<double> first(best_run.turn_us.begin(), best_run.turn_us.begin() + n);
            std::vector<double> lastn(best_run.turn_us.end() - n, best_run.turn_us.end());
            r.note = fmt::format("median of turns 1-{} {:.1f} µs, of the last {} {:.1f} µs (history grows)", n,
                                 median_of(first), n, median_of(lastn));
        }
        rows.push_back(std::move(r));
    }
    {
        Latencies tool{best_run.tool_us};
        std::vector<double> own;
        for (std::size_t k = 0; k < best_run.turn_us.size() && k < best_run.tool_us.size(); ++k)
            own.push_back(best_run.turn_us[k] - best_run.tool_us[k]);
        Latencies o{own};
        Row r;
        r.metric = "agent turn excl. model and tool call p50";
        r.unit = "µs";
        r.ours = o.percentile(50);
        r.note = fmt::format("the loop's own work per turn; p99 {:.1f} µs; tool call inside the turn p50 {:.1f} µs",
                             o.percentile(99), tool.percentile(50));
        rows.push_back(std::move(r));
    }
    {
        Latencies m{best_run.model_us};
        Row r;
        r.metric = "model request p50 (fake LLM, zero delay)";
        r.unit = "µs";
        r.ours = m.percentile(50);
        r.note = fmt::format(
            "chat() called → returned: body serialization, HTTP exchange, SSE parsing, the fake's work; p99 {:.1f} µs; "
            "llm Timings total {} ms over {} requests",
            m.percentile(99), best_run.timings_total_ms, best_run.model_us.size());
        rows.push_back(std::move(r));
    }
    {
        Row r;
        r.metric = fmt::format("request body serialization, last turn ({} messages)", last.messages.size());
        r.unit = "µs";
        r.ours = serialize.percentile(50);
        r.note = fmt::format("llm::Client::request_body, {} bytes; inside the model time above", body_bytes);
        rows.push_back(std::move(r));
    }
    return rows;
}

// Tool definitions a request carries for one config, and the body of a first request with them.
void definition_rows(asio::io_context& io, host::Config cfg, const std::string& label, std::vector<Row>& rows) {
    const std::size_t configured =
        std::count_if(cfg.servers.begin(), cfg.servers.end(), [](const host::ServerConfig& s) { return s.enabled; });
    auto rig = Rig::start(io, std::move(cfg));
    const auto connected = rig.connected();
    const auto tools = agent::openai_tools(rig.context->tools());
    const auto n_tools = tools.size();
    const auto tool_bytes = json::serialize(tools).size();
    llm::Settings settings;
    settings.base_url = "http://127.0.0.1:1/v1";  // never contacted: request_body only
    settings.model = "bench-model";
    llm::Client llm(io.get_executor(), settings);
    llm::ChatRequest first;
    first.messages.push_back(llm::Message::user("Echo ping, please."));
    first.tools = tools;
    const auto body_bytes = llm.request_body(first).size();
    rig.stop(io);

    const std::string servers = fmt::format("{} of {} servers connected", connected, configured);
    Row r;
    r.metric = fmt::format("tool definitions per request, {} ({} tools)", label, n_tools);
    r.unit = "bytes";
    r.ours = static_cast<double>(tool_bytes);
    r.note = fmt::format("≈ {} tokens (bytes / 4, no tokenizer); {}", tool_bytes / 4, servers);
    rows.push_back(std::move(r));
    Row t;
    t.metric = fmt::format("  same, estimated tokens ({})", label);
    t.unit = "tokens";
    t.ours = static_cast<double>(tool_bytes / 4);
    t.note = "bytes / 4";
    rows.push_back(std::move(t));
    Row b;
    b.metric = fmt::format("first request body, {}", label);
    b.unit = "bytes";
    b.ours = static_cast<double>(body_bytes);
    b.note = fmt::format("llm::Client::request_body, one short user message; ≈ {} tokens (bytes / 4)", body_bytes / 4);
    rows.push_back(std::move(b));
}

// examples/switchboard.json, run from the repository root in scripts/run: its commands name
// build/switchboard-demo-server, replaced here by the demo server next to this bench; other relative commands resolve
// against the source tree.
host::Config example_config(const Context& ctx) {
    const std::filesystem::path root = SWITCHBOARD_SOURCE_DIR;
    auto cfg = host::load_config_file(root / "examples/switchboard.json");
    // Disabled entries offer no tools; the pool is started without them (with them, waiting for it to settle did not
    // return in this build).
    std::erase_if(cfg.servers, [](const host::ServerConfig& s) { return !s.enabled; });
    for (auto& s : cfg.servers) {
        if (std::filesystem::path(s.command).filename() == "switchboard-demo-server")
            s.command = ctx.demo();
        else if (s.command.find('/') != std::string::npos && std::filesystem::path(s.command).is_relative())
            s.command = (root / s.command).string();
    }
    return cfg;
}

// 3. Fork start: from the main conversation's call of agent__researcher (Observer::on_tool_start) to the fork's first
//    model request (on_model_request), the agent's lazy server dormant before each run (keepWarmSeconds 0): the lease
//    (spawn, handshake, listings), the fork's context, its conversation. Peer: the lease alone (ServerPool::acquire of
//    the same dormant server, then release), in the same run. 20 runs each after 2 warm-ups.
awaitable<void> pause(int ms) {
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
    co_await t.async_wait(asio::use_awaitable);
}

awaitable<void> time_acquires(std::shared_ptr<host::ServerPool> pool, int n, std::vector<double>& out) {
    for (int i = 0; i < n; ++i) {
        const auto t0 = clock::now();
        auto lease = co_await pool->acquire("notes");
        const auto t1 = clock::now();
        if (!lease) throw std::runtime_error("acquire notes failed: " + lease.error().message);
        lease->release();
        out.push_back(us_between(t0, t1));
        // Wait for the process to be gone (keepWarmSeconds 0): the next acquire starts a dormant server again.
        for (int k = 0; k < 500 && pool->status("notes")->lifecycle() != "dormant"; ++k) co_await pause(2);
    }
}

std::vector<Row> fork_rows(const Context& ctx, asio::io_context& io) {
    const std::string fake = ctx.bin_dir + "/switchboard-fake-llm";
    if (!std::filesystem::exists(fake)) return {failed("fork start", fake + " not built (scripts/bench builds it)")};
    const int runs = 20, warmup = 2;
    const std::string one =
        R"({"toolCalls":[{"name":"agent__researcher","arguments":"{\"task\":\"look\"}"}]},{"content":"found"},)"
        R"({"content":"done"})";
    std::string s = "[";
    for (int i = 0; i < runs + warmup; ++i) s += one + (i + 1 < runs + warmup ? "," : "]");
    FakeModel model(fake, "fork", s, io);
    auto llm = model.llm;

    host::Config cfg;
    cfg.source = "<bench>";
    cfg.servers.push_back(demo_server("main", ctx.demo(), 0));
    auto notes = demo_server("notes", ctx.demo(), 0);
    notes.lazy = true;
    cfg.servers.push_back(notes);
    auto rig = Rig::start(io, cfg);

    agent::Definition researcher;
    researcher.name = "researcher";
    researcher.body = "You look things up.";
    researcher.required = {"notes"};
    researcher.tools = std::vector<std::string>{};
    Latencies fork_start, acquire;
    for (int i = 0; i < runs + warmup; ++i) {
        agent::Conversation conversation(rig.context, llm, agent::LoopOptions{});
        conversation.approvals().all = true;
        agent::ForkEnvironment env{rig.pool, rig.context, llm, {researcher}, conversation.shared_approvals()};
        for (auto& t : agent::fork_tools(env, 1, "")) conversation.add_local_tool(std::move(t));
        std::optional<clock::time_point> called, first_request;
        agent::Observer observer;
        observer.on_tool_start = [&](const llm::ToolCall& c, const std::string&) {
            if (c.name == "agent__researcher") called = clock::now();
        };
        observer.on_model_request = [&] {
            if (called && !first_request) first_request = clock::now();
        };
        auto result = run_sync(io, conversation.send("Ask the researcher.", observer));
        if (result.stop != agent::StopReason::done || !called || !first_request)
            throw std::runtime_error(fmt::format("fork run stopped: {} {}", agent::to_string(result.stop), result.error));
        if (i >= warmup) fork_start.us.push_back(us_between(*called, *first_request));
        for (int k = 0; k < 500 && rig.pool->status("notes")->lifecycle() != "dormant"; ++k)
            run_sync(io, pause(2));
    }
    std::vector<double> warm;
    run_sync(io, time_acquires(rig.pool, warmup, warm));
    run_sync(io, time_acquires(rig.pool, runs, acquire.us));
    llm->close();
    rig.stop(io);

    Row r;
    r.metric = fmt::format("agent call → fork's first model request p50 ({} runs, lazy server dormant)", runs);
    r.unit = "µs";
    r.ours = fork_start.percentile(50);
    r.peer = acquire.percentile(50);
    r.peer_name = "lease of the dormant server alone";
    r.note = fmt::format("p90 {:.0f} µs; lease alone p90 {:.0f} µs; the difference is the fork's own setup",
                         fork_start.percentile(90), acquire.percentile(90));
    return {r};
}

std::vector<Row> run_agent(const Context& ctx) {
    // One io_context per part: nothing of one part's pool or model client is left running in the next.
    std::vector<Row> rows;
    try {
        asio::io_context io;
        rows = turn_rows(ctx, io);
    } catch (const std::exception& e) {
        rows.push_back(failed("agent turn excl. model", e.what()));
    }
    try {
        asio::io_context io;
        for (auto& r : fork_rows(ctx, io)) rows.push_back(std::move(r));
    } catch (const std::exception& e) {
        rows.push_back(failed("fork start", e.what()));
    }
    try {
        asio::io_context io;
        definition_rows(io, example_config(ctx), "examples/switchboard.json", rows);
    } catch (const std::exception& e) {
        rows.push_back(failed("tool definitions, examples/switchboard.json", e.what()));
    }
    try {
        asio::io_context io;
        host::Config cfg;
        cfg.source = "<bench>";
        for (int i = 0; i < 20; ++i) cfg.servers.push_back(demo_server(fmt::format("demo{}", i), ctx.demo(), 50));
        definition_rows(io, std::move(cfg), "20 demo servers --extra-tools 50", rows);
    } catch (const std::exception& e) {
        rows.push_back(failed("tool definitions, 20 demo servers", e.what()));
    }
    return rows;
}

}  // namespace

SWITCHBOARD_BENCH_SECTION(Section{"agent", "8. agent loop: turn time besides the model, tool definitions per request",
                                  80, run_agent});

}  // namespace switchboard::bench
