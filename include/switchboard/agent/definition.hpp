// Agents and skills: markdown files with YAML frontmatter that declare the MCP servers they need (`mcp:`), found in
// the project and the user's folders, Switchboard's own and Claude Code's, so existing definitions work unchanged:
//
//   .switchboard/agents/*.md, .switchboard/skills/*/SKILL.md           (the project folder first, then
//   $XDG_CONFIG_HOME/switchboard/agents, .../skills)
//   .claude/agents/*.md, .claude/skills/*/SKILL.md                      (the project, then ~/.claude/)
//
// Frontmatter: name, description, model, tools (allow-list of main-context tool names, globs; a list or Claude Code's
// comma-separated string), maxTurns, `mcp: [a, b]` or `mcp: {required: [...], optional: [...]}`, Claude Code's
// `mcpServers` (names of configured servers, or inline server configs that exist only for this agent), and for skills
// `context: fork` and `agent:`. The body is the agent's system prompt or the skill's instructions. A file with bad
// frontmatter is an error naming the file and line; the others still load. The first definition of a name wins (the
// order above); later ones are reported as shadowed.
//
// Thread-safety: plain values and functions (file reads only).
#pragma once

#include <switchboard/host/config.hpp>
#include <switchboard/mcp/skills.hpp>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::agent {

struct Definition {
    enum class Kind { agent, skill } kind = Kind::agent;
    std::string name;
    std::string description;
    std::filesystem::path path;  ///< the file (for a skill: its SKILL.md); empty for skills served over MCP
    std::string origin;          ///< "switchboard", "claude", or "mcp:<server>"
    std::string body;            ///< system prompt (agent) or instructions (skill)
    std::string model;           ///< empty: the configured model (Claude Code's "inherit" too)
    /// Main-context tools the fork also sees (globs over exposed names). nullopt: every main-context tool (Claude
    /// Code's default when `tools` is absent); an empty list: none.
    std::optional<std::vector<std::string>> tools;
    std::optional<int> max_turns;
    std::vector<std::string>
        required;  ///< servers that must be configured (`mcp:` list, `required:`, mcpServers names)
    std::vector<std::string> optional;  ///< servers used when configured
    /// Servers that exist only for this agent (Claude Code `mcpServers` inline configs); they are always lazy.
    std::vector<host::ServerConfig> inline_servers;
    bool fork = true;    ///< agents: always; skills: `context: fork`, or declaring `mcp:`
    std::string run_as;  ///< skill `agent:`: run as that agent (its prompt and model)
    int line = 0;        ///< where the frontmatter starts (1), for messages
    /// Skill `allowed-tools` (Claude Code): tools that run without asking while the skill is active (a list, or a
    /// string separated by spaces or commas; `Bash(git diff *)` stays one item). Not an allow-list.
    std::vector<std::string> allowed_tools;
    /// Problems that do not stop the file from loading, "<path>:<line>: ..." (e.g. an inline server config with an
    /// unknown key, or one that cannot start: its `invalid` is set, as in a config file).
    std::vector<std::string> warnings;
    /// A skill served over MCP (origin "mcp:<server>"): the server's entry. Its SKILL.md is read, checked against the
    /// entry and parsed only when the skill runs (agent/mcp_skills.hpp); until then `body` is empty.
    std::optional<mcp::Skill> served;
    /// A served skill listed from the tool catalog (host/tool_catalog.hpp): its lazy server was not running, and is
    /// started (leased) only when the skill runs.
    bool from_catalog = false;
    /// What a loaded copy holds while it runs (load_mcp_skill: the lease on its server); empty in listed definitions.
    std::shared_ptr<void> hold;
};

/// Names of agents and skills: 1 to 64 of a-z, 0-9, '-', '_' (Claude Code's rule, plus '_').
bool is_valid_name(std::string_view name);

/// Parses one file's text. `kind` and `path` say what it is; a skill's name defaults to its folder's name, an agent's
/// to the file's stem. On error returns nullopt and sets `error` to "<path>:<line>: <what>".
std::optional<Definition> parse_definition(std::string_view text, Definition::Kind kind,
                                           const std::filesystem::path& path, std::string& error);

struct Discovery {
    std::vector<Definition> definitions;  ///< agents then skills, each in discovery order
    std::vector<std::string> errors;      ///< "<path>:<line>: <what>" (bad frontmatter, unreadable file)
    std::vector<std::string> notes;       ///< e.g. "<path>: agent \"x\" shadowed by <other path>"
};

struct DiscoveryOptions {
    std::filesystem::path project_dir;  ///< usually the working directory
    std::filesystem::path config_home;  ///< $XDG_CONFIG_HOME (or ~/.config)
    std::filesystem::path home;         ///< ~ (for ~/.claude)
    static DiscoveryOptions from_environment(std::filesystem::path project_dir);
};

/// Reads every definition in the folders of `options` (the order at the top of this file). Never throws.
Discovery discover(const DiscoveryOptions& options);

/// A file larger than this is an error, not a definition.
inline constexpr std::size_t max_definition_size = 1024 * 1024;

}  // namespace switchboard::agent
