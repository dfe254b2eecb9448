// /api/info and the servers: status, restart, and edits of the config file (enable, save, remove), applied live.
#include "routes.hpp"

#include <switchboard/core/spawn.hpp>
#include <switchboard/host/config_edit.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/host/status_json.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace switchboard::webapi {

namespace json = boost::json;
namespace bhttp = http::bhttp;
namespace fs = std::filesystem;
using boost::asio::awaitable;

namespace {

using Entries = std::map<std::string, json::object, std::less<>>;

// The entries as the file has them now ({} when the pool was not loaded from a file, or the file does not parse).
// Every status event asks for them (each badge shows its entry), so the file is read and parsed again only when
// it changed (path, inode, size, mtime). One executor: no lock.
const Entries& file_entries(const host::ServerPool& pool) {
    struct Cache {
        std::string path;
        struct ::stat stamp {};
        bool valid = false;
        Entries entries;
    };
    static Cache cache;
    const auto& path = pool.config().source;
    struct ::stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        cache = Cache{};
        return cache.entries;
    }
    const bool same = cache.valid && cache.path == path && cache.stamp.st_ino == st.st_ino &&
                      cache.stamp.st_size == st.st_size && cache.stamp.st_mtim.tv_sec == st.st_mtim.tv_sec &&
                      cache.stamp.st_mtim.tv_nsec == st.st_mtim.tv_nsec;
    if (same) return cache.entries;
    cache = Cache{path, st, true, {}};
    std::ifstream in(path, std::ios::binary);
    if (!in) return cache.entries;
    std::ostringstream text;
    text << in.rdbuf();
    try {
        cache.entries = host::raw_server_entries(text.str(), path);
    } catch (const std::exception&) {
        // Being edited by hand: the next save reports the error.
    }
    return cache.entries;
}

json::object with_config(const host::ServerStatus& s, const Entries& raw) {
    auto o = host::to_json(s);
    const auto it = raw.find(s.name);
    o["config"] = it == raw.end() ? json::object() : it->second;
    return o;
}

awaitable<void> list(PoolRef weak, http::Responder& res) {
    auto pool = lock(weak);
    co_await send_json(res, servers_json(*pool));
}

awaitable<void> restart_in_background(std::shared_ptr<host::ServerPool> pool, std::string name) {
    co_await pool->restart(std::move(name));
}

awaitable<void> restart(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    auto name = required_string(body, "name");
    require_server(*pool, name);
    // Answered at once: the phases it goes through arrive on /api/events.
    core::spawn_logged(pool->executor(), restart_in_background(pool, name), "web api: restart " + name);
    co_await send_json(res, json::object(), bhttp::status::accepted);
}

awaitable<void> enable(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    auto name = required_string(body, "name");
    const auto* enabled = body.if_contains("enabled");
    if (!enabled || !enabled->is_bool())
        throw http::HttpError(bhttp::status::bad_request, "\"enabled\" must be true or false");
    config_file(*pool);
    const auto& raw = file_entries(*pool);
    const auto it = raw.find(name);
    if (it == raw.end())
        throw http::HttpError(bhttp::status::not_found,
                              fmt::format("no server named \"{}\" in {}", name, pool->config().source));
    auto entry = it->second;
    entry.erase("enabled");
    entry.erase("disabled");
    if (!enabled->get_bool()) entry["enabled"] = false;
    co_await apply_edit(pool, o, name, std::string(), std::move(entry), res);
}

awaitable<void> save(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    auto name = required_string(body, "name");
    std::string previous;
    if (const auto* p = body.if_contains("previousName"); p && p->is_string()) previous = p->get_string();
    const auto* config = body.if_contains("config");
    if (!config || !config->is_object())
        throw http::HttpError(bhttp::status::bad_request, "\"config\" must be the server's entry, an object");
    std::optional<json::object> entry = config->get_object();
    co_await apply_edit(pool, o, std::move(name), std::move(previous), std::move(entry), res);
}

awaitable<void> remove(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    auto name = required_string(body, "name");
    co_await apply_edit(pool, o, std::move(name), std::string(), std::nullopt, res);
}

// GET /api/servers/logs?name=: the server's latest log messages (kept by the pool), and the level it is asked for.
awaitable<void> logs(PoolRef weak, http::ServerRequest& req, http::Responder& res) {
    auto pool = lock(weak);
    const auto name = query_parameter(req, "name");
    require_server(*pool, name);
    json::array list;
    for (const auto& m : pool->recent_logs(name)) {
        json::object o = m.params.is_object() ? m.params.get_object() : json::object{{"data", m.params}};
        o["timeMs"] = std::chrono::duration_cast<std::chrono::milliseconds>(m.at.time_since_epoch()).count();
        list.push_back(std::move(o));
    }
    const auto status = pool->status(name);
    json::object body;
    body["server"] = name;
    body["level"] = status && !status->log_level.empty() ? json::value(status->log_level) : json::value(nullptr);
    body["logs"] = std::move(list);
    co_await send_json(res, std::move(body));
}

