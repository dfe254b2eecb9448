// `switchboard chat`: a conversation at the terminal. The answer streams in (reasoning dimmed), tool calls and their
// results are folded to a few lines, calls the conversation has not approved are put to the user, Ctrl-C cancels the
// turn (the model's stream and the running calls) and Ctrl-D quits. Slash commands: see kHelp.
#include "agent_session.hpp"
#include "line_reader.hpp"
#include "terminal_requests.hpp"

#include <switchboard/agent/server_requests.hpp>
#include <switchboard/core/text.hpp>

#include <fmt/format.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <csignal>
#include <cstdlib>
#include <sstream>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

constexpr std::string_view kHelp = R"(Commands:
  /servers                    the servers and their state
  /tools                      the tools this conversation offers the model
  /attach SERVER URI          attach a resource to your next message
  /prompt SERVER NAME k=v...  insert a server's prompt (and answer it)
  /disable NAME, /enable NAME switch a server or a tool (server__tool) off or on for this conversation
  /model NAME                 use another model
  /new                        start a new conversation
  /quit                       leave (Ctrl-D too); Ctrl-C cancels a turn)";

std::filesystem::path history_path() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state)
        return std::filesystem::path(state) / "switchboard" / "chat_history";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::filesystem::path(home) / ".local" / "state" / "switchboard" / "chat_history";
    return {};
}

