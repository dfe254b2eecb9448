// The Servers page's "Add from registry" and "Paste a config": the MCP Registry searched, a server's server.json
// turned into an entry with the values it needs (registry/server_json.hpp) and the exact command shown before Add,
// and `.mcp.json` / VS Code `mcp.json` fragments added as they are. Every write goes through host/config_edit (as
// the server form's), secrets to the env file beside the config.
#include "routes.hpp"

#include <switchboard/host/config_edit.hpp>
#include <switchboard/host/env_file.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/registry/registry_client.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace switchboard::webapi {

namespace json = boost::json;
namespace bhttp = http::bhttp;
using boost::asio::awaitable;

namespace {

registry::RegistryOptions registry_options(const host::ServerPool& pool) {
    registry::RegistryOptions o;
    o.url = registry::registry_url({}, pool.config().registry);
    o.cache_dir = registry::default_cache_dir();
    return o;
}

[[noreturn]] void registry_failed(const std::exception& e) {
    throw http::HttpError(bhttp::status::bad_gateway, e.what());
}

std::string text_member(const json::object& body, std::string_view key) {
    const auto* v = body.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::map<std::string, std::string> answers_of(const json::object& body) {
    std::map<std::string, std::string> out;
    if (const auto* a = body.if_contains("answers"); a && a->is_object())
        for (const auto& [k, v] : a->get_object())
            if (v.is_string()) out[std::string(k)] = v.get_string();
    return out;
}

// GET /api/registry/search?q=&limit=
awaitable<void> search(PoolRef weak, http::ServerRequest& req, http::Responder& res) {
    auto pool = lock(weak);
    auto o = registry_options(*pool);
    const auto limit_text = query_parameter(req, "limit");
    std::size_t limit = 30;
    if (!limit_text.empty()) limit = static_cast<std::size_t>(std::clamp(std::atoi(limit_text.c_str()), 1, 100));
    registry::RegistryClient client(pool->executor(), o);
    registry::SearchResult found;
    try {
        found = co_await client.search(query_parameter(req, "q"), limit);
    } catch (const std::exception& e) {
        registry_failed(e);
    }
    json::array list;
    for (const auto& l : found.servers) list.push_back(registry::summary_json(l));
    json::object body{{"registry", o.url}, {"servers", std::move(list)}, {"more", found.more}};
    co_await send_json(res, std::move(body));
}

// What the page shows for one server: its ways to run, the questions of the chosen one, and the entry (or why not).
json::object describe(const registry::Listing& l, const json::object& body, const std::string& registry_url) {
    const auto& doc = l.server;
    json::array options;
    for (std::size_t i = 0; i < doc.packages.size(); ++i) {
        const auto& p = doc.packages[i];
        json::object opt{
            {"use", p.registry_type},
            {"label", fmt::format("{} {}{}", p.registry_type, p.identifier, p.version.empty() ? "" : "@" + p.version)}};
        try {
            (void)registry::questions(doc, {registry::Choice::Kind::package, i});
            opt["ok"] = true;
        } catch (const registry::RegistryError& e) {
            opt["ok"] = false;
            opt["why"] = e.what();
        }
        options.push_back(std::move(opt));
    }
    if (!doc.remotes.empty())
        options.push_back(
            json::object{{"use", "remote"}, {"label", fmt::format("remote {}", doc.remotes[0].url)}, {"ok", true}});
    const auto local =
        text_member(body, "as").empty() ? registry::default_local_name(doc.name) : text_member(body, "as");
    json::object out{{"registry", registry_url}, {"server", registry::summary_json(l)}, {"repository", doc.repository},
                     {"website", doc.website},   {"options", std::move(options)},       {"as", local}};
    out["error"] = nullptr;
    out["plan"] = nullptr;
    registry::Choice choice;
    try {
        choice = registry::choose(doc, text_member(body, "use"));
    } catch (const registry::RegistryError& e) {
        out["error"] = e.what();
        return out;
    }
    out["use"] = choice.kind == registry::Choice::Kind::remote ? "remote" : doc.packages[choice.index].registry_type;
    json::array questions;
    try {
        for (const auto& q : registry::questions(doc, choice)) questions.push_back(registry::to_json(q));
        auto plan = registry::plan(doc, choice, answers_of(body), local);
        const auto* confine = body.if_contains("confine");
        registry::apply_flags(plan, {!confine || !confine->is_bool() || confine->get_bool(), false, false});
        json::array secrets;
        for (const auto& [k, _] : plan.secrets) secrets.emplace_back(k);
        json::array notes;
        for (const auto& n : plan.notes) notes.emplace_back(n);
        out["plan"] = json::object{{"display", plan.display},
                                   {"entry", plan.entry},
                                   {"secrets", std::move(secrets)},
                                   {"notes", std::move(notes)}};
    } catch (const registry::RegistryError& e) {
        out["error"] = e.what();
    }
    out["questions"] = std::move(questions);
    return out;
}

// The version of the server the body names ("name", "version"), from the registry (502 naming it when that fails).
awaitable<registry::Listing> listing_of(registry::RegistryClient& client, const json::object& body) {
    try {
        co_return co_await client.get(required_string(body, "name"), text_member(body, "version"));
    } catch (const http::HttpError&) {
        throw;
    } catch (const std::exception& e) {
        registry_failed(e);
    }
}

// POST /api/registry/plan {"name", "version"?, "use"?, "answers"?, "as"?, "confine"?}
awaitable<void> plan(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto ro = registry_options(*pool);
    registry::RegistryClient client(pool->executor(), ro);
    const auto l = co_await listing_of(client, body);
    co_await send_json(res, describe(l, body, ro.url));
}

// Adds the entry to the config file (its secrets to the env file), has the watcher take note, applies it.
awaitable<json::object> add_entry(std::shared_ptr<host::ServerPool> pool, Options o, std::string name,
                                  json::object entry, std::map<std::string, std::string> secrets) {
    co_return co_await write_and_apply(std::move(pool), std::move(o), [&](const std::filesystem::path& file) {
        return host::add_server_to_file(file, name, entry, secrets);
    });
}

// POST /api/registry/add: as /plan, then written (the package file checked against its fileSha256 first).
awaitable<void> add(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    registry::RegistryClient client(pool->executor(), registry_options(*pool));
    const auto l = co_await listing_of(client, body);
    const auto& doc = l.server;
    if (l.status == "deleted")
        throw http::HttpError(bhttp::status::conflict,
                              fmt::format("{} {} was deleted from the registry", doc.name, doc.version));
    const auto local =
        text_member(body, "as").empty() ? registry::default_local_name(doc.name) : text_member(body, "as");
    registry::Choice choice;
    registry::Plan plan;
    try {
        choice = registry::choose(doc, text_member(body, "use"));
        plan = registry::plan(doc, choice, answers_of(body), local);
    } catch (const registry::RegistryError& e) {
        throw http::HttpError(bhttp::status::bad_request, e.what());
    }
    const auto* confine = body.if_contains("confine");
    const auto* lazy = body.if_contains("lazy");
    registry::apply_flags(plan, {!confine || !confine->is_bool() || confine->get_bool(),
                                 lazy && lazy->is_bool() && lazy->get_bool(), false});
    std::string checked;
    if (choice.kind == registry::Choice::Kind::package) {
        try {
            checked = co_await client.check_file(doc.packages[choice.index]);
        } catch (const std::exception& e) {
            throw http::HttpError(bhttp::status::bad_gateway, e.what());
        }
    }
    auto answer = co_await add_entry(pool, o, local, std::move(plan.entry), std::move(plan.secrets));
    answer["added"] = json::array{json::value(local)};
    answer["checked"] = checked;
    if (l.status == "deprecated")
        answer["warnings"].as_array().emplace_back(
            fmt::format("{} {} is deprecated on the registry", doc.name, doc.version));
    co_await send_json(res, std::move(answer));
}

// The servers of a pasted fragment: a whole `.mcp.json` ({"mcpServers": {...}}), VS Code's `mcp.json`
// ({"servers": {...}}), the map itself, or `"name": {...}` members without their braces.
json::object pasted_servers(const std::string& text) {
    json::value v;
    try {
        v = host::parse_jsonc(text, "the pasted text");
    } catch (const host::ConfigError&) {
        try {
            v = host::parse_jsonc("{" + text + "}", "the pasted text");
        } catch (const host::ConfigError& e) {
            throw http::HttpError(bhttp::status::bad_request, e.what());
        }
    }
    if (!v.is_object()) throw http::HttpError(bhttp::status::bad_request, "the pasted text is not a JSON object");
    auto& o = v.get_object();
    for (const char* key : {"mcpServers", "servers"})
        if (auto* m = o.if_contains(key)) {
            if (!m->is_object())
                throw http::HttpError(bhttp::status::bad_request, fmt::format("\"{}\" must be an object", key));
            return m->get_object();
        }
    // One entry given bare ({"command": ...}) has no name to add it under.
    if (o.contains("command") || o.contains("url"))
        throw http::HttpError(bhttp::status::bad_request,
                              "this is one server's entry without its name: paste it as \"name\": {...}");
    return o;
}

// POST /api/servers/import {"text"}: every server of the fragment added; none when one is refused.
awaitable<void> import(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto servers = pasted_servers(required_string(body, "text"));
    if (servers.empty()) throw http::HttpError(bhttp::status::bad_request, "the pasted text has no servers");
    const auto file = config_file(*pool);
    const auto existing = host::raw_server_entries(host::read_config_text(file), file.string());
    // Every entry checked before any is written: a paste is added whole or not at all.
    for (const auto& [name, entry] : servers) {
        if (!entry.is_object())
            throw http::HttpError(bhttp::status::bad_request,
                                  fmt::format("server \"{}\": its entry must be an object", std::string_view(name)));
        // VS Code asks for an ${input:...} itself; here it would be an unset variable.
        if (json::serialize(entry).find("${input:") != std::string::npos)
            throw http::HttpError(
                bhttp::status::bad_request,
                fmt::format("server \"{}\" uses VS Code's ${{input:...}}, which only VS Code asks for: "
                            "put the value (or a ${{VAR}}) in its place; nothing was added",
                            std::string_view(name)));
        if (existing.count(std::string(name)))
            throw http::HttpError(
                bhttp::status::conflict,
                fmt::format("a server named \"{}\" already exists; nothing was added", std::string_view(name)));
        std::vector<std::string> warnings;
        const auto s = host::parse_server_entry(std::string(name), entry.get_object(), file.string(),
                                                host::with_env_file(host::process_env(), file), warnings);
        if (!s.invalid.empty() && !s.invalid.starts_with("environment variable ${"))
            throw http::HttpError(bhttp::status::bad_request, fmt::format("server \"{}\": {}; nothing was added",
                                                                          std::string_view(name), s.invalid));
    }
    // Written one entry after another, applied once.
    auto answer = co_await write_and_apply(pool, o, [&servers](const std::filesystem::path& file) {
        host::ConfigFileEdit last;
        std::vector<std::string> warnings;
        for (const auto& [name, entry] : servers) {
            last = host::add_server_to_file(file, std::string(name), entry.get_object());
            warnings.insert(warnings.end(), last.warnings.begin(), last.warnings.end());
        }
        last.warnings = std::move(warnings);
        return last;
    });
    json::array added;
    for (const auto& [name, entry] : servers) added.emplace_back(name);
    answer["added"] = std::move(added);
    co_await send_json(res, std::move(answer));
}

}  // namespace

void add_registry_routes(http::Router& r, PoolRef pool, Options o) {
    using Req = http::ServerRequest;
    using Res = http::Responder;
    add_route(r, bhttp::verb::get, "/api/registry/search", [pool](Req& q, Res& res) { return search(pool, q, res); });
    add_route(r, bhttp::verb::post, "/api/registry/plan",
              [pool, o](Req& q, Res& res) { return plan(pool, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/registry/add", [pool, o](Req& q, Res& res) { return add(pool, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/servers/import",
              [pool, o](Req& q, Res& res) { return import(pool, o, q, res); });
}

}  // namespace switchboard::webapi
