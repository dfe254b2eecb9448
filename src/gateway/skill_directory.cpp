#include <switchboard/gateway/skill_directory.hpp>

#include <switchboard/core/base64.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/mcp/skills.hpp>

#include <boost/json/serialize.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace switchboard::gateway {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using asio::awaitable;
using jsonrpc::Error;
namespace code = jsonrpc::code;

namespace {

constexpr std::string_view skill_md_suffix = "/SKILL.md";

// The directory of a skill's SKILL.md: its URI without "/SKILL.md" (or without its last segment).
std::string root_of(std::string_view uri) {
    if (uri.size() > skill_md_suffix.size() && uri.ends_with(skill_md_suffix))
        return std::string(uri.substr(0, uri.size() - skill_md_suffix.size()));
    auto slash = uri.rfind('/');
    return std::string(slash == std::string_view::npos ? uri : uri.substr(0, slash));
}

bool is_skill_name(std::string_view name) {
    if (name.empty() || name.size() > 64 || name.front() == '-' || name.back() == '-') return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (c == '-' && name[i + 1] == '-') return false;
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
    return true;
}

// The root with its last segment replaced by `name` (a skill's name is its directory's last segment).
std::string renamed_root(std::string_view root, std::string_view name) {
    auto slash = root.rfind('/');
    // "skill://pdf-forms": the segment is the authority, after "//".
    return std::string(root.substr(0, slash + 1)) + std::string(name);
}

std::optional<std::string> read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return std::move(ss).str();
}

struct Candidate {
    std::string server;
    mcp::Skill skill;
    std::map<std::string, fs::path> local_files;  // a local skill: its files by URI
};

// A local skill folder as an entry: every regular file below it, within the extension's limits.
std::optional<Candidate> local_candidate(const LocalSkill& local, std::string& problem) {
    Candidate c;
    c.server = "local";
    const std::string root = "skill://" + local.name;
    c.skill.uri = root + std::string(skill_md_suffix);
    c.skill.frontmatter = json::object{{"name", local.name}, {"description", local.description}};
    c.skill.files.emplace();
    json::array resources;
    std::uint64_t total = 0;
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(local.dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec) && !it->is_symlink(ec)) files.push_back(it->path());
    std::sort(files.begin(), files.end());
    if (files.size() > mcp::max_skill_files) {
        problem = fmt::format("{} files, more than the extension's limit of {}", files.size(), mcp::max_skill_files);
        return std::nullopt;
    }
    for (const auto& path : files) {
        auto bytes = read_bytes(path);
        if (!bytes) continue;
        total += bytes->size();
        if (total > mcp::max_skill_bytes) {
            problem = fmt::format("more than the extension's limit of {} bytes", mcp::max_skill_bytes);
            return std::nullopt;
        }
        std::string uri = root;
        for (const auto& part : fs::relative(path, local.dir))
            uri += "/" + boost::urls::encode(part.string(), boost::urls::unreserved_chars);
        c.local_files[uri] = path;
        mcp::SkillFile f{uri, mcp::sha256_digest(*bytes), bytes->size()};
        resources.push_back(json::object{{"uri", f.uri}, {"digest", f.digest}, {"size", f.size}});
        c.skill.files->push_back(std::move(f));
    }
    if (!c.skill.file(c.skill.uri)) {
        problem = "no SKILL.md";
        return std::nullopt;
    }
    c.skill.entry = json::object{{"uri", c.skill.uri}, {"frontmatter", c.skill.frontmatter}, {"resources", resources}};
    return c;
}

// The entry of a renamed skill: its URIs under the new root, its name, and its SKILL.md's size and digest as served.
json::object renamed_entry(const mcp::Skill& skill, const SkillRoute& route, std::string_view name) {
    json::object entry = skill.entry;
    entry["uri"] = route.exposed_uri(skill.uri);
    if (auto* fm = entry.if_contains("frontmatter"); fm && fm->is_object()) fm->get_object()["name"] = name;
    if (auto* res = entry.if_contains("resources"); res && res->is_array()) {
        for (auto& f : res->get_array()) {
            auto* fo = f.if_object();
            if (!fo) continue;
            const auto* u = fo->if_contains("uri");
            if (!u || !u->is_string()) continue;
            const std::string upstream(u->get_string());
            (*fo)["uri"] = route.exposed_uri(upstream);
            if (upstream == skill.uri && route.skill_md) {
                (*fo)["size"] = route.skill_md->size();
                (*fo)["digest"] = mcp::sha256_digest(*route.skill_md);
            }
        }
    }
    return entry;
}

