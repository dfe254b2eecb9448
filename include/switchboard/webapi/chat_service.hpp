// The web UI's chats: conversations from the SQLite store, each answered by the agent loop on a context of its own
// (its per-conversation server and tool switches, its remembered approvals), with the events of a run queued for the
// HTTP stream that shows them.
//
// A run is a task of the service, not of the request: the request's handler only writes what the run queued. So a
// browser that goes away, or a Stop, cancels the run cleanly (the loop keeps every completed message), and the run
// never touches a response that is gone.
//
// Thread-safety: single owner; everything on the pool's executor. SQLite statements are short (one transaction per
// completed message batch).
#pragma once

#include <switchboard/agent/conversation.hpp>
#include <switchboard/agent/definition.hpp>
#include <switchboard/agent/fork_registry.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/task_group.hpp>
#include <switchboard/llm/client.hpp>
#include <switchboard/store/conversation_store.hpp>
#include <switchboard/webapi/page_asks.hpp>
#include <switchboard/webapi/questions.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchboard::host {
class ServerPool;
}

namespace switchboard::webapi {

struct ChatOptions {
    std::shared_ptr<llm::Client> llm;  ///< null: no model is configured (chat requests are refused, with the help)
    llm::Settings settings;            ///< what the config (and environment) say, configured or not
    std::string not_configured_help;   ///< what to set, for that refusal
    /// The model for a config whose `llm` changed (the settings page): settings, and a client when configured.
    std::function<std::pair<llm::Settings, std::shared_ptr<llm::Client>>(const host::Config&)> model_for;
    std::filesystem::path db;  ///< the conversation store
    int max_turns = 25;        ///< model requests per message before "continue?"
    /// How long a run whose page went away (a reload, a closed tab) waits for a page to attach again before it stops.
    std::chrono::milliseconds reattach_grace{5000};
    /// The agents and skills offered as agent__/skill__ tools (asked when a conversation opens: served skills are
    /// known once the servers are up). Unset: none.
    std::function<std::vector<agent::Definition>()> definitions;
    std::shared_ptr<agent::ForkRegistry> registry;  ///< where running forks are published (`status`); may be null
    /// Where a server's requests during a conversation's calls go (page_asks.hpp): to the page. Null: they are not
    /// routed here (the pool's own handlers answer them).
    std::shared_ptr<PageAsks> asks;
};

/// The events of one run, waiting for the stream to write them.
class EventQueue {
public:
    explicit EventQueue(boost::asio::any_io_executor ex) : wake_(std::move(ex)) {}
    void push(std::string event, boost::json::object data);
    /// The run ended (after its `done` event).
    void finish();
    /// Wakes the waiter without an event (the stream's client went away).
    void nudge() { wake_.cancel(); }
    bool finished() const { return finished_; }
    bool empty() const { return events_.empty(); }
    std::pair<std::string, boost::json::object> pop();
    /// Every event queued and not written yet, oldest first; the queue is then empty.
    std::deque<std::pair<std::string, boost::json::object>> take_all() { return std::exchange(events_, {}); }
    /// Waits until something is pushed or the run finished (or `max` passed).
    boost::asio::awaitable<void> wait(std::chrono::steady_clock::duration max);

private:
    boost::asio::steady_timer wake_;
    std::deque<std::pair<std::string, boost::json::object>> events_;
    bool finished_ = false;
};

/// A question to the user, waiting for /api/chat/approve.
struct PendingApproval {
    core::OneShotEvent answered;
    agent::Decision decision = agent::Decision::deny;
    boost::json::object question;  ///< the `approval` event's data, for a page loaded while it waits
};

/// One open conversation.
struct Chat {
    std::int64_t id = 0;
    std::shared_ptr<host::Context> context;
    std::unique_ptr<agent::Conversation> conversation;
    store::ConversationSettings settings;
    /// The run in progress (null when none): its events, its Stop, its open questions.
    std::shared_ptr<EventQueue> events;
    boost::asio::cancellation_signal stop;
    std::map<std::string, std::shared_ptr<PendingApproval>> approvals;
    /// Tool calls running now: id → (server, parent call), so that the servers' progress reaches their blocks.
    std::map<std::string, std::pair<std::string, std::string>> running_calls;
    /// Results of this run's calls whose message text loses something (images, structured content), by call id:
    /// stored in their tool message's meta.result.
    std::map<std::string, boost::json::object> full_results;
    /// What each agent call's fork did ({"steps": [tool_end data...], "servers": {name: [lifecycle...]}}), by call id:
    /// stored in its tool message's meta.fork.
    std::map<std::string, boost::json::object> fork_records;
    /// The model the conversation asks for, shared with its agents' forks (they ask for it too).
    std::shared_ptr<std::string> fork_model = std::make_shared<std::string>();
    std::string typed_text;  ///< the run's user text (meta.text of a message that carries attachments too)
    /// The answer's text and reasoning so far (since the last stored batch): what a page that attaches mid-answer is
    /// shown first.
    std::string live_text, live_reasoning;
    /// The events of the turn under way that a page attaching now must see to look as it did (every tool call's
    /// start, its latest progress and task status, its log lines, its end; a fork's steps, notices): kept until the
    /// turn's messages are stored, which then show all of it.
    std::vector<std::pair<std::string, boost::json::object>> replay;
    /// Queues an event of the run for its stream and keeps it in `replay` (a call's newer progress or task status
    /// replaces its older one; log lines are kept up to a bound).
    void show(std::string_view event, boost::json::object data);
    /// Counts the streams that attached to the run: a stream that is no longer the latest ends, and a run whose
    /// stream went away stops unless another attached within ChatOptions::reattach_grace.
    std::uint64_t stream_generation = 0;
    /// The run is one no page started (follow_stored_tasks): a page that goes away does not stop it (Stop does).
    bool detached = false;
    /// What the servers ask during this conversation's calls, for its page to answer (null without a model).
    std::shared_ptr<QuestionBox> questions;
    /// The calls running now whose servers' requests come here, by call id (PageAsks::enter).
    std::map<std::string, gateway::ClientRelay::Registration> asking;
    /// The servers allowed to use the model without asking again ("always for this server").
    std::shared_ptr<std::set<std::string>> sampling_servers = std::make_shared<std::set<std::string>>();
    bool running() const { return events != nullptr; }
};

class ChatService : public std::enable_shared_from_this<ChatService> {
public:
    static std::shared_ptr<ChatService> create(std::shared_ptr<host::ServerPool> pool, ChatOptions options);

