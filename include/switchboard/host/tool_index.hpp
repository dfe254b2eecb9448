// The tool index: which exposed name calls which tool of which server. Pure: built from the servers' tool lists and
// config filters, independent of the order they connected in.
//
// Naming: a tool name exposed by exactly one server keeps its bare name; a name several servers expose becomes
// `<server>__<tool>` for each of them (no server silently wins). Every exposed name matches ^[A-Za-z0-9_-]{1,64}$
// (LLM APIs demand it): other characters become '_', long names are shortened with a hash of the original, and
// names that end up equal get a hash suffix, so the index stays collision-free.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <switchboard/mcp/types.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::host {

/// One server's contribution to the index.
struct ServerTools {
    std::string server;
    std::vector<mcp::Tool> tools;
    std::vector<std::string> allowed;   ///< empty: all (config `allowedTools`)
    std::vector<std::string> excluded;  ///< config `excludedTools`
    /// A further filter over the server's own tool names (a context's patterns and overrides); empty: keep all.
    std::function<bool(std::string_view tool)> keep;
    /// When set, used instead of `tools` and shared by the index, not copied (the host keeps its lists this way:
    /// tool schemas are the bulk of a host's memory).
    std::shared_ptr<const std::vector<mcp::Tool>> shared;
};

struct IndexedTool {
    std::string name;                                    ///< exposed name
    std::string server;                                  ///< server name
    const mcp::Tool* tool = nullptr;                     ///< tool->name is the server's own name for it
    std::shared_ptr<const std::vector<mcp::Tool>> list;  ///< keeps `tool` alive
};

class ToolIndex {
public:
    /// Sorted by exposed name.
    const std::vector<IndexedTool>& tools() const { return tools_; }
    const IndexedTool* find(std::string_view exposed_name) const;
    /// The exposed name of `server`'s tool `tool`, if indexed.
    std::optional<std::string> exposed_name(std::string_view server, std::string_view tool) const;
    std::size_t size() const { return tools_.size(); }
    bool empty() const { return tools_.empty(); }

    static ToolIndex build(const std::vector<ServerTools>& servers);

private:
    std::vector<IndexedTool> tools_;  // sorted by name: find() searches it
};

inline constexpr std::size_t max_tool_name_length = 64;

/// Whether `name` passes the filters (allowed empty = all; excluded wins).
bool tool_allowed(std::string_view name, const std::vector<std::string>& allowed,
                  const std::vector<std::string>& excluded);

/// `name` with every character outside [A-Za-z0-9_-] replaced by '_', shortened to `max_len` with a hash of the
/// original name when longer; never empty.
std::string safe_tool_name(std::string_view name, std::size_t max_len = max_tool_name_length);

/// True when `name` matches ^[A-Za-z0-9_-]{1,64}$.
bool is_safe_tool_name(std::string_view name);

}  // namespace switchboard::host
