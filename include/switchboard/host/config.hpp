// Server configuration: the `mcpServers` format (Claude Desktop, Claude Code `.mcp.json`, Cursor) and VS Code's
// `servers` key, with `${VAR}` / `${VAR:-default}` expansion.
//
// Thread-safety: plain values and free functions; no shared state.
#pragma once

#include <switchboard/auth/oauth.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::host {

enum class TransportKind { stdio, http, sse, ws };

/// "stdio", "http", "sse", "ws".
std::string_view to_string(TransportKind kind);

/// One server entry after validation and variable expansion.
/// A stdio server's confinement (sandbox.hpp), VS Code's keys: `sandboxEnabled` and `sandbox.filesystem` /
/// `sandbox.network`. Paths as written (`~` and relative paths are resolved when the server starts).
struct SandboxSettings {
    std::optional<bool> enabled;  ///< `sandboxEnabled`; nullopt: the top-level `sandboxEnabled` decides
    std::vector<std::string> allow_write, deny_read, allow_read;
    std::vector<std::string> allowed_domains, denied_domains;
    /// `sandbox.network.allowedAddresses` (Switchboard's own key): CIDRs the proxy may connect to although private
    /// or loopback (a database on this machine); checked when the file is read.
    std::vector<std::string> allowed_addresses;
    bool operator==(const SandboxSettings&) const = default;
};

struct ServerConfig {
    std::string name;
    TransportKind type = TransportKind::stdio;

    // stdio
    std::string command;
    std::vector<std::string> args;
    std::map<std::string, std::string> env;  ///< overrides on top of the inherited environment
    std::string cwd;                         ///< empty: inherit

    // http, sse, ws
    std::string url;
    std::map<std::string, std::string> headers;
    std::string ca_file;  ///< `caFile`: an extra trusted CA (PEM) for https, besides the system store
    /// `oauth`: how to authorize when the server asks (a 401 with a Bearer challenge). On by default for remote
    /// servers without a configured Authorization header; `"oauth": false` turns it off.
    bool oauth_enabled = true;
    auth::OAuthSettings oauth;

    bool enabled = true;
    bool lazy = false;
    /// `keepWarmSeconds`: a lazy server stays up this long after its last lease is dropped, for an acquire to reuse.
    std::chrono::milliseconds keep_warm{0};
    std::chrono::milliseconds startup_timeout{30'000};
    std::chrono::milliseconds tool_timeout{60'000};
    int max_reconnect_attempts = 10;         ///< 0 = forever
    std::vector<std::string> allowed_tools;  ///< empty: all
    std::vector<std::string> excluded_tools;
    SandboxSettings sandbox;  ///< stdio only

    /// Non-empty when this entry cannot be started (e.g. a `${VAR}` without default is unset, no command/url).
    /// The other servers of the file are still usable; the host reports this as the server's error.
    std::string invalid;

    /// Hot reload restarts a server whose entry changed in any way.
    bool operator==(const ServerConfig&) const = default;
};

struct Config {
    std::vector<ServerConfig> servers;  ///< in file order
    std::string source;                 ///< file path or "<string>"
    std::vector<std::string> warnings;  ///< e.g. "settings.json: server \"x\": unknown key \"comand\""
    /// The top-level `llm` object with `${VAR}` expanded in every string (read by llm::parse_settings; the host does
    /// not know that layer). Empty when the file has none.
    boost::json::object llm;
    /// The top-level `tracing` object (OTLP export: endpoint, protocol, headers, serviceName, sampler, samplerArg,
    /// enabled) with `${VAR}` expanded; read by telemetry/otlp_settings. Empty when the file has none.
    boost::json::object tracing;
    /// The top-level `toolSearch`: offer the model search_tools/call_tool over the lazy servers' catalog
    /// (agent/tool_search.hpp). nullopt when the file does not say (then the automatic rule decides).
    std::optional<bool> tool_search;
    /// The top-level `gateway` object, as written (read by `serve`: `scopes` for --auth oauth).
    boost::json::object gateway;
    /// The top-level `roots`: the directories `serve` answers a server's roots/list with when a web page (or nobody)
    /// made the call (`${VAR}` expanded). Empty: the directory `serve` runs in.
    std::vector<std::string> roots;
    /// The top-level `pins` (tool_pins.hpp): "trust-on-first-use" (the default: a server first seen is pinned as it
    /// is), "strict" (what a server never pinned offers is held until approved) or "off" (nothing is pinned).
    enum class Pinning { trust_on_first_use, strict, off } pinning = Pinning::trust_on_first_use;
    /// The top-level `sandboxEnabled`: confine every stdio server whose entry does not say otherwise.
    bool sandbox_all = false;
    /// The top-level `registry`: the MCP Registry `registry search/add` and the web UI ask (empty: the official one).
    std::string registry;

    const ServerConfig* find(std::string_view name) const;
};

/// "trust-on-first-use", "strict", "off"; nullopt for anything else.
std::optional<Config::Pinning> parse_pinning(std::string_view text);

/// A file that cannot be used at all: unreadable, not JSON (message is "file:line:column: what"), no server map.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Looks up an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

/// The process environment.
EnvLookup process_env();

/// Expands `${VAR}` and `${VAR:-default}` (default used when VAR is unset or empty). A `${VAR}` that is unset and has
/// no default is reported through `missing` (once per name) and expands to "". Text without `${` is returned as is.
std::string expand_vars(std::string_view text, const EnvLookup& env, std::vector<std::string>* missing = nullptr);

/// A config file or document larger than this is refused before it is parsed.
inline constexpr std::size_t max_config_size = 8u * 1024 * 1024;

/// Parses JSON with comments and trailing commas; throws ConfigError "source:line:column: what" when it is not.
boost::json::value parse_jsonc(std::string_view text, std::string_view source);

/// Parses a config document. JSON with comments and trailing commas is accepted (VS Code writes JSONC).
/// Throws ConfigError on invalid JSON (with line:column) or a document that has neither `mcpServers` nor `servers`.
Config parse_config(std::string_view text, std::string_view source_name, const EnvLookup& env = process_env());

/// One server entry (the object under a name in `mcpServers`), checked and expanded exactly as in a config file:
/// problems go to `invalid`, unknown keys to `warnings` ("<source>: server \"name\": ..."). For entries that live
/// outside a config file, such as an agent's inline `mcpServers`.
ServerConfig parse_server_entry(std::string name, const boost::json::object& entry, std::string_view source,
                                const EnvLookup& env, std::vector<std::string>& warnings);

/// Reads and parses a file. Throws ConfigError naming the file when it cannot be read.
Config load_config_file(const std::filesystem::path& file, const EnvLookup& env = process_env());

/// `$XDG_CONFIG_HOME/switchboard/settings.json` (`~/.config/...` when XDG_CONFIG_HOME is unset), whether or not it
/// exists; nullopt when neither variable is set.
std::optional<std::filesystem::path> user_config_file(const EnvLookup& env);

/// Lookup order: `explicit_file` if given, else `./.mcp.json`, else `$XDG_CONFIG_HOME/switchboard/settings.json`
/// (`~/.config/...` when XDG_CONFIG_HOME is unset). Returns nullopt when none exists (an explicit file is returned
/// even when missing, so that loading it reports the error).
std::optional<std::filesystem::path> find_config_file(const std::optional<std::filesystem::path>& explicit_file,
                                                      const std::filesystem::path& cwd, const EnvLookup& env);

}  // namespace switchboard::host
