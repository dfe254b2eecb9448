#include <switchboard/agent/conversation.hpp>

#include <switchboard/agent/context_fit.hpp>
#include <switchboard/agent/tool_runner.hpp>
#include <switchboard/agent/tool_schema.hpp>

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <chrono>
#include <utility>

namespace switchboard::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using Status = llm::ToolExecutionResult::Status;

std::string_view to_string(StopReason r) {
    switch (r) {
    case StopReason::done: return "done";
    case StopReason::max_turns: return "max_turns";
    case StopReason::cancelled: return "cancelled";
    case StopReason::error: return "error";
    }
    return "error";
}

json::object ToolCallRecord::to_json() const {
    json::value args = json::string(arguments);
    // Arguments are shown as the object they are when they parse (they are what the model wrote otherwise).
    std::string error;
    if (auto parsed = llm::parse_tool_arguments(arguments, error)) args = std::move(*parsed);
    json::object o{{"name", name},        {"server", server}, {"tool", tool}, {"arguments", std::move(args)},
                   {"isError", is_error}, {"denied", denied}, {"ms", ms}};
    if (!trace_id.empty()) o["traceId"] = trace_id;
    return o;
}

Conversation::Conversation(std::shared_ptr<host::Context> context, std::shared_ptr<llm::Client> llm,
                           LoopOptions options)
    : context_(std::move(context)), llm_(std::move(llm)), options_(std::move(options)) {}

void Conversation::share_approvals(std::shared_ptr<Approvals> approvals) {
    if (!approvals) return;
    approvals_ = std::move(approvals);
    shared_approvals_ = true;
}

void Conversation::set_messages(std::vector<llm::Message> messages) { messages_ = std::move(messages); }

void Conversation::clear() { messages_.clear(); }

std::size_t Conversation::tool_definition_bytes() { return json::serialize(request_tools()).size(); }

void Conversation::add_local_tool(LocalTool tool) {
    for (auto& t : local_tools_)
        if (t.name == tool.name) {
            t = std::move(tool);
            return;
        }
    local_tools_.push_back(std::move(tool));
}

json::array Conversation::request_tools() {
    auto tools = openai_tools(context_->tools());
    for (const auto& t : local_tools_) {
        json::object f{
            {"name", t.name}, {"description", t.description}, {"parameters", normalise_schema(t.parameters)}};
        tools.push_back(json::object{{"type", "function"}, {"function", std::move(f)}});
    }
    return tools;
}

void Conversation::emit(Observer& observer, std::vector<llm::Message> batch, std::vector<json::object> meta) {
    if (observer.on_messages) observer.on_messages(batch, meta);
}

llm::Message Conversation::user_message(std::string text, json::object& meta) {
    auto msg = llm::Message::user(std::move(text));
    json::array attached;
    for (auto& a : context_->consume_attachments()) {
        json::object record{{"server", a.server}, {"uri", a.uri}};
        if (a.content) {
            auto parts = llm::format_resource_contents(a.content->contents);
            if (!llm_->settings().vision) parts = describe_media(std::move(parts));
            for (auto& p : parts) msg.content.push_back(std::move(p));
        } else {
            // The model is told: the user meant to show it something.
            msg.content.push_back(llm::MessagePart::make_text(
                fmt::format("Resource {} (server \"{}\") could not be attached: {}", a.uri, a.server, a.error)));
            record["error"] = a.error;
        }
        attached.push_back(std::move(record));
    }
    if (!attached.empty()) meta["attachments"] = std::move(attached);
    return msg;
}

asio::awaitable<RunResult> Conversation::send(std::string text, Observer& observer) {
    std::vector<llm::Message> batch;
    std::vector<json::object> meta;
    if (messages_.empty() && !options_.system_prompt.empty()) {
        batch.push_back(llm::Message::system(options_.system_prompt));
        meta.emplace_back();
    }
    json::object user_meta;
    batch.push_back(user_message(std::move(text), user_meta));
    meta.push_back(std::move(user_meta));
    messages_.insert(messages_.end(), batch.begin(), batch.end());
    emit(observer, std::move(batch), std::move(meta));
    co_return co_await loop(observer);
}

