// `add`, `add-json`, `remove`, `get`: Claude Code's `claude mcp add` lines, typed as they are in its docs, edit the
// config file through host/config_edit (the web UI's code): comments and order kept, a clash or a bad entry refused
// with nothing written.
#include "cli.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/host/config_edit.hpp>
#include <switchboard/host/env_file.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <termios.h>
#include <unistd.h>

namespace switchboard::cli {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > 64 || name.find("__") != std::string_view::npos) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
}

int fail(std::string_view command, std::string_view message) {
    fmt::print(stderr, "switchboard {}: {}\n", command, message);
    return 2;
}

bool is_url(std::string_view word) {
    return word.starts_with("http://") || word.starts_with("https://") || word.starts_with("ws://") ||
           word.starts_with("wss://");
}

// A value that looks secret, shown masked by `get` (a `${VAR}` reference is shown: it is no secret).
std::string masked(std::string_view key, std::string_view value, bool header) {
    if (value.starts_with("${") && value.ends_with("}")) return std::string(value);
    const auto k = core::ascii_lower(key);
    // "pat" as a word of the name (GITHUB_PAT), not inside one (CACHE_PATH).
    const bool pat = k == "pat" || k.starts_with("pat_") || k.ends_with("_pat") || k.find("_pat_") != std::string::npos;
    const bool secret = header || pat || k.find("key") != std::string::npos || k.find("token") != std::string::npos ||
                        k.find("secret") != std::string::npos || k.find("password") != std::string::npos;
    if (!secret) return std::string(value);
    if (header) {
        if (auto sp = value.find(' '); sp != std::string_view::npos && sp < 12)
            return fmt::format("{} ••••", value.substr(0, sp));  // "Bearer ••••"
    }
    return "••••";
}

json::object masked_entry(json::object entry) {
    for (auto [key, header] : {std::pair{"env", false}, std::pair{"headers", true}})
        if (auto* m = entry.if_contains(key); m && m->is_object())
            for (auto& [k, v] : m->get_object())
                if (v.is_string()) v = masked(k, v.get_string(), header);
    if (auto* oauth = entry.if_contains("oauth"); oauth && oauth->is_object())
        for (const char* k : {"clientSecret", "privateKey", "assertion", "idToken"})
            if (auto* v = oauth->get_object().if_contains(k); v && v->is_string()) {
                auto shown = masked("secret", v->get_string(), false);
                *v = shown;
            }
    return entry;
}

// The entry's command line or URL, for a message.
std::string summary(const json::object& entry) {
    if (const auto* url = entry.if_contains("url"); url && url->is_string()) return std::string(url->get_string());
    std::string line;
    if (const auto* c = entry.if_contains("command"); c && c->is_string()) line = c->get_string();
    if (const auto* args = entry.if_contains("args"); args && args->is_array())
        for (const auto& a : args->get_array())
            if (a.is_string()) line += " " + std::string(a.get_string());
    return line;
}

std::string kind_of(const json::object& entry) {
    if (const auto* t = entry.if_contains("type"); t && t->is_string()) return std::string(t->get_string());
    return entry.contains("url") ? "http" : "stdio";
}

bool launcher_is_container(const json::object& entry) {
    const auto* c = entry.if_contains("command");
    if (!c || !c->is_string()) return false;
    const auto name = fs::path(std::string(c->get_string())).filename().string();
    return name == "docker" || name == "podman";
}

