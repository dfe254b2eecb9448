// One server entry (an object under a name in `mcpServers`): its keys checked, its strings expanded, its transport
// settled (parse_server_entry, which parse_config calls for each entry).
#include "config_parse.hpp"

#include <switchboard/core/json_number.hpp>
#include <switchboard/http/address_policy.hpp>
#include <switchboard/transport/http_client.hpp>

#include <fmt/format.h>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>

namespace switchboard::host {

namespace json = boost::json;
using detail::contains;
using detail::expand_into;
using detail::Expansion;
using detail::max_expansion_depth;
using detail::suggestion;

namespace {

constexpr std::string_view server_keys[] = {"type",
                                            "command",
                                            "args",
                                            "env",
                                            "cwd",
                                            "url",
                                            "headers",
                                            "caFile",
                                            "oauth",
                                            "enabled",
                                            "disabled",
                                            "lazy",
                                            "keepWarmSeconds",
                                            "startupTimeoutMs",
                                            "toolTimeoutMs",
                                            "maxReconnectAttempts",
                                            "allowedTools",
                                            "excludedTools",
                                            "sandboxEnabled",
                                            "sandbox"};

// Keys other clients write into the same entries; accepted so that a shared file does not produce noise.
constexpr std::string_view foreign_server_keys[] = {"envFile", "description", "autoApprove", "alwaysAllow", "timeout",
                                                    "trust",   "note",        "name",        "transport"};

// ---- small helpers -----------------------------------------------------------------------------------------------

std::string ascii_lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::optional<TransportKind> transport_from_name(std::string_view name) {
    const auto lower = ascii_lower(name);
    if (lower == "stdio") return TransportKind::stdio;
    if (lower == "http" || lower == "streamable-http" || lower == "streamablehttp") return TransportKind::http;
    if (lower == "sse") return TransportKind::sse;
    if (lower == "ws" || lower == "websocket") return TransportKind::ws;
    return std::nullopt;
}

// Why `url` cannot be dialled ("" when it can): not a URL, no host, or a port outside 1-65535 (which would
// otherwise wrap around to another port).
std::string url_problem(std::string_view url) {
    auto parsed = boost::urls::parse_uri(url);
    if (!parsed) return "is not a valid URL: " + parsed.error().message();
    if (parsed->encoded_host().empty()) return "has no host";
    if (parsed->has_port()) {
        const auto port = parsed->port();
        const bool digits = !port.empty() && port.size() <= 5 &&
                            std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
        const long number = digits ? std::stol(std::string(port)) : 0;
        if (number < 1 || number > 65535) return fmt::format("has port {}, outside 1-65535", port);
    }
    return {};
}

bool has_remote_scheme(std::string_view url) {
    const auto lower = ascii_lower(url.substr(0, 8));
    return lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("ws://") ||
           lower.starts_with("wss://");
}

// transport's rule is the only one (a trailing slash or upper case does not change the kind).
TransportKind infer_remote_type(std::string_view url) {
    switch (transport::infer_remote_kind(url)) {
    case transport::RemoteKind::websocket: return TransportKind::ws;
    case transport::RemoteKind::sse: return TransportKind::sse;
    case transport::RemoteKind::streamable_http: break;
    }
    return TransportKind::http;
}

// 5000.0 is what some editors write for an integer; accept it, reject 1.5.
std::optional<std::int64_t> as_integer(const json::value& value) { return core::json_exact_integer(value); }

// Text for a scalar written where a string was expected (`"PORT": 8080`); nullopt for objects, arrays, null.
std::optional<std::string> scalar_text(const json::value& value) {
    if (value.is_bool()) return value.get_bool() ? "true" : "false";
    if (value.is_int64()) return std::to_string(value.get_int64());
    if (value.is_uint64()) return std::to_string(value.get_uint64());
    if (value.is_double()) return fmt::format("{}", value.get_double());
    return std::nullopt;
}

// ---- one server entry --------------------------------------------------------------------------------------------

class EntryParser {
public:
    EntryParser(std::string_view source, const EnvLookup& env, std::vector<std::string>& warnings, ServerConfig& server)
        : source_(source), env_(env), warnings_(warnings), server_(server) {}

