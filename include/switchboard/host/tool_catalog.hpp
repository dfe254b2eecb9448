// The tool catalog: what each lazy server offers, kept on disk so that a dormant server's tools can be searched
// (agent/tool_search.hpp) without starting it.
//
// One file per server, `<dir>/<server>.json`, where dir is `$XDG_CACHE_HOME/switchboard/catalog` (else
// `~/.cache/switchboard/catalog`): {"server", "configHash", "updated" (Unix seconds), "tools": [MCP tool objects],
// "skills": [skills/list entries], "resources", "resourceTemplates", "prompts": [MCP objects]}. The last three let
// the web UI's pages list a dormant server's resources and prompts (marked dormant) as its tools are; a file
// written before they were recorded has none. "skills" is there only for a server that declares the Skills extension
// (mcp/skills.hpp): its entries as the server sent them (uri, frontmatter, files with sizes and digests), so that a
// dormant server's skills can be offered (agent/mcp_skills.hpp); a file without it (one written before skills were
// recorded, or by a server without the extension) loads with no skills.
// Written atomically (a temporary file in the same directory, then rename). An entry is only used while its
// configHash matches the server's config entry (the fields that say what runs: type, command, args, env, cwd, url,
// headers, caFile), so an edited entry invalidates it; the allowedTools/excludedTools filters are applied when the
// catalog is read, not stored.
//
// CatalogRecorder keeps the files current: it records a lazy server's tool list whenever the pool says it connected
// or its list changed (Event::tools_changed while connected), its resources, templates and prompts likewise
// (resources_changed, prompts_changed), and its skills (skills/list, asked in the background)
// when it connected or its resources changed (Event::resources_changed while connected).
//
// Thread-safety: ToolCatalog is a plain value (file operations are synchronous and small); CatalogRecorder lives on
// the pool's executor.
#pragma once

#include <switchboard/core/task_group.hpp>
#include <switchboard/host/config.hpp>
#include <switchboard/host/events.hpp>
#include <switchboard/mcp/skills.hpp>
#include <switchboard/mcp/types.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::host {

class ServerPool;

/// A stable hash (hex) of what an entry runs; a catalog file recorded under another hash is stale.
std::string catalog_hash(const ServerConfig& server);

struct CatalogEntry {
    std::string server;
    std::string config_hash;
    std::int64_t updated = 0;  ///< Unix seconds
    std::vector<mcp::Tool> tools;
    /// The server's skills (Skills extension entries). nullopt: none recorded (the server does not declare the
    /// extension, or the file predates skills); an empty list: it declares the extension and serves none.
    std::optional<std::vector<mcp::Skill>> skills;
    std::vector<mcp::Resource> resources;
    std::vector<mcp::ResourceTemplate> templates;
    std::vector<mcp::Prompt> prompts;
};

class ToolCatalog {
public:
    explicit ToolCatalog(std::filesystem::path dir) : dir_(std::move(dir)) {}
    /// `$XDG_CACHE_HOME/switchboard/catalog`, else `$HOME/.cache/switchboard/catalog` (empty path: neither is set).
    static std::filesystem::path default_dir(const EnvLookup& env);
    static ToolCatalog from_env(const EnvLookup& env) { return ToolCatalog(default_dir(env)); }

    const std::filesystem::path& dir() const { return dir_; }
    std::filesystem::path file(std::string_view server) const;

    /// The stored entry, whatever its hash (nullopt: none, or unreadable).
    std::optional<CatalogEntry> read(std::string_view server) const;
    /// The stored entry when it was recorded for this config entry; its tools filtered by allowedTools/excludedTools.
    std::optional<CatalogEntry> load(const ServerConfig& server) const;
    /// Writes the entry (creating the directory); false with `error` set when it could not. The skills of the
    /// stored entry are kept when it was recorded for this config entry.
    bool save(const ServerConfig& server, const std::vector<mcp::Tool>& tools, std::string* error = nullptr) const;
    /// Writes the entry with these skills (nullopt: none recorded, the key is left out).
    bool save(const ServerConfig& server, const std::vector<mcp::Tool>& tools,
              const std::optional<std::vector<mcp::Skill>>& skills, std::string* error = nullptr) const;
    /// Writes the server's resources, templates and prompts; its tools and skills stay as stored for this config
    /// entry (none when the file was recorded for another).
    bool save_offers(const ServerConfig& server, const std::vector<mcp::Resource>& resources,
                     const std::vector<mcp::ResourceTemplate>& templates, const std::vector<mcp::Prompt>& prompts,
                     std::string* error = nullptr) const;

private:
    /// Writes `entry` as this config entry's (its server, hash and time set here).
    bool write(const ServerConfig& server, CatalogEntry entry, std::string* error) const;
    std::filesystem::path dir_;
};

/// Records what `pool` lists for `server` now: its resources, templates and prompts, and with `with_tools` its tools
/// too (its stored skills kept). False with `error` set when the file could not be written.
bool record_listing(const ToolCatalog& catalog, const ServerPool& pool, const ServerConfig& server, bool with_tools,
                    std::string* error);

/// Records each lazy server's tools into `catalog` whenever it connects or its tool list changes, and its skills when
/// it connects or its resources change (listed in the background; a listing that fails leaves the file as it was),
/// until destroyed.
class CatalogRecorder {
public:
    CatalogRecorder(std::shared_ptr<ServerPool> pool, ToolCatalog catalog);
    ~CatalogRecorder();
    CatalogRecorder(const CatalogRecorder&) = delete;
    CatalogRecorder& operator=(const CatalogRecorder&) = delete;

    /// Waits (at most `max`) for the skill listings under way, so that a host about to shut down still records what
    /// a server it started listed.
    boost::asio::awaitable<void> finish(std::chrono::milliseconds max);

    struct Listings;  // (internal) the skill listings running, per server

private:
    std::weak_ptr<ServerPool> pool_;
    EventBus::Id subscription_ = 0;
    std::shared_ptr<Listings> listings_;
    core::TaskGroup tasks_;
};

}  // namespace switchboard::host