// Writes the entry and says so; 1 when refused.
int write_entry(std::string_view command, const GlobalOptions& g, const std::string& scope, const std::string& name,
                json::object entry, const std::map<std::string, std::string>& secrets = {}) {
    const auto file = file_to_edit(g, scope);
    if (!file) return 2;
    try {
        const auto edited = host::add_server_to_file(*file, name, entry, secrets);
        for (const auto& w : edited.warnings) fmt::print(stderr, "switchboard: warning: {}\n", w);
    } catch (const std::exception& e) {
        fmt::print(stderr, "switchboard {}: {}\n", command, e.what());
        return 1;
    }
    const auto kind = kind_of(entry);
    std::string notes;
    if (kind == "stdio") {
        const auto* s = entry.if_contains("sandboxEnabled");
        if (launcher_is_container(entry))
            notes = " (in its container)";
        else if (s && s->is_bool())
            notes = s->get_bool() ? " (confined)" : " (not confined)";
    }
    if (entry.contains("lazy")) notes += " (lazy)";
    if (entry.contains("enabled")) notes += " (disabled)";
    fmt::print("Added {} server \"{}\" to {}{}: {}\n", kind, name, file->string(), notes, summary(entry));
    if (!secrets.empty())
        fmt::print("Its secrets ({}) are in {} (0600), referenced as ${{NAME}}.\n",
                   fmt::join(
                       [&] {
                           std::vector<std::string> k;
                           for (const auto& [key, _] : secrets) k.push_back(key);
                           return k;
                       }(),
                       ", "),
                   host::env_file_for(*file).string());
    return 0;
}

// --client-secret, as Claude Code: $MCP_CLIENT_SECRET, else asked for without echo. Kept in the env file beside the
// config, the entry's oauth.clientSecret a ${NAME_CLIENT_SECRET} reference to it.
bool ask_client_secret(const std::string& name, json::object& oauth, std::map<std::string, std::string>& secrets) {
    std::optional<std::string> secret;
    if (const char* e = std::getenv("MCP_CLIENT_SECRET"); e && *e)
        secret = e;
    else
        secret = read_secret(fmt::format("Client secret for \"{}\": ", name));
    if (!secret || secret->empty()) return false;
    const auto var = host::secret_variable(name, "client_secret");
    secrets[var] = *secret;
    oauth["clientSecret"] = "${" + var + "}";
    return true;
}

}  // namespace

std::optional<fs::path> file_to_edit(const GlobalOptions& g, const std::string& scope) {
    const auto user_file = [] {
        auto file = host::user_config_file(host::process_env());
        return file ? *file : fs::absolute(".config/switchboard/settings.json");  // no HOME: under here
    };
    if (!scope.empty() && scope != "project" && scope != "local" && scope != "user") {
        fmt::print(stderr, "switchboard: --scope must be local, project or user, not \"{}\"\n", scope);
        return std::nullopt;
    }
    if (g.config_file) return fs::absolute(*g.config_file);
    if (scope == "project" || scope == "local") return fs::absolute(".mcp.json");
    if (scope == "user") return user_file();
    if (auto found = host::find_config_file(std::nullopt, fs::current_path(), host::process_env()))
        return fs::absolute(*found);
    return user_file();
}

