#include <switchboard/host/tool_catalog.hpp>

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/atomic_file.hpp>

#include <switchboard/host/pool.hpp>
#include <switchboard/host/tool_index.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

namespace switchboard::host {

namespace asio = boost::asio;
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
    // Absent in files written before they were recorded: none.
    const auto each = [o](std::string_view key, auto add) {
        if (const auto* list = o->if_contains(key); list && list->is_array())
            for (const auto& item : list->get_array())
                if (item.is_object()) add(item);
    };
    each("resources", [&](const json::value& v) { e.resources.push_back(mcp::Resource::from_json(v)); });
    each("resourceTemplates", [&](const json::value& v) { e.templates.push_back(mcp::ResourceTemplate::from_json(v)); });
    each("prompts", [&](const json::value& v) { e.prompts.push_back(mcp::Prompt::from_json(v)); });
    // Absent in files written before skills were recorded: no skills, the rest as it was.
    if (const auto* skills = o->if_contains("skills"); skills && skills->is_array()) {
        e.skills.emplace();
        for (const auto& entry : skills->get_array()) {
            std::string ignored;  // an entry we cannot parse was not one the server could have listed
            if (auto skill = mcp::parse_skill(entry, ignored)) e.skills->push_back(std::move(*skill));
        }
    }
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
    std::optional<std::vector<mcp::Skill>> skills;
    if (auto current = read(server.name); current && current->config_hash == catalog_hash(server))
        skills = std::move(current->skills);
    return save(server, tools, skills, error);
}

bool ToolCatalog::save(const ServerConfig& server, const std::vector<mcp::Tool>& tools,
                       const std::optional<std::vector<mcp::Skill>>& skills, std::string* error) const {
    CatalogEntry entry;
    if (auto current = read(server.name); current && current->config_hash == catalog_hash(server))
        entry = std::move(*current);  // its resources, templates and prompts stay
    entry.tools = tools;
    entry.skills = skills;
    return write(server, std::move(entry), error);
}

bool ToolCatalog::save_offers(const ServerConfig& server, const std::vector<mcp::Resource>& resources,
                              const std::vector<mcp::ResourceTemplate>& templates,
                              const std::vector<mcp::Prompt>& prompts, std::string* error) const {
    CatalogEntry entry;
    if (auto current = read(server.name); current && current->config_hash == catalog_hash(server))
        entry = std::move(*current);  // its tools and skills stay
    entry.resources = resources;
    entry.templates = templates;
    entry.prompts = prompts;
    return write(server, std::move(entry), error);
}

bool ToolCatalog::write(const ServerConfig& server, CatalogEntry entry, std::string* error) const {
    auto fail = [&](std::string what) {
        if (error) *error = std::move(what);
        return false;
    };
    if (dir_.empty()) return fail("no cache directory (neither XDG_CACHE_HOME nor HOME is set)");
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return fail(fmt::format("cannot create {}: {}", dir_.string(), ec.message()));
    const auto raw_list = [](const auto& items) {
        json::array list;
        for (const auto& item : items) list.push_back(item.raw);
        return list;
    };
    json::array tools;
    for (const auto& t : entry.tools) tools.push_back(t.to_json());
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    json::object doc{{"server", server.name},
                     {"configHash", catalog_hash(server)},
                     {"updated", static_cast<std::int64_t>(now)},
                     {"tools", std::move(tools)},
                     {"resources", raw_list(entry.resources)},
                     {"resourceTemplates", raw_list(entry.templates)},
                     {"prompts", raw_list(entry.prompts)}};
    if (entry.skills) {
        json::array entries;
        for (const auto& skill : *entry.skills) {
            if (!skill.entry.empty()) {
                entries.push_back(skill.entry);  // as the server sent it
                continue;
            }
            json::object item{{"uri", skill.uri}, {"frontmatter", skill.frontmatter}};
            if (!skill.files) {
                item["resources"] = "dynamic";
            } else {
                json::array files;
                for (const auto& f : *skill.files)
                    files.push_back(json::object{{"uri", f.uri}, {"size", f.size}, {"digest", f.digest}});
                item["resources"] = std::move(files);
            }
            entries.push_back(std::move(item));
        }
        doc["skills"] = std::move(entries);
    }
    core::AtomicWriteOptions options;
    options.durable = false;  // a cache: losing it costs one listing
    if (auto why = core::write_file_atomically(file(server.name), json::serialize(doc), options); !why.empty())
        return fail(why);
    return true;
}

bool record_listing(const ToolCatalog& catalog, const ServerPool& pool, const ServerConfig& server, bool with_tools,
                    std::string* error) {
    if (with_tools) {
        const auto tools = pool.tools(server.name);
        if (!tools || !catalog.save(server, *tools, error)) return false;
    }
    std::vector<mcp::Resource> resources;
    std::vector<mcp::ResourceTemplate> templates;
    std::vector<mcp::Prompt> prompts;
    for (auto& r : pool.resources(server.name)) resources.push_back(std::move(r.resource));
    for (auto& t : pool.resource_templates(server.name)) templates.push_back(std::move(t.resource_template));
    for (auto& p : pool.prompts(server.name)) prompts.push_back(std::move(p.prompt));
    return catalog.save_offers(server, resources, templates, prompts, error);
}

