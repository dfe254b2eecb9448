// Skills served over MCP (the Skills extension, mcp/skills.hpp), run like local skills (agent/fork.hpp).
//
// At the start of a conversation every connected server that declares the extension is asked for its skills
// (skills/list: names and descriptions only, no file is read); each becomes a skill definition that implicitly
// declares its server. A lazy server that is not running is not started for this: its skills come from the tool
// catalog (host/tool_catalog.hpp: the entries it listed when it last ran), marked `from_catalog`, and it starts
// (leased) when one of them runs. Only when the skill runs is its SKILL.md read, checked against the entry (listed, size,
// sha256 digest; a mismatch is refreshed once with skills/get, then refused) and parsed; its frontmatter must agree
// with the entry's name and description. A served skill never brings servers of its own (no `mcp:`, no inline
// `mcpServers`: that would let a server start processes here) and its `allowed-tools` grants nothing. While a skill
// is loaded, `read_skill_file` reads the files its entry lists, each checked the same way, and no other file.
//
// Thread-safety: on the pool's executor.
#pragma once

#include <switchboard/agent/conversation.hpp>
#include <switchboard/agent/definition.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/host/tool_catalog.hpp>

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <string>
#include <vector>

namespace switchboard::agent {

/// The served skills loaded so far in one conversation tree (the main conversation and its forks share it): the
/// files `read_skill_file` may read.
struct LoadedSkills {
    struct Entry {
        std::string server;
        mcp::Skill skill;
    };
    std::vector<Entry> skills;
};

/// Adds the skills of every connected server that declares the extension to `definitions`, and (with `catalog`) those
/// the catalog recorded for each enabled lazy server that is not connected, without starting it. In config order; a
/// name already taken (a local definition wins) becomes "<server>-<name>"; what was renamed or could not be listed
/// goes to `notes`. (Two overloads, not a default argument: GCC 12.)
boost::asio::awaitable<void> add_mcp_skills(std::shared_ptr<host::ServerPool> pool,
                                            std::vector<Definition>& definitions, std::vector<std::string>& notes,
                                            std::optional<host::ToolCatalog> catalog);
boost::asio::awaitable<void> add_mcp_skills(std::shared_ptr<host::ServerPool> pool,
                                            std::vector<Definition>& definitions, std::vector<std::string>& notes);

/// Adds the skills the catalog recorded for `server` (current for its config entry), marked `from_catalog`: what a
/// dormant lazy server offers, read from disk (`switchboard agents`, add_mcp_skills). Naming as add_mcp_skills.
void add_catalog_skills(const host::ServerConfig& server, const host::ToolCatalog& catalog,
                        std::vector<Definition>& definitions, std::vector<std::string>& notes);

/// Reads, checks and parses a served skill's SKILL.md into `d` (body, context, agent, model, maxTurns, tools). Empty
/// on success, else why the skill cannot run. Its server is leased first (a dormant lazy one starts), and the lease
/// is kept in `d.hold`: the loaded copy holds its server up while it runs.
boost::asio::awaitable<std::string> load_mcp_skill(std::shared_ptr<host::ServerPool> pool, Definition& d);

/// The `read_skill_file(uri)` tool over `loaded`.
LocalTool read_skill_file_tool(std::shared_ptr<host::ServerPool> pool, std::shared_ptr<LoadedSkills> loaded);

}  // namespace switchboard::agent
