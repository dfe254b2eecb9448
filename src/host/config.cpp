#include <switchboard/core/json_number.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/host/config.hpp>
#include <switchboard/transport/http_client.hpp>

#include <fmt/format.h>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <fstream>
#include <memory>
#include <sstream>

namespace switchboard::host {

namespace json = boost::json;

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
                                            "excludedTools"};

// Keys other clients write into the same entries; accepted so that a shared file does not produce noise.
constexpr std::string_view foreign_server_keys[] = {"envFile", "description", "autoApprove", "alwaysAllow", "timeout",
                                                    "trust",   "note",        "name",        "transport"};

constexpr std::string_view top_level_keys[] = {"mcpServers", "servers", "inputs",    "$schema",
                                               "llm",        "toolSearch", "gateway"};

template <std::size_t N>
bool contains(const std::string_view (&keys)[N], std::string_view key) {
    return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

void add_once(std::vector<std::string>& list, std::string item) {
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(std::move(item));
}

// ---- variable expansion ----------------------------------------------------------------------------------------

// Defaults nest (`${A:-${B:-x}}`); deeper than this is no real config, and each level rescans the text.
constexpr int max_expansion_depth = 16;

struct Expansion {
    std::vector<std::string> missing;  ///< unset names without default
    std::vector<std::string> inputs;   ///< VS Code `${input:x}` references, left as written
    int depth = 0;
    bool too_deep = false;  ///< a default nested deeper than max_expansion_depth (expanded as "")
};

bool is_var_name(std::string_view name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    });
}

// Index of the `}` closing a `${` whose body starts at `body_start`; nested `${...}` (in defaults) are skipped.
std::size_t find_close(std::string_view text, std::size_t body_start) {
    int depth = 1;
    for (std::size_t i = body_start; i < text.size(); ++i) {
        if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
            ++depth;
            ++i;
        } else if (text[i] == '}' && --depth == 0) {
            return i;
        }
    }
    return std::string_view::npos;
}

void expand_into(std::string_view text, const EnvLookup& env, Expansion& ex, std::string& out);

// Expands the body of one `${...}`; false when it is not a reference we understand (then it stays literal).
bool expand_reference(std::string_view body, const EnvLookup& env, Expansion& ex, std::string& out) {
    if (body.starts_with("input:")) {
        add_once(ex.inputs, fmt::format("${{{}}}", body));
        return false;
    }
    if (body.starts_with("env:")) body.remove_prefix(4);  // VS Code spelling of the same thing
    const auto sep = body.find(":-");
    const auto name = body.substr(0, sep);
    if (!is_var_name(name)) return false;
    const auto value = env(name);
    if (value && !value->empty()) {
        out += *value;
    } else if (sep != std::string_view::npos) {
        if (ex.depth >= max_expansion_depth) {
            ex.too_deep = true;
            return true;
        }
        ++ex.depth;
        expand_into(body.substr(sep + 2), env, ex, out);
        --ex.depth;
    } else if (!value) {
        add_once(ex.missing, std::string(name));
    }
    return true;
}

void expand_into(std::string_view text, const EnvLookup& env, Expansion& ex, std::string& out) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto open = text.find("${", pos);
        if (open == std::string_view::npos) break;
        out.append(text.substr(pos, open - pos));
        const auto close = find_close(text, open + 2);
        if (close == std::string_view::npos) {
            pos = open;  // unterminated: the rest is literal
            break;
        }
        if (!expand_reference(text.substr(open + 2, close - open - 2), env, ex, out))
            out.append(text.substr(open, close - open + 1));
        pos = close + 1;
    }
    if (pos < text.size()) out.append(text.substr(pos));
}

// ---- small helpers -----------------------------------------------------------------------------------------------

