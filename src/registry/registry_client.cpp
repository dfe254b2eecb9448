#include <switchboard/registry/registry_client.hpp>

#include <switchboard/core/atomic_file.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/http/address_policy.hpp>
#include <switchboard/http/client.hpp>
#include <switchboard/http/url.hpp>
#include <switchboard/mcp/skills.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

namespace switchboard::registry {

namespace json = boost::json;
namespace fs = std::filesystem;
namespace asio = boost::asio;
using asio::awaitable;

namespace {

// A 404, told apart by its type: `get` words it as the server (or version) the registry does not have.
struct NotFound : RegistryError {
    using RegistryError::RegistryError;
};

// JSON, or a RegistryError naming where it came from.
json::value parse_json(std::string_view text, std::string_view what) {
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec) throw RegistryError(fmt::format("{}: the answer is not JSON ({})", what, ec.message()));
    return v;
}

constexpr std::size_t page_limit = 100;
constexpr std::size_t max_pages = 20;
constexpr std::size_t max_document = 4u * 1024 * 1024;
constexpr std::size_t max_package = 64u * 1024 * 1024;

std::string encode(std::string_view text) {
    std::string out;
    for (unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~')
            out += static_cast<char>(c);
        else
            out += fmt::format("%{:02X}", c);
    }
    return out;
}

std::string base_of(std::string url) {
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
}

std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Listing listing_of(const json::value& item, std::string_view source) {
    if (!item.is_object()) throw RegistryError(fmt::format("{}: a listed server is not an object", source));
    const auto& o = item.get_object();
    const auto* server = o.if_contains("server");
    Listing l;
    l.document = server ? *server : item;  // older answers were the server.json itself
    l.server = parse_server_json(l.document, source);
    const json::object* meta = nullptr;
    if (const auto* m = o.if_contains("_meta"); m && m->is_object()) {
        if (const auto* off = m->get_object().if_contains("io.modelcontextprotocol.registry/official");
            off && off->is_object())
            meta = &off->get_object();
    }
    // Documents of the 2025-07 schemas kept `status` in the server.json itself.
    if (const auto* st = l.document.is_object() ? l.document.get_object().if_contains("status") : nullptr;
        st && st->is_string())
        l.status = st->get_string();
    if (meta) {
        const auto text = [&](std::string_view k) {
            const auto* v = meta->if_contains(k);
            return v && v->is_string() ? std::string(v->get_string()) : std::string();
        };
        if (auto s = text("status"); !s.empty()) l.status = s;
        l.published_at = text("publishedAt");
        l.updated_at = text("updatedAt");
        if (const auto* v = meta->if_contains("isLatest"); v && v->is_bool()) l.latest = v->get_bool();
    }
    return l;
}

// A package index's address rule: what a document names is refused where it could reach what it should not.
std::function<std::string(const asio::ip::address&)> named_filter(bool registry_is_local) {
    return [registry_is_local](const asio::ip::address& a) -> std::string {
        const auto why = http::special_purpose(a);
        if (why.empty()) return {};
        if (registry_is_local && (why == "loopback" || why == "private")) return {};
        return fmt::format("{} is a {} address (named by a registry document)", http::unmapped(a).to_string(), why);
    };
}

bool is_local_host(const std::string& host) {
    boost::system::error_code ec;
    const auto a = asio::ip::make_address(host, ec);
    if (ec) return host == "localhost";
    const auto why = http::special_purpose(a);
    return why == "loopback" || why == "private";
}

}  // namespace

std::string registry_url(std::string_view flag, std::string_view config_key) {
    if (!flag.empty()) return base_of(std::string(flag));
    if (const char* e = std::getenv("SWITCHBOARD_REGISTRY"); e && *e) return base_of(e);
    if (!config_key.empty()) return base_of(std::string(config_key));
    return std::string(official_registry);
}

fs::path default_cache_dir() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "switchboard" / "registry";
    const char* home = std::getenv("HOME");
    return fs::path(home && *home ? home : "/tmp") / ".cache" / "switchboard" / "registry";
}

std::string kinds_of(const ServerDocument& doc) {
    std::vector<std::string> kinds;
    for (const auto& p : doc.packages)
        if (std::find(kinds.begin(), kinds.end(), p.registry_type) == kinds.end()) kinds.push_back(p.registry_type);
    if (!doc.remotes.empty()) kinds.push_back("remote");
    return fmt::format("{}", fmt::join(kinds, ", "));
}