std::optional<std::string> read_secret(const std::string& prompt) {
    fmt::print(stderr, "{}", prompt);
    std::fflush(stderr);
    termios old{};
    const bool tty = ::isatty(STDIN_FILENO) && ::tcgetattr(STDIN_FILENO, &old) == 0;
    if (tty) {
        auto quiet = old;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    std::string line;
    const bool got = static_cast<bool>(std::getline(std::cin, line));
    if (tty) {
        ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        fmt::print(stderr, "\n");
    }
    if (!got) return std::nullopt;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
}

int add_server(const GlobalOptions& g, const AddCommand& c) {
    constexpr std::string_view usage = "add NAME -- COMMAND [ARGS...]  or  add --transport http|sse|ws NAME URL";
    if (c.words.empty()) return fail("add", fmt::format("a server name is needed: {}", usage));
    const auto& name = c.words.front();
    if (!valid_name(name))
        return fail("add", fmt::format("\"{}\" cannot be a server name: letters, digits, '-', '_' and '.', at most 64, "
                                       "no \"__\" (did an option that takes a value, such as -e, take it?)",
                                       name));
    auto transport = c.transport.empty() ? std::string("stdio") : core::ascii_lower(c.transport);
    // `add NAME https://...` without --transport: what was meant is plain.
    if (c.transport.empty() && c.words.size() == 2 && is_url(c.words[1]))
        transport = c.words[1].starts_with("ws") ? "ws" : "http";
    if (transport != "stdio" && transport != "http" && transport != "sse" && transport != "ws")
        return fail("add", fmt::format("--transport must be stdio, http, sse or ws, not \"{}\"", c.transport));
    if (c.words.size() < 2)
        return fail("add", fmt::format("\"{}\" needs {} : {}", name,
                                       transport == "stdio" ? "a command after --" : "a URL", usage));
    json::object entry;
    if (transport == "stdio") {
        if (!c.headers.empty())
            return fail("add", "--header is for http, sse and ws servers; a stdio server takes --env");
        entry["command"] = c.words[1];
        json::array args;
        for (std::size_t i = 2; i < c.words.size(); ++i) args.emplace_back(c.words[i]);
        if (!args.empty()) entry["args"] = std::move(args);
    } else {
        if (c.words.size() > 2)
            return fail("add", fmt::format("a {} server takes one URL; got {} words after its name", transport,
                                           c.words.size() - 1));
        const auto& url = c.words[1];
        if (!is_url(url))
            return fail("add", fmt::format("\"{}\" is not a URL (http://, https://, ws:// or wss://)", url));
        if (!c.env.empty()) return fail("add", "--env is for stdio servers; a remote server takes --header");
        entry["type"] = transport;
        entry["url"] = url;
    }
    json::object env;
    for (const auto& kv : c.env) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || !host::is_variable_name(kv.substr(0, eq)))
            return fail("add", fmt::format("--env takes KEY=VALUE, not \"{}\"", kv));
        env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    if (!env.empty()) entry["env"] = std::move(env);
    json::object headers;
    for (const auto& h : c.headers) {
        const auto colon = h.find(':');
        auto key = colon == std::string::npos ? std::string() : h.substr(0, colon);
        while (!key.empty() && key.back() == ' ') key.pop_back();
        if (key.empty() || key.find(' ') != std::string::npos)
            return fail("add", fmt::format("--header takes \"Name: value\", not \"{}\"", h));
        auto value = h.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        headers[key] = value;
    }
    if (!headers.empty()) entry["headers"] = std::move(headers);
    std::map<std::string, std::string> secrets;
    if (!c.client_id.empty() || c.client_secret || c.callback_port) {
        if (transport == "stdio")
            return fail("add", "--client-id, --client-secret and --callback-port are for remote servers");
        json::object oauth;
        if (!c.client_id.empty()) oauth["clientId"] = c.client_id;
        if (c.callback_port) oauth["redirectPort"] = c.callback_port;
        if (c.client_secret && !ask_client_secret(name, oauth, secrets))
            return fail("add", "--client-secret: no secret given");
        entry["oauth"] = std::move(oauth);
    }
    if (c.disabled) entry["enabled"] = false;
    if (c.lazy) entry["lazy"] = true;
    if (transport == "stdio" && !launcher_is_container(entry)) entry["sandboxEnabled"] = c.confine;
    return write_entry("add", g, c.scope, name, std::move(entry), secrets);
}

