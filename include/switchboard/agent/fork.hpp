// Running an agent or skill in a forked context (the lazy-loading design): a context of its own with the servers the
// definition declares, leased for the run (a lazy server starts for it and stops after its keepWarmSeconds once no
// other fork holds it), plus the main-context tools its `tools` list allows; its own conversation (system = the
// body, user = the task) with the definition's model and maxTurns; its answer comes back as the tool result of the
// main conversation, with its tool calls summarised. Then the fork and its leases are dropped.
//
// A required server that is not configured fails the run before anything starts; a missing optional one is left
// out and the fork's first message says so. A skill that does not fork returns its instructions inline. Forks may
// call other agents down to depth 2, never themselves. Cancelling the awaiting coroutine (the main turn) cancels the
// fork.
//
// Thread-safety: on the pool's executor.
#pragma once

#include <switchboard/agent/conversation.hpp>
#include <switchboard/agent/definition.hpp>
#include <switchboard/agent/fork_registry.hpp>
#include <switchboard/agent/mcp_skills.hpp>
#include <switchboard/host/tool_catalog.hpp>

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <string>
#include <vector>

namespace switchboard::agent {

inline constexpr int max_fork_depth = 2;

struct ForkEnvironment {
    std::shared_ptr<host::ServerPool> pool;
    std::shared_ptr<host::Context> main;  ///< whose tools a definition's `tools` list picks from
    std::shared_ptr<llm::Client> llm;     ///< the configured model (a definition's `model` gets its own client)
    std::vector<Definition> definitions;  ///< every agent and skill, for `agent:` and for nested agent tools
    /// What the fork's own tool calls may run without asking: the approvals object of the conversation the fork
    /// was started from (Conversation::shared_approvals), shared, not copied. An "always" given in the parent while
    /// the fork runs counts for the fork's next call; one given for a fork's call counts for the parent, the other
    /// forks and the conversation's store (see agent/approvals.hpp). Null: nothing runs without asking.
    std::shared_ptr<Approvals> approvals;
    /// Skills served over MCP loaded so far, shared by the whole tree (what read_skill_file may read).
    std::shared_ptr<LoadedSkills> loaded_skills = std::make_shared<LoadedSkills>();
    /// The model the main conversation asks for now (the web UI's model picker; empty or null: the client's). A
    /// definition's own `model` wins over it.
    std::shared_ptr<const std::string> model{};
    /// Where running forks are recorded (and published for `switchboard status`); null: nowhere.
    std::shared_ptr<ForkRegistry> registry{};
    /// The name of the context forks are started from, as status shows it (RunningFork::parent): empty, `main`'s
    /// name; a fork's nested agents get the fork's context ("agent:<name>").
    std::string parent{};
    /// Set (shared by every copy) once the main conversation offers tool search: forks offer it too, over the same
    /// catalog, so an agent reaches lazy servers it did not declare through search_tools / call_tool.
    std::shared_ptr<std::optional<host::ToolCatalog>> tool_search =
        std::make_shared<std::optional<host::ToolCatalog>>();
    /// What the fork's `invoke_agent` span is a child of: the model turn that called it. Invalid: a new trace (`run
    /// --agent`). Its lazy servers' loads, model requests and tool calls are under that span.
    trace::SpanContext trace{};
};

struct ForkResult {
    RunResult run;
    std::vector<std::string> servers;      ///< the servers the fork had
    std::vector<std::string> unavailable;  ///< optional servers left out, with why
    std::string error;                     ///< the run could not start (a required server missing or failing)
    /// What the main conversation receives: the answer, then "(3 tool calls: a, b, c; 1 error)".
    std::string summary() const;
};

/// Runs `definition` on `task` in a fork at `depth` (1 for a fork of the main conversation). `observer` sees the
/// fork's own steps (its messages are not reported: they are the fork's, not the main conversation's).
boost::asio::awaitable<ForkResult> run_fork(const Definition& definition, std::string task, ForkEnvironment env,
                                            Observer& observer, int depth);

/// The `agent__<name>` / `skill__<name>` tools for a conversation at `depth` (none past max_fork_depth; never
/// `self`).
std::vector<LocalTool> fork_tools(const ForkEnvironment& env, int depth, const std::string& self);

/// "agent__<name>" or "skill__<name>".
std::string fork_tool_name(const Definition& d);

}  // namespace switchboard::agent