json::object summary_json(const Listing& l) {
    return {{"name", l.server.name},
            {"title", l.server.title},
            {"description", l.server.description},
            {"version", l.server.version},
            {"status", l.status},
            {"kinds", kinds_of(l.server)},
            {"remote", !l.server.remotes.empty()},
            {"local", !l.server.packages.empty()}};
}

RegistryClient::RegistryClient(asio::any_io_executor ex, RegistryOptions options) : options_(std::move(options)) {
    options_.url = base_of(options_.url);
    http::ClientOptions o;
    o.server_name = "registry " + options_.url;
    o.connect_timeout = options_.timeout;
    o.read_timeout = options_.timeout;
    o.max_body_size = max_document;
    http_ = std::make_shared<http::Client>(ex, o);
    std::string error;
    const auto url = http::parse_url(options_.url, error);
    http::ClientOptions n = o;
    n.server_name = "package index";
    n.max_body_size = max_package;
    n.address_filter = named_filter(url && is_local_host(url->host));
    named_ = std::make_shared<http::Client>(ex, n);
}

RegistryClient::~RegistryClient() {
    http_->close();
    named_->close();
}

awaitable<std::string> RegistryClient::fetch(std::string url, std::size_t limit, bool document_named) {
    auto& client = document_named ? named_ : http_;
    http::Request req;
    req.url = url;
    req.headers.emplace_back("Accept", "application/json");
    auto r = co_await client->request(std::move(req));
    const auto where = document_named ? url : options_.url;
    if (!r) {
        if (r.error().kind == http::Failure::Kind::oversize)
            throw RegistryError(fmt::format("{}: the answer is larger than {}", where, core::size_text(limit)));
        throw RegistryError(fmt::format("{}: {}", where, r.error().message));
    }
    if (r->status == 404) throw NotFound(fmt::format("{}: not found (404) at {}", where, url));
    if (r->status != 200)
        throw RegistryError(fmt::format("{}: {} from {}", where, http::status_text(r->status, r->reason), url));
    if (r->body.size() > limit)
        throw RegistryError(fmt::format("{}: the answer is larger than {}", where, core::size_text(limit)));
    co_return std::move(r->body);
}

awaitable<json::value> RegistryClient::get_json(std::string target, bool cached) {
    const auto url = options_.url + target;
    fs::path file;
    if (cached && !options_.cache_dir.empty()) {
        file = options_.cache_dir / (mcp::sha256_digest(url).substr(7, 32) + ".json");
        std::ifstream in(file, std::ios::binary);
        if (in) {
            std::ostringstream text;
            text << in.rdbuf();
            boost::system::error_code ec;
            auto entry = json::parse(text.str(), ec);
            if (!ec && entry.is_object()) {
                const auto* at = entry.get_object().if_contains("at");
                const auto* u = entry.get_object().if_contains("url");
                const auto* body = entry.get_object().if_contains("body");
                if (at && at->is_int64() && u && u->is_string() && u->get_string() == url && body &&
                    now_s() - at->get_int64() < options_.cache_ttl.count())
                    co_return *body;
            }
        }
    }
    auto body = parse_json(co_await fetch(url, max_document, false), url);
    if (!file.empty()) {
        std::error_code fec;
        fs::create_directories(file.parent_path(), fec);
        core::AtomicWriteOptions o;
        o.durable = false;
        // A cache: a failure to write it costs only a later fetch.
        (void)core::write_file_atomically(
            file, json::serialize(json::object{{"url", url}, {"at", now_s()}, {"body", body}}), o);
    }
    co_return body;
}

awaitable<SearchResult> RegistryClient::search(std::string term, std::size_t limit) {
    limit = std::clamp<std::size_t>(limit, 1, page_limit);
    SearchResult result;
    std::string cursor;
    std::set<std::string> seen;
    for (std::size_t page = 0;; ++page) {
        if (page == max_pages)
            throw RegistryError(fmt::format("{}: still paging after {} pages; stopped", options_.url, max_pages));
        auto target = fmt::format("/v0.1/servers?version=latest&limit={}", limit - result.servers.size());
        if (!term.empty()) target += "&search=" + encode(term);
        if (!cursor.empty()) target += "&cursor=" + encode(cursor);
        const auto body = co_await get_json(target, true);
        const auto* o = body.if_object();
        const auto* list = o ? o->if_contains("servers") : nullptr;
        if (!list || !list->is_array())
            throw RegistryError(fmt::format("{}: the answer to {} has no \"servers\" list", options_.url, target));
        for (const auto& item : list->get_array()) {
            if (result.servers.size() == limit) {
                result.more = true;
                break;
            }
            auto l = listing_of(item, options_.url);
            if (l.status == "deleted") continue;
            result.servers.push_back(std::move(l));
        }
        std::string next;
        if (const auto* m = o->if_contains("metadata"); m && m->is_object())
            if (const auto* c = m->get_object().if_contains("nextCursor"); c && c->is_string()) next = c->get_string();
        if (next.empty()) co_return result;
        if (result.servers.size() >= limit) {
            result.more = true;
            co_return result;
        }
        if (!seen.insert(next).second)
            throw RegistryError(fmt::format("{}: its pages loop (cursor \"{}\" came twice); stopped", options_.url,
                                            core::shorten(next, 40)));
        cursor = next;
    }
}