int add_server_json(const GlobalOptions& g, const AddCommand& c) {
    if (c.words.size() != 1) return fail("add-json", "usage: add-json NAME '{\"command\": ...}'");
    const auto& name = c.words.front();
    if (!valid_name(name))
        return fail("add-json", fmt::format("\"{}\" cannot be a server name: letters, digits, '-', '_' and '.'", name));
    json::value parsed;
    try {
        parsed = host::parse_jsonc(c.json, "the JSON given");
    } catch (const std::exception& e) {
        return fail("add-json", e.what());
    }
    if (!parsed.is_object()) return fail("add-json", "the JSON must be an object: the server's entry");
    auto entry = std::move(parsed.get_object());
    // The entry itself, or a one-server document ({"mcpServers": {"x": {...}}}) pasted whole.
    for (const char* key : {"mcpServers", "servers"})
        if (auto* m = entry.if_contains(key); m && m->is_object() && m->get_object().size() == 1) {
            auto inner = m->get_object().begin()->value();
            if (inner.is_object()) entry = std::move(inner.get_object());
        }
    if (c.disabled) entry["enabled"] = false;
    if (c.lazy) entry["lazy"] = true;
    std::map<std::string, std::string> secrets;
    if (c.client_secret) {
        auto* oauth = entry.if_contains("oauth");
        if (!oauth || !oauth->is_object()) entry["oauth"] = json::object();
        if (!ask_client_secret(name, entry["oauth"].as_object(), secrets))
            return fail("add-json", "--client-secret: no secret given");
    }
    return write_entry("add-json", g, c.scope, name, std::move(entry), secrets);
}

int remove_server(const GlobalOptions& g, const std::string& name, const std::string& scope) {
    const auto file = file_to_edit(g, scope);
    if (!file) return 2;
    try {
        if (!fs::exists(*file)) return fail("remove", fmt::format("{} does not exist", file->string()));
        if (!host::raw_server_entries(host::read_config_text(*file), file->string()).count(name))
            return fail("remove", fmt::format("no server named \"{}\" in {}", name, file->string()));
        const auto edited = host::edit_config_file(*file, host::ServerEntryEdit{name, std::string(), std::nullopt});
        for (const auto& w : edited.warnings) fmt::print(stderr, "switchboard: warning: {}\n", w);
    } catch (const std::exception& e) {
        fmt::print(stderr, "switchboard remove: {}\n", e.what());
        return 1;
    }
    fmt::print("Removed server \"{}\" from {}\n", name, file->string());
    return 0;
}

int get_server(const GlobalOptions& g, const std::string& name, const std::string& scope) {
    const auto file = file_to_edit(g, scope);
    if (!file) return 2;
    std::map<std::string, json::object, std::less<>> entries;
    try {
        if (fs::exists(*file)) entries = host::raw_server_entries(host::read_config_text(*file), file->string());
    } catch (const std::exception& e) {
        return fail("get", e.what());
    }
    const auto it = entries.find(name);
    if (it == entries.end()) {
        std::vector<std::string> names;
        for (const auto& [n, _] : entries) names.push_back(n);
        return fail("get", fmt::format("no server named \"{}\" in {}{}", name, file->string(),
                                       names.empty() ? "" : fmt::format(" (it has: {})", fmt::join(names, ", "))));
    }
    const auto entry = masked_entry(it->second);
    if (g.json) {
        print_json(json::object{{"name", name}, {"file", file->string()}, {"type", kind_of(entry)}, {"entry", entry}});
        return 0;
    }
    fmt::print("{}\n  file: {}\n  type: {}\n", name, file->string(), kind_of(entry));
    const auto* url = entry.if_contains("url");
    fmt::print("  {}: {}\n", url ? "url" : "command", summary(entry));
    for (const auto* key : {"env", "headers"})
        if (const auto* m = entry.if_contains(key); m && m->is_object())
            for (const auto& [k, v] : m->get_object())
                fmt::print("  {}: {}{}{}\n", key == std::string_view("env") ? "env" : "header", std::string_view(k),
                           key == std::string_view("env") ? "=" : ": ",
                           v.is_string() ? std::string(v.get_string()) : json::serialize(v));
    for (const auto& [k, v] : entry)
        if (k != "command" && k != "args" && k != "url" && k != "type" && k != "env" && k != "headers")
            fmt::print("  {}: {}\n", std::string_view(k), json::serialize(v));
    fmt::print("(`switchboard status` shows whether it connects)\n");
    return 0;
}

}  // namespace switchboard::cli
