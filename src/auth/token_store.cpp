#include <switchboard/auth/token_store.hpp>

#include <switchboard/core/atomic_file.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "json_fields.hpp"

namespace switchboard::auth {

using detail::num;
using detail::str;

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

void put(json::object& o, std::string_view key, const std::string& value) {
    if (!value.empty()) o[key] = value;
}

ServerCredentials from_json(const json::object& o) {
    ServerCredentials c;
    c.resource = str(o, "resource");
    c.issuer = str(o, "issuer");
    c.updated_at = num(o, "updatedAt");
    if (const auto* cl = o.if_contains("client"); cl && cl->is_object()) {
        const auto& co = cl->get_object();
        c.client.issuer = str(co, "issuer");
        c.client.client_id = str(co, "clientId");
        c.client.client_secret = str(co, "clientSecret");
        c.client.client_secret_expires_at = num(co, "clientSecretExpiresAt");
        c.client.redirect_uri = str(co, "redirectUri");
        c.client.auth_method = str(co, "authMethod");
        const auto* d = co.if_contains("dynamic");
        c.client.dynamic = d && d->is_bool() && d->get_bool();
    }
    if (const auto* t = o.if_contains("tokens"); t && t->is_object()) {
        const auto& to = t->get_object();
        c.tokens.access_token = str(to, "accessToken");
        c.tokens.token_type = str(to, "tokenType");
        if (c.tokens.token_type.empty()) c.tokens.token_type = "Bearer";
        c.tokens.refresh_token = str(to, "refreshToken");
        c.tokens.scope = str(to, "scope");
        c.tokens.expires_at = num(to, "expiresAt");
        c.tokens.dpop_key = str(to, "dpopKey");
    }
    return c;
}

json::object to_json(const ServerCredentials& c) {
    json::object o;
    put(o, "resource", c.resource);
    put(o, "issuer", c.issuer);
    o["updatedAt"] = c.updated_at;
    json::object cl;
    put(cl, "issuer", c.client.issuer);
    put(cl, "clientId", c.client.client_id);
    put(cl, "clientSecret", c.client.client_secret);
    if (c.client.client_secret_expires_at) cl["clientSecretExpiresAt"] = c.client.client_secret_expires_at;
    put(cl, "redirectUri", c.client.redirect_uri);
    put(cl, "authMethod", c.client.auth_method);
    if (c.client.dynamic) cl["dynamic"] = true;
    if (!cl.empty()) o["client"] = std::move(cl);
    json::object t;
    put(t, "accessToken", c.tokens.access_token);
    put(t, "tokenType", c.tokens.token_type);
    put(t, "refreshToken", c.tokens.refresh_token);
    put(t, "scope", c.tokens.scope);
    if (c.tokens.expires_at) t["expiresAt"] = c.tokens.expires_at;
    put(t, "dpopKey", c.tokens.dpop_key);
    if (!t.empty()) o["tokens"] = std::move(t);
    return o;
}

}  // namespace

TokenStore::TokenStore(fs::path file) : file_(std::move(file)) {}

fs::path TokenStore::default_path() {
    if (const char* f = std::getenv("SWITCHBOARD_TOKEN_FILE"); f && *f) return fs::path(f);
    fs::path base;
    if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x)
        base = x;
    else if (const char* h = std::getenv("HOME"); h && *h)
        base = fs::path(h) / ".local" / "state";
    else
        base = fs::temp_directory_path();
    return base / "switchboard" / "oauth-tokens.json";
}

std::map<std::string, ServerCredentials> TokenStore::load_all(std::string* error) const {
    std::map<std::string, ServerCredentials> out;
    std::ifstream in(file_, std::ios::binary);
    if (!in) {
        if (errno != ENOENT && error) *error = fmt::format("cannot read {}: {}", file_.string(), std::strerror(errno));
        return out;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    auto doc = json::parse(ss.str(), ec);
    if (ec || !doc.is_object()) {
        if (error) *error = fmt::format("{} is not a token file (not a JSON object)", file_.string());
        return out;
    }
    const auto* servers = doc.get_object().if_contains("servers");
    if (!servers || !servers->is_object()) return out;
    for (const auto& [name, entry] : servers->get_object())
        if (entry.is_object()) out.emplace(std::string(name), from_json(entry.get_object()));
    return out;
}

std::optional<ServerCredentials> TokenStore::load(const std::string& server, std::string* error) const {
    auto all = load_all(error);
    auto it = all.find(server);
    if (it == all.end()) return std::nullopt;
    return std::move(it->second);
}

std::string TokenStore::write_all(const std::map<std::string, ServerCredentials>& entries) {
    std::error_code ec;
    const auto dir = file_.parent_path();
    if (!dir.empty() && !fs::exists(dir, ec)) {
        fs::create_directories(dir, ec);
        if (ec) return fmt::format("cannot create {}: {}", dir.string(), ec.message());
        ::chmod(dir.c_str(), 0700);  // a new directory of secrets: ours alone
    }
    json::object servers;
    for (const auto& [name, c] : entries) servers[name] = to_json(c);
    json::object doc;
    doc["version"] = 1;
    doc["servers"] = std::move(servers);
    core::AtomicWriteOptions options;
    options.mode = 0600;
    return core::write_file_atomically(file_, json::serialize(doc) + "\n", options);
}

std::string TokenStore::save(const std::string& server, const ServerCredentials& credentials) {
    std::string error;
    auto all = load_all(&error);
    if (!error.empty()) return error;  // never overwrite a file we could not read
    auto c = credentials;
    c.updated_at =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    all[server] = std::move(c);
    return write_all(all);
}

std::string TokenStore::remove(const std::string& server) {
    std::string error;
    auto all = load_all(&error);
    if (!error.empty()) return error;
    if (all.erase(server) == 0) return {};
    return write_all(all);
}

std::string TokenStore::stamp() const {
    struct ::stat st {};
    if (::stat(file_.c_str(), &st) != 0) return "none";
    return fmt::format("{}.{}:{}", st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size);
}

}  // namespace switchboard::auth