asio::awaitable<RunResult> Conversation::run(Observer& observer) { co_return co_await loop(observer); }

namespace {

bool cancelled(const asio::cancellation_state& s) { return s.cancelled() != asio::cancellation_type::none; }

llm::StreamCallbacks stream_callbacks(Observer& observer) {
    llm::StreamCallbacks cb;
    cb.on_content = observer.on_content;
    cb.on_reasoning = observer.on_reasoning;
    return cb;
}

}  // namespace

asio::awaitable<RunResult> Conversation::loop(Observer& observer) {
    // Cancellation is an outcome here, not an exception: what completed is kept and reported.
    co_await asio::this_coro::throw_if_cancelled(false);
    RunResult result;
    // The run's span: the one it was given (a fork's), or its own `invoke_agent`, the root of a new trace.
    trace::Span span;
    if (!options_.trace.valid()) {
        span = trace::Span::start_local_root("invoke_agent", options_.agent_name, trace::SpanKind::internal);
        span.set("gen_ai.operation.name", "invoke_agent");
        span.set("gen_ai.agent.name", options_.agent_name);
    }
    const auto run_trace = options_.trace.valid() ? options_.trace : span.context();
    if (run_trace.valid()) result.trace_id = run_trace.trace_id_hex();
    bool overflow_retried = false;
    for (;;) {
        if (cancelled(co_await asio::this_coro::cancellation_state)) {
            result.stop = StopReason::cancelled;
            break;
        }
        if (result.turns >= options_.max_turns) {
            result.stop = StopReason::max_turns;
            break;
        }
        // A server that said its tools changed (during the last calls) is listed again before the model sees them:
        // a definition changed since it was approved must not reach the request (host/tool_pins.hpp).
        co_await context_->pool().wait_for_relists(std::chrono::seconds(5));
        llm::ChatRequest request;
        request.model = options_.model;
        request.trace = run_trace;
        request.tools = request_tools();
        const auto sent_estimate = fit_request(request, observer);
        if (!options_.app_context.empty()) {
            request.messages.push_back(
                llm::Message::system("Context from an app the user sees:\n" + std::exchange(options_.app_context, std::string())));
        }
        ++result.turns;
        if (observer.on_model_request) observer.on_model_request();
        auto response = co_await llm_->chat(std::move(request), stream_callbacks(observer));
        if (observer.on_model_response) observer.on_model_response();
        if (!response && response.error().context_overflow && !overflow_retried) {
            // The endpoint knows its window better than the configuration: fit to what it said and ask again, once.
            overflow_retried = true;
            if (learn_window(*response.error().context_overflow, sent_estimate)) {
                --result.turns;
                continue;
            }
        }
        if (response) {
            overflow_retried = false;
            if (response->message.usage && response->message.usage->prompt_tokens > 0 && sent_estimate > 0)
                token_ratio_ = std::clamp(
                    static_cast<double>(response->message.usage->prompt_tokens) / static_cast<double>(sent_estimate),
                    0.5, 3.0);
        }
        if (!response) {
            auto e = response.error();
            if (e.context_overflow)
                e.message += fmt::format(
                    " (the conversation, ~{} tokens, does not fit the model's context window even with earlier "
                    "messages left out; start a new conversation or use a model with a larger window)",
                    sent_estimate);
            result.stop = e.kind == llm::Error::Kind::cancelled ? StopReason::cancelled : StopReason::error;
            if (result.stop == StopReason::error) result.error = e.message;
            // Part of an answer that was already shown is kept, marked as such; its tool calls are not (their
            // arguments may be cut).
            if (e.partial && !e.partial->text().empty()) {
                auto partial = *e.partial;
                partial.tool_calls.clear();
                result.answer = partial.text();
                json::object meta{{"partial", true}};
                if (!result.error.empty()) meta["error"] = result.error;
                if (result.stop == StopReason::cancelled) meta["cancelled"] = true;
                messages_.push_back(partial);
                emit(observer, {std::move(partial)}, {std::move(meta)});
            }
            break;
        }
        auto& message = response->message;
        for (auto& call : message.tool_calls) call.trace = response->trace;
        if (message.usage) result.usage += *message.usage;
        messages_.push_back(message);
        if (message.tool_calls.empty()) {
            result.answer = message.text();
            emit(observer, {message}, {json::object{{"finishReason", response->finish_reason}}});
            result.stop = StopReason::done;
            break;
        }
        if (!message.text().empty()) result.answer = message.text();
        std::vector<llm::Message> batch{message};
        std::vector<json::object> meta{json::object{{"finishReason", response->finish_reason}}};
        const auto first_record = result.tool_calls.size();
        auto results = co_await run_calls(message.tool_calls, observer, result);
        for (std::size_t i = 0; i < results.size(); ++i) {
            auto& r = results[i];
            if (!llm_->settings().vision) r.parts = describe_media(std::move(r.parts));
            batch.push_back(llm::Message::tool(r));
            messages_.push_back(batch.back());
            auto record = result.tool_calls[first_record + i].to_json();
            record.erase("name");  // the message has it
            meta.push_back(std::move(record));
        }
        emit(observer, std::move(batch), std::move(meta));
    }
    if (span.recording()) {
        span.set("gen_ai.usage.input_tokens", result.usage.prompt_tokens);
        span.set("gen_ai.usage.output_tokens", result.usage.completion_tokens);
        span.set("switchboard.turns", result.turns);
        if (result.stop == StopReason::error) span.set_error("agent_error", result.error);
        if (result.stop == StopReason::cancelled) span.set_error("cancelled", "cancelled");
    }
    co_return result;
}

