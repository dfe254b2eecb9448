#include <switchboard/host/tool_catalog.hpp>

#include <switchboard/core/atomic_file.hpp>

#include <switchboard/host/pool.hpp>
#include <switchboard/host/tool_index.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace switchboard::host {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// FNV-1a, 64 bit: stable across builds and platforms (std::hash is not promised to be).
std::uint64_t fnv1a_64(std::string_view text, std::uint64_t h = 1469598103934665603ull) {
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

// A file name for a server name: anything but [A-Za-z0-9._-] becomes '_' (a leading dot too).
std::string file_stem(std::string_view server) {
    std::string out;
    for (char c : server) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '.';
        out += ok ? c : '_';
    }
    if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');
    return out;
}

}  // namespace

std::string catalog_hash(const ServerConfig& s) {
    // What runs, field by field with separators: a changed command, argument, variable or URL is another server.
    json::object o{{"type", std::string(to_string(s.type))},
                   {"command", s.command},
                   {"cwd", s.cwd},
                   {"url", s.url},
                   {"caFile", s.ca_file}};
    json::array args;
    for (const auto& a : s.args) args.push_back(json::string(a));
    o["args"] = std::move(args);
    json::object env, headers;
    for (const auto& [k, v] : s.env) env[k] = v;  // std::map: sorted, so the text is stable
    for (const auto& [k, v] : s.headers) headers[k] = v;
    o["env"] = std::move(env);
    o["headers"] = std::move(headers);
    return fmt::format("{:016x}", fnv1a_64(json::serialize(o)));
}

fs::path ToolCatalog::default_dir(const EnvLookup& env) {
    if (const auto xdg = env("XDG_CACHE_HOME"); xdg && !xdg->empty()) return fs::path(*xdg) / "switchboard" / "catalog";
    if (const auto home = env("HOME"); home && !home->empty())
        return fs::path(*home) / ".cache" / "switchboard" / "catalog";
    return {};
}

fs::path ToolCatalog::file(std::string_view server) const { return dir_ / (file_stem(server) + ".json"); }

std::optional<CatalogEntry> ToolCatalog::read(std::string_view server) const {
    if (dir_.empty()) return std::nullopt;
    std::ifstream in(file(server), std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    json::error_code ec;
    auto v = json::parse(text.str(), ec);
    const auto* o = v.if_object();
    if (ec || !o) return std::nullopt;
    CatalogEntry e;
    if (const auto* s = o->if_contains("server"); s && s->is_string()) e.server = std::string(s->get_string());
    if (e.server != server) return std::nullopt;  // another server's file under a sanitised name
    if (const auto* h = o->if_contains("configHash"); h && h->is_string()) e.config_hash = std::string(h->get_string());
    if (const auto* u = o->if_contains("updated"); u && u->is_int64()) e.updated = u->get_int64();
    if (const auto* tools = o->if_contains("tools"); tools && tools->is_array())
        for (const auto& t : tools->get_array())
            if (t.is_object()) e.tools.push_back(mcp::Tool::from_json(t));
    return e;
}

std::optional<CatalogEntry> ToolCatalog::load(const ServerConfig& server) const {
    auto e = read(server.name);
    if (!e || e->config_hash != catalog_hash(server)) return std::nullopt;
    std::erase_if(e->tools, [&](const mcp::Tool& t) {
        return !tool_allowed(t.name, server.allowed_tools, server.excluded_tools);
    });
    return e;
}

bool ToolCatalog::save(const ServerConfig& server, const std::vector<mcp::Tool>& tools, std::string* error) const {
    auto fail = [&](std::string what) {
        if (error) *error = std::move(what);
        return false;
    };
    if (dir_.empty()) return fail("no cache directory (neither XDG_CACHE_HOME nor HOME is set)");
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return fail(fmt::format("cannot create {}: {}", dir_.string(), ec.message()));
    json::array list;
    for (const auto& t : tools) list.push_back(t.to_json());
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    json::object doc{{"server", server.name},
                     {"configHash", catalog_hash(server)},
                     {"updated", static_cast<std::int64_t>(now)},
                     {"tools", std::move(list)}};
    core::AtomicWriteOptions options;
    options.durable = false;  // a cache: losing it costs one listing
    if (auto why = core::write_file_atomically(file(server.name), json::serialize(doc), options); !why.empty())
        return fail(why);
    return true;
}

CatalogRecorder::CatalogRecorder(std::shared_ptr<ServerPool> pool, ToolCatalog catalog) : pool_(pool) {
    std::weak_ptr<ServerPool> weak = pool;
    subscription_ = pool->events().subscribe([weak, catalog = std::move(catalog)](const Event& e) {
        if (e.kind != Event::Kind::tools_changed || e.server.empty()) return;
        auto p = weak.lock();
        if (!p) return;
        const auto* sc = p->server_config(e.server);
        if (!sc || !sc->lazy || p->phase(e.server) != Phase::connected) return;
        auto tools = p->tools(e.server);
        if (!tools) return;
        std::string error;
        if (!catalog.save(*sc, *tools, &error))
            spdlog::warn("server \"{}\": cannot record its tools in the catalog: {}", e.server, error);
    });
}

CatalogRecorder::~CatalogRecorder() {
    if (auto p = pool_.lock()) p->events().unsubscribe(subscription_);
}

}  // namespace switchboard::host
