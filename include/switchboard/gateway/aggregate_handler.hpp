// The gateway's MCP server side: one mcp::ServerHandler over one host::Context, so that a gateway client sees every
// server of its context as one MCP server.
//
// - tools: the context's ToolIndex (exposed names; a name several servers share becomes `server__tool`);
//   tools/call goes through Context::call_tool with progress passed back to the client, and cancellation passes
//   through (the client's cancel cancels the handler coroutine, which cancels the upstream request: the upstream
//   gets notifications/cancelled). An upstream's log messages (notifications/message) go to the clients with a
//   tools/call to that server in flight (the most recent call of each), at the level each client asked for; with
//   none in flight they are dropped (a log message names no request).
// - prompts: merged by the tools' conflict rule: a prompt name two servers share becomes `server__prompt`.
// - resources and templates: merged in config order. A URI listed by several servers is listed once, for the first
//   server in config order that lists it, and resources/read of it goes to that server. A URI nobody lists goes to
//   the first server (config order) with a template that matches it.
// - completion/complete: to the server owning the ref (a prompt's exposed name, or a template's uriTemplate).
// - resources/subscribe and unsubscribe: to the owner of the URI (as for reads), counted across clients; the
//   upstream's notifications/resources/updated become the same notification to the subscribed clients (the pool
//   holds one upstream subscription per URI for all of them).
// - list_changed: the context's tool/prompt/resource changes become notifications to the client (listChanged is
//   advertised for all three).
// - errors from upstreams name the server; values of the config's headers and env never appear in them.
// - skills (the Skills extension, declared when an upstream declares it or local skills are served): skills/list,
//   skills/get, resources/directory/read and resources/read of a skill's files go through the gateway's
//   SkillDirectory (gateway/skill_directory.hpp: names merged by the tools' rule, files routed to their server).
// - host tools (GatewayOptions::host_tools: agents and skills as agent__<name> / skill__<name>, tool search) are
//   listed after the context's tools and answered by the gateway itself; a context tool of the same name wins.
// - tasks (the Tasks extension, always declared): see gateway/tasks.hpp.
//
// Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/gateway/metrics.hpp>
#include <switchboard/gateway/pages.hpp>
#include <switchboard/gateway/relay.hpp>
#include <switchboard/gateway/skill_directory.hpp>
#include <switchboard/gateway/tasks.hpp>
#include <switchboard/gateway/tool_list_cache.hpp>
#include <switchboard/host/context.hpp>
#include <switchboard/mcp/apps.hpp>
#include <switchboard/mcp/server.hpp>
#include <switchboard/mcp/server_handler.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::gateway {

/// A tool the gateway answers itself (an agent, a skill, tool search), not a server's.
struct HostTool {
    std::string name;
    std::string description;
    boost::json::object input_schema;
    /// The call: a CallToolResult object (content, isError), or an error for the client.
    std::function<boost::asio::awaitable<jsonrpc::Outcome<boost::json::object>>(boost::json::object arguments,
                                                                                mcp::RequestContext ctx)>
        call;
};

class AggregateHandler : public mcp::ServerHandler, public std::enable_shared_from_this<AggregateHandler> {
public:
    /// A handler over `context`; `relay` (may be null) learns which client calls which server.
    static std::shared_ptr<AggregateHandler> create(std::shared_ptr<host::Context> context,
                                                    std::shared_ptr<ClientRelay> relay);
    /// The same, counting every forwarded tools/call in `metrics` (may be null).
    static std::shared_ptr<AggregateHandler> create(std::shared_ptr<host::Context> context,
                                                    std::shared_ptr<ClientRelay> relay,
                                                    std::shared_ptr<Metrics> metrics);
    ~AggregateHandler() override;

    boost::json::object capabilities() const override;
    Reply<boost::json::object> list_tools(std::string cursor, mcp::RequestContext ctx) override;
    Reply<boost::json::object> call_tool(std::string name, boost::json::object arguments,
                                         mcp::RequestContext ctx) override;
    Reply<boost::json::object> list_resources(std::string cursor, mcp::RequestContext ctx) override;
    Reply<boost::json::object> list_resource_templates(std::string cursor, mcp::RequestContext ctx) override;
    Reply<boost::json::object> read_resource(std::string uri, mcp::RequestContext ctx) override;
    /// resources/subscribe: to the server that answers reads of `uri` (one upstream subscription for all clients);
    /// its notifications/resources/updated reach every client subscribed.
    Reply<void> subscribe(std::string uri, mcp::RequestContext ctx) override;
    Reply<void> unsubscribe(std::string uri, mcp::RequestContext ctx) override;
    Reply<boost::json::object> list_prompts(std::string cursor, mcp::RequestContext ctx) override;
    Reply<boost::json::object> get_prompt(std::string name, Args arguments, mcp::RequestContext ctx) override;
    Reply<boost::json::object> complete(boost::json::object params, mcp::RequestContext ctx) override;
    /// skills/list, skills/get, resources/directory/read (when skills are served); others: method not found.
    Reply<boost::json::object> extension_request(std::string method, boost::json::object params,
                                                 mcp::RequestContext ctx) override;