Error not_found(std::string_view what, std::string_view uri) {
    return Error{code::invalid_params, fmt::format("{} not found: no skill of this gateway holds {}", what, uri),
                 json::object{{"uri", uri}}};
}

json::object text_contents(std::string uri, std::string text, std::string_view mime) {
    json::object c{{"uri", std::move(uri)}, {"mimeType", mime}, {"text", std::move(text)}};
    return json::object{{"contents", json::array{std::move(c)}}};
}

}  // namespace

std::string SkillRoute::upstream_uri(std::string_view uri) const {
    if (!uri.starts_with(exposed_root)) return std::string(uri);
    return upstream_root + std::string(uri.substr(exposed_root.size()));
}

std::string SkillRoute::exposed_uri(std::string_view uri) const {
    if (!uri.starts_with(upstream_root)) return std::string(uri);
    return exposed_root + std::string(uri.substr(upstream_root.size()));
}

const SkillRoute* SkillListing::route(std::string_view uri) const {
    const SkillRoute* best = nullptr;
    for (const auto& r : routes) {
        if (uri.size() > r.exposed_root.size() && uri.starts_with(r.exposed_root) &&
            uri[r.exposed_root.size()] == '/' && (!best || r.exposed_root.size() > best->exposed_root.size()))
            best = &r;
    }
    return best;
}

std::optional<std::string> rename_skill_md(std::string_view text, std::string_view name) {
    const std::string_view open = text.starts_with("---\r\n") ? "---\r\n" : "---\n";
    if (!text.starts_with(open)) return std::nullopt;
    std::size_t pos = open.size();
    while (pos < text.size()) {
        auto eol = text.find('\n', pos);
        if (eol == std::string_view::npos) eol = text.size();
        std::string_view line = text.substr(pos, eol - pos);
        if (line.ends_with('\r')) line.remove_suffix(1);
        if (line == "---" || line == "...") return std::nullopt;  // the frontmatter ended without a name
        if (line.starts_with("name:")) {
            std::string out(text.substr(0, pos));
            out += "name: ";
            out += name;
            out += text.substr(pos + line.size());
            return out;
        }
        pos = eol + 1;
    }
    return std::nullopt;
}