    const ChatOptions& options() const { return options_; }
    std::weak_ptr<host::ServerPool> pool() const { return pool_; }
    /// The store, opened on first use. Throws store::StoreError naming the file.
    store::ConversationStore& store();

    /// The conversation, loaded from the store on first use (messages, switches, approvals); null when there is none.
    std::shared_ptr<Chat> open(std::int64_t id);
    /// A new conversation, titled after `text`'s first line.
    std::shared_ptr<Chat> create_chat(std::string_view text);
    /// Another model endpoint (the config's `llm` changed): new conversations and the ones not answering now use it.
    void set_llm(llm::Settings settings, std::shared_ptr<llm::Client> client);
    /// Forgets a deleted conversation (a run in progress is stopped).
    void forget(std::int64_t id);
    /// Applies per-conversation switches (and stores them).
    void set_switches(Chat& chat, store::ConversationSettings settings);

    /// Starts a run: `text` as a new user message (resume: the loop again, after max_turns). Its events go to the
    /// returned queue. The chat must not be running.
    std::shared_ptr<EventQueue> start(std::shared_ptr<Chat> chat, std::string text, bool resume);
    /// Serve's start: every stored conversation's tasks that were running when it stopped are followed again in the
    /// background, each conversation as a run (agent/task_resume.hpp); each result is stored once, and a task its
    /// server no longer knows becomes an error result.
    void follow_stored_tasks();
    /// Whether conversation `id` is answering now.
    bool running(std::int64_t id) const {
        auto it = chats_.find(id);
        return it != chats_.end() && it->second->running();
    }
    /// The questions conversation `id`'s run waits on (the `approval` events' data), oldest first.
    boost::json::array pending_approvals(std::int64_t id) const;
    /// What its servers ask and wait on (the `server_request` events' data), oldest first.
    boost::json::array pending_requests(std::int64_t id) const;
    /// The open question `request_id` of conversation `id` (its event's data), or nullptr.
    const boost::json::object* find_request(std::int64_t id, const std::string& request_id) const;
    /// The page's answer to a server's request in conversation `id`; false when no such question is open there.
    bool answer_request(std::int64_t id, const std::string& request_id, boost::json::object answer);
    /// After the run's stream `generation` went away: stops the run unless another stream attached within the grace.
    void stop_unless_reattached(std::shared_ptr<Chat> chat, std::uint64_t generation);
    /// Stops the chat's run, if any.
    void stop(Chat& chat);

    /// Stops every run and waits for them.
    boost::asio::awaitable<void> shutdown();

private:
    ChatService(std::shared_ptr<host::ServerPool> pool, ChatOptions options);
    std::shared_ptr<Chat> make_chat(std::int64_t id, std::vector<llm::Message> messages,
                                    store::ConversationSettings settings);
    void save_settings(Chat& chat);

    boost::asio::any_io_executor ex_;
    std::weak_ptr<host::ServerPool> pool_;
    ChatOptions options_;
    std::unique_ptr<store::ConversationStore> store_;
    std::map<std::int64_t, std::shared_ptr<Chat>> chats_;
    core::TaskGroup runs_;
};

}  // namespace switchboard::webapi
