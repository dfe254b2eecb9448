#include <switchboard/webapi/chat_service.hpp>

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/host/context.hpp>
#include <switchboard/agent/fork.hpp>
#include <switchboard/agent/task_resume.hpp>
#include <switchboard/agent/tool_search.hpp>
#include <switchboard/host/tool_catalog.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/mcp/types.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <algorithm>
#include <set>

namespace switchboard::webapi {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

// ---- EventQueue ---------------------------------------------------------------------------------------------------

void EventQueue::push(std::string event, json::object data) {
    events_.emplace_back(std::move(event), std::move(data));
    wake_.cancel();
}

void EventQueue::finish() {
    finished_ = true;
    wake_.cancel();
}

std::pair<std::string, json::object> EventQueue::pop() {
    auto front = std::move(events_.front());
    events_.pop_front();
    return front;
}

awaitable<void> EventQueue::wait(std::chrono::steady_clock::duration max) {
    if (!events_.empty() || finished_) co_return;
    wake_.expires_after(max);
    co_await wake_.async_wait(core::as_tuple_awaitable);
}

// Approval ids "q<n>", one count for the process: a page keeps the ids it saw answered, and a conversation reopened
// (its Chat made again) must not reuse one.
namespace {
std::uint64_t next_question_id = 1;
}  // namespace

// ---- Chat -----------------------------------------------------------------------------------------------------------

void Chat::show(std::string_view event, json::object data) {
    const auto same_call = [&](const std::pair<std::string, json::object>& kept) {
        const auto* a = kept.second.if_contains("id");
        const auto* b = data.if_contains("id");
        return kept.first == event && a && b && *a == *b;
    };
    if (event == "tool_progress" || event == "tool_task") {
        // Only the latest matters: a page attaching shows where the call is now.
        if (auto it = std::find_if(replay.begin(), replay.end(), same_call); it != replay.end())
            it->second = data;
        else
            replay.emplace_back(event, data);
    } else {
        if (event == "tool_log") {
            // A chatty server: a call's latest lines are kept, as many as its block keeps.
            constexpr std::ptrdiff_t kept_log_lines = 200;
            if (std::count_if(replay.begin(), replay.end(), same_call) >= kept_log_lines)
                replay.erase(std::find_if(replay.begin(), replay.end(), same_call));
        }
        replay.emplace_back(event, data);
    }
    if (events) events->push(std::string(event), std::move(data));
}

// ---- the run --------------------------------------------------------------------------------------------------------

namespace {

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// A tool's result as the UI shows it: the server's CallToolResult when there is one, else the host's error text.
json::object tool_result_json(const llm::ToolExecutionResult& r) {
    if (!r.raw.empty()) return r.raw;
    json::array content;
    content.push_back(json::object{{"type", "text"}, {"text", r.text()}});
    return json::object{{"content", std::move(content)}, {"isError", r.is_error}};
}

// Whether the tool message's text (what the model reads) leaves out part of the result: media, structured content,
// the blocks' annotations (audience, priority), which the page shows.
bool loses_content(const llm::ToolExecutionResult& r) {
    if (r.structured_content || r.raw.contains("structuredContent")) return true;
    const auto* content = r.raw.if_contains("content");
    if (!content || !content->is_array()) return false;
    for (const auto& block : content->get_array())
        if (const auto* b = block.if_object(); b && (mcp::string_field(*b, "type") != "text" || b->contains("annotations")))
            return true;
    return false;
}

json::object stored_json(const store::StoredMessage& m) {
    return json::object{{"id", m.id}, {"createdMs", m.created_ms}, {"message", m.message.to_json()}, {"meta", m.meta}};
}

// The callbacks of a run that push its events. `parent` is the agent/skill call a fork's events belong to ("" for the
// main conversation): the UI nests them in that call's block, and a fork's text is never part of the answer.
agent::Observer observer_for(std::shared_ptr<ChatService> self, std::shared_ptr<Chat> chat,
                             std::shared_ptr<EventQueue> q, std::string parent) {
    const auto tagged = [parent](json::object data) {
        if (!parent.empty()) data["parent"] = parent;
        return data;
    };
    agent::Observer o;
    o.on_content = [chat, q, tagged, parent](std::string_view t) {
        if (!parent.empty()) return chat->show("content", tagged(json::object{{"text", t}}));  // a fork's, in its block
        chat->live_text += t;
        q->push("content", json::object{{"text", t}});
    };
    o.on_reasoning = [chat, q, tagged, parent](std::string_view t) {
        if (parent.empty()) chat->live_reasoning += t;
        q->push("reasoning", tagged(json::object{{"text", t}}));
    };
    o.on_notice = [chat, tagged](std::string_view t) { chat->show("notice", tagged(json::object{{"text", t}})); };
    o.on_tool_start = [self, chat, tagged, parent](const llm::ToolCall& call, const std::string& server) {
        chat->running_calls[call.id] = {server, parent};
        // What the server asks while this call runs comes to this conversation's page.
        if (const auto& asks = self->options().asks; asks && chat->questions && !server.empty()) {
            json::object which{{"callId", call.id}};
            if (!parent.empty()) which["parent"] = parent;
            chat->asking[call.id] = asks->enter(
                server, PageAsker{chat->questions, chat->conversation->llm_ptr(), std::move(which), chat->sampling_servers});
        }
        // When it started: a page that attaches later shows the time so far, not from its own start.
        json::object data{{"id", call.id},
                          {"name", call.name},
                          {"server", server},
                          {"arguments", call.arguments},
                          {"startedMs", now_ms()}};
        if (call.trace.valid()) data["traceId"] = call.trace.trace_id_hex();  // `switchboard trace ID`
        chat->show("tool_start", tagged(std::move(data)));
    };
    o.on_tool_end = [chat, q, tagged, parent](const agent::ToolCallRecord& record,
                                              const llm::ToolExecutionResult& result) {
        chat->running_calls.erase(record.id);
        chat->asking.erase(record.id);
        if (chat->questions) chat->questions->cancel_call(record.id);  // its server no longer waits for them
        auto data = record.to_json();
        data["id"] = record.id;
        data["arguments"] = record.arguments;  // as the model wrote it, like tool_start's
        data["result"] = tool_result_json(result);
        if (parent.empty() && loses_content(result)) chat->full_results[record.id] = data["result"].as_object();
        chat->show("tool_end", tagged(std::move(data)));
    };
    // A call answered with a task (the Tasks extension): its status for the tool's block (`tool_task` events), and,
    // while it runs, a record with the conversation (`switchboard tasks` lists it; `chat --resume` follows it after a
    // restart); the record goes with the write of the call's result.
    o.on_task = [self, chat, q, tagged, parent](const llm::ToolCall& call, const std::string& server,
                                                const mcp::TaskProgress& t) {
        chat->show("tool_task", tagged(json::object{{"id", call.id},
                                                    {"taskId", t.task_id},
                                                    {"status", t.status},
                                                    {"statusMessage", t.status_message}}));
        if (!parent.empty() || chat->id == 0 || !chat->conversation || chat->conversation->messages().empty()) return;
        if (t.status != "working" && t.status != "input_required") return;
        store::RunningTask task{chat->id, call.id, server, call.name, t.task_id, t.status, t.status_message,
                                chat->conversation->messages().back(), 0, 0};
        try {
            self->store().save_task(task);
        } catch (const store::StoreError& e) {
            spdlog::warn("web chat {}: cannot record task {}: {}", chat->id, t.task_id, e.what());
        }
    };
    o.ask_approval = [chat, q, tagged](const agent::ApprovalRequest& r) -> awaitable<agent::Decision> {
        auto pending = std::make_shared<PendingApproval>();
        const auto id = "q" + std::to_string(next_question_id++);
        chat->approvals[id] = pending;
        pending->question = tagged(json::object{
            {"requestId", id}, {"name", r.name}, {"server", r.server}, {"tool", r.tool}, {"arguments", r.arguments}});
        q->push("approval", pending->question);
        co_await pending->answered.wait();  // a Stop cancels the wait: the decision stays deny
        chat->approvals.erase(id);
        co_return pending->decision;
    };
    if (!parent.empty()) return o;  // a fork's messages are its own, not the conversation's
    // Every completed batch is stored in one transaction, then shown as stored (with its ids).
    o.on_messages = [self, chat, q](std::span<const llm::Message> messages, std::span<const json::object> meta) {
        std::vector<store::StoredMessage> batch;
        for (std::size_t i = 0; i < messages.size(); ++i) {
            store::StoredMessage m;
            m.message = messages[i];
            if (i < meta.size()) m.meta = meta[i];
            m.created_ms = now_ms();
            // What the page shows after a reload: the tool's whole result, the text the user typed.
            if (auto it = chat->full_results.find(m.message.tool_call_id);
                m.message.role == llm::Role::tool && it != chat->full_results.end()) {
                m.meta["result"] = std::move(it->second);
                chat->full_results.erase(it);
            }
            if (m.message.role == llm::Role::user && m.meta.contains("attachments")) m.meta["text"] = chat->typed_text;
            if (auto it = chat->fork_records.find(m.message.tool_call_id);
                m.message.role == llm::Role::tool && it != chat->fork_records.end()) {
                m.meta["fork"] = std::move(it->second);
                chat->fork_records.erase(it);
            }
            batch.push_back(std::move(m));
        }
        json::array shown;
        try {
            const auto ids = self->store().append(chat->id, batch);
            for (std::size_t i = 0; i < batch.size() && i < ids.size(); ++i) batch[i].id = ids[i];
        } catch (const std::exception& e) {
            q->push("notice", json::object{{"text", std::string("this message could not be saved: ") + e.what()}});
        }
        for (const auto& m : batch) shown.push_back(stored_json(m));
        // Now in stored messages, which a page that attaches loads.
        chat->live_text.clear();
        chat->live_reasoning.clear();
        chat->replay.clear();
        q->push("messages", json::object{{"messages", std::move(shown)}});
    };
    return o;
}

// The lazy servers' lifecycle while a fork runs, as `fork_server` events of its call: loading, active, and released
// (warm or dormant) when it ends.
json::object lifecycle_json(const host::ServerStatus& s, const std::string& parent) {
    return json::object{{"parent", parent}, {"server", s.name}, {"lifecycle", s.lifecycle()}, {"leases", s.leases}};
}

// An agent/skill tool whose fork reports its steps nested under the call (observer_for with the call's id).
agent::LocalTool nested(agent::LocalTool tool, std::weak_ptr<ChatService> weak_self, std::weak_ptr<Chat> weak_chat,
                        std::weak_ptr<host::ServerPool> weak_pool) {
    tool.run = [inner = std::move(tool.run), weak_self, weak_chat, weak_pool](
                   llm::ToolCall call, agent::Observer& parent) -> awaitable<llm::ToolExecutionResult> {
        auto self = weak_self.lock();
        auto chat = weak_chat.lock();
        auto pool = weak_pool.lock();
        if (!self || !chat || !pool || !chat->events) co_return co_await inner(std::move(call), parent);
        auto q = chat->events;
        auto child = observer_for(self, chat, q, call.id);
        child.on_model_request = parent.on_model_request;
        child.on_model_response = parent.on_model_response;
        // What the fork did, kept with the agent call's stored message (meta.fork) so that a reload shows it too.
        const auto id = call.id;
        auto steps = std::make_shared<json::array>();
        auto lifecycles = std::make_shared<std::map<std::string, json::array>>();
        child.on_tool_end = [show = child.on_tool_end, steps](const agent::ToolCallRecord& record,
                                                              const llm::ToolExecutionResult& result) {
            show(record, result);
            auto step = record.to_json();
            step["id"] = record.id;
            step["arguments"] = record.arguments;
            step["result"] = tool_result_json(result);
            steps->push_back(std::move(step));
        };
        const auto note = [chat, id, lifecycles](const host::ServerStatus& status) {
            auto& seen = (*lifecycles)[status.name];
            const auto now = status.lifecycle();
            if (!seen.empty() && seen.back().as_string() == now) return;
            seen.emplace_back(now);
            chat->show("fork_server", lifecycle_json(status, id));
        };
        const auto sub = pool->events().subscribe([note, weak_pool](const host::Event& e) {
            if (e.kind != host::Event::Kind::leases_changed && e.kind != host::Event::Kind::phase_changed) return;
            std::optional<host::ServerStatus> status;
            if (auto p = weak_pool.lock()) status = p->status(e.server);
            if (status && status->lazy) note(*status);
        });
        core::ScopeExit unsubscribe([weak_pool, sub] {
            if (auto p = weak_pool.lock()) p->events().unsubscribe(sub);
        });
        auto result = co_await inner(std::move(call), child);
        std::vector<std::string> names;
        for (const auto& entry : *lifecycles) names.push_back(entry.first);
        json::object servers;
        for (const auto& server : names) {
            if (auto status = pool->status(server)) note(*status);  // released: what it is now the fork let go
            servers[server] = (*lifecycles)[server];
        }
        chat->fork_records[id] = json::object{{"steps", std::move(*steps)}, {"servers", std::move(servers)}};
        co_return result;
    };
    return tool;
}

// What a run leaves behind when it ends, however it ends.
void end_run(Chat& chat, EventQueue& q) {
    chat.asking.clear();
    if (chat.questions) chat.questions->cancel_all();  // a Stop answers them as cancelled
    chat.events.reset();
    chat.approvals.clear();
    chat.running_calls.clear();
    chat.full_results.clear();
    chat.fork_records.clear();
    chat.live_text.clear();
    chat.live_reasoning.clear();
    chat.replay.clear();
    chat.detached = false;
    q.finish();
}

awaitable<void> run(std::shared_ptr<ChatService> self, std::shared_ptr<Chat> chat, std::shared_ptr<EventQueue> q,
                    std::string text, bool resume) {
    core::ScopeExit ended([chat, q] { end_run(*chat, *q); });
    auto o = observer_for(self, chat, q, std::string());
    // The servers' progress notifications of the calls this run started (a fork's too): `tool_progress` events. And
    // their servers' log messages while they run, in each running call's block (`tool_log`: a server's messages are
    // not tied to a request).
    std::weak_ptr<host::ServerPool> weak_pool = self->pool();
    host::EventBus::Id progress_sub = 0;
    if (auto pool = weak_pool.lock())
        progress_sub = pool->events().subscribe([chat](const host::Event& e) {
            if (e.kind == host::Event::Kind::log_message) {
                for (const auto& [id, call] : chat->running_calls) {
                    if (call.first != e.server) continue;
                    json::object data = e.data.is_object() ? e.data.get_object() : json::object{{"data", e.data}};
                    data["id"] = id;
                    if (!call.second.empty()) data["parent"] = call.second;
                    chat->show("tool_log", std::move(data));
                }
                return;
            }
            if (e.kind != host::Event::Kind::progress) return;
            const auto it = chat->running_calls.find(e.call_id);
            if (it == chat->running_calls.end() || it->second.first != e.server) return;
            json::object data = e.data.is_object() ? e.data.get_object() : json::object();
            data["id"] = e.call_id;
            if (!it->second.second.empty()) data["parent"] = it->second.second;
            chat->show("tool_progress", std::move(data));
        });
    core::ScopeExit stop_progress([weak_pool, progress_sub] {
        if (auto pool = weak_pool.lock()) pool->events().unsubscribe(progress_sub);
    });
    auto ex = co_await asio::this_coro::executor;
    agent::RunResult result;
    auto& conversation = *chat->conversation;
    if (resume)
        result = co_await asio::co_spawn(ex, conversation.run(o),
                                         asio::bind_cancellation_slot(chat->stop.slot(), asio::use_awaitable));
    else
        result = co_await asio::co_spawn(ex, conversation.send(std::move(text), o),
                                         asio::bind_cancellation_slot(chat->stop.slot(), asio::use_awaitable));
    self->set_switches(*chat, chat->settings);  // "always" answers given during the run
    json::object done{{"stop", agent::to_string(result.stop)},
                      {"turns", result.turns},
                      {"usage", json::object{{"promptTokens", result.usage.prompt_tokens},
                                             {"completionTokens", result.usage.completion_tokens}}}};
    if (!result.error.empty()) done["error"] = result.error;
    q->push("done", std::move(done));
}

// A conversation's tasks that were running when serve stopped, followed again as a run of their own: an open page
// sees it answering and attaches (tool_start, tool_task, tool_end, messages, done), and the results are stored with
// the message that asked for them in the transaction that ends the records.
awaitable<void> follow_tasks(std::shared_ptr<ChatService> self, std::shared_ptr<Chat> chat,
                             std::shared_ptr<EventQueue> q, std::vector<store::RunningTask> tasks) {
    core::ScopeExit ended([chat, q] { end_run(*chat, *q); });
    auto pool = self->pool().lock();
    if (!pool) co_return;
    auto o = observer_for(self, chat, q, std::string());
    std::vector<agent::InterruptedTask> interrupted;
    for (const auto& t : tasks) interrupted.push_back({t.tool_call_id, t.server, t.task_id});
    spdlog::info("web chat {}: following {} task(s) that were running before the restart", chat->id, tasks.size());
    auto ex = co_await asio::this_coro::executor;
    // One turn runs at a time: the tasks share the message that asked for them.
    auto batch = co_await asio::co_spawn(
        ex, agent::follow_interrupted_tasks(pool, tasks.front().assistant, std::move(interrupted), o),
        asio::bind_cancellation_slot(chat->stop.slot(), asio::use_awaitable));
    if (chat->conversation) {
        auto messages = chat->conversation->messages();
        messages.insert(messages.end(), batch.messages.begin(), batch.messages.end());
        chat->conversation->set_messages(std::move(messages));
    }
    o.on_messages(batch.messages, batch.meta);
    q->push("done", json::object{{"stop", "tasks"}, {"turns", 0}});
}

}  // namespace

constexpr std::size_t max_open_chats = 32;

// ---- ChatService ----------------------------------------------------------------------------------------------------

std::shared_ptr<ChatService> ChatService::create(std::shared_ptr<host::ServerPool> pool, ChatOptions options) {
    return std::shared_ptr<ChatService>(new ChatService(std::move(pool), std::move(options)));
}

ChatService::ChatService(std::shared_ptr<host::ServerPool> pool, ChatOptions options)
    : ex_(pool->executor()), pool_(pool), options_(std::move(options)), runs_(ex_) {}

store::ConversationStore& ChatService::store() {
    if (!store_) store_ = std::make_unique<store::ConversationStore>(options_.db);
    return *store_;
}

std::shared_ptr<Chat> ChatService::make_chat(std::int64_t id, std::vector<llm::Message> messages,
                                             store::ConversationSettings settings) {
    auto pool = pool_.lock();
    if (!pool || !options_.llm) return nullptr;
    auto chat = std::make_shared<Chat>();
    chat->id = id;
    host::ContextOptions co;
    co.name = "web:" + std::to_string(id);
    // A lazy server's resource (Attach) or tool (search_tools, then call_tool) is used by name: started for that use.
    co.calls_to_unseen_servers = true;
    chat->context = host::Context::create(pool, co);
    agent::LoopOptions loop;
    loop.max_turns = options_.max_turns;
    chat->conversation = std::make_unique<agent::Conversation>(chat->context, options_.llm, loop);
    chat->conversation->set_messages(std::move(messages));
    chat->questions = std::make_shared<QuestionBox>([weak = std::weak_ptr<Chat>(chat)](std::string_view event,
                                                                                       json::object data) {
        if (auto c = weak.lock(); c && c->events) c->events->push(std::string(event), std::move(data));
    });
    // Agents and skills: agent__<name> / skill__<name>, each run in a fork whose lazy servers start only for it.
    // The lazy servers' tools through tool search, as in `chat`: search_tools and call_tool (the conversation's
    // switches apply to what they call), when the config asks for it or the tool definitions would be large.
    std::optional<host::ToolCatalog> search;
    const auto& config = pool->config();
    const bool any_lazy = std::any_of(config.servers.begin(), config.servers.end(),
                                      [](const host::ServerConfig& s) { return s.lazy && s.enabled; });
    if (agent::tool_search_wanted(config.tool_search, any_lazy, chat->conversation->tool_definition_bytes(),
                                  options_.llm->settings().context_window)) {
        search = host::ToolCatalog::from_env(host::process_env());
        agent::ToolSearchEnvironment env{pool, chat->context, *search};
        for (auto& t : agent::tool_search_tools(std::move(env))) chat->conversation->add_local_tool(std::move(t));
    }
    if (options_.definitions) {
        // The conversation's approvals, shared: what the user allows while a fork runs (an answer, or the
        // switches) counts for the fork's next call, and what they allow for a fork's call is the conversation's.
        agent::ForkEnvironment env{pool, chat->context, options_.llm, options_.definitions(),
                                   chat->conversation->shared_approvals()};
        env.registry = options_.registry;
        env.model = chat->fork_model;
        *env.tool_search = search;  // forks offer it too
        for (auto& t : agent::fork_tools(env, 1, ""))
            chat->conversation->add_local_tool(nested(std::move(t), weak_from_this(), chat, pool));
    }
    set_switches(*chat, std::move(settings));
    // Open conversations are a cache (each holds a context and its messages): past the limit, idle ones go; they
    // reopen from the store when used again.
    for (auto it = chats_.begin(); it != chats_.end() && chats_.size() >= max_open_chats;)
        if (it->second->running())
            ++it;
        else
            it = chats_.erase(it);
    chats_[id] = chat;
    return chat;
}

std::shared_ptr<Chat> ChatService::open(std::int64_t id) {
    if (auto it = chats_.find(id); it != chats_.end()) {
        // Kept across a change of endpoint while it answered: reopened now on the new one.
        if (it->second->running() || it->second->conversation->llm_ptr() == options_.llm) return it->second;
        chats_.erase(it);
    }
    auto& db = store();
    if (!db.find(id)) return nullptr;
    std::vector<llm::Message> messages;
    for (auto& m : db.messages(id)) messages.push_back(std::move(m.message));
    return make_chat(id, std::move(messages), db.settings(id));
}

std::shared_ptr<Chat> ChatService::create_chat(std::string_view text) {
    const auto model = options_.llm ? options_.llm->settings().model : std::string();
    const auto id = store().create(core::shorten(core::first_line(text), 80), model);
    return make_chat(id, {}, {});
}

void ChatService::set_llm(llm::Settings settings, std::shared_ptr<llm::Client> client) {
    options_.not_configured_help = llm::not_configured_help(settings);
    options_.settings = std::move(settings);
    options_.llm = std::move(client);
    // Open conversations hold the old client: the idle ones are dropped (reopened on use with the new one); a
    // conversation answering now keeps its model until it is done, then is dropped too.
    for (auto it = chats_.begin(); it != chats_.end();)
        if (it->second->running())
            ++it;
        else
            it = chats_.erase(it);
}

void ChatService::forget(std::int64_t id) {
    auto it = chats_.find(id);
    if (it == chats_.end()) return;
    stop(*it->second);
    chats_.erase(it);
}

void ChatService::set_switches(Chat& chat, store::ConversationSettings settings) {
    auto& ctx = *chat.context;
    if (auto pool = pool_.lock())
        for (const auto& server : pool->config().servers)
            ctx.set_server_enabled(server.name, !settings.servers_off.count(server.name));
    for (const auto& [server, tool] : chat.settings.tools_off) ctx.set_tool_enabled(server, tool, true);
    for (const auto& [server, tool] : settings.tools_off) ctx.set_tool_enabled(server, tool, false);
    auto& approvals = chat.conversation->approvals();
    // What the user answered "always" to during runs is kept with what the settings say.
    approvals.tools.insert(settings.approved_tools.begin(), settings.approved_tools.end());
    approvals.servers.insert(settings.approved_servers.begin(), settings.approved_servers.end());
    settings.approved_tools = approvals.tools;
    settings.approved_servers = approvals.servers;
    chat.settings = std::move(settings);
    save_settings(chat);
}

void ChatService::save_settings(Chat& chat) {
    try {
        store().save_settings(chat.id, chat.settings);
    } catch (const std::exception&) {
        // The conversation goes on in memory; the next write reports the store's problem.
    }
}

std::shared_ptr<EventQueue> ChatService::start(std::shared_ptr<Chat> chat, std::string text, bool resume) {
    auto q = std::make_shared<EventQueue>(ex_);
    chat->events = q;
    chat->typed_text = text;
    chat->replay.clear();
    *chat->fork_model = chat->conversation->loop_options().model;
    // First, whatever the run does first: which conversation this is (a new one learns its id here).
    json::object conversation{{"id", chat->id}};
    try {
        if (auto info = store().find(chat->id)) conversation["title"] = info->title;
    } catch (const std::exception&) {
        // The title is for show; the store's problem surfaces with the first message it cannot save.
    }
    q->push("conversation", std::move(conversation));
    runs_.spawn(run(shared_from_this(), chat, q, std::move(text), resume), "web chat " + std::to_string(chat->id));
    return q;
}

void ChatService::follow_stored_tasks() {
    std::map<std::int64_t, std::vector<store::RunningTask>> by_conversation;
    try {
        for (auto& t : store().running_tasks(0)) by_conversation[t.conversation].push_back(std::move(t));
    } catch (const std::exception& e) {
        spdlog::warn("web chat: cannot read the running tasks: {}", e.what());
        return;
    }
    for (auto& [id, tasks] : by_conversation) {
        std::shared_ptr<Chat> chat;
        try {
            chat = open(id);
        } catch (const std::exception& e) {
            spdlog::warn("web chat {}: cannot open it: {}", id, e.what());
        }
        if (chat && chat->running()) continue;
        if (!chat) {  // no model configured: the results are stored all the same, for when one is
            chat = std::make_shared<Chat>();
            chat->id = id;
        }
        auto q = std::make_shared<EventQueue>(ex_);
        chat->events = q;
        chat->detached = true;
        q->push("conversation", json::object{{"id", id}});
        runs_.spawn(follow_tasks(shared_from_this(), chat, q, std::move(tasks)),
                    "web chat " + std::to_string(id) + ": stored tasks");
    }
}

json::array ChatService::pending_requests(std::int64_t id) const {
    auto it = chats_.find(id);
    return it == chats_.end() || !it->second->questions ? json::array() : it->second->questions->open();
}

const json::object* ChatService::find_request(std::int64_t id, const std::string& request_id) const {
    auto it = chats_.find(id);
    return it == chats_.end() || !it->second->questions ? nullptr : it->second->questions->find(request_id);
}

bool ChatService::answer_request(std::int64_t id, const std::string& request_id, json::object answer) {
    auto it = chats_.find(id);
    return it != chats_.end() && it->second->questions && it->second->questions->answer(request_id, std::move(answer));
}

json::array ChatService::pending_approvals(std::int64_t id) const {
    json::array out;
    auto it = chats_.find(id);
    if (it == chats_.end()) return out;
    // Request ids are "q<n>": order by n, not as strings.
    std::vector<std::pair<std::uint64_t, const json::object*>> open;
    for (const auto& [request, pending] : it->second->approvals)
        open.emplace_back(std::stoull(request.substr(1)), &pending->question);
    std::sort(open.begin(), open.end());
    for (const auto& [n, question] : open) out.push_back(*question);
    return out;
}

namespace {

awaitable<void> stop_after_grace(std::shared_ptr<ChatService> self, std::shared_ptr<Chat> chat,
                                 std::uint64_t generation) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_after(self->options().reattach_grace);
    co_await timer.async_wait(core::as_tuple_awaitable);
    // Nobody came back for it. A run no page started (stored tasks followed after a restart) goes on without one.
    if (chat->stream_generation == generation && !chat->detached) self->stop(*chat);
}

}  // namespace

void ChatService::stop_unless_reattached(std::shared_ptr<Chat> chat, std::uint64_t generation) {
    if (!chat->running()) return;
    runs_.spawn(stop_after_grace(shared_from_this(), std::move(chat), generation), "web chat: reattach grace");
}

void ChatService::stop(Chat& chat) {
    if (chat.running()) chat.stop.emit(asio::cancellation_type::terminal);
}

awaitable<void> ChatService::shutdown() {
    for (auto& [id, chat] : chats_) stop(*chat);
    co_await runs_.shutdown();
}

}  // namespace switchboard::webapi
