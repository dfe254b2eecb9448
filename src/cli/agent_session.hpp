// What `run` and `chat` share: the model settings (config, then flags, then the environment), the conversation store
// and one conversation in it (new or resumed, with its overrides and remembered approvals), and the writing of every
// completed message batch.
#pragma once

#include "cli.hpp"

#include <switchboard/agent/conversation.hpp>
#include <switchboard/agent/fork.hpp>
#include <switchboard/llm/client.hpp>
#include <switchboard/store/conversation_store.hpp>

#include <filesystem>
#include <memory>
#include <set>
#include <utility>
#include <optional>
#include <span>
#include <string>

namespace switchboard::cli {

/// The config's `llm` object, then --llm/--model, then OPENAI_BASE_URL/OPENAI_API_KEY (warnings printed).
llm::Settings endpoint_settings(const host::Config& config, const AgentOptions& options);
/// The model settings for these options; nullopt (the help printed on stderr) when no model is configured.
std::optional<llm::Settings> model_settings(const host::Config& config, const AgentOptions& options);

class AgentSession {
public:
    /// Opens the store (unless --no-store) and, with --resume, loads that conversation. Errors are printed; false
    /// means the command cannot go on.
    bool open(const AgentOptions& options, const std::string& model);
    /// The conversation, on the context and model; a resumed one gets its messages, overrides and approvals back.
    /// `definitions` (all_definitions()) become its agent__/skill__ tools.
    agent::Conversation& start(Host& h, std::shared_ptr<llm::Client> llm, agent::LoopOptions loop,
                               const AgentOptions& options, std::vector<agent::Definition> definitions);

    /// Offers search_tools/call_tool (agent/tool_search.hpp) when the config's toolSearch or the automatic rule says
    /// so; once offered they stay. Called after the servers settled (run: at start; chat: before each turn).
    void offer_tool_search(Host& h);
    bool tool_search() const { return tool_search_; }

    agent::Conversation& conversation() { return *conversation_; }
    /// 0 while nothing was written yet.
    std::int64_t id() const { return id_; }
    const store::ConversationStore* store() const { return store_.get(); }

    /// Writes a batch (creating the conversation on the first one, titled after `title_hint`) and the settings.
    void persist(std::span<const llm::Message> messages, std::span<const boost::json::object> meta);
    void save_settings();
    /// A tool call answered with a task: recorded with the message that asked for it while it runs, so that a
    /// resumed conversation polls it again; the record goes with the write of its result (persist).
    void track_task(const llm::ToolCall& call, const std::string& server, const mcp::TaskProgress& task);
    /// A resumed conversation's tasks that were running when Switchboard stopped (agent_session_tasks.cpp): followed
    /// to their end and their results stored with the message that asked for them, once. True when results were
    /// added: the model has not seen them yet.
    boost::asio::awaitable<bool> finish_running_tasks(Host& h, agent::Observer& observer);
    /// Switches a tool on or off for this conversation (remembered with it).
    void set_tool_enabled(const std::string& server, const std::string& tool, bool enabled);
    const std::set<std::pair<std::string, std::string>>& tools_off() const { return tools_off_; }
    /// What agents and skills run with (after start()).
    const agent::ForkEnvironment& fork_environment() const { return fork_env_; }
    /// A new, empty conversation (chat's /new).
    void reset();
    std::string title_hint;

private:
    std::unique_ptr<store::ConversationStore> store_;
    std::unique_ptr<agent::Conversation> conversation_;
    std::optional<store::ConversationSettings> resumed_settings_;
    std::vector<llm::Message> resumed_messages_;
    std::set<std::pair<std::string, std::string>> tools_off_;
    agent::ForkEnvironment fork_env_;
    std::int64_t id_ = 0;
    std::string model_;
    bool tool_search_ = false;
    bool failed_ = false;  // a write failed: reported once, the conversation goes on in memory
};

/// What `run` and `chat` start from.
struct AgentSetup {
    llm::Settings settings;
    std::shared_ptr<llm::Client> llm;
    std::shared_ptr<AgentSession> session;
};
/// The model settings, a client and an open session; nullopt when the command cannot go on (reported on stderr).
std::optional<AgentSetup> agent_setup(const host::Config& config, const AgentOptions& options,
                                      boost::asio::any_io_executor ex);
/// The --root directories, or the working directory.
std::vector<std::filesystem::path> roots_of(const AgentOptions& options);

/// The agents and skills found from the working directory (errors printed on stderr).
std::vector<agent::Definition> load_definitions();
/// Those, and the skills the connected servers serve over MCP (agent/mcp_skills.hpp; notes printed on stderr).
boost::asio::awaitable<std::vector<agent::Definition>> all_definitions(std::shared_ptr<host::ServerPool> pool);

/// "  … task ID: working - step 2/5": a running task's status line under its tool block.
std::string task_status_line(const mcp::TaskProgress& task);
/// "→ name {args}" / "  ← ok 12 ms: first line" progress lines (stderr for run, stdout for chat).
std::string tool_start_line(const llm::ToolCall& call, const std::string& server);
std::string tool_end_line(const agent::ToolCallRecord& record, const llm::ToolExecutionResult& result, int max_lines);

}  // namespace switchboard::cli
