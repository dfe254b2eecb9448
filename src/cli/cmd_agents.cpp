// `switchboard agents [--json] [--connect]`: the agents and skills found from the working directory, the servers each
// declares, and which of those are lazy or not configured; then the skills the tool catalog recorded for the lazy
// servers (served over MCP by a dormant server: it starts when one runs). By default it reads files only and starts no
// server: a listing should not cost every server's start. `--connect` starts the eager servers and adds the skills
// they serve, as `run` and `chat` offer them (marked by server).
#include "cli.hpp"

#include <switchboard/agent/definition.hpp>
#include <switchboard/agent/mcp_skills.hpp>
#include <switchboard/host/tool_catalog.hpp>

#include <fmt/format.h>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <filesystem>

namespace switchboard::cli {

namespace json = boost::json;
namespace fs = std::filesystem;
using agent::Definition;

namespace {

struct Servers {
    std::vector<std::string> declared;  ///< required then optional
    std::vector<std::string> missing;
    std::vector<std::string> lazy;
};

bool is_inline(const Definition& d, const std::string& name) {
    return std::any_of(d.inline_servers.begin(), d.inline_servers.end(),
                       [&](const host::ServerConfig& s) { return s.name == name; });
}

Servers servers_of(const Definition& d, const host::Config& config) {
    Servers s;
    for (const auto* list : {&d.required, &d.optional})
        for (const auto& name : *list)
            if (std::find(s.declared.begin(), s.declared.end(), name) == s.declared.end()) s.declared.push_back(name);
    for (const auto& name : s.declared) {
        if (is_inline(d, name)) {
            s.lazy.push_back(name);
        } else if (const auto* server = config.find(name); !server) {
            s.missing.push_back(name);
        } else if (server->lazy) {
            s.lazy.push_back(name);
        }
    }
    return s;
}

json::array strings(const std::vector<std::string>& list) {
    json::array a;
    for (const auto& s : list) a.emplace_back(s);
    return a;
}

std::string joined(const std::vector<std::string>& list) {
    return list.empty() ? std::string("-") : fmt::format("{}", fmt::join(list, ","));
}

// Shorter paths for the table: relative to the working directory when under it, "~/..." under the home folder.
std::string display_path(const fs::path& path, const agent::DiscoveryOptions& options) {
    const auto under = [&](const fs::path& dir) -> std::optional<fs::path> {
        if (dir.empty()) return std::nullopt;
        auto rel = path.lexically_relative(dir);
        if (rel.empty() || *rel.begin() == "..") return std::nullopt;
        return rel;
    };
    if (auto rel = under(options.project_dir)) return rel->string();
    if (auto rel = under(options.home)) return (fs::path("~") / *rel).string();
    return path.string();
}

// Where a definition is: its file, or for a served skill its SKILL.md's URI and server.
std::string display_where(const Definition& d, const agent::DiscoveryOptions& options) {
    if (!d.served) return display_path(d.path, options);
    return fmt::format("{} ({}{})", d.served->uri, d.origin, d.from_catalog ? ", catalog" : "");
}

// Prints the listing of `found` (its definitions, errors and notes); the exit status.
int print_agents(const host::Config& config, const GlobalOptions& g, const agent::DiscoveryOptions& options,
                 const agent::Discovery& found);

}  // namespace

int agents(const host::Config& config, const GlobalOptions& g) {
    const auto options = agent::DiscoveryOptions::from_environment(fs::current_path());
    auto found = agent::discover(options);
    // The skills a dormant lazy server serves, as the catalog recorded them when it last ran (it is not started).
    const auto catalog = host::ToolCatalog::from_env(host::process_env());
    for (const auto& server : config.servers)
        if (server.lazy && server.enabled) agent::add_catalog_skills(server, catalog, found.definitions, found.notes);
    const auto eager = std::count_if(config.servers.begin(), config.servers.end(),
                                     [](const host::ServerConfig& s) { return s.enabled && !s.lazy; });
    if (eager > 0 && !g.json)  // said to a person; --json lists what it found, as it always did
        found.notes.push_back(fmt::format("the skills the {} eager server{} may serve are not listed: `agents --connect` "
                                          "starts {} and asks",
                                          eager, eager == 1 ? "" : "s", eager == 1 ? "it" : "them"));
    return print_agents(config, g, options, found);
}

boost::asio::awaitable<int> agents_connected(const host::Config& config, const GlobalOptions& g) {
    const auto options = agent::DiscoveryOptions::from_environment(fs::current_path());
    auto found = agent::discover(options);
    co_return co_await with_host(config, Settle::all, [&](Host& h) -> boost::asio::awaitable<int> {
        // What `run` and `chat` offer: the connected servers' skills, and a dormant lazy server's from the catalog.
        co_await agent::add_mcp_skills(h.pool, found.definitions, found.notes,
                                       host::ToolCatalog::from_env(host::process_env()));
        co_return print_agents(config, g, options, found);
    });
}

namespace {

int print_agents(const host::Config& config, const GlobalOptions& g, const agent::DiscoveryOptions& options,
                 const agent::Discovery& found) {
    for (const auto& e : found.errors) fmt::print(stderr, "switchboard: {}\n", e);
    for (const auto& n : found.notes) fmt::print(stderr, "switchboard: note: {}\n", n);

    if (g.json) {
        json::array out;
        for (const auto& d : found.definitions) {
            const auto s = servers_of(d, config);
            json::object o;
            o["name"] = d.name;
            o["kind"] = d.kind == Definition::Kind::agent ? "agent" : "skill";
            o["path"] = d.path.string();
            o["origin"] = d.origin;
            o["description"] = d.description;
            o["required"] = strings(d.required);
            o["optional"] = strings(d.optional);
            o["missing"] = strings(s.missing);
            o["lazy"] = strings(s.lazy);
            std::vector<std::string> inline_names;
            for (const auto& server : d.inline_servers) inline_names.push_back(server.name);
            o["inline"] = strings(inline_names);
            o["fork"] = d.fork;
            if (!d.model.empty()) o["model"] = d.model;
            if (!d.run_as.empty()) o["runAs"] = d.run_as;
            if (d.served) {
                // Served over MCP: by which server, from where this listing came ("catalog": the server is lazy
                // and was not running; it starts when the skill runs), and the entry's SKILL.md.
                o["served"] = json::object{{"server", d.required.front()},
                                           {"source", d.from_catalog ? "catalog" : "server"},
                                           {"dormant", d.from_catalog},
                                           {"uri", d.served->uri}};
            }
            out.push_back(std::move(o));
        }
        print_json(std::move(out));
    } else if (found.definitions.empty()) {
        fmt::print("No agents or skills (looked in .switchboard/ and .claude/ here, {}/switchboard/ and ~/.claude/).\n",
                   options.config_home.empty() ? std::string("$XDG_CONFIG_HOME") : options.config_home.string());
    } else {
        struct Row {
            std::string name, kind, servers, lazy, missing, path;
        };
        std::vector<Row> rows;
        rows.push_back({"NAME", "KIND", "SERVERS", "LAZY", "MISSING", "PATH"});
        for (const auto& d : found.definitions) {
            const auto s = servers_of(d, config);
            // Optional servers carry a "?".
            std::vector<std::string> declared;
            for (const auto& name : s.declared)
                declared.push_back(
                    std::find(d.required.begin(), d.required.end(), name) != d.required.end() ? name : name + "?");
            rows.push_back({d.name, d.kind == Definition::Kind::agent ? "agent" : "skill", joined(declared),
                            joined(s.lazy), joined(s.missing), display_where(d, options)});
        }
        std::size_t w[5] = {};
        for (const auto& r : rows) {
            const std::string* cells[5] = {&r.name, &r.kind, &r.servers, &r.lazy, &r.missing};
            for (int i = 0; i < 5; ++i) w[i] = std::max(w[i], cells[i]->size());
        }
        for (const auto& r : rows)
            fmt::print("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", r.name, w[0], r.kind, w[1], r.servers, w[2],
                       r.lazy, w[3], r.missing, w[4], r.path);
    }
    return found.errors.empty() ? 0 : 1;
}

}  // namespace

}  // namespace switchboard::cli
