// The agent loop: a conversation's messages, one context's tools and one model.
//
// send(text) appends the user message (with the context's attachments, consumed: text blocks headed by their URI,
// images as image parts when the model takes them) and then loops: ask the model (streamed, the context's tools
// offered), and when it asks for tools, check each call against the approvals (asking the front end when it can,
// denying otherwise), run the allowed calls of that turn concurrently through the context, append their results as
// tool messages, and ask again — until the model answers without tool calls, the turn limit, an error or
// cancellation.
//
// Robustness: a malformed argument string, an unknown tool or a failing server becomes an error result the model
// reads; the loop goes on. A model failure ends the run with StopReason::error and keeps what was complete (an answer
// cut mid-stream is kept as a partial assistant message, marked so in its meta).
//
// Cancellation: cancel the coroutine awaiting send() (Asio per-operation cancellation): the model's stream is closed,
// the running tool calls are cancelled (servers receive notifications/cancelled), and send() returns
// StopReason::cancelled with every message completed so far.
//
// Persistence: observer.on_messages receives every completed message batch in order — the user message, then each
// assistant message together with the tool messages answering it — so a store can write each batch in one
// transaction.
//
// Thread-safety: single owner, on the context's executor.
#pragma once

#include <switchboard/agent/approvals.hpp>
#include <switchboard/host/context.hpp>
#include <switchboard/llm/client.hpp>
#include <switchboard/llm/message.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::agent {

enum class StopReason { done, max_turns, cancelled, error };
std::string_view to_string(StopReason r);

struct ToolCallRecord {
    std::string id;
    std::string name;       ///< the exposed name the model used
    std::string server;     ///< empty when it did not resolve
    std::string tool;       ///< the server's own name
    std::string arguments;  ///< as the model wrote them
    bool is_error = false;
    bool denied = false;
    std::int64_t ms = 0;
    std::string trace_id;  ///< the trace the call belongs to (`switchboard trace ID`); empty when tracing is off
    /// {"name","server","tool","arguments","isError","denied","ms"}, and "traceId" when there is one.
    boost::json::object to_json() const;
};

struct ApprovalRequest {
    std::string name;  ///< exposed name
    std::string server;
    std::string tool;
    std::string arguments;
};

struct Observer {
    std::function<void(std::string_view)> on_content;
    std::function<void(std::string_view)> on_reasoning;
    std::function<void(const llm::ToolCall&, const std::string& server)> on_tool_start;
    std::function<void(const ToolCallRecord&, const llm::ToolExecutionResult&)> on_tool_end;
    /// A server answered a tool call with a task (the Tasks extension): its id, then each change of its status, until
    /// on_tool_end. `server` is the call's.
    std::function<void(const llm::ToolCall&, const std::string& server, const mcp::TaskProgress&)> on_task;
    /// Completed messages with their meta, in order (see the header comment).
    std::function<void(std::span<const llm::Message>, std::span<const boost::json::object>)> on_messages;
    /// Asked for each call the approvals do not allow; unset: such calls are denied.
    std::function<boost::asio::awaitable<Decision>(const ApprovalRequest&)> ask_approval;
    /// Called when a model request is retried or fails, for progress lines.
    std::function<void(std::string_view)> on_notice;
    /// Timestamps for the loop's own time per turn (bench/section_agent.cpp): on_model_request just before each
    /// model request (messages and tools assembled; llm::Client::chat serializes and sends), on_model_response as
    /// soon as that request returned (complete or failed), before anything else of the turn. A fork's requests call
    /// on_model_request too (agent/fork.hpp).
    std::function<void()> on_model_request;
    std::function<void()> on_model_response;
};

/// A tool the host itself provides (an agent, a skill, tool search), offered to the model beside the context's tools
/// and run in-process instead of through a server. It needs no approval (what it runs asks for its own) unless it
/// sets approve_as.
struct LocalTool {
    std::string name;
    std::string description;
    boost::json::object parameters;  ///< JSON schema of the arguments
    std::function<boost::asio::awaitable<llm::ToolExecutionResult>(llm::ToolCall call, Observer& observer)> run;
    /// For a tool that calls a server's tool on the model's behalf (tool search's call_tool): the call it stands for
    /// (name `server__tool`, server, tool, arguments). The conversation approves it as that call — its approvals,
    /// then the front end's question, remembered under that name and server — and records that server and tool.
    /// nullopt: nothing to approve (run reports the problem). Unset: no approval.
    std::function<std::optional<ApprovalRequest>(const llm::ToolCall& call)> approve_as;
};