awaitable<Listing> RegistryClient::get(std::string name, std::string version) {
    const auto target =
        fmt::format("/v0.1/servers/{}/versions/{}", encode(name), encode(version.empty() ? "latest" : version));
    json::value body;
    try {
        body = co_await get_json(target, true);
    } catch (const NotFound&) {
        throw RegistryError(fmt::format("{} has no server \"{}\"{} (404)", options_.url, name,
                                        version.empty() ? "" : fmt::format(" at version {}", version)));
    }
    auto l = listing_of(body, options_.url);
    if (l.server.name != name)
        throw RegistryError(
            fmt::format("{}: asked for \"{}\", it answered with \"{}\"", options_.url, name, l.server.name));
    co_return l;
}

awaitable<std::vector<Listing>> RegistryClient::versions(std::string name) {
    const auto target = fmt::format("/v0.1/servers/{}/versions", encode(name));
    const auto body = co_await get_json(target, true);
    const auto* o = body.if_object();
    const auto* list = o ? o->if_contains("servers") : nullptr;
    if (!list || !list->is_array())
        throw RegistryError(fmt::format("{}: the answer to {} has no \"servers\" list", options_.url, target));
    std::vector<Listing> out;
    for (const auto& item : list->get_array()) {
        if (out.size() == page_limit) break;
        out.push_back(listing_of(item, options_.url));
    }
    co_return out;
}

awaitable<std::string> RegistryClient::check_file(Package p) {
    if (p.file_sha256.empty()) co_return std::string();
    const auto want = core::ascii_lower(p.file_sha256);
    const auto base = base_of(p.base_url.empty() ? standard_base_url(p.registry_type) : p.base_url);
    if (p.registry_type == "npm") {
        const auto meta_url = fmt::format("{}/{}/{}", base, encode(p.identifier), encode(p.version));
        const auto meta = parse_json(co_await fetch(meta_url, max_document, true), meta_url);
        const auto* dist = meta.is_object() ? meta.get_object().if_contains("dist") : nullptr;
        const auto* tarball = dist && dist->is_object() ? dist->get_object().if_contains("tarball") : nullptr;
        if (!tarball || !tarball->is_string())
            throw RegistryError(fmt::format("{}: no dist.tarball for {}@{}", meta_url, p.identifier, p.version));
        const auto bytes = co_await fetch(std::string(tarball->get_string()), max_package, true);
        const auto got = mcp::sha256_digest(bytes).substr(7);
        if (got != want)
            throw RegistryError(fmt::format("{}@{}: the package file's SHA-256 is {}, the registry says {}: refused",
                                            p.identifier, p.version, got, want));
        co_return fmt::format("the npm tarball's SHA-256 matches ({}…)", want.substr(0, 12));
    }
    if (p.registry_type == "pypi") {
        const auto url = fmt::format("{}/pypi/{}/{}/json", base, encode(p.identifier), encode(p.version));
        const auto meta = parse_json(co_await fetch(url, max_document, true), url);
        const auto* urls = meta.is_object() ? meta.get_object().if_contains("urls") : nullptr;
        if (urls && urls->is_array())
            for (const auto& f : urls->get_array()) {
                const auto* d = f.is_object() ? f.get_object().if_contains("digests") : nullptr;
                const auto* sha = d && d->is_object() ? d->get_object().if_contains("sha256") : nullptr;
                if (sha && sha->is_string() && core::ascii_lower(sha->get_string()) == want)
                    co_return fmt::format("a PyPI file's SHA-256 matches ({}…)", want.substr(0, 12));
            }
        throw RegistryError(fmt::format("{}=={}: no file on {} has the SHA-256 the registry says ({}): refused",
                                        p.identifier, p.version, base, want));
    }
    co_return fmt::format("fileSha256 not checked: {} packages are fetched by their own tool", p.registry_type);
}

}  // namespace switchboard::registry
