#include <switchboard/agent/fork.hpp>
#include <switchboard/agent/tool_search.hpp>

#include <switchboard/core/scope_exit.hpp>

#include <fmt/format.h>
#include <boost/asio/this_coro.hpp>

#include <algorithm>

namespace switchboard::agent {

namespace asio = boost::asio;
namespace json = boost::json;
using Status = llm::ToolExecutionResult::Status;

std::string fork_tool_name(const Definition& d) {
    return fmt::format("{}__{}", d.kind == Definition::Kind::agent ? "agent" : "skill", d.name);
}

std::string ForkResult::summary() const {
    if (!error.empty()) return error;
    std::string text = run.answer.empty() ? fmt::format("(no answer: {})", to_string(run.stop)) : run.answer;
    if (run.stop == StopReason::error) text += fmt::format("\n\n(the agent's model failed: {})", run.error);
    if (run.stop == StopReason::max_turns) text += fmt::format("\n\n(stopped after {} turns)", run.turns);
    if (!run.tool_calls.empty()) {
        std::vector<std::string> names;
        int errors = 0;
        for (const auto& c : run.tool_calls) {
            if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
            errors += c.is_error ? 1 : 0;
        }
        text += fmt::format("\n\n({} tool call{}: {}{})", run.tool_calls.size(), run.tool_calls.size() == 1 ? "" : "s",
                            fmt::join(names, ", "), errors ? fmt::format("; {} failed", errors) : "");
    }
    if (!unavailable.empty()) text += fmt::format("\n(unavailable: {})", fmt::join(unavailable, "; "));
    return text;
}

namespace {

bool contains(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

const Definition* find_agent(const std::vector<Definition>& defs, std::string_view name) {
    for (const auto& d : defs)
        if (d.kind == Definition::Kind::agent && d.name == name) return &d;
    return nullptr;
}

/// Servers that exist only for this definition (Claude Code inline `mcpServers`) join the pool as lazy servers; a
/// configured server of the same name wins.
asio::awaitable<void> add_inline_servers(const Definition& d, host::ServerPool& pool) {
    auto config = pool.config();
    bool changed = false;
    for (auto s : d.inline_servers) {
        if (config.find(s.name)) continue;
        s.lazy = true;
        config.servers.push_back(std::move(s));
        changed = true;
    }
    if (changed) co_await pool.apply(std::move(config));
}

// A served skill's other files, for whoever follows its instructions.
std::string files_note(const Definition& d) {
    if (!d.served || !d.served->files || d.served->files->size() <= 1) return {};
    std::string note = "\n\nFiles of this skill (read_skill_file reads them):";
    for (const auto& f : *d.served->files)
        if (f.uri != d.served->uri) note += fmt::format("\n- {} ({} bytes)", f.uri, f.size);
    return note;
}

// run_fork's body; `env.trace` is the fork's own span.
asio::awaitable<ForkResult> fork_body(const Definition& listed, std::string task, ForkEnvironment env,
                                      Observer& observer, int depth) {
    ForkResult out;
    const auto what = fmt::format("{} \"{}\"", listed.kind == Definition::Kind::agent ? "agent" : "skill",
                                  listed.name);
    const auto& span_context = env.trace;
    if (span_context.valid()) out.run.trace_id = span_context.trace_id_hex();
    // A skill served over MCP is read and checked now, not before (agent/mcp_skills.hpp).
    Definition loaded;
    if (listed.served) {
        loaded = listed;
        out.error = co_await load_mcp_skill(env.pool, loaded);
        if (!out.error.empty()) co_return out;
        auto& skills = env.loaded_skills->skills;
        const auto server = listed.required.front();
        std::erase_if(skills, [&](const LoadedSkills::Entry& e) {
            return e.server == server && e.skill.uri == loaded.served->uri;
        });
        skills.push_back({server, *loaded.served});
    }
    const Definition& definition = listed.served ? loaded : listed;
    // A skill that does not fork hands its instructions back to the conversation that called it.
    if (definition.kind == Definition::Kind::skill && !definition.fork) {
        out.run.answer = definition.body + files_note(definition);
        co_return out;
    }
    std::string system = definition.body + files_note(definition);
    std::string model = definition.model;
    auto max_turns = definition.max_turns;
    auto tools = definition.tools;
    if (!definition.run_as.empty()) {
        const auto* as = find_agent(env.definitions, definition.run_as);
        if (!as) {
            out.error = fmt::format("{} runs as agent \"{}\", which is not defined", what, definition.run_as);
            co_return out;
        }
        system = as->body + "\n\n" + definition.body;
        if (model.empty()) model = as->model;
        if (!max_turns) max_turns = as->max_turns;
        if (!tools) tools = as->tools;
    }
    if (model.empty() && env.model) model = *env.model;

    co_await add_inline_servers(definition, *env.pool);
    // Required servers must all be configured before anything starts.
    for (const auto& r : definition.required)
        if (!env.pool->config().find(r)) {
            out.error = fmt::format("{} needs server \"{}\", which is not configured in {}", what, r,
                                    env.pool->config().source);
            co_return out;
        }
    std::vector<std::string> declared = definition.required;
    for (const auto& o : definition.optional) {
        if (contains(declared, o)) continue;
        if (env.pool->config().find(o))
            declared.push_back(o);
        else
            out.unavailable.push_back(fmt::format("{} (not configured)", o));
    }

    host::ContextOptions co;
    co.name = fmt::format("agent:{}", definition.name);
    std::vector<std::string> servers = declared;
    const bool main_tools = !tools || !tools->empty();
    if (main_tools && env.main)
        for (const auto& s : env.main->servers())
            if (!contains(servers, s)) servers.push_back(s);
    co.servers = servers;
    if (tools && !tools->empty()) {
        co.allow_tools = *tools;
        for (const auto& d : declared) co.allow_tools.push_back(d + "__*");  // every tool of a declared server
    }
    auto context = host::Context::create(env.pool, std::move(co));
    for (const auto& d : declared) {
        // A lazy server's load (or an eager one's lease) is a span of the fork's trace.
        auto load = trace::Span::start("load", d, trace::SpanKind::internal, span_context);
        load.set("switchboard.server.phase", host::to_string(env.pool->phase(d)));
        auto leased = co_await context->add_server(d);
        if (!leased) load.set_error("unavailable", leased.error().message);
        load.end();
        if (leased) continue;
        if (contains(definition.required, d)) {
            out.error = fmt::format("{} needs server \"{}\", which could not start: {}", what, d,
                                    leased.error().message);
            co_return out;
        }
        out.unavailable.push_back(fmt::format("{} (could not start: {})", d, leased.error().message));
    }
    out.servers = declared;
    RunningFork running;
    running.kind = definition.kind == Definition::Kind::agent ? "agent" : "skill";
    running.name = definition.name;
    running.depth = depth;
    running.parent = !env.parent.empty() ? env.parent : env.main ? env.main->name() : std::string();
    running.servers = declared;
    running.started_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    const auto registered = env.registry ? env.registry->add(std::move(running)) : 0;
    core::ScopeExit unregister([registry = env.registry, registered] {
        if (registry) registry->remove(registered);
    });

    auto llm = env.llm;
    if (!model.empty() && model != llm->settings().model) {
        auto settings = llm->settings();
        settings.model = model;
        llm = std::make_shared<llm::Client>(co_await asio::this_coro::executor, std::move(settings));
    }
    LoopOptions loop;
    loop.system_prompt = system;
    loop.agent_name = definition.name;
    loop.trace = span_context;
    if (max_turns) loop.max_turns = *max_turns;
    Conversation conversation(context, llm, loop);
    conversation.share_approvals(env.approvals);  // live: the parent's object, not a copy
    auto nested = env;                            // its agents are forked from this fork
    nested.parent = context->name();
    for (auto& t : fork_tools(nested, depth + 1, definition.name)) conversation.add_local_tool(std::move(t));
    if (env.tool_search && *env.tool_search) {
        ToolSearchEnvironment search{env.pool, context, **env.tool_search};
        for (auto& t : tool_search_tools(std::move(search))) conversation.add_local_tool(std::move(t));
    }

    // The fork's steps are shown (and its calls approved) like the main conversation's; its messages stay its own.
    Observer inner;
    inner.on_tool_start = observer.on_tool_start;
    inner.on_tool_end = observer.on_tool_end;
    inner.ask_approval = observer.ask_approval;
    inner.on_notice = observer.on_notice;
    inner.on_model_request = observer.on_model_request;  // timestamps (the bench's fork start)
    if (!out.unavailable.empty())
        task += fmt::format("\n\n(These servers are unavailable for this task: {}.)", fmt::join(out.unavailable, "; "));
    out.run = co_await conversation.send(std::move(task), inner);
    co_return out;
}

}  // namespace

asio::awaitable<ForkResult> run_fork(const Definition& listed, std::string task, ForkEnvironment env,
                                     Observer& observer, int depth) {
    // The fork is one `invoke_agent` span (OTel's GenAI conventions): its loads, model requests and calls under it.
    trace::Span span;
    if (env.trace.valid())
        span = trace::Span::start("invoke_agent", listed.name, trace::SpanKind::internal, env.trace);
    else
        span = trace::Span::start_local_root("invoke_agent", listed.name, trace::SpanKind::internal);
    span.set("gen_ai.operation.name", "invoke_agent");
    span.set("gen_ai.agent.name", listed.name);
    span.set("switchboard.fork.kind", listed.kind == Definition::Kind::agent ? "agent" : "skill");
    span.set("switchboard.fork.depth", depth);
    env.trace = span.context();
    auto out = co_await fork_body(listed, std::move(task), std::move(env), observer, depth);
    span.set("gen_ai.usage.input_tokens", out.run.usage.prompt_tokens);
    span.set("gen_ai.usage.output_tokens", out.run.usage.completion_tokens);
    if (!out.error.empty())
        span.set_error("fork_error", out.error);
    else if (out.run.stop == StopReason::error)
        span.set_error("agent_error", out.run.error);
    co_return out;
}

std::vector<LocalTool> fork_tools(const ForkEnvironment& env, int depth, const std::string& self) {
    std::vector<LocalTool> tools;
    if (depth > max_fork_depth) return tools;
    auto shared = std::make_shared<const ForkEnvironment>(env);
    for (std::size_t i = 0; i < env.definitions.size(); ++i) {
        const auto& d = env.definitions[i];
        if (d.name == self) continue;
        LocalTool t;
        t.name = fork_tool_name(d);
        t.description = d.description.empty() ? fmt::format("Runs the {} \"{}\".", d.kind == Definition::Kind::agent
                                                                                        ? "agent"
                                                                                        : "skill",
                                                             d.name)
                                              : d.description;
        t.parameters = json::object{
            {"type", "object"},
            {"properties", json::object{{"task", json::object{{"type", "string"},
                                                               {"description", "What to do, with everything needed"}}}}},
            {"required", json::array{"task"}}};
        t.run = [shared, i, depth](llm::ToolCall call, Observer& observer) -> asio::awaitable<llm::ToolExecutionResult> {
            std::string parse_error;
            auto args = llm::parse_tool_arguments(call.arguments, parse_error);
            const auto* task = args ? args->if_contains("task") : nullptr;
            if (!task || !task->is_string())
                co_return llm::error_result(call, "switchboard",
                                            fmt::format("tool \"{}\" needs a string argument \"task\"{}", call.name,
                                                        parse_error.empty() ? "" : ": " + parse_error),
                                            Status::bad_arguments);
            const auto& definition = shared->definitions[i];
            auto env = *shared;
            env.trace = call.trace;  // under the model turn that asked for it
            auto result = co_await run_fork(definition, std::string(task->get_string()), std::move(env), observer, depth);
            const bool failed = !result.error.empty() || result.run.stop == StopReason::error;
            llm::ToolExecutionResult r;
            r.status = result.run.stop == StopReason::cancelled ? Status::cancelled
                       : failed                                  ? Status::failed
                                                                 : Status::ok;
            r.tool_call_id = call.id;
            r.name = call.name;
            r.server = "switchboard";
            r.is_error = failed || result.run.stop == StopReason::cancelled;
            r.parts.push_back(llm::MessagePart::make_text(result.summary()));
            co_return r;
        };
        tools.push_back(std::move(t));
    }
    if (std::any_of(env.definitions.begin(), env.definitions.end(), [](const Definition& d) { return d.served; }))
        tools.push_back(read_skill_file_tool(env.pool, env.loaded_skills));
    return tools;
}

}  // namespace switchboard::agent
