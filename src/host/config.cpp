// The whole config document: JSONC parsed with line:column errors, the server maps and top-level keys read in order
// (each entry by config_entry.cpp), `llm` expanded; loading a file and finding which one to load.
#include "config_parse.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/host/env_file.hpp>

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace switchboard::host {

namespace json = boost::json;
using detail::contains;
using detail::expand_into;
using detail::Expansion;
using detail::suggestion;

namespace {

constexpr std::string_view top_level_keys[] = {"mcpServers", "servers",        "inputs",  "$schema",
                                               "llm",        "toolSearch",     "gateway", "roots",
                                               "pins",       "sandboxEnabled", "tracing", "registry"};

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
        if (const auto* entry = item.value().if_object()) {
            server = parse_server_entry(std::move(name), *entry, config.source, env, config.warnings);
        } else {
            server.name = std::move(name);
            server.invalid = "entry must be an object";
        }
        config.servers.push_back(std::move(server));
    }
}

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

json::value parse_jsonc(std::string_view text, std::string_view source) { return parse_json(text, source); }

const ServerConfig* Config::find(std::string_view name) const {
    const auto it = std::find_if(servers.begin(), servers.end(), [&](const ServerConfig& s) { return s.name == name; });
    return it == servers.end() ? nullptr : &*it;
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
        } else if (key == "tracing") {
            if (const auto* t = item.value().if_object()) {
                config.tracing = expand_strings(*t, env, source_name, config.warnings);
            } else {
                config.warnings.push_back(fmt::format("{}: \"tracing\" must be an object; ignored", source_name));
            }
        } else if (key == "toolSearch") {
            if (const auto* b = item.value().if_bool()) {
                config.tool_search = *b;
            } else {
                config.warnings.push_back(
                    fmt::format("{}: \"toolSearch\" must be true or false; ignored", source_name));
            }
        } else if (key == "pins") {
            const auto* text = item.value().if_string();
            const auto mode = text ? parse_pinning(*text) : std::nullopt;
            if (mode)
                config.pinning = *mode;
            else
                config.warnings.push_back(fmt::format(
                    "{}: \"pins\" must be \"trust-on-first-use\", \"strict\" or \"off\"; ignored", source_name));
        } else if (key == "sandboxEnabled") {
            // A confinement asked for in the wrong spelling is still asked for: closed, not open.
            config.sandbox_all = !item.value().is_bool() || item.value().get_bool();
            if (!item.value().is_bool())
                config.warnings.push_back(fmt::format(
                    "{}: \"sandboxEnabled\" must be true or false; taken as true (every stdio server confined)",
                    source_name));
        } else if (key == "registry") {
            if (const auto* url = item.value().if_string();
                url && (url->starts_with("https://") || url->starts_with("http://"))) {
                config.registry = expand_vars(*url, env);
            } else {
                config.warnings.push_back(
                    fmt::format("{}: \"registry\" must be the MCP Registry's http(s) URL; ignored", source_name));
            }
        } else if (key == "roots") {
            const auto* list = item.value().if_array();
            const bool strings = list && std::all_of(list->begin(), list->end(),
                                                     [](const json::value& v) { return v.is_string(); });
            if (!strings) {
                config.warnings.push_back(
                    fmt::format("{}: \"roots\" must be a list of directories; ignored", source_name));
                continue;
            }
            for (const auto& r : *list) config.roots.push_back(expand_vars(r.get_string(), env));
        } else if (!contains(top_level_keys, key)) {
            config.warnings.push_back(
                fmt::format("{}: unknown top-level key \"{}\"{}", source_name, key, suggestion(key, top_level_keys)));
        }
    }
    // The file's switch lands in each stdio entry that does not say: a change to it is a change to those servers
    // (hot reload restarts them, confined or not).
    for (auto& s : config.servers)
        if (s.type == TransportKind::stdio && !s.sandbox.enabled && config.sandbox_all) s.sandbox.enabled = true;
    return config;
}

std::optional<Config::Pinning> parse_pinning(std::string_view text) {
    if (text == "trust-on-first-use") return Config::Pinning::trust_on_first_use;
    if (text == "strict") return Config::Pinning::strict;
    if (text == "off") return Config::Pinning::off;
    return std::nullopt;
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
    std::vector<std::string> warnings;
    auto config = parse_config(text, name, with_env_file(env, file, &warnings));
    config.warnings.insert(config.warnings.begin(), warnings.begin(), warnings.end());
    return config;
}

std::optional<std::filesystem::path> find_config_file(const std::optional<std::filesystem::path>& explicit_file,
                                                      const std::filesystem::path& cwd, const EnvLookup& env) {
    if (explicit_file) return explicit_file;
    std::error_code ec;
    const auto project_file = cwd / ".mcp.json";
    if (std::filesystem::is_regular_file(project_file, ec)) return project_file;
    const auto user_file = user_config_file(env);
    if (user_file && std::filesystem::is_regular_file(*user_file, ec)) return user_file;
    return std::nullopt;
}

std::optional<std::filesystem::path> user_config_file(const EnvLookup& env) {
    std::filesystem::path config_home;
    if (const auto xdg = env("XDG_CONFIG_HOME"); xdg && !xdg->empty())
        config_home = *xdg;
    else if (const auto home = env("HOME"); home && !home->empty())
        config_home = std::filesystem::path(*home) / ".config";
    else
        return std::nullopt;
    return config_home / "switchboard" / "settings.json";
}

}  // namespace switchboard::host
