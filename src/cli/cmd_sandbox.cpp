// `switchboard sandbox check NAME`: starts one stdio server confined (whatever its entry says), lists what it offers,
// calls nothing, and reports what the sandbox refused it: domains from its egress proxy, paths from the errors it
// printed. Then the `sandbox` block that would allow them, merged with what the entry already allows.
#include "cli.hpp"

#include <switchboard/host/status_json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

void add_unique(std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

// The entry's `sandbox` block with the refused paths writable and the refused domains allowed.
json::object allowing(const host::SandboxSettings& now, const std::vector<host::SandboxRefusal>& refusals) {
    auto s = now;
    for (const auto& r : refusals) add_unique(r.kind == "domain" ? s.allowed_domains : s.allow_write, r.target);
    const auto arr = [](const std::vector<std::string>& v) { return json::array(v.begin(), v.end()); };
    json::object fs, net;
    if (!s.allow_write.empty()) fs["allowWrite"] = arr(s.allow_write);
    if (!s.deny_read.empty()) fs["denyRead"] = arr(s.deny_read);
    if (!s.allow_read.empty()) fs["allowRead"] = arr(s.allow_read);
    if (!s.allowed_domains.empty()) net["allowedDomains"] = arr(s.allowed_domains);
    if (!s.denied_domains.empty()) net["deniedDomains"] = arr(s.denied_domains);
    if (!s.allowed_addresses.empty()) net["allowedAddresses"] = arr(s.allowed_addresses);
    json::object out;
    if (!fs.empty()) out["filesystem"] = std::move(fs);
    if (!net.empty()) out["network"] = std::move(net);
    return out;
}

// Not a lambda coroutine: everything by value (GCC 12 and lambda captures in coroutine frames).
awaitable<int> report(Host& h, std::string name, host::SandboxSettings settings, bool json_out, std::string source,
                      std::chrono::milliseconds linger) {
    // What a server tries right after its start (a registry fetch, a cache write) may come a moment later.
    asio::steady_timer wait(co_await asio::this_coro::executor, linger);
    co_await wait.async_wait(asio::use_awaitable);
    const auto st = h.pool->status(name);
    if (!st) co_return 1;
    const bool started = st->phase == host::Phase::connected;
    const auto& refused = st->sandbox_refusals;
    const auto phase = host::to_json(*st).at("phase");
    if (json_out) {
        json::object o{{"server", name},
                       {"phase", phase},
                       {"error", st->last_error.empty() ? json::value(nullptr) : json::value(st->last_error)},
                       {"tools", st->tools},
                       {"resources", st->resources},
                       {"prompts", st->prompts},
                       {"sandbox", host::sandbox_json(*st)},
                       {"allow", refused.empty() ? json::value(nullptr) : json::value(allowing(settings, refused))}};
        fmt::print("{}\n", json::serialize(o));
        co_return started&& refused.empty() ? 0 : 1;
    }
    if (!st->sandbox_error.empty()) {
        fmt::print("server \"{}\" cannot be confined here: {}\n", name, st->sandbox_error);
        co_return 1;
    }
    const auto& p = st->sandbox;
    fmt::print("server \"{}\": confined by {}{}\n", name, st->sandbox_layer,
               p && !p->profile.empty() ? " (" + p->profile + " profile)" : "");
    if (p) {
        fmt::print("  state      {}\n", p->state_dir);
        fmt::print("  writable   {}\n", fmt::join(p->writable, ", "));
        fmt::print("  domains    {}\n",
                   p->allowed_domains.empty() ? "none" : fmt::format("{}", fmt::join(p->allowed_domains, ", ")));
        if (!p->fallback.empty()) fmt::print("  note       {}\n", p->fallback);
    }
    if (started)
        fmt::print("  started    {} tools, {} resources, {} prompts (nothing called)\n", st->tools, st->resources,
                   st->prompts);
    else
        fmt::print("  failed     {}\n", st->last_error.empty() ? json::serialize(phase) : st->last_error);
    if (refused.empty()) {
        fmt::print("  refused    nothing\n");
        co_return started ? 0 : 1;
    }
    fmt::print("  refused:\n");
    for (const auto& r : refused) fmt::print("    {:<7} {}    {}\n", r.kind, r.target, r.detail);
    fmt::print("To allow them, give \"{}\" in {} this \"sandbox\" block:\n  \"sandbox\": {}\n", name, source,
               json::serialize(allowing(settings, refused)));
    co_return 1;
}

}  // namespace

awaitable<int> sandbox_check(const host::Config& config, const GlobalOptions& g, std::string name,
                             std::chrono::milliseconds linger) {
    const auto* entry = config.find(name);
    if (!entry) {
        fmt::print(stderr, "switchboard: no server \"{}\" in {}\n", name, config.source);
        co_return 2;
    }
    if (entry->type != host::TransportKind::stdio) {
        fmt::print(stderr, "switchboard: server \"{}\" is not a stdio server: only those are confined\n", name);
        co_return 2;
    }
    host::Config one = config;
    one.servers = {*entry};
    one.servers[0].sandbox.enabled = true;
    one.servers[0].lazy = false;
    one.servers[0].enabled = true;
    const auto settings = entry->sandbox;
    const bool json_out = g.json;
    const auto source = config.source;
    std::function<awaitable<int>(Host&)> body = [name, settings, json_out, source, linger](Host& h) {
        return report(h, name, settings, json_out, source, linger);
    };
    co_return co_await with_host(std::move(one), std::move(body));
}

}  // namespace switchboard::cli