struct LoopOptions {
    int max_turns = 100;  ///< model requests per send()
    std::string system_prompt;
    std::string model;  ///< the model asked for (another model of the same endpoint); empty: the settings' model
    /// What an MCP App shown to the user asked the model to know (ui/update-model-context): goes with the next model
    /// request only, as a system message after the conversation, and is not stored.
    std::string app_context;
    /// Each send() is an `invoke_agent {agent_name}` span: under `trace` when it is valid (a fork under the turn
    /// that asked for it), else the root of a new trace.
    std::string agent_name = "switchboard";
    trace::SpanContext trace;
};

struct RunResult {
    StopReason stop = StopReason::done;
    std::string answer;  ///< the last assistant message's text
    int turns = 0;       ///< model requests made
    std::vector<ToolCallRecord> tool_calls;
    llm::Usage usage;
    std::string error;  ///< StopReason::error: what failed
    std::string trace_id;  ///< the run's trace (`switchboard trace ID`); empty when tracing is off
};

class Conversation {
public:
    Conversation(std::shared_ptr<host::Context> context, std::shared_ptr<llm::Client> llm, LoopOptions options);

    host::Context& context() { return *context_; }
    llm::Client& llm() { return *llm_; }
    const std::shared_ptr<llm::Client>& llm_ptr() const { return llm_; }
    Approvals& approvals() { return *approvals_; }
    /// The approvals object itself, for a fork to share (agent/fork.hpp).
    const std::shared_ptr<Approvals>& shared_approvals() const { return approvals_; }
    /// Uses `approvals` (a parent conversation's) instead of an own object: what either remembers, both see at once.
    /// "Always for this tool" is then remembered as `server__tool`, since this conversation's exposed names are its
    /// context's, not the owner's. Null: ignored.
    void share_approvals(std::shared_ptr<Approvals> approvals);
    /// Changeable between runs (the web UI's model picker and turn limit).
    LoopOptions& loop_options() { return options_; }
    const std::vector<llm::Message>& messages() const { return messages_; }
    /// Restores earlier messages (a resumed conversation); a system prompt in options is put first when missing.
    void set_messages(std::vector<llm::Message> messages);
    void clear();

    /// A user message, then the loop.
    boost::asio::awaitable<RunResult> send(std::string text, Observer& observer);
    /// The loop on the messages as they are (after insert_prompt ended on a user message).
    boost::asio::awaitable<RunResult> run(Observer& observer);

    /// Fetches a prompt and appends its messages (also reported through observer.on_messages); the error names the
    /// server and prompt.
    boost::asio::awaitable<jsonrpc::Outcome<std::size_t>> insert_prompt(std::string server, std::string name,
                                                                        std::map<std::string, std::string> arguments,
                                                                        Observer& observer);

    /// Bytes of the tools array sent with each request now (what tool definitions cost per request).
    std::size_t tool_definition_bytes();

    /// Offers a host-provided tool (replacing one of the same name).
    void add_local_tool(LocalTool tool);
    const std::vector<LocalTool>& local_tools() const { return local_tools_; }
    /// The tools array a request carries now: the context's tools, then the local ones.
    boost::json::array request_tools();

    /// The window requests are fitted to: llm.contextWindow, or smaller when the endpoint said so (nullopt: none).
    std::optional<std::int64_t> context_window() const;

private:
    boost::asio::awaitable<RunResult> loop(Observer& observer);
    // Puts the messages that fit the window into `request` (agent/context_fit.hpp); the estimate of what it sends.
    std::int64_t fit_request(llm::ChatRequest& request, Observer& observer);
    // After the endpoint refused a request as too long: whether a smaller window was learned (worth a retry).
    bool learn_window(const llm::ContextOverflow& overflow, std::int64_t sent_estimate);
    boost::asio::awaitable<std::vector<llm::ToolExecutionResult>> run_calls(const std::vector<llm::ToolCall>& calls,
                                                                            Observer& observer, RunResult& result);
    llm::Message user_message(std::string text, boost::json::object& meta);
    const LocalTool* find_local(std::string_view name) const;
    void emit(Observer& observer, std::vector<llm::Message> batch, std::vector<boost::json::object> meta);

    std::shared_ptr<host::Context> context_;
    std::shared_ptr<llm::Client> llm_;
    LoopOptions options_;
    std::shared_ptr<Approvals> approvals_ = std::make_shared<Approvals>();
    bool shared_approvals_ = false;  // share_approvals(): remember tools as server__tool
    std::vector<llm::Message> messages_;
    std::vector<LocalTool> local_tools_;
    std::optional<std::int64_t> learned_window_;
    double token_ratio_ = 1.0;  // the endpoint's prompt tokens / our estimate, from the last answer
    std::string last_fit_summary_;
};

}  // namespace switchboard::agent