std::vector<std::string> words(std::string_view line) {
    std::istringstream in{std::string(line)};
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

/// The state one chat needs across turns and commands.
struct Chat {
    Chat(Host& host, AgentSession& s, LineReader& r, llm::Client& model)
        : h(host), session(s), reader(r), llm(model), tty(r.interactive()) {}
    Host& h;
    AgentSession& session;
    LineReader& reader;
    llm::Client& llm;
    bool tty = false;
    bool turn_running = false;
    asio::cancellation_signal cancel;
    // Output state of the streaming answer.
    enum class Stream { none, reasoning, content } stream = Stream::none;

    void end_stream() {
        if (stream == Stream::reasoning && tty) fmt::print("\x1b[0m");
        if (stream != Stream::none) fmt::print("\n");
        stream = Stream::none;
        std::fflush(stdout);
    }

    agent::Observer observer() {
        agent::Observer o;
        o.on_reasoning = [this](std::string_view d) {
            if (stream != Stream::reasoning) {
                end_stream();
                fmt::print("{}thinking: ", tty ? "\x1b[2m" : "");
                stream = Stream::reasoning;
            }
            fmt::print("{}", d);
            std::fflush(stdout);
        };
        o.on_content = [this](std::string_view d) {
            if (stream != Stream::content) {
                end_stream();
                stream = Stream::content;
            }
            fmt::print("{}", d);
            std::fflush(stdout);
        };
        o.on_tool_start = [this](const llm::ToolCall& call, const std::string& server) {
            end_stream();
            fmt::print("{}\n", tool_start_line(call, server));
        };
        o.on_tool_end = [this](const agent::ToolCallRecord& record, const llm::ToolExecutionResult& result) {
            end_stream();
            if (record.server.empty() || record.denied) fmt::print("→ {} {}\n", record.name, record.arguments);
            fmt::print("{}\n", tool_end_line(record, result, 3));
        };
        o.on_task = [this](const llm::ToolCall& call, const std::string& server, const mcp::TaskProgress& t) {
            end_stream();
            fmt::print("{}\n", task_status_line(t));
            session.track_task(call, server, t);
        };
        o.on_notice = [this](std::string_view text) {
            end_stream();
            fmt::print("({})\n", text);
        };
        o.on_messages = [this](std::span<const llm::Message> m, std::span<const json::object> meta) {
            session.persist(m, meta);
        };
        o.ask_approval = [this](const agent::ApprovalRequest& r) -> awaitable<agent::Decision> {
            end_stream();
            fmt::print("Allow {} (server \"{}\") with {}?\n", r.name, r.server,
                       core::shorten(r.arguments.empty() ? "{}" : r.arguments, 300));
            for (;;) {
                auto answer = co_await reader.read_line("[y] once  [t] always this tool  [s] always this server  [n] no: ");
                if (!answer) co_return agent::Decision::deny;
                const auto a = core::ascii_lower(core::shorten(*answer, 8));
                if (a == "y" || a == "yes") co_return agent::Decision::allow_once;
                if (a == "t") co_return agent::Decision::always_tool;
                if (a == "s") co_return agent::Decision::always_server;
                if (a == "n" || a == "no" || a.empty()) co_return agent::Decision::deny;
            }
        };
        return o;
    }

    awaitable<void> run_turn(std::optional<std::string> text) {
        co_await h.pool->wait_until_settled();
        session.offer_tool_search(h);  // the automatic rule needs the settled tool list
        auto o = observer();
        auto ex = co_await asio::this_coro::executor;
        turn_running = true;
        auto& conv = session.conversation();
        // Two co_awaits in one conditional expression are miscompiled by GCC 12: one statement each.
        agent::RunResult result;
        if (text) {
            result = co_await asio::co_spawn(ex, conv.send(std::move(*text), o),
                                             asio::bind_cancellation_slot(cancel.slot(), asio::use_awaitable));
        } else {
            result = co_await asio::co_spawn(ex, conv.run(o),
                                             asio::bind_cancellation_slot(cancel.slot(), asio::use_awaitable));
        }
        turn_running = false;
        end_stream();
        if (result.stop == agent::StopReason::error) fmt::print("(the model failed: {})\n", result.error);
        if (result.stop == agent::StopReason::cancelled) fmt::print("(cancelled)\n");
        if (result.stop == agent::StopReason::max_turns) fmt::print("(stopped after {} model turns)\n", result.turns);
    }

    void set_enabled(const std::string& name, bool enabled) {
        auto& ctx = *h.main;
        if (h.pool->config().find(name)) {
            ctx.set_server_enabled(name, enabled);
            session.save_settings();
            fmt::print("server \"{}\" {} for this conversation\n", name, enabled ? "on" : "off");
            return;
        }
        std::string server, tool;
        if (const auto* t = ctx.tools().find(name)) {
            server = t->server;
            tool = t->tool->name;
        } else if (auto sep = name.find("__"); sep != std::string::npos) {
            server = name.substr(0, sep);
            tool = name.substr(sep + 2);
        } else {
            for (const auto& [s, t] : session.tools_off())
                if (t == name) server = s, tool = t;
        }
        if (server.empty() || !h.pool->config().find(server)) {
            fmt::print("no server or tool \"{}\" (see /servers and /tools)\n", name);
            return;
        }
        session.set_tool_enabled(server, tool, enabled);
        fmt::print("tool \"{}\" of server \"{}\" {} for this conversation\n", tool, server, enabled ? "on" : "off");
    }

    /// A slash command; false to quit.
    awaitable<bool> command(const std::string& line) {
        auto w = words(line);
        const auto& cmd = w[0];
        if (cmd == "/quit" || cmd == "/exit") co_return false;
        if (cmd == "/help") {
            fmt::print("{}\n", kHelp);
        } else if (cmd == "/servers") {
            fmt::print("{}", render_status(h.pool->status()));
            for (const auto& s : h.pool->config().servers)
                if (!h.main->server_enabled(s.name)) fmt::print("({} is off for this conversation)\n", s.name);
        } else if (cmd == "/tools") {
            co_await h.pool->wait_until_settled();
            for (const auto& t : h.main->tools().tools())
                fmt::print("{:<32} {:<16} {}\n", t.name, t.server, core::first_line(t.tool->description, 60));
            for (const auto& [s, t] : session.tools_off()) fmt::print("({}__{} is off for this conversation)\n", s, t);
        } else if (cmd == "/attach" && w.size() == 3) {
            const auto id = co_await h.main->attach_resource(w[1], w[2]);
            for (const auto& a : h.main->attachments().items())
                if (a.id == id)
                    fmt::print("{}\n", a.error.empty() ? fmt::format("attached {} to your next message", a.uri)
                                                       : fmt::format("cannot attach {}: {}", a.uri, a.error));
        } else if (cmd == "/prompt" && w.size() >= 3) {
            std::map<std::string, std::string> args;
            for (std::size_t i = 3; i < w.size(); ++i) {
                auto eq = w[i].find('=');
                if (eq == std::string::npos) {
                    fmt::print("prompt arguments are key=value, got \"{}\"\n", w[i]);
                    co_return true;
                }
                args[w[i].substr(0, eq)] = w[i].substr(eq + 1);
            }
            if (session.title_hint.empty()) session.title_hint = fmt::format("{} {}", w[1], w[2]);
            auto o = observer();
            auto r = co_await session.conversation().insert_prompt(w[1], w[2], std::move(args), o);
            if (!r) {
                fmt::print("cannot get prompt \"{}\" of server \"{}\": {}\n", w[2], w[1], r.error().message);
                co_return true;
            }
            fmt::print("(inserted {} message{} of prompt {})\n", *r, *r == 1 ? "" : "s", w[2]);
            const auto& msgs = session.conversation().messages();
            if (!msgs.empty() && msgs.back().role == llm::Role::user) co_await run_turn(std::nullopt);
        } else if ((cmd == "/disable" || cmd == "/enable") && w.size() == 2) {
            co_await h.pool->wait_until_settled();  // a tool's server must have listed it
            set_enabled(w[1], cmd == "/enable");
        } else if (cmd == "/model" && w.size() == 2) {
            llm.set_model(w[1]);
            fmt::print("model: {}\n", w[1]);
        } else if (cmd == "/new") {
            session.reset();
            fmt::print("(new conversation)\n");
        } else {
            fmt::print("unknown command or wrong arguments: {}\n{}\n", line, kHelp);
        }
        co_return true;
    }
};

}  // namespace

