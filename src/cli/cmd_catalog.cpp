// `switchboard catalog [--json]`: what the tool catalog (host/tool_catalog.hpp) holds for each lazy server.
// `switchboard catalog refresh [SERVER...]`: starts each lazy server once (acquire, read its tools and, when it
// declares the Skills extension, list its skills, release) and records them; exit status 1 when one could not be
// started or recorded.
#include "cli.hpp"

#include <switchboard/host/tool_catalog.hpp>
#include <switchboard/mcp/skills.hpp>

#include <fmt/format.h>
#include <fmt/chrono.h>

#include <algorithm>
#include <ctime>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

std::vector<const host::ServerConfig*> lazy_servers(const host::Config& config, const std::vector<std::string>& only) {
    std::vector<const host::ServerConfig*> out;
    for (const auto& s : config.servers) {
        if (!s.lazy || !s.enabled) continue;
        if (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end()) continue;
        out.push_back(&s);
    }
    return out;
}

std::string when(std::int64_t unix_seconds) {
    const std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    localtime_r(&t, &tm);
    return fmt::format("{:%Y-%m-%d %H:%M}", tm);
}

}  // namespace

awaitable<int> catalog(const host::Config& config, const GlobalOptions& g) {
    const auto store = host::ToolCatalog::from_env(host::process_env());
    json::array out;
    const auto servers = lazy_servers(config, {});
    if (!g.json && servers.empty()) fmt::print("No lazy servers in {}.\n", config.source);
    for (const auto* sc : servers) {
        const auto entry = store.read(sc->name);
        const bool current = entry && entry->config_hash == host::catalog_hash(*sc);
        if (g.json) {
            json::object o{{"server", sc->name}, {"cached", bool(entry)}, {"current", current},
                           {"file", store.file(sc->name).string()}};
            if (entry) {
                json::array names;
                for (const auto& t : entry->tools) names.push_back(json::string(t.name));
                o["updated"] = entry->updated;
                o["tools"] = std::move(names);
                if (entry->skills) {
                    json::array skills;
                    for (const auto& sk : *entry->skills) skills.push_back(json::string(sk.name()));
                    o["skills"] = std::move(skills);
                }
            }
            out.push_back(std::move(o));
            continue;
        }
        if (!entry) {
            fmt::print("{}: not cached (switchboard catalog refresh)\n", sc->name);
            continue;
        }
        std::vector<std::string> names;
        for (const auto& t : entry->tools) names.push_back(t.name);
        fmt::print("{}: {} tool{}, recorded {}{}\n", sc->name, names.size(), names.size() == 1 ? "" : "s",
                   when(entry->updated), current ? "" : " (stale: the config entry changed since)");
        if (!names.empty()) fmt::print("  {}\n", fmt::join(names, ", "));
        if (entry->skills && !entry->skills->empty()) {
            std::vector<std::string> skills;
            for (const auto& sk : *entry->skills) skills.push_back(sk.name());
            fmt::print("  skills: {}\n", fmt::join(skills, ", "));
        }
    }
    if (g.json) print_json(std::move(out));
    co_return 0;
}

awaitable<int> catalog_refresh(const host::Config& config, const GlobalOptions& g, std::vector<std::string> only) {
    for (const auto& name : only)
        if (!config.find(name) || !config.find(name)->lazy) {
            fmt::print(stderr, "switchboard: \"{}\" is not a lazy server of {}\n", name, config.source);
            co_return 2;
        }
    const auto store = host::ToolCatalog::from_env(host::process_env());
    co_return co_await with_host(config, Settle::none, [&](Host& h) -> awaitable<int> {
        int status = 0;
        json::array out;
        for (const auto* sc : lazy_servers(config, only)) {
            auto lease = co_await h.pool->acquire(sc->name);
            std::string error;
            std::size_t count = 0;
            std::optional<std::vector<mcp::Skill>> skills;
            if (!lease) {
                error = lease.error().message;
            } else {
                auto tools = h.pool->tools(sc->name);
                count = tools ? tools->size() : 0;
                if (!tools) error = "it listed no tools";
                // Its skills too, when it serves them (Skills extension): what a dormant server's skills are offered
                // from.
                auto session = co_await h.pool->session(sc->name);
                if (error.empty() && session && (*session)->has_extension(mcp::skills_extension)) {
                    std::vector<std::string> warnings;
                    auto listed = co_await mcp::list_skills(*session, warnings);
                    for (const auto& w : warnings)
                        fmt::print(stderr, "switchboard: {}: a skill is not recorded: {}\n", sc->name, w);
                    if (listed)
                        skills = std::move(*listed);
                    else
                        error = "skills/list failed: " + listed.error().message;
                }
                if (error.empty()) store.save(*sc, *tools, skills, &error);
                lease->release();
            }
            if (!error.empty()) status = 1;
            const std::size_t skill_count = skills ? skills->size() : 0;
            if (g.json) {
                json::object o{{"server", sc->name}, {"ok", error.empty()}, {"tools", count}};
                if (skills) o["skills"] = skill_count;
                if (!error.empty()) o["error"] = error;
                out.push_back(std::move(o));
            } else if (error.empty()) {
                fmt::print("{}: {} tool{}{} recorded in {}\n", sc->name, count, count == 1 ? "" : "s",
                           skills ? fmt::format(" and {} skill{}", skill_count, skill_count == 1 ? "" : "s") : "",
                           store.file(sc->name).string());
            } else {
                fmt::print(stderr, "switchboard: {}: {}\n", sc->name, error);
            }
        }
        if (g.json) print_json(std::move(out));
        co_return status;
    });
}

}  // namespace switchboard::cli