std::optional<std::int64_t> Conversation::context_window() const {
    auto window = llm_->settings().context_window;
    if (learned_window_ && (!window || *learned_window_ < *window)) window = learned_window_;
    return window;
}

std::int64_t Conversation::fit_request(llm::ChatRequest& request, Observer& observer) {
    const auto window = context_window();
    if (!window) {
        request.messages = messages_;
        return 0;
    }
    const auto tool_tokens = estimate_tokens(json::serialize(request.tools).size());
    // Budget in the estimate's units: the endpoint's own counts (usage.prompt_tokens) say how far off bytes / 4 is.
    const auto budget = static_cast<std::int64_t>(
        static_cast<double>(*window - answer_reserve(*window, llm_->settings().max_tokens)) / token_ratio_);
    auto fit = fit_to_window(messages_, tool_tokens, budget);
    if (fit.changed() || !fit.fits) {
        auto summary = fit.summary(*window);
        if (summary != last_fit_summary_ && observer.on_notice) observer.on_notice(summary);
        last_fit_summary_ = std::move(summary);
    }
    request.messages = std::move(fit.messages);
    return fit.estimated_tokens;
}

bool Conversation::learn_window(const llm::ContextOverflow& overflow, std::int64_t sent_estimate) {
    if (sent_estimate == 0) sent_estimate = estimate_tokens(messages_);
    // Without a number, assume the window is three quarters of what was just sent (in the endpoint's tokens).
    const auto window = overflow.window
                            ? *overflow.window
                            : static_cast<std::int64_t>(static_cast<double>(sent_estimate) * token_ratio_ * 0.75);
    const auto before = context_window();
    if (window <= 0 || (before && *before <= window && !overflow.window)) return false;
    learned_window_ = window;
    // A window the request already fit by our estimate means bytes / 4 undercounts: count more per byte.
    if (before && *before <= window) token_ratio_ = std::min(3.0, token_ratio_ * 1.5);
    return true;
}

