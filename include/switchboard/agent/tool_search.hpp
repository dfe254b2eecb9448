// Tool search over dormant servers: instead of every lazy server's tools in each request, the model gets two local
// tools —
//   search_tools(query, limit): BM25 over the catalog of every enabled lazy server's tools (host/tool_catalog.hpp;
//     a server that is up answers from its live list), without starting anything; returns up to `limit` (default 5,
//     at most 20) matches as JSON text: [{"name": "server__tool", "server", "description", "inputSchema"}];
//   call_tool(name, arguments): calls `server__tool` from a search result. The server is leased for that one call
//     (a dormant one starts and stops again after its keepWarmSeconds). It is approved like a direct call of that
//     tool: the conversation checks its approvals against the called tool's real name and server
//     (LocalTool::approve_as), and the result comes back as that tool's result.
//
// They are offered when the config says `"toolSearch": true`, or — when the config does not say — automatically once
// the main context's tool definitions exceed 10% of the model's context window (bytes/4 tokens; only when
// `llm.contextWindow` is set) and there is a lazy server to search.
//
// Ranking: documents are the tokens of the server and tool name (split on `_ - .`, spaces and camelCase), the title,
// the description and the parameter names; BM25 with k1 = 1.2, b = 0.75 and idf = ln(1 + (N - n + 0.5) / (n + 0.5)).
//
// Thread-safety: on the pool's executor.
#pragma once

#include <switchboard/agent/conversation.hpp>
#include <switchboard/host/tool_catalog.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchboard::agent {

/// Lower-case word tokens: split on anything not a letter or digit and at camelCase boundaries
/// ("getHTTPResponse_code" → get, http, response, code).
std::vector<std::string> search_tokens(std::string_view text);

/// Okapi BM25 over token documents.
class Bm25 {
public:
    explicit Bm25(double k1 = 1.2, double b = 0.75) : k1_(k1), b_(b) {}
    void add(const std::vector<std::string>& tokens);
    std::size_t size() const { return docs_.size(); }
    /// The score of document `doc` for the query's distinct tokens.
    double score(std::size_t doc, const std::vector<std::string>& query) const;
    /// Documents with a positive score, best first (ties in the order added), at most `limit`.
    std::vector<std::pair<std::size_t, double>> rank(const std::vector<std::string>& query, std::size_t limit) const;

private:
    struct Doc {
        std::vector<std::pair<std::string, int>> counts;  // sorted by token
        std::size_t length = 0;
    };
    double k1_, b_;
    std::vector<Doc> docs_;
    std::size_t total_length_ = 0;
};

/// One searchable tool.
struct SearchableTool {
    std::string server;
    mcp::Tool tool;
    std::string qualified_name() const { return server + "__" + tool.name; }
    /// What the ranking sees: name, server, title, description and parameter names.
    std::vector<std::string> tokens() const;
};

/// The indices of `tools` that best match `query`, best first.
std::vector<std::size_t> rank_tools(const std::vector<SearchableTool>& tools, std::string_view query,
                                    std::size_t limit);

inline constexpr std::size_t default_search_limit = 5;
inline constexpr std::size_t max_search_limit = 20;

struct ToolSearchEnvironment {
    std::shared_ptr<host::ServerPool> pool;
    std::shared_ptr<host::Context> main;  ///< its per-conversation switches apply to call_tool (may be null)
    host::ToolCatalog catalog{std::filesystem::path()};
};

/// Every enabled lazy server's tools: live when it is up, else from the catalog; `uncatalogued` gets the lazy
/// servers that have no (current) catalog entry.
std::vector<SearchableTool> searchable_tools(const ToolSearchEnvironment& env, std::vector<std::string>* uncatalogued);

/// `server__tool` split at the configured server whose name it starts with (the longest such name).
std::optional<host::ResolvedTool> split_qualified(const host::ServerPool& pool, std::string_view name);

/// The two tools, search_tools and call_tool.
std::vector<LocalTool> tool_search_tools(ToolSearchEnvironment env);

/// Whether a conversation gets them: `configured` when the config says; otherwise when there is a lazy server and
/// the tool definitions (bytes/4 tokens) exceed 10% of a known context window.
bool tool_search_wanted(std::optional<bool> configured, bool any_lazy_server, std::size_t tool_definition_bytes,
                        std::optional<std::int64_t> context_window);

}  // namespace switchboard::agent
