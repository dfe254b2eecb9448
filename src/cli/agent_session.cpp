#include "agent_session.hpp"

#include <switchboard/agent/mcp_skills.hpp>
#include <switchboard/agent/tool_search.hpp>
#include <switchboard/core/text.hpp>

#include <fmt/format.h>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace switchboard::cli {

using boost::asio::awaitable;

namespace json = boost::json;

llm::Settings endpoint_settings(const host::Config& config, const AgentOptions& options) {
    std::vector<std::string> warnings;
    auto s = llm::parse_settings(config.llm, config.source, warnings);
    for (const auto& w : warnings) fmt::print(stderr, "switchboard: warning: {}\n", w);
    if (options.llm_url) s.base_url = *options.llm_url;
    if (options.model) s.model = *options.model;
    while (!s.base_url.empty() && s.base_url.back() == '/') s.base_url.pop_back();
    llm::apply_environment(s, host::process_env());
    return s;
}

std::optional<llm::Settings> model_settings(const host::Config& config, const AgentOptions& options) {
    auto s = endpoint_settings(config, options);
    if (!s.configured()) {
        fmt::print(stderr, "{}\n", llm::not_configured_help(s));
        return std::nullopt;
    }
    return s;
}

std::optional<AgentSetup> agent_setup(const host::Config& config, const AgentOptions& options,
                                      boost::asio::any_io_executor ex) {
    auto settings = model_settings(config, options);
    if (!settings) return std::nullopt;
    AgentSetup setup{*settings, std::make_shared<llm::Client>(ex, *settings), std::make_shared<AgentSession>()};
    if (!setup.session->open(options, settings->model)) return std::nullopt;
    return setup;
}

std::vector<std::filesystem::path> roots_of(const AgentOptions& options) {
    std::vector<std::filesystem::path> roots(options.roots.begin(), options.roots.end());
    if (roots.empty()) roots.push_back(std::filesystem::current_path());
    return roots;
}

bool AgentSession::open(const AgentOptions& options, const std::string& model) {
    model_ = model;
    if (options.no_store) {
        if (options.resume) {
            fmt::print(stderr, "switchboard: --resume needs the conversation store (drop --no-store)\n");
            return false;
        }
        return true;
    }
    const auto file = options.db ? std::filesystem::path(*options.db) : store::ConversationStore::default_path();
    try {
        store_ = std::make_unique<store::ConversationStore>(file);
        if (options.resume) {
            if (!store_->find(*options.resume)) {
                fmt::print(stderr, "switchboard: no conversation {} in {}\n", *options.resume, file.string());
                return false;
            }
            id_ = *options.resume;
            for (auto& m : store_->messages(id_)) resumed_messages_.push_back(std::move(m.message));
            resumed_settings_ = store_->settings(id_);
        }
    } catch (const store::StoreError& e) {
        fmt::print(stderr, "switchboard: {}\n", e.what());
        return false;
    }
    return true;
}

agent::Conversation& AgentSession::start(Host& h, std::shared_ptr<llm::Client> llm, agent::LoopOptions loop,
                                         const AgentOptions& options, std::vector<agent::Definition> definitions) {
    conversation_ = std::make_unique<agent::Conversation>(h.main, std::move(llm), std::move(loop));
    auto& approvals = conversation_->approvals();
    approvals.patterns = options.allow_tools;
    approvals.all = options.yes;
    if (resumed_settings_) {
        for (const auto& s : resumed_settings_->servers_off) h.main->set_server_enabled(s, false);
        for (const auto& [s, t] : resumed_settings_->tools_off) h.main->set_tool_enabled(s, t, false);
        tools_off_ = resumed_settings_->tools_off;
        approvals.tools = resumed_settings_->approved_tools;
        approvals.servers = resumed_settings_->approved_servers;
        conversation_->set_messages(std::move(resumed_messages_));
    }
    // Agents and skills (agent/definition.hpp) become agent__<name> / skill__<name> tools; their lazy servers start
    // only when one runs, in a fork of its own.
    // Forks share the conversation's approvals (not a copy): an "always" given while one runs counts at once.
    fork_env_ = agent::ForkEnvironment{h.pool, h.main, conversation_->llm_ptr(), std::move(definitions),
                                       conversation_->shared_approvals()};
    fork_env_.registry = std::make_shared<agent::ForkRegistry>(agent::ForkRegistry::default_dir());
    for (auto& t : agent::fork_tools(fork_env_, 1, "")) conversation_->add_local_tool(std::move(t));
    return *conversation_;
}

std::vector<agent::Definition> load_definitions() {
    auto found = agent::discover(agent::DiscoveryOptions::from_environment(std::filesystem::current_path()));
    // A bad file is reported and left out; the others are offered.
    for (const auto& e : found.errors) fmt::print(stderr, "switchboard: {}\n", e);
    return std::move(found.definitions);
}