    void parse(const json::object& entry) {
        for (const auto& item : entry) parse_key(item.key(), item.value());
        finish();
    }

private:
    void parse_key(std::string_view key, const json::value& value);
    void parse_type(const json::value& value);
    void parse_oauth(const json::value& value);
    void parse_sandbox(const json::value& value);
    void finish();

    // The first problem is the one reported: later ones are often consequences of it.
    void fail(std::string message) {
        if (server_.invalid.empty()) server_.invalid = std::move(message);
    }

    void warn(std::string_view message) {
        warnings_.push_back(fmt::format("{}: server \"{}\": {}", source_, server_.name, message));
    }

    std::string expand(std::string_view text, std::string_view key) {
        Expansion ex;
        std::string out;
        expand_into(text, env_, ex, out);
        if (ex.too_deep)
            fail(fmt::format("\"{}\": ${{VAR:-default}} nested more than {} deep", key, max_expansion_depth));
        if (!ex.inputs.empty()) fail(fmt::format("VS Code input variables are not supported: {}", ex.inputs.front()));
        if (!ex.missing.empty())
            fail(fmt::format("environment variable ${{{}}} is not set (used in \"{}\")", ex.missing.front(), key));
        return out;
    }

    std::optional<std::string> get_string(std::string_view key, const json::value& value) {
        if (value.is_string()) return std::string(value.get_string());
        fail(fmt::format("\"{}\" must be a string", key));
        return std::nullopt;
    }

    std::optional<bool> get_bool(std::string_view key, const json::value& value) {
        if (value.is_bool()) return value.get_bool();
        fail(fmt::format("\"{}\" must be true or false", key));
        return std::nullopt;
    }

    std::optional<std::vector<std::string>> get_strings(std::string_view key, const json::value& value,
                                                        bool expand_items);
    std::optional<std::map<std::string, std::string>> get_string_map(std::string_view key, const json::value& value,
                                                                     bool convert_scalars);
    void get_millis(std::string_view key, const json::value& value, std::chrono::milliseconds& out);

