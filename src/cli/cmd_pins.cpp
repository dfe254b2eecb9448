// `switchboard pins [SERVER] [--json]`: what each server offers as pinned and what is held (tool_pins.hpp);
// `pins diff SERVER[/NAME]`: the held definitions as line diffs; `pins approve SERVER[/NAME]`: takes what the server
// serves now; `pins reset SERVER`: forgets its pins and pins what it serves now. Each connects the servers it names.
#include "cli.hpp"

#include <switchboard/host/tool_pins.hpp>

#include <fmt/format.h>

namespace switchboard::cli {

namespace json = boost::json;
using boost::asio::awaitable;

namespace {

// "demo/add" → ("demo", "add"); "demo" → ("demo", "").
std::pair<std::string, std::string> split_target(const std::string& target) {
    const auto slash = target.find('/');
    if (slash == std::string::npos) return {target, {}};
    return {target.substr(0, slash), target.substr(slash + 1)};
}

// A server named is connected even when lazy: `pins notes` pins (or checks) it now rather than at its first run.
host::Config servers_named(const host::Config& config, const std::string& server) {
    if (server.empty()) return config;
    auto subset = only_server(config, server);
    if (!subset) return host::Config{};
    for (auto& sc : subset->servers) sc.lazy = false;
    return *subset;
}

}  // namespace

awaitable<int> pins(const host::Config& config, const GlobalOptions& g, PinsCommand command) {
    auto [server, name] = split_target(command.target);
    if (!server.empty() && !config.find(server)) {
        only_server(config, server);  // says which servers there are
        co_return 2;
    }
    if ((command.action == PinsCommand::Action::approve || command.action == PinsCommand::Action::reset) &&
        server.empty()) {
        fmt::print(stderr, "switchboard pins: name a server (SERVER or SERVER/NAME)\n");
        co_return 2;
    }
    co_return co_await with_host(servers_named(config, server), [&](Host& h) -> awaitable<int> {
        const auto& store = h.pool->options().pins;
        if (!store || store->file().empty()) {
            fmt::print(stderr, "switchboard pins: the config is no file, so there is no lockfile beside it\n");
            co_return 2;
        }
        report_failures(*h.pool);
        switch (command.action) {
        case PinsCommand::Action::approve: {
            auto r = h.pool->approve_pins(server, name);
            if (!r) {
                fmt::print(stderr, "switchboard pins approve: {}\n", r.error().message);
                co_return 1;
            }
            fmt::print("approved {} definition{} of server \"{}\" in {}\n", *r, *r == 1 ? "" : "s", server,
                       store->file().string());
            co_return 0;
        }
        case PinsCommand::Action::reset: {
            auto r = h.pool->reset_pins(server);
            if (!r) {
                fmt::print(stderr, "switchboard pins reset: {}\n", r.error().message);
                co_return 1;
            }
            fmt::print("server \"{}\": {} definitions pinned anew in {}\n", server, store->count(server),
                       store->file().string());
            co_return 0;
        }
        case PinsCommand::Action::diff: {
            bool any = false;
            for (const auto& held : h.pool->held(server))
                if (name.empty() || held.name == name) {
                    any = true;
                    fmt::print("{}\n{}\n", held.describe(), host::definition_diff(held));
                }
            if (!any) fmt::print("nothing held{}\n", name.empty() ? "" : " named " + name);
            co_return 0;
        }
        case PinsCommand::Action::list: break;
        }
        json::array out;
        for (const auto& sc : h.pool->config().servers) {
            if (!sc.enabled) continue;
            const auto held = h.pool->held(sc.name);
            if (g.json) {
                json::array items;
                for (const auto& item : held) items.push_back(host::to_json(item));
                out.push_back(json::object{{"server", sc.name},
                                           {"pinned", store->count(sc.name)},
                                           {"known", store->knows(sc.name)},
                                           {"held", std::move(items)}});
                continue;
            }
            if (sc.lazy && !store->knows(sc.name)) {
                fmt::print("{}: not pinned yet (lazy: pinned when it first runs, or now with `switchboard pins {}`)\n",
                           sc.name, sc.name);
                continue;
            }
            fmt::print("{}: {} pinned{}\n", sc.name, store->count(sc.name),
                       held.empty() ? "" : fmt::format(", {} held", held.size()));
            for (const auto& item : held)
                fmt::print("  {} {} ({}): held\n", host::to_string(item.kind), item.name,
                           fmt::join(item.changed, ", "));
        }
        if (g.json)
            print_json(json::object{{"lockfile", store->file().string()}, {"servers", std::move(out)}});
        else
            fmt::print("lockfile: {}\n", store->file().string());
        co_return 0;
    });
}

}  // namespace switchboard::cli