// POST /api/servers/log-level {"name", "level"}: logging/setLevel (legacy) or `_meta` logLevel (2026-07-28) from now
// on, also after a reconnect. Answers with the server's status.
awaitable<void> log_level(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto name = required_string(body, "name");
    const auto level = required_string(body, "level");
    require_server(*pool, name);
    if (!mcp::is_log_level(level))
        throw http::HttpError(bhttp::status::bad_request,
                              fmt::format("\"level\" must be debug, info, notice, warning, error, critical, alert or "
                                          "emergency, not \"{}\"",
                                          level));
    auto r = co_await pool->set_log_level(name, level);
    if (!r) {
        if (r.error().code == jsonrpc::code::method_not_found)
            throw http::HttpError(bhttp::status::conflict, r.error().message);
        upstream_failed(name, r.error());
    }
    auto status = server_json(*pool, name);
    json::object answer = status ? std::move(*status) : json::object();  // (no ?: inside co_await: GCC 12)
    co_await send_json(res, std::move(answer));
}

}  // namespace

// Writes the file, has the file watcher take note, applies the result; the servers and the edit's warnings.
awaitable<json::object> write_and_apply(std::shared_ptr<host::ServerPool> pool, Options o,
                                        std::function<host::ConfigFileEdit(const fs::path&)> write) {
    const auto file = config_file(*pool);
    host::ConfigFileEdit edited;
    try {
        edited = write(file);
    } catch (const host::ConfigError& e) {
        throw http::HttpError(bhttp::status::bad_request, e.what());
    } catch (const std::exception& e) {
        throw http::HttpError(bhttp::status::internal_server_error, e.what());
    }
    if (o->config_written) o->config_written();
    co_await pool->apply(std::move(edited.config));
    auto body = servers_json(*pool);
    json::array warnings;
    for (auto& w : edited.warnings) warnings.emplace_back(w);
    body["warnings"] = std::move(warnings);
    co_return body;
}

// (The edit comes in parts: GCC 12 miscompiles aggregates passed by value to a coroutine.)
awaitable<void> apply_edit(std::shared_ptr<host::ServerPool> pool, Options o, std::string name, std::string previous,
                           std::optional<json::object> entry, http::Responder& res) {
    host::ServerEntryEdit edit{std::move(name), std::move(previous), std::move(entry)};
    auto body = co_await write_and_apply(std::move(pool), std::move(o),
                                         [&edit](const fs::path& file) { return host::edit_config_file(file, edit); });
    co_await send_json(res, std::move(body));
}

fs::path config_file(const host::ServerPool& pool) {
    const auto& source = pool.config().source;
    std::error_code ec;
    if (source.empty() || !fs::is_regular_file(source, ec))
        throw http::HttpError(bhttp::status::conflict,
                              fmt::format("servers cannot be edited here: the configuration is not a file ({})",
                                          source.empty() ? "none" : source));
    return source;
}

json::object servers_json(const host::ServerPool& pool) {
    const auto& raw = file_entries(pool);
    json::array servers;
    for (const auto& s : pool.status()) servers.push_back(with_config(s, raw));
    json::object body;
    body["servers"] = std::move(servers);
    return body;
}

std::optional<json::object> server_json(const host::ServerPool& pool, std::string_view name) {
    auto status = pool.status(name);
    if (!status) return std::nullopt;
    return with_config(*status, file_entries(pool));
}

void add_server_routes(http::Router& r, PoolRef pool, Options o) {
    using Req = http::ServerRequest;
    using Res = http::Responder;
    // Plain lambdas returning the coroutine of a free function (arguments by value): no capturing coroutine.
    add_route(r, bhttp::verb::get, "/api/servers", [pool](Req&, Res& res) { return list(pool, res); });
    add_route(r, bhttp::verb::post, "/api/servers/restart",
              [pool, o](Req& q, Res& res) { return restart(pool, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/servers/enable",
              [pool, o](Req& q, Res& res) { return enable(pool, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/servers/save", [pool, o](Req& q, Res& res) { return save(pool, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/servers/remove",
              [pool, o](Req& q, Res& res) { return remove(pool, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/servers/logs", [pool](Req& q, Res& res) { return logs(pool, q, res); });
    add_route(r, bhttp::verb::post, "/api/servers/log-level",
              [pool, o](Req& q, Res& res) { return log_level(pool, o, q, res); });
}

}  // namespace switchboard::webapi