    std::string_view source_;
    const EnvLookup& env_;
    std::vector<std::string>& warnings_;
    ServerConfig& server_;
    std::optional<TransportKind> explicit_type_;
    bool has_command_ = false;
    bool has_url_ = false;
    bool disabled_ = false;
};

std::optional<std::vector<std::string>> EntryParser::get_strings(std::string_view key, const json::value& value,
                                                                 bool expand_items) {
    const auto* array = value.if_array();
    const bool all_strings =
        array && std::all_of(array->begin(), array->end(), [](const json::value& v) { return v.is_string(); });
    if (!all_strings) {
        fail(fmt::format("\"{}\" must be an array of strings", key));
        return std::nullopt;
    }
    std::vector<std::string> out;
    for (const auto& item : *array)
        out.push_back(expand_items ? expand(item.get_string(), key) : std::string(item.get_string()));
    return out;
}

std::optional<std::map<std::string, std::string>> EntryParser::get_string_map(std::string_view key,
                                                                              const json::value& value,
                                                                              bool convert_scalars) {
    const auto* object = value.if_object();
    if (!object) {
        fail(fmt::format("\"{}\" must be an object of strings", key));
        return std::nullopt;
    }
    std::map<std::string, std::string> out;
    for (const auto& item : *object) {
        std::string name(item.key());
        if (item.value().is_string()) {
            out[name] = expand(item.value().get_string(), key);
            continue;
        }
        const auto text = convert_scalars ? scalar_text(item.value()) : std::nullopt;
        if (!text) {
            fail(fmt::format("\"{}\" must be an object of strings (\"{}\" is not a string)", key, name));
            return std::nullopt;
        }
        // Hand-written env blocks often have `"PORT": 8080`; the child only sees text anyway.
        warn(fmt::format("{} \"{}\" is not a string; using \"{}\"", key, name, *text));
        out[name] = *text;
    }
    return out;
}

void EntryParser::get_millis(std::string_view key, const json::value& value, std::chrono::milliseconds& out) {
    // At most 30 days: a deadline is now + this, which must not overflow the clock.
    constexpr std::int64_t max_ms = 30LL * 24 * 3600 * 1000;
    const auto number = as_integer(value);
    if (!number || *number <= 0 || *number > max_ms) {
        fail(fmt::format("\"{}\" must be a positive integer (milliseconds) up to {} (30 days)", key, max_ms));
        return;
    }
    out = std::chrono::milliseconds(*number);
}

void EntryParser::parse_type(const json::value& value) {
    const auto name = get_string("type", value);
    if (!name) return;
    explicit_type_ = transport_from_name(*name);
    if (explicit_type_) {
        server_.type = *explicit_type_;
    } else {
        fail(fmt::format("unknown \"type\" \"{}\" (expected stdio, http, sse or ws)", *name));
    }
}

// VS Code's block: {"filesystem": {"allowWrite", "denyRead", "allowRead"}, "network": {"allowedDomains",
// "deniedDomains"}}. Unknown keys warn, as everywhere; a wrong type fails the entry (a policy half-read is not one).
void EntryParser::parse_sandbox(const json::value& value) {
    const auto* o = value.if_object();
    if (!o) {
        fail("\"sandbox\" must be an object");
        return;
    }
    auto& sb = server_.sandbox;
    const auto section = [&](std::string_view name,
                             std::initializer_list<std::pair<std::string_view, std::vector<std::string>*>> keys) {
        const auto* v = o->if_contains(name);
        if (!v) return;
        const auto* part = v->if_object();
        if (!part) {
            fail(fmt::format("\"sandbox.{}\" must be an object", name));
            return;
        }
        for (const auto& [k, item] : *part) {
            bool known = false;
            for (const auto& [key, out] : keys)
                if (k == key) {
                    known = true;
                    if (auto list = get_strings(fmt::format("sandbox.{}.{}", name, key), item, true))
                        *out = std::move(*list);
                }
            if (!known) warn(fmt::format("unknown key \"sandbox.{}.{}\"", name, std::string_view(k)));
        }
    };
    section("filesystem",
            {{"allowWrite", &sb.allow_write}, {"denyRead", &sb.deny_read}, {"allowRead", &sb.allow_read}});
    section("network", {{"allowedDomains", &sb.allowed_domains},
                        {"deniedDomains", &sb.denied_domains},
                        {"allowedAddresses", &sb.allowed_addresses}});
    for (const auto& cidr : sb.allowed_addresses) {
        std::string error;
        if (!http::parse_cidr(cidr, error))
            fail(fmt::format("\"sandbox.network.allowedAddresses\": \"{}\": {}", cidr, error));
    }
    for (const auto& [k, item] : *o)
        if (k != "filesystem" && k != "network") warn(fmt::format("unknown key \"sandbox.{}\"", std::string_view(k)));
}

void EntryParser::parse_oauth(const json::value& value) {
    if (value.is_bool()) {
        server_.oauth_enabled = value.get_bool();
        return;
    }
    const auto* o = value.if_object();
    if (!o) {
        fail("\"oauth\" must be an object or false");
        return;
    }
    static constexpr std::string_view keys[] = {
        "clientId",          "clientSecret", "scopes",           "redirectPort", "grant",
        "authMethod",        "privateKey",   "privateKeyFile",   "assertion",    "assertionFile",
        "clientMetadataUrl", "clientName",   "idpTokenEndpoint", "idpClientId",  "idToken",
        "idTokenFile",       "dpop",         "callbackPort"};
    auto& a = server_.oauth;
    auto text = [&](std::string_view k, std::string& out) {
        if (auto s = get_string(fmt::format("oauth.{}", k), o->at(k))) out = expand(*s, "oauth");
    };
    auto file = [&](std::string_view k, std::string& out) {
        std::string path;
        text(k, path);
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            fail(fmt::format("\"oauth.{}\": cannot read {}", k, path));
            return;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        out = ss.str();
        while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    };
    for (const auto& [k, v] : *o) {
        if (k == "clientId") text(k, a.client_id);
        else if (k == "clientSecret") text(k, a.client_secret);
        else if (k == "authMethod") text(k, a.auth_method);
        else if (k == "clientMetadataUrl") text(k, a.client_metadata_url);
        else if (k == "clientName") text(k, a.client_name);
        else if (k == "privateKey") text(k, a.private_key_pem);
        else if (k == "privateKeyFile") file(k, a.private_key_pem);
        else if (k == "assertion") text(k, a.assertion);
        else if (k == "assertionFile") file(k, a.assertion);
        else if (k == "idpTokenEndpoint") text(k, a.idp_token_endpoint);
        else if (k == "idpClientId") text(k, a.idp_client_id);
        else if (k == "idToken") text(k, a.id_token);
        else if (k == "idTokenFile") file(k, a.id_token);
        else if (k == "scopes") {
            if (v.is_string()) {
                std::istringstream words(expand(v.get_string(), "oauth"));
                a.scopes.clear();
                for (std::string w; words >> w;) a.scopes.push_back(w);
            } else if (auto list = get_strings("oauth.scopes", v, true)) {
                a.scopes = std::move(*list);
            }
        } else if (k == "redirectPort" || k == "callbackPort") {  // callbackPort: Claude Code's name for it
            const auto n = as_integer(v);
            if (n && *n >= 1 && *n <= 65535)
                a.redirect_port = static_cast<int>(*n);
            else
                fail(fmt::format("\"oauth.{}\" must be a port number from 1 to 65535", std::string_view(k)));
        } else if (k == "dpop") {
            if (v.is_bool()) {
                a.dpop = v.get_bool() ? auth::OAuthSettings::Dpop::always : auth::OAuthSettings::Dpop::never;
            } else if (v.is_string() && v.get_string() == "auto") {
                a.dpop = auth::OAuthSettings::Dpop::automatic;
            } else {
                fail("\"oauth.dpop\" must be true, false or \"auto\"");
            }
        } else if (k == "grant") {
            std::string g;
            text(k, g);
            if (auto grant = auth::parse_grant(g))
                a.grant = *grant;
            else
                fail(fmt::format("\"oauth.grant\" \"{}\" is not authorization_code, client_credentials, jwt_bearer or enterprise", g));
        } else {
            warn(fmt::format("unknown key \"oauth.{}\"{}", std::string_view(k), suggestion(k, keys)));
        }
    }
    if (a.grant == auth::OAuthSettings::Grant::client_credentials && a.client_id.empty())
        fail("\"oauth.grant\" client_credentials needs \"oauth.clientId\"");
    if (a.grant == auth::OAuthSettings::Grant::jwt_bearer && a.assertion.empty())
        fail("\"oauth.grant\" jwt_bearer needs \"oauth.assertion\" or \"oauth.assertionFile\"");
    if (a.grant == auth::OAuthSettings::Grant::enterprise &&
        (a.client_id.empty() || a.idp_token_endpoint.empty() || a.id_token.empty()))
        fail("\"oauth.grant\" enterprise needs \"oauth.clientId\", \"oauth.idpTokenEndpoint\" and \"oauth.idToken\" (or "
             "\"oauth.idTokenFile\")");
    if (!a.client_secret.empty() && a.client_id.empty()) fail("\"oauth.clientSecret\" needs \"oauth.clientId\"");
}

void EntryParser::parse_key(std::string_view key, const json::value& value) {
    if (key == "type") {
        parse_type(value);
    } else if (key == "command") {
        has_command_ = true;
        if (auto s = get_string(key, value)) server_.command = expand(*s, key);
    } else if (key == "args") {
        if (auto list = get_strings(key, value, true)) server_.args = std::move(*list);
    } else if (key == "env") {
        if (auto map = get_string_map(key, value, true)) server_.env = std::move(*map);
    } else if (key == "cwd") {
        if (auto s = get_string(key, value)) server_.cwd = std::move(*s);
    } else if (key == "url") {
        has_url_ = true;
        if (auto s = get_string(key, value)) server_.url = expand(*s, key);
    } else if (key == "headers") {
        if (auto map = get_string_map(key, value, false)) server_.headers = std::move(*map);
    } else if (key == "caFile") {
        if (auto s = get_string(key, value)) server_.ca_file = expand(*s, key);
    } else if (key == "oauth") {
        parse_oauth(value);
    } else if (key == "enabled") {
        if (auto b = get_bool(key, value)) server_.enabled = *b;
    } else if (key == "disabled") {
        if (auto b = get_bool(key, value)) disabled_ = *b;
    } else if (key == "lazy") {
        if (auto b = get_bool(key, value)) server_.lazy = *b;
    } else if (key == "keepWarmSeconds") {
        // How long a lazy server outlives its last lease; fractions allowed (tests use them).
        if (value.is_number() && value.to_number<double>() >= 0 && value.to_number<double>() <= 86400.0) {
            server_.keep_warm = std::chrono::milliseconds(static_cast<std::int64_t>(value.to_number<double>() * 1000));
        } else {
            fail("\"keepWarmSeconds\" must be a number of seconds from 0 to 86400");
        }
    } else if (key == "startupTimeoutMs") {
        get_millis(key, value, server_.startup_timeout);
    } else if (key == "toolTimeoutMs") {
        get_millis(key, value, server_.tool_timeout);
    } else if (key == "maxReconnectAttempts") {
        const auto number = as_integer(value);
        if (number && *number >= 0 && *number <= std::numeric_limits<int>::max()) {
            server_.max_reconnect_attempts = static_cast<int>(*number);
        } else {
            fail("\"maxReconnectAttempts\" must be an integer >= 0");
        }
    } else if (key == "allowedTools") {
        if (auto list = get_strings(key, value, false)) server_.allowed_tools = std::move(*list);
    } else if (key == "sandboxEnabled") {
        if (value.is_bool())
            server_.sandbox.enabled = value.get_bool();
        else
            fail("\"sandboxEnabled\" must be true or false");
    } else if (key == "sandbox") {
        parse_sandbox(value);
    } else if (key == "excludedTools") {
        if (auto list = get_strings(key, value, false)) server_.excluded_tools = std::move(*list);
    } else if (!contains(foreign_server_keys, key)) {
        warn(fmt::format("unknown key \"{}\"{}", key, suggestion(key, server_keys)));
    }
}

void EntryParser::finish() {
    if (disabled_) server_.enabled = false;
    if (!explicit_type_) {
        if (has_command_) {
            server_.type = TransportKind::stdio;
        } else if (has_url_) {
            server_.type = infer_remote_type(server_.url);
        } else {
            fail("needs \"command\" (stdio) or \"url\" (http, sse, ws)");
            return;
        }
    }
    if (server_.type == TransportKind::stdio) {
        if (server_.command.empty()) fail("type \"stdio\" needs \"command\"");
    } else if (server_.url.empty()) {
        fail(fmt::format("type \"{}\" needs \"url\"", to_string(server_.type)));
    } else if (!has_remote_scheme(server_.url)) {
        fail(fmt::format("\"url\" must start with http://, https://, ws:// or wss:// (got \"{}\")", server_.url));
    } else if (auto problem = url_problem(server_.url); !problem.empty()) {
        fail(fmt::format("\"url\" {} (got \"{}\")", problem, server_.url));
    }
}

}  // namespace

std::size_t detail::edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

std::string_view to_string(TransportKind kind) {
    switch (kind) {
    case TransportKind::stdio: return "stdio";
    case TransportKind::http: return "http";
    case TransportKind::sse: return "sse";
    case TransportKind::ws: return "ws";
    }
    return "unknown";
}

ServerConfig parse_server_entry(std::string name, const json::object& entry, std::string_view source,
                                const EnvLookup& env, std::vector<std::string>& warnings) {
    ServerConfig server;
    server.name = std::move(name);
    EntryParser(source, env, warnings, server).parse(entry);
    return server;
}

}  // namespace switchboard::host