namespace {

struct CallSlot {
    llm::ToolCall call;
    llm::ToolExecutionResult result;
    std::int64_t ms = 0;
};

asio::awaitable<void> run_one(std::shared_ptr<host::Context> context, std::shared_ptr<CallSlot> slot,
                              Observer* observer, std::string server) {
    const auto start = std::chrono::steady_clock::now();
    host::ToolCallOptions options;
    options.call_id = slot->call.id;
    options.trace = slot->call.trace;
    if (observer->on_task)  // the observer outlives the call: run_calls waits for every call
        options.on_task = [observer, call = slot->call, server](const mcp::TaskProgress& t) {
            observer->on_task(call, server, t);
        };
    slot->result = co_await execute_tool(*context, slot->call, std::move(options));
    slot->ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

// A host-provided tool (an agent's fork, say); the slot's call is its input.
asio::awaitable<void> run_local(const LocalTool& tool, std::shared_ptr<CallSlot> slot, Observer& observer) {
    const auto start = std::chrono::steady_clock::now();
    slot->result = co_await tool.run(slot->call, observer);
    if (slot->result.tool_call_id.empty()) slot->result.tool_call_id = slot->call.id;
    if (slot->result.name.empty()) slot->result.name = slot->call.name;
    slot->ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const LocalTool* Conversation::find_local(std::string_view name) const {
    for (const auto& t : local_tools_)
        if (t.name == name) return &t;
    return nullptr;
}

asio::awaitable<std::vector<llm::ToolExecutionResult>> Conversation::run_calls(const std::vector<llm::ToolCall>& calls,
                                                                               Observer& observer, RunResult& result) {
    std::vector<llm::ToolExecutionResult> results(calls.size());
    std::vector<ToolCallRecord> records(calls.size());
    std::vector<std::shared_ptr<CallSlot>> slots(calls.size());
    std::vector<const LocalTool*> local_calls(calls.size(), nullptr);
    // Resolve and approve one by one (approval prompts are sequential), then run what was allowed concurrently.
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const auto& call = calls[i];
        auto& rec = records[i];
        rec.id = call.id;
        rec.name = call.name;
        rec.arguments = call.arguments;
        if (call.trace.valid()) rec.trace_id = call.trace.trace_id_hex();
        // What the approvals are checked against: the call itself, or for a local tool with approve_as the call it
        // stands for.
        ApprovalRequest request;
        if (const auto* local = find_local(call.name)) {
            rec.server = "switchboard";
            rec.tool = local->name;
            local_calls[i] = local;
            std::optional<ApprovalRequest> as;
            if (local->approve_as) as = local->approve_as(call);
            if (!as) continue;
            request = std::move(*as);
            rec.server = request.server;
            rec.tool = request.tool;
        } else {
            auto resolved = co_await context_->resolve_tool(call.name);
            if (!resolved) {
                results[i] = llm::error_result(call, {}, resolved.error().message, Status::unknown_tool);
                rec.is_error = true;
                continue;
            }
            rec.server = resolved->server;
            rec.tool = resolved->tool;
            request.name = call.name;
            request.server = rec.server;
            request.tool = rec.tool;
            request.arguments = call.arguments;
        }
        // Checked now, not when the turn began: a shared object (a fork's) may have changed while this one ran.
        bool allowed = approvals_->allows(request.name, rec.server, rec.tool);
        if (!allowed && observer.ask_approval && !cancelled(co_await asio::this_coro::cancellation_state)) {
            const auto decision = co_await observer.ask_approval(request);
            const auto remembered = shared_approvals_ ? fmt::format("{}__{}", rec.server, rec.tool) : request.name;
            approvals_->remember(decision, remembered, rec.server);
            allowed = decision != Decision::deny;
        }
        const bool cancelled_now = cancelled(co_await asio::this_coro::cancellation_state);
        if (!allowed || cancelled_now) local_calls[i] = nullptr;  // it does not run
        if (cancelled_now) {
            results[i] = llm::error_result(call, rec.server, "cancelled by the user before it ran", Status::cancelled);
            rec.is_error = true;
            continue;
        }
        if (!allowed) {
            results[i] = llm::error_result(
                call, rec.server,
                observer.ask_approval
                    ? fmt::format("The user denied this call of tool \"{}\". Do not call it again with the same "
                                  "arguments unless the user asks.",
                                  request.name)
                    : fmt::format("Tool \"{}\" is not allowed in this non-interactive run (the user can allow it with "
                                  "--allow-tools or --yes); it was not called.",
                                  request.name));
            rec.is_error = true;
            rec.denied = true;
            continue;
        }
        if (!local_calls[i]) slots[i] = std::make_shared<CallSlot>(CallSlot{call, {}, 0});
    }

    auto ex = co_await asio::this_coro::executor;
    using Op = decltype(asio::co_spawn(ex, run_one(context_, nullptr, nullptr, {}), asio::deferred));
    std::vector<Op> ops;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        if (local_calls[i]) slots[i] = std::make_shared<CallSlot>(CallSlot{calls[i], {}, 0});
        if (!slots[i]) continue;
        if (observer.on_tool_start) observer.on_tool_start(calls[i], records[i].server);
        if (local_calls[i])
            ops.push_back(asio::co_spawn(ex, run_local(*local_calls[i], slots[i], observer), asio::deferred));
        else
            ops.push_back(asio::co_spawn(ex, run_one(context_, slots[i], &observer, records[i].server), asio::deferred));
    }
    if (!ops.empty()) {
        // wait_for_all: a cancellation of this coroutine is forwarded to every call, and each ends with its result.
        co_await asio::experimental::make_parallel_group(std::move(ops))
            .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
    }
    for (std::size_t i = 0; i < calls.size(); ++i) {
        if (slots[i]) {
            results[i] = std::move(slots[i]->result);
            records[i].ms = slots[i]->ms;
            records[i].is_error = results[i].is_error || results[i].status != Status::ok;
        }
        if (observer.on_tool_end) observer.on_tool_end(records[i], results[i]);
        result.tool_calls.push_back(records[i]);
    }
    co_return results;
}

asio::awaitable<jsonrpc::Outcome<std::size_t>> Conversation::insert_prompt(std::string server, std::string name,
                                                                           std::map<std::string, std::string> arguments,
                                                                           Observer& observer) {
    json::object args_json;
    for (const auto& [k, v] : arguments) args_json[k] = v;
    auto r = co_await context_->get_prompt(server, name, std::move(arguments));
    if (!r) co_return r.error();
    std::vector<llm::Message> batch;
    std::vector<json::object> meta;
    for (const auto& m : r->messages) {
        const auto* o = m.if_object();
        if (!o) continue;
        const auto* role = o->if_contains("role");
        const auto* content = o->if_contains("content");
        if (!role || !role->is_string() || !content) continue;
        llm::Message msg;
        msg.role = role->get_string() == "assistant" ? llm::Role::assistant : llm::Role::user;
        mcp::CallToolResult as_result;
        // A prompt message holds one content block (older servers: sometimes a list).
        if (const auto* list = content->if_array()) {
            for (const auto& c : *list) as_result.content.push_back(mcp::Content::from_json(c));
        } else {
            as_result.content.push_back(mcp::Content::from_json(*content));
        }
        msg.content = llm::format_tool_content(as_result);
        if (!llm_->settings().vision) msg.content = describe_media(std::move(msg.content));
        batch.push_back(std::move(msg));
        meta.push_back(
            json::object{{"prompt", json::object{{"server", server}, {"name", name}, {"arguments", args_json}}}});
    }
    const auto n = batch.size();
    if (messages_.empty() && !options_.system_prompt.empty()) {
        batch.insert(batch.begin(), llm::Message::system(options_.system_prompt));
        meta.insert(meta.begin(), json::object{});
    }
    messages_.insert(messages_.end(), batch.begin(), batch.end());
    emit(observer, std::move(batch), std::move(meta));
    co_return n;
}

}  // namespace switchboard::agent
