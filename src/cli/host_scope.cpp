// with_host(): the start → print → shut down frame every one-shot command runs in.
#include "cli.hpp"
#include "terminal_requests.hpp"

#include <switchboard/core/scope_exit.hpp>
#include <switchboard/host/env_file.hpp>
#include <switchboard/host/tool_catalog.hpp>

#include <fmt/format.h>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <set>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

awaitable<int> with_host(host::Config config, std::function<awaitable<int>(Host&)> body) {
    co_return co_await with_host(std::move(config), Settle::all, std::move(body));
}

awaitable<int> with_host(host::Config config, Settle settle, std::function<awaitable<int>(Host&)> body) {
    host::PoolOptions defaults;  // not a braced temporary inside the co_await (GCC 12)
    auto ex = co_await asio::this_coro::executor;
    defaults.handlers = one_shot_requests(config, ex);
    co_return co_await with_host(std::move(config), settle, std::move(defaults), std::move(body));
}

namespace {

std::optional<host::Config::Pinning>& pinning_flag() {
    static std::optional<host::Config::Pinning> pinning;  // set once by main (--pins), before any host runs
    return pinning;
}

// The lockfile beside the config (tool_pins.hpp); none for a config that is no file, or pins off.
std::shared_ptr<host::PinStore> load_pins(const host::Config& config) {
    const auto mode = pinning_flag().value_or(config.pinning);
    if (mode == host::Config::Pinning::off) return nullptr;
    auto pins = std::make_shared<host::PinStore>(host::PinStore::file_for(config.source),
                                                 mode == host::Config::Pinning::strict);
    std::string error;
    if (!pins->load(&error))
        fmt::print(stderr, "switchboard: warning: {}: every definition is held until the file is fixed\n", error);
    return pins;
}

// A run that meets a held definition says so, once per definition, on stderr.
void warn_held(const host::ServerPool& pool, const std::string& server, std::set<std::string>& warned) {
    for (const auto& h : pool.held(server))
        if (warned.insert(h.server + "\n" + std::string(host::to_string(h.kind)) + "\n" + h.name).second)
            fmt::print(stderr, "switchboard: {}\n", host::held_message(h));
}

std::string& server_log_level() {
    static std::string level;  // set once by main (--log-level), before any host runs
    return level;
}

// One server log message on stderr: "[demo] warning (db): the disk is nearly full".
void print_log_message(const host::Event& e, int least) {
    const auto* p = e.data.if_object();
    if (!p) return;
    const auto level = mcp::string_field(*p, "level");
    if (mcp::log_severity(level) < least) return;
    const auto logger = mcp::string_field(*p, "logger");
    const auto* data = p->if_contains("data");
    const auto text = !data ? std::string() : data->is_string() ? std::string(data->get_string()) : json::serialize(*data);
    fmt::print(stderr, "[{}] {}{}: {}\n", e.server, level, logger.empty() ? "" : " (" + logger + ")", text);
}

SandboxFlags& sandbox_flags() {
    static SandboxFlags flags;  // set once by main, before any host runs
    return flags;
}

}  // namespace

void print_server_logs(std::string level) { server_log_level() = std::move(level); }

void use_sandbox(SandboxFlags flags) { sandbox_flags() = std::move(flags); }

std::shared_ptr<host::Sandboxer> make_sandboxer(asio::any_io_executor ex, const host::Config& config) {
    auto sh = host::SandboxHost::from_environment();
    const auto& flags = sandbox_flags();
    if (flags.confine_all) sh.confine_all = flags.confine_all;
    if (flags.layer) sh.forced_layer = flags.layer;
    std::error_code ec;
    if (config.source.find('/') != std::string::npos || std::filesystem::exists(config.source, ec)) {
        sh.own_secrets.push_back(std::filesystem::absolute(config.source, ec).string());
        sh.own_secrets.push_back(std::filesystem::absolute(host::env_file_for(config.source), ec).string());
    }
    sh.own_secrets.push_back(
        std::filesystem::absolute(flags.db.empty() ? store::ConversationStore::default_path().string() : flags.db, ec)
            .string());
    sh.own_secrets.push_back(auth::TokenStore::default_path().string());
    return std::make_shared<host::Sandboxer>(std::move(ex), std::move(sh));
}