// Optimal string alignment distance: a swapped pair of letters ("comamnd") counts as one typo.
std::size_t edit_distance(std::string_view a, std::string_view b) {
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

// " (did you mean "x"?)" or "". A distance as long as the key itself is no resemblance ("id" vs "cwd").
template <std::size_t N>
std::string suggestion(std::string_view key, const std::string_view (&candidates)[N]) {
    std::string_view best;
    std::size_t best_distance = 3;
    for (const auto candidate : candidates) {
        const auto distance = edit_distance(key, candidate);
        if (distance < best_distance && distance < key.size()) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best.empty() ? std::string() : fmt::format(" (did you mean \"{}\"?)", best);
}

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
    static constexpr std::string_view keys[] = {"clientId",   "clientSecret",   "scopes",    "redirectPort",
                                                "grant",      "authMethod",     "privateKey", "privateKeyFile",
                                                "assertion",  "assertionFile",  "clientMetadataUrl", "clientName",
                                                "idpTokenEndpoint", "idpClientId", "idToken", "idTokenFile", "dpop"};
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
        } else if (k == "redirectPort") {
            const auto n = as_integer(v);
            if (n && *n >= 1 && *n <= 65535)
                a.redirect_port = static_cast<int>(*n);
            else
                fail("\"oauth.redirectPort\" must be a port number from 1 to 65535");
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

// ---- document ----------------------------------------------------------------------------------------------------

// 1-based line and column (in characters, not bytes) of `offset`, for "file:line:column" messages.
std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < offset; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            ++line;
            column = 1;
        } else if ((c & 0xC0) != 0x80) {  // skip UTF-8 continuation bytes
            ++column;
        }
    }
    return {line, column};
}

json::value parse_json(std::string_view text, std::string_view source) {
    json::parse_options options;
    options.allow_comments = true;  // VS Code's settings/mcp.json are JSONC
    options.allow_trailing_commas = true;
    json::stream_parser parser({}, options);
    boost::system::error_code ec;
    // write() reports how much it consumed before the error, which is where the error is.
    const auto consumed = parser.write(text.data(), text.size(), ec);
    if (!ec) parser.finish(ec);
    if (ec) {
        const auto [line, column] = line_column(text, consumed);
        throw ConfigError(fmt::format("{}:{}:{}: {}", source, line, column, ec.message()));
    }
    return parser.release();
}

const json::object& server_map(const json::value& value, std::string_view key, std::string_view source) {
    if (const auto* object = value.if_object()) return *object;
    throw ConfigError(fmt::format("{}: \"{}\" must be an object", source, key));
}

void add_servers(const json::object& map, std::string_view map_key, const EnvLookup& env, Config& config) {
    for (const auto& item : map) {
        std::string name(item.key());
        if (config.find(name)) {
            config.warnings.push_back(fmt::format("{}: server \"{}\" is defined more than once; \"{}\" ignored",
                                                  config.source, name, map_key));
            continue;
        }
        ServerConfig server;
        server.name = std::move(name);
        if (const auto* entry = item.value().if_object()) {
            EntryParser(config.source, env, config.warnings, server).parse(*entry);
        } else {
            server.invalid = "entry must be an object";
        }
        config.servers.push_back(std::move(server));
    }
}

}  // namespace

json::value parse_jsonc(std::string_view text, std::string_view source) { return parse_json(text, source); }

std::string_view to_string(TransportKind kind) {
    switch (kind) {
    case TransportKind::stdio: return "stdio";
    case TransportKind::http: return "http";
    case TransportKind::sse: return "sse";
    case TransportKind::ws: return "ws";
    }
    return "unknown";
}

const ServerConfig* Config::find(std::string_view name) const {
    const auto it = std::find_if(servers.begin(), servers.end(), [&](const ServerConfig& s) { return s.name == name; });
    return it == servers.end() ? nullptr : &*it;
}

EnvLookup process_env() {
    return [](std::string_view name) -> std::optional<std::string> {
        const std::string key(name);  // getenv needs a NUL-terminated name
        const char* value = std::getenv(key.c_str());
        if (!value) return std::nullopt;
        return std::string(value);
    };
}

std::string expand_vars(std::string_view text, const EnvLookup& env, std::vector<std::string>* missing) {
    Expansion ex;
    std::string out;
    expand_into(text, env, ex, out);
    if (missing)
        for (auto& name : ex.missing) add_once(*missing, std::move(name));
    return out;
}

namespace {

/// `${VAR}` expanded in every string of `obj` (nested objects and arrays too); an unset variable is a warning.
json::value expand_strings_in(const json::value& v, const EnvLookup& env, std::string_view where,
                              std::vector<std::string>& warnings) {
    if (const auto* s = v.if_string()) {
        Expansion ex;
        std::string out;
        expand_into(*s, env, ex, out);
        for (const auto& name : ex.missing)
            warnings.push_back(fmt::format("{}: environment variable ${{{}}} is not set", where, name));
        return json::value(out);
    }
    if (const auto* o = v.if_object()) {
        json::object r;
        for (const auto& kv : *o)
            r[kv.key()] = expand_strings_in(kv.value(), env, fmt::format("{}.{}", where, std::string(kv.key())),
                                            warnings);
        return r;
    }
    if (const auto* a = v.if_array()) {
        json::array r;
        for (const auto& x : *a) r.push_back(expand_strings_in(x, env, where, warnings));
        return r;
    }
    return v;
}

json::object expand_strings(const json::object& obj, const EnvLookup& env, std::string_view source,
                            std::vector<std::string>& warnings) {
    return expand_strings_in(obj, env, fmt::format("{}: llm", source), warnings).as_object();
}

}  // namespace