awaitable<int> chat(const host::Config& config, const GlobalOptions&, AgentOptions options) {
    auto ex = co_await asio::this_coro::executor;
    auto setup = agent_setup(config, options, ex);
    if (!setup) co_return 1;
    auto& settings = setup->settings;
    auto llm = setup->llm;
    auto session = setup->session;
    LineReader reader(ex, history_path());

    agent::ServerRequestOptions requests;
    requests.llm = llm;
    requests.approve_sampling = [&reader](const std::string& server, const json::object& params) {
        return approve_sampling_at_terminal(reader, server, params);
    };
    requests.approve_sampling_result = [&reader](const std::string& server, const json::object&,
                                                 const json::object& result) {
        return approve_sampling_result_at_terminal(reader, server, result);
    };
    requests.elicit = [&reader](const std::string& server, const json::object& params) {
        return elicit_at_terminal(reader, server, params);
    };
    requests.roots = roots_of(options);
    host::PoolOptions pool_options;
    pool_options.handlers = agent::make_server_request_handlers(std::move(requests));

    co_return co_await with_host(config, Settle::none, std::move(pool_options), [&](Host& h) -> awaitable<int> {
        agent::LoopOptions loop;
        loop.max_turns = options.max_turns;
        // Skills served over MCP come from the servers connected by then (a first start gets a moment).
        co_await h.pool->wait_until_settled(std::chrono::seconds(2));
        auto definitions = co_await all_definitions(h.pool);
        auto& conversation = session->start(h, llm, loop, options, std::move(definitions));
        Chat chat(h, *session, reader, *llm);
        if (session->id())
            fmt::print("(resumed conversation {}: {} messages)\n", session->id(), conversation.messages().size());
        fmt::print("Switchboard chat with {} at {}. /help for commands, Ctrl-D to quit.\n", settings.model,
                   settings.base_url);
        {
            // Tasks that were running when Switchboard stopped: their results first, then the model's answer.
            auto o = chat.observer();
            const bool resumed_tasks = co_await session->finish_running_tasks(h, o);
            if (resumed_tasks) co_await chat.run_turn(std::nullopt);
        }

        // Ctrl-C: cancels the turn in progress, or drops the line being typed.
        asio::signal_set signals(ex, SIGINT);
        std::function<void(boost::system::error_code, int)> on_signal = [&](boost::system::error_code ec, int) {
            if (ec) return;
            if (chat.turn_running)
                chat.cancel.emit(asio::cancellation_type::terminal);
            else
                reader.discard_line();
            signals.async_wait(on_signal);
        };
        signals.async_wait(on_signal);

        for (;;) {
            auto line = co_await reader.read_line("you> ");
            if (!line) {
                if (reader.interactive()) fmt::print("\n");  // Ctrl-D leaves the cursor after the prompt
                break;
            }
            const auto& text = *line;
            if (text.find_first_not_of(" \t") == std::string::npos) continue;
            reader.add_history(text);
            if (text[0] == '/') {
                const bool go_on = co_await chat.command(text);  // stored first (GCC 12)
                if (!go_on) break;
                continue;
            }
            if (session->title_hint.empty()) session->title_hint = text;
            co_await chat.run_turn(text);
        }
        signals.cancel();
        if (session->id()) fmt::print("(conversation {} saved; `switchboard chat --resume {}` goes on)\n",
                                      session->id(), session->id());
        co_return 0;
    });
}

}  // namespace switchboard::cli