awaitable<std::vector<agent::Definition>> all_definitions(std::shared_ptr<host::ServerPool> pool) {
    auto definitions = load_definitions();
    std::vector<std::string> notes;
    // A dormant lazy server's skills come from the catalog: it starts only when one of them runs.
    co_await agent::add_mcp_skills(pool, definitions, notes, host::ToolCatalog::from_env(host::process_env()));
    for (const auto& n : notes) fmt::print(stderr, "switchboard: {}\n", n);
    co_return definitions;
}

void AgentSession::offer_tool_search(Host& h) {
    if (tool_search_ || !conversation_) return;
    const auto& config = h.pool->config();
    const bool any_lazy = std::any_of(config.servers.begin(), config.servers.end(),
                                      [](const host::ServerConfig& s) { return s.lazy && s.enabled; });
    if (!agent::tool_search_wanted(config.tool_search, any_lazy, conversation_->tool_definition_bytes(),
                                   conversation_->llm().settings().context_window))
        return;
    agent::ToolSearchEnvironment env{h.pool, h.main, host::ToolCatalog::from_env(host::process_env())};
    *fork_env_.tool_search = env.catalog;  // forks offer it too
    for (auto& t : agent::tool_search_tools(std::move(env))) conversation_->add_local_tool(std::move(t));
    tool_search_ = true;
}

void AgentSession::persist(std::span<const llm::Message> messages, std::span<const json::object> meta) {
    if (!store_ || failed_) return;
    try {
        if (id_ == 0) {
            auto title = core::first_line(title_hint);
            id_ = store_->create(core::shorten(title, 80), model_);
        }
        std::vector<store::StoredMessage> batch;
        for (std::size_t i = 0; i < messages.size(); ++i) {
            store::StoredMessage m;
            m.message = messages[i];
            if (i < meta.size()) m.meta = meta[i];
            batch.push_back(std::move(m));
        }
        store_->append(id_, batch);
        save_settings();
    } catch (const store::StoreError& e) {
        failed_ = true;
        fmt::print(stderr, "switchboard: cannot save the conversation: {} (it goes on without being saved)\n",
                   e.what());
    }
}

void AgentSession::save_settings() {
    if (!store_ || failed_ || id_ == 0 || !conversation_) return;
    store::ConversationSettings s = resumed_settings_.value_or(store::ConversationSettings{});
    s.tools_off = tools_off_;
    auto& ctx = conversation_->context();
    s.servers_off.clear();
    for (const auto& server : ctx.pool().config().servers)
        if (!ctx.server_enabled(server.name)) s.servers_off.insert(server.name);
    s.approved_tools = conversation_->approvals().tools;
    s.approved_servers = conversation_->approvals().servers;
    try {
        store_->save_settings(id_, s);
        resumed_settings_ = std::move(s);
    } catch (const store::StoreError& e) {
        failed_ = true;
        fmt::print(stderr, "switchboard: cannot save the conversation: {}\n", e.what());
    }
}

void AgentSession::set_tool_enabled(const std::string& server, const std::string& tool, bool enabled) {
    conversation_->context().set_tool_enabled(server, tool, enabled);
    if (enabled)
        tools_off_.erase({server, tool});
    else
        tools_off_.insert({server, tool});
    save_settings();
}

void AgentSession::reset() {
    if (!conversation_) return;
    auto& ctx = conversation_->context();
    for (const auto& [server, tool] : tools_off_) ctx.set_tool_enabled(server, tool, true);
    for (const auto& server : ctx.pool().config().servers) ctx.set_server_enabled(server.name, true);
    tools_off_.clear();
    id_ = 0;
    title_hint.clear();
    resumed_settings_.reset();
    if (conversation_) {
        conversation_->clear();
        conversation_->approvals().tools.clear();
        conversation_->approvals().servers.clear();
    }
}

std::string tool_start_line(const llm::ToolCall& call, const std::string& server) {
    std::string args = call.arguments.empty() ? "{}" : call.arguments;
    for (auto& c : args)
        if (c == '\n' || c == '\r') c = ' ';
    return fmt::format("→ {}{} {}", call.name, server.empty() ? "" : fmt::format(" ({})", server),
                       core::shorten(args, 200));
}

std::string tool_end_line(const agent::ToolCallRecord& record, const llm::ToolExecutionResult& result,
                          int max_lines) {
    std::string text = result.text();
    std::string out;
    int lines = 0;
    std::size_t pos = 0;
    while (pos <= text.size() && lines < max_lines) {
        auto nl = text.find('\n', pos);
        auto line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        if (!line.empty() || lines == 0) {
            out += fmt::format("{}{}", lines ? "\n    " : "", core::shorten(line, 160));
            ++lines;
        }
        if (nl == std::string::npos) {
            pos = text.size() + 1;
            break;
        }
        pos = nl + 1;
    }
    if (pos <= text.size()) out += " …";
    const char* what = record.denied ? "denied" : record.is_error ? "error" : "ok";
    return fmt::format("  ← {} {} ms: {}", what, record.ms, out);
}

}  // namespace switchboard::cli