ServerConfig parse_server_entry(std::string name, const json::object& entry, std::string_view source,
                                const EnvLookup& env, std::vector<std::string>& warnings) {
    ServerConfig server;
    server.name = std::move(name);
    EntryParser(source, env, warnings, server).parse(entry);
    return server;
}

Config parse_config(std::string_view text, std::string_view source_name, const EnvLookup& env) {
    if (text.size() > max_config_size)
        throw ConfigError(fmt::format("{}: the document is larger than {} (the limit for a config file)", source_name,
                                      core::size_text(max_config_size)));
    Config config;
    config.source = std::string(source_name);
    const auto root = parse_json(text, source_name);
    const auto* object = root.if_object();
    if (!object) throw ConfigError(fmt::format("{}: the document must be a JSON object", source_name));
    if (!object->contains("mcpServers") && !object->contains("servers"))
        throw ConfigError(fmt::format("{}: no \"mcpServers\" (or VS Code \"servers\") object", source_name));
    // Walk the document in order so that, with both maps present, the one written first wins a duplicate name.
    for (const auto& item : *object) {
        const std::string_view key = item.key();
        if (key == "mcpServers" || key == "servers") {
            add_servers(server_map(item.value(), key, source_name), key, env, config);
        } else if (key == "gateway") {
            if (const auto* gw = item.value().if_object()) {
                config.gateway = *gw;
            } else {
                config.warnings.push_back(fmt::format("{}: \"gateway\" must be an object; ignored", source_name));
            }
        } else if (key == "llm") {
            if (const auto* llm = item.value().if_object()) {
                config.llm = expand_strings(*llm, env, source_name, config.warnings);
            } else {
                config.warnings.push_back(fmt::format("{}: \"llm\" must be an object; ignored", source_name));
            }
        } else if (key == "toolSearch") {
            if (const auto* b = item.value().if_bool()) {
                config.tool_search = *b;
            } else {
                config.warnings.push_back(
                    fmt::format("{}: \"toolSearch\" must be true or false; ignored", source_name));
            }
        } else if (!contains(top_level_keys, key)) {
            config.warnings.push_back(
                fmt::format("{}: unknown top-level key \"{}\"{}", source_name, key, suggestion(key, top_level_keys)));
        }
    }
    return config;
}

Config load_config_file(const std::filesystem::path& file, const EnvLookup& env) {
    const auto name = file.string();
    const auto fail = [&name](int error) {
        return ConfigError(fmt::format("cannot read {}: {}", name, std::strerror(error)));
    };
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> stream(std::fopen(name.c_str(), "rb"), &std::fclose);
    if (!stream) throw fail(errno);
    std::string text;
    char buffer[16384];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, stream.get())) > 0) {
        text.append(buffer, n);
        // Refused before parsing: a runaway file would otherwise cost many times its size in memory.
        if (text.size() > max_config_size)
            throw ConfigError(fmt::format("{}: the file is larger than {} (the limit for a config file)", name,
                                          core::size_text(max_config_size)));
    }
    // fopen succeeds on a directory; the read is what fails (EISDIR).
    if (std::ferror(stream.get())) throw fail(errno);
    return parse_config(text, name, env);
}

std::optional<std::filesystem::path> find_config_file(const std::optional<std::filesystem::path>& explicit_file,
                                                      const std::filesystem::path& cwd, const EnvLookup& env) {
    if (explicit_file) return explicit_file;
    std::error_code ec;
    const auto project_file = cwd / ".mcp.json";
    if (std::filesystem::is_regular_file(project_file, ec)) return project_file;
    std::filesystem::path config_home;
    if (const auto xdg = env("XDG_CONFIG_HOME"); xdg && !xdg->empty()) {
        config_home = *xdg;
    } else if (const auto home = env("HOME"); home && !home->empty()) {
        config_home = std::filesystem::path(*home) / ".config";
    } else {
        return std::nullopt;
    }
    const auto user_file = config_home / "switchboard" / "settings.json";
    if (std::filesystem::is_regular_file(user_file, ec)) return user_file;
    return std::nullopt;
}

}  // namespace switchboard::host