    host::Context& context() { return *context_; }
    /// Whether nothing of its last client is left in it: no call in flight, no subscription, no host tool called
    /// (an agent's or skill's tools keep the skills a run loaded), its context as made (Gateway::answer hands such a
    /// handler to the next stateless request instead of making one).
    bool reusable() const;
    /// Tools this handler answers itself (set once, before the session serves).
    void set_host_tools(std::vector<HostTool> tools) { host_tools_ = std::move(tools); }
    /// The skills this handler serves (set once, before the session serves; null: none).
    void set_skills(std::shared_ptr<SkillDirectory> skills) { skills_ = std::move(skills); }
    /// Lists longer than this come in pages (gateway/pages.hpp); 0: one page.
    void set_page_size(std::size_t n) { page_size_ = n; }
    /// Where tools/list pages are kept as JSON text, shared by the handlers of one gateway (set once, before the
    /// session serves; null: every page is built).
    void set_tool_list_cache(std::shared_ptr<ToolListCache> cache) { tool_list_cache_ = std::move(cache); }
    /// Where tasks handed to clients are found again (set once, before the session serves; null: tasks are followed
    /// to their end upstream, as for any host).
    void set_tasks(std::shared_ptr<GatewayTasks> tasks) { tasks_ = std::move(tasks); }

    /// A prompt as exposed: its name here, the server and the server's own name.
    struct ExposedPrompt {
        std::string name;
        std::string server;
        const mcp::Prompt* prompt = nullptr;
    };
    /// The prompts of `prompts` with exposed names (the tools' conflict rule), in config order.
    static std::vector<ExposedPrompt> expose_prompts(const std::vector<host::PromptInfo>& prompts);

private:
    AggregateHandler(std::shared_ptr<host::Context> context, std::shared_ptr<ClientRelay> relay);
    void on_event(const host::Event& e);
    void forward_log(const host::Event& e);
    /// The server that answers resources/read of `uri`, or nullopt.
    std::optional<std::string> owner_of_uri(const std::string& uri) const;
    /// Every server's ui:// URIs (tools' _meta.ui and resources): which ones two servers share (mcp/apps.hpp).
    mcp::UiUriMap ui_uris() const;
    /// What a tools/list page depends on besides the tool index and its cursor (ToolListCache's key).
    std::string tool_list_key(bool renders_apps, const mcp::UiUriMap& uris) const;
    /// A skill answer as a client gets it (an upstream's error named and cleaned as upstream_error does).
    jsonrpc::Outcome<boost::json::object> skill_result(SkillAnswer answer) const;
    /// An upstream error with the server named and config secrets removed.
    jsonrpc::Error upstream_error(const std::string& server, jsonrpc::Error e) const;

    std::shared_ptr<host::Context> context_;
    std::shared_ptr<ClientRelay> relay_;
    std::shared_ptr<Metrics> metrics_;
    std::string call_id_;  ///< names this handler's calls in progress events ("gateway:<context>")
    host::EventBus::Id subscription_ = 0;
    std::vector<HostTool> host_tools_;
    std::shared_ptr<SkillDirectory> skills_;
    std::shared_ptr<GatewayTasks> tasks_;
    std::size_t page_size_ = 0;
    std::shared_ptr<ToolListCache> tool_list_cache_;
    std::shared_ptr<const host::ToolIndex> last_tools_;  // what tools/list_changed is judged against
    /// This client's tools/call in flight per server (id, context), the most recent last: log messages go there.
    std::map<std::string, std::vector<std::pair<std::uint64_t, mcp::RequestContext>>> calls_;
    std::uint64_t next_call_ = 0;
    /// This client's subscriptions: uri -> server (let go in the pool, which counts holders, when the session ends).
    std::map<std::string, std::string> subscribed_;
    bool host_tool_called_ = false;  // see reusable()
};