std::string prefixed_skill_name(std::string_view server, std::string_view name) {
    std::string out;
    for (char c : server) {
        const char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
        const bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
        if (ok)
            out += l;
        else if (!out.empty() && out.back() != '-')
            out += '-';
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    out += '-';
    out += name;
    return is_skill_name(out) ? out : std::string();
}

std::shared_ptr<SkillDirectory> SkillDirectory::create(std::shared_ptr<host::ServerPool> pool,
                                                       std::vector<LocalSkill> local) {
    std::shared_ptr<SkillDirectory> d(new SkillDirectory(std::move(pool), std::move(local)));
    std::weak_ptr<SkillDirectory> weak = d;
    d->subscription_ = d->pool_->events().subscribe([weak](const host::Event& e) {
        using K = host::Event::Kind;
        if (e.kind != K::phase_changed && e.kind != K::resources_changed && e.kind != K::tools_changed) return;
        if (e.kind == K::tools_changed && !e.server.empty()) return;  // one server's tools: not its skills
        if (auto self = weak.lock()) self->on_change();
    });
    return d;
}

SkillDirectory::SkillDirectory(std::shared_ptr<host::ServerPool> pool, std::vector<LocalSkill> local)
    : pool_(std::move(pool)), local_(std::move(local)), tasks_(pool_->executor()) {}

SkillDirectory::~SkillDirectory() {
    pool_->events().unsubscribe(subscription_);
    tasks_.cancel();
}

// Built again in the background, so that declared() is right for the next client's handshake.
void SkillDirectory::on_change() {
    stale_ = true;
    if (refreshing_) return;
    refreshing_ = true;
    tasks_.spawn(
        [self = shared_from_this()]() -> awaitable<void> {
            core::ScopeExit done([&] { self->refreshing_ = false; });
            co_await self->listing();
        },
        "gateway: skills listing");
}

awaitable<std::shared_ptr<const SkillListing>> SkillDirectory::listing() {
    if (kept_ && !stale_) co_return kept_;
    co_return co_await build();
}

awaitable<std::shared_ptr<const SkillListing>> SkillDirectory::fresh_listing() {
    const bool expired =
        kept_ && std::chrono::steady_clock::now() - built_at_ >= std::chrono::milliseconds(kept_->ttl_ms);
    if (kept_ && !stale_ && !expired) co_return kept_;
    co_return co_await build();
}

awaitable<std::shared_ptr<const SkillListing>> SkillDirectory::build() {
    auto self = shared_from_this();
    stale_ = false;  // a change while this runs sets it again
    auto out = std::make_shared<SkillListing>();
    std::vector<Candidate> candidates;
    bool first_hint = true;
    for (const auto& local : local_) {
        std::string problem;
        if (auto c = local_candidate(local, problem))
            candidates.push_back(std::move(*c));
        else
            spdlog::warn("serve: local skill \"{}\" ({}) is not served: {}", local.name, local.dir.string(), problem);
    }
    if (!local_.empty()) out->declared = true;
    for (const auto& st : pool_->status()) {
        if (st.phase != host::Phase::connected || st.lazy) continue;
        auto session = co_await pool_->session(st.name);
        if (!session || !(*session)->has_extension(mcp::skills_extension)) continue;
        out->declared = true;
        const auto* caps = (*session)->server_capabilities().if_contains("extensions");
        const auto* ext = caps && caps->is_object() ? caps->get_object().if_contains(mcp::skills_extension) : nullptr;
        const auto* dir = ext && ext->is_object() ? ext->get_object().if_contains("directoryRead") : nullptr;
        if (dir && dir->is_bool() && dir->get_bool()) out->directory_read = true;
        std::vector<std::string> warnings;
        mcp::SkillCacheHint hint;
        auto listed = co_await mcp::list_skills(*session, warnings, &hint);
        for (const auto& w : warnings) spdlog::warn("serve: server \"{}\": skill left out: {}", st.name, w);
        if (!listed) {
            spdlog::warn("serve: server \"{}\": skills/list failed: {}", st.name, listed.error().message);
            continue;
        }
        out->ttl_ms = first_hint ? hint.ttl_ms : std::min(out->ttl_ms, hint.ttl_ms);
        first_hint = false;
        if (hint.cache_scope == "private") out->cache_scope = "private";
        for (auto& skill : *listed) candidates.push_back(Candidate{st.name, std::move(skill), {}});
    }

    // A name or a SKILL.md URI that more than one server has is renamed for each of them.
    std::map<std::string, std::set<std::string>> servers_of;
    for (const auto& c : candidates) {
        servers_of[c.skill.name()].insert(c.server);
        servers_of[c.skill.uri].insert(c.server);
    }
    for (auto& c : candidates) {
        SkillRoute route{c.server, root_of(c.skill.uri), root_of(c.skill.uri), std::nullopt, c.local_files};
        const auto name = c.skill.name();
        if (servers_of[name].size() < 2 && servers_of[c.skill.uri].size() < 2) {
            out->entries.push_back(c.skill.entry);
            out->routes.push_back(std::move(route));
            continue;
        }
        const auto renamed = prefixed_skill_name(c.server, name);
        if (renamed.empty() || !c.skill.uri.ends_with(skill_md_suffix)) {
            spdlog::warn(
                "serve: server \"{}\": skill \"{}\" left out: its name is another server's too, and it "
                "cannot be renamed",
                c.server, name);
            continue;
        }
        route.exposed_root = renamed_root(route.upstream_root, renamed);
        // The SKILL.md as served: the new name in its frontmatter (read now, to give the entry its digest).
        std::optional<std::string> text;
        if (!c.local_files.empty()) {
            text = read_bytes(c.local_files.at(c.skill.uri));
        } else {
            auto r = co_await pool_->read_resource(c.server, c.skill.uri);
            if (r) text = mcp::resource_bytes(*r);
        }
        if (text) route.skill_md = rename_skill_md(*text, renamed);
        if (!route.skill_md) {
            spdlog::warn(
                "serve: server \"{}\": skill \"{}\" left out: its name is another server's too, and its "
                "SKILL.md could not be read or has no name line to rename",
                c.server, name);
            continue;
        }
        out->entries.push_back(renamed_entry(c.skill, route, renamed));
        out->routes.push_back(std::move(route));
    }
    kept_ = out;
    built_at_ = std::chrono::steady_clock::now();
    co_return out;
}

awaitable<SkillAnswer> SkillDirectory::answer(std::string method, json::object params) {
    auto self = shared_from_this();
    if (method == "skills/list") {
        auto kept = co_await fresh_listing();
        json::array skills;
        for (const auto& e : kept->entries) skills.push_back(e);
        json::object result{{"skills", std::move(skills)}, {"ttlMs", kept->ttl_ms}, {"cacheScope", kept->cache_scope}};
        co_return SkillAnswer{{}, std::move(result)};
    }
    const bool get = method == "skills/get";
    if (!get && method != "resources/directory/read")
        co_return SkillAnswer{{}, Error{code::method_not_found, "Method not found: " + method}};
    const auto* u = params.if_contains("uri");
    const std::string uri = u && u->is_string() ? std::string(u->get_string()) : std::string();
    auto kept = co_await listing();
    const auto* route = kept->route(uri);
    if (!route) co_return SkillAnswer{{}, not_found(get ? "Skill" : "Directory", uri)};
    // A renamed or local skill is answered from the listing: its entry is the gateway's own.
    if (get && (route->renamed() || route->local())) {
        for (const auto& e : kept->entries) {
            const auto* eu = e.if_contains("uri");
            if (eu && eu->is_string() && eu->get_string() == uri) {
                json::object result{{"skill", e}, {"ttlMs", kept->ttl_ms}, {"cacheScope", kept->cache_scope}};
                co_return SkillAnswer{{}, std::move(result)};
            }
        }
        co_return SkillAnswer{{}, not_found("Skill", uri)};
    }
    if (route->local())
        co_return SkillAnswer{{},
                              Error{code::method_not_found,
                                    "resources/directory/read is not served for the "
                                    "gateway's local skills"}};
    const auto server = route->server;
    const SkillRoute r = *route;  // the listing may be replaced while this waits
    auto session = co_await pool_->session(server);
    if (!session) co_return SkillAnswer{server, session.error()};
    params["uri"] = r.upstream_uri(uri);
    auto reply = co_await (*session)->request(method, std::move(params));
    if (!reply) co_return SkillAnswer{server, reply.error()};
    if (!reply->is_object()) co_return SkillAnswer{server, Error{code::internal_error, method + ": not an object"}};
    auto result = std::move(reply->get_object());
    // A directory's children are named as clients name them.
    if (auto* children = result.if_contains("resources"); children && children->is_array() && r.renamed())
        for (auto& c : children->get_array())
            if (auto* co = c.if_object(); co && co->contains("uri") && co->at("uri").is_string())
                (*co)["uri"] = r.exposed_uri(co->at("uri").get_string());
    co_return SkillAnswer{server, std::move(result)};
}

awaitable<std::optional<SkillAnswer>> SkillDirectory::read(std::string uri) {
    auto self = shared_from_this();
    auto kept = co_await listing();
    const auto* found = kept->route(uri);
    if (!found) co_return std::nullopt;
    const SkillRoute route = *found;
    if (route.skill_md && uri == route.exposed_root + std::string(skill_md_suffix))
        co_return SkillAnswer{{}, text_contents(uri, *route.skill_md, "text/markdown")};
    if (route.local()) {
        // Only the files its entry lists: a URI is looked up, never turned into a path.
        const auto file = route.local_files.find(route.upstream_uri(uri));
        auto bytes = file != route.local_files.end() ? read_bytes(file->second) : std::nullopt;
        if (!bytes) co_return SkillAnswer{{}, not_found("File", uri)};
        const bool md = file->second.extension() == ".md";
        // Text as text; anything else as a blob, so that its bytes (and digest) are kept.
        if (md) co_return SkillAnswer{{}, text_contents(uri, std::move(*bytes), "text/markdown")};
        json::object c{{"uri", uri}, {"mimeType", "application/octet-stream"}, {"blob", core::base64_encode(*bytes)}};
        json::object result{{"contents", json::array{std::move(c)}}};
        co_return SkillAnswer{{}, std::move(result)};
    }
    auto r = co_await pool_->read_resource(route.server, route.upstream_uri(uri));
    if (!r) co_return SkillAnswer{route.server, r.error()};
    auto result = r->to_json();
    if (route.renamed())
        if (auto* contents = result.if_contains("contents"); contents && contents->is_array())
            for (auto& c : contents->get_array())
                if (auto* co = c.if_object(); co && co->contains("uri") && co->at("uri").is_string())
                    (*co)["uri"] = route.exposed_uri(co->at("uri").get_string());
    co_return SkillAnswer{route.server, std::move(result)};
}

}  // namespace switchboard::gateway