void use_pinning(std::optional<host::Config::Pinning> mode) { pinning_flag() = mode; }

awaitable<int> with_host(host::Config config, Settle settle, host::PoolOptions options,
                         std::function<awaitable<int>(Host&)> body) {
    auto ex = co_await asio::this_coro::executor;
    Host h;
    const auto& log_level = server_log_level();
    if (!log_level.empty() && options.log_level.empty()) options.log_level = log_level;
    if (!options.pins) options.pins = load_pins(config);
    if (!options.sandboxer) options.sandboxer = make_sandboxer(ex, config);
    h.pool = host::ServerPool::create(ex, std::move(config), std::move(options));
    auto warned = std::make_shared<std::set<std::string>>();
    const auto held = h.pool->events().subscribe([pool = std::weak_ptr(h.pool), warned](const host::Event& e) {
        if (e.kind != host::Event::Kind::pins_held) return;
        if (auto p = pool.lock()) warn_held(*p, e.server, *warned);
    });
    core::ScopeExit stop_held([&h, held] { h.pool->events().unsubscribe(held); });
    host::EventBus::Id logs = 0;
    if (!log_level.empty())
        logs = h.pool->events().subscribe([least = mcp::log_severity(log_level)](const host::Event& e) {
            if (e.kind == host::Event::Kind::log_message) print_log_message(e, least);
        });
    core::ScopeExit stop_logs([&h, logs] {
        if (logs) h.pool->events().unsubscribe(logs);
    });
    host::ContextOptions main;
    // A command may name a lazy server explicitly (`call lazy__tool`): it is started for that call.
    main.calls_to_unseen_servers = true;
    h.main = host::Context::create(h.pool, main);
    // Every lazy server that connects has its tools recorded for tool search (host/tool_catalog.hpp).
    host::CatalogRecorder recorder(h.pool, host::ToolCatalog::from_env(host::process_env()));
    h.pool->start();
    if (settle == Settle::all) co_await h.pool->wait_until_settled();
    const int code = co_await body(h);
    // A lazy server this command started may still be listing its skills for the catalog: a moment for that.
    co_await recorder.finish(std::chrono::seconds(2));
    h.main.reset();
    co_await h.pool->shutdown();
    co_return code;
}

std::optional<host::Config> only_server(const host::Config& config, const std::string& name) {
    const auto* sc = config.find(name);
    if (!sc) {
        std::vector<std::string> names;
        for (const auto& s : config.servers) names.push_back(s.name);
        fmt::print(stderr, "switchboard: no server \"{}\" in {} (servers: {})\n", name, config.source,
                   fmt::join(names, ", "));
        return std::nullopt;
    }
    host::Config subset;
    subset.source = config.source;
    subset.servers.push_back(*sc);
    return subset;
}

namespace {
bool failed(const host::ServerStatus& s) {
    return s.enabled && (s.phase == host::Phase::error || s.phase == host::Phase::needs_auth);
}
}  // namespace

void report_failures(const host::ServerPool& pool) {
    for (const auto& s : pool.status())
        if (failed(s) && s.phase == host::Phase::needs_auth)
            fmt::print(stderr, "switchboard: {}\n", s.last_error);  // "server "x" needs a login: run ..."
        else if (failed(s))
            fmt::print(stderr, "switchboard: server \"{}\" failed: {}\n", s.name, s.last_error);
}

bool any_failed(const host::ServerPool& pool) {
    auto st = pool.status();
    return std::any_of(st.begin(), st.end(), failed);
}

}  // namespace switchboard::cli