/// What every gateway client session shares: the pool, the relay, and how to make its context and server.
struct GatewayOptions {
    host::ContextOptions context;      ///< template of every client's context (allow_tools, ...); name gets a suffix
    mcp::ServerOptions server;         ///< serverInfo, instructions, eras
    std::shared_ptr<Metrics> metrics;  ///< counts the forwarded tool calls when set
    /// The host tools of a client session, given its context (e.g. agents whose forks start from it); may be unset.
    std::function<std::vector<HostTool>(std::shared_ptr<host::Context>)> host_tools;
    /// Local skill folders served beside the upstreams' skills (`serve --skills`).
    std::vector<LocalSkill> local_skills;
    /// Lists (tools, resources, templates, prompts) longer than this come in pages; 0: one page.
    std::size_t page_size = default_page_size;
    /// The start of the task ids given to clients (`serve --instance-id`), for a load balancer to route on.
    std::string instance_id;
    /// The key that seals task ids (gateway/task_ids.hpp); empty: a random one per process.
    std::string task_key;
};

class Gateway : public std::enable_shared_from_this<Gateway> {
public:
    static std::shared_ptr<Gateway> create(std::shared_ptr<host::ServerPool> pool, std::shared_ptr<ClientRelay> relay,
                                           GatewayOptions options);
    /// Serves one client session on `channel` (a legacy HTTP session, a modern subscriptions/listen request, or
    /// stdio) with a context of its own, until the channel ends.
    boost::asio::awaitable<void> serve(std::shared_ptr<jsonrpc::Channel> channel);
    /// Answers one stateless 2026-07-28 request with a context of its own, as serve() would on a channel of that one
    /// request, without the session (mcp::Server::answer; transport::HttpServerOptions::answer).
    boost::asio::awaitable<std::string> answer(jsonrpc::Message request, std::function<void(std::string)> send);
    std::size_t sessions() const { return sessions_; }
    /// Handlers of finished stateless requests kept for the next ones (at most max_idle_handlers).
    std::size_t idle_handlers() const { return idle_.size(); }
    /// The skills every session serves.
    const std::shared_ptr<SkillDirectory>& skills() const { return skills_; }
    /// Ends the requests still waiting in input_required rounds for a client's retry.
    boost::asio::awaitable<void> shutdown();

private:
    Gateway(std::shared_ptr<host::ServerPool> pool, std::shared_ptr<ClientRelay> relay, GatewayOptions options)
        : pool_(std::move(pool)), relay_(std::move(relay)), options_(std::move(options)) {
        // One store for every session: a stateless client's retry (requestState) comes on a session of its own.
        if (!options_.server.input_rounds)
            options_.server.input_rounds = mcp::make_input_rounds(pool_->executor(), options_.server.input_timeout);
        // Made once, not by each session's Server (a stateless client's every request is a session).
        if (!options_.server.result_meta) options_.server.result_meta = mcp::server_result_meta(options_.server.info);
        skills_ = SkillDirectory::create(pool_, std::move(options_.local_skills));
        tasks_ = std::make_shared<GatewayTasks>(pool_, options_.instance_id, options_.task_key);
    }
    std::shared_ptr<host::ServerPool> pool_;
    std::shared_ptr<ClientRelay> relay_;
    GatewayOptions options_;
    std::uint64_t next_ = 1;
    std::size_t sessions_ = 0;
    std::shared_ptr<host::Context> index_keeper_;  ///< a context of options_.context that only keeps the tool index
    std::shared_ptr<ToolListCache> tool_list_cache_ = std::make_shared<ToolListCache>();  ///< its handlers' pages
    /// A new client's context and handler (a session's, or one stateless request's).
    std::shared_ptr<AggregateHandler> make_handler();
    /// A stateless request's handler: an idle one when there is one, else a new one.
    std::shared_ptr<AggregateHandler> stateless_handler();
    /// Keeps a stateless request's handler for the next one when nothing else holds it and it is reusable().
    void keep_idle(std::shared_ptr<AggregateHandler> handler);
    /// Handlers of finished stateless requests. Making one (a context, its subscription to the pool's events, the
    /// host tools) and dropping it cost about 4.5k instructions a request. Few are kept: each idle one still
    /// hears the pool's events.
    std::vector<std::shared_ptr<AggregateHandler>> idle_;
    static constexpr std::size_t max_idle_handlers = 16;
    bool stopping_ = false;  // shutdown() began: no handler is kept any more
    std::shared_ptr<SkillDirectory> skills_;
    std::shared_ptr<GatewayTasks> tasks_;
};

}  // namespace switchboard::gateway