// Per server: a skill listing is running, and another is wanted once it ends (the resources changed meanwhile).
struct CatalogRecorder::Listings {
    std::map<std::string, bool, std::less<>> running;  // server → another listing wanted
};

namespace {

// Lists a connected lazy server's skills and records them with its tools; again while a change came in meanwhile.
asio::awaitable<void> record_skills(std::weak_ptr<ServerPool> weak, ToolCatalog catalog,
                                    std::shared_ptr<CatalogRecorder::Listings> listings, std::string name) {
    for (;;) {
        listings->running[name] = false;
        std::optional<std::vector<mcp::Skill>> skills;
        std::string hash;
        std::shared_ptr<mcp::ClientSession> session;
        Lease lease;
        {
            auto p = weak.lock();
            const auto* sc = p ? p->server_config(name) : nullptr;
            // Never started for this: only a server that is up now is asked (session() would start a dormant one).
            if (!sc || !sc->lazy || p->phase(name) != Phase::connected) break;
            hash = catalog_hash(*sc);
            auto s = co_await p->session(name);
            if (!s) break;
            session = std::move(*s);
            if (session->has_extension(mcp::skills_extension)) {
                // Held while it lists and until the skills are recorded (a connected server: nothing starts), so
                // that a last release meanwhile does not stop it first: a first run that used it for a moment still
                // records its skills. (Released at the end of this pass: a release may stop it at once.)
                auto held = co_await p->acquire(name);
                if (!held) break;
                lease = std::move(*held);
            }
        }  // the pool is not kept alive by this task while it waits for the server
        const bool list = session->has_extension(mcp::skills_extension);
        if (list) {
            std::vector<std::string> warnings;
            auto listed = co_await mcp::list_skills(session, warnings);
            for (const auto& w : warnings)
                spdlog::debug("server \"{}\": a skill not recorded in the catalog: {}", name, w);
            if (!listed) {
                spdlog::debug("server \"{}\": skills/list failed; its catalog skills are left as they were: {}", name,
                              listed.error().message);
                if (!listings->running[name]) break;
                continue;
            }
            skills = std::move(*listed);
        }
        session.reset();
        auto p = weak.lock();
        const auto* sc = p ? p->server_config(name) : nullptr;
        // The entry changed, or the server went away, while it was listed: these skills are not the current ones.
        if (!sc || catalog_hash(*sc) != hash || p->phase(name) != Phase::connected) break;
        auto tools = p->tools(name);
        const auto stored = catalog.read(name);
        const bool had_skills = stored && stored->config_hash == hash && stored->skills;
        if (tools && (list || had_skills)) {
            std::string error;
            if (!catalog.save(*sc, *tools, skills, &error))
                spdlog::warn("server \"{}\": cannot record its skills in the catalog: {}", name, error);
        }
        if (!listings->running[name]) break;
    }
    listings->running.erase(name);
}

}  // namespace

CatalogRecorder::CatalogRecorder(std::shared_ptr<ServerPool> pool, ToolCatalog catalog)
    : pool_(pool), listings_(std::make_shared<Listings>()), tasks_(pool->executor()) {
    std::weak_ptr<ServerPool> weak = pool;
    subscription_ = pool->events().subscribe([this, weak, catalog = std::move(catalog)](const Event& e) {
        if ((e.kind != Event::Kind::tools_changed && e.kind != Event::Kind::resources_changed &&
             e.kind != Event::Kind::prompts_changed) ||
            e.server.empty())
            return;
        auto p = weak.lock();
        if (!p) return;
        const auto* sc = p->server_config(e.server);
        if (!sc || !sc->lazy || p->phase(e.server) != Phase::connected) return;
        if (e.kind != Event::Kind::tools_changed) {
            std::string error;
            if (!record_listing(catalog, *p, *sc, false, &error))
                spdlog::warn("server \"{}\": cannot record its resources and prompts in the catalog: {}", e.server,
                             error);
            if (e.kind == Event::Kind::prompts_changed) return;
        }
        if (e.kind == Event::Kind::resources_changed) {
            // Skills are resources: a connect or a change of the list is when they are listed again.
            if (auto it = listings_->running.find(e.server); it != listings_->running.end()) {
                it->second = true;  // the running listing goes once more
                return;
            }
            listings_->running[e.server] = false;
            tasks_.spawn(record_skills(weak, catalog, listings_, e.server), "catalog: skills of " + e.server);
            return;
        }
        auto tools = p->tools(e.server);
        if (!tools) return;
        std::string error;
        if (!catalog.save(*sc, *tools, &error))
            spdlog::warn("server \"{}\": cannot record its tools in the catalog: {}", e.server, error);
    });
}

asio::awaitable<void> CatalogRecorder::finish(std::chrono::milliseconds max) {
    using namespace asio::experimental::awaitable_operators;
    if (tasks_.size() == 0) co_return;
    asio::steady_timer timer(co_await asio::this_coro::executor, max);
    co_await (tasks_.join() || timer.async_wait(core::as_tuple_awaitable));
}

CatalogRecorder::~CatalogRecorder() {
    if (auto p = pool_.lock()) p->events().unsubscribe(subscription_);
    tasks_.cancel();
}

}  // namespace switchboard::host
