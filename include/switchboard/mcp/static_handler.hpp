// The registry implementation of ServerHandler: tools, resources, resource templates and prompts added one by one
// with a function each, an optional completer, lists paginated by a page size. The demo server and tests use it.
//
// Thread-safety: single owner; add and remove entries on the executor that runs the sessions.
#pragma once

#include <switchboard/mcp/server_handler.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::mcp {

class TaskStore;  // task_store.hpp

struct StaticHandlerOptions {
    std::size_t page_size = 0;  ///< 0: every list in one page
    /// Advertise `tools.listChanged`; notify_list_changed(ListKind::tools) then reaches the clients.
    bool tools_list_changed = false;
    /// The same for `prompts.listChanged`.
    bool prompts_list_changed = false;
};

class StaticHandler : public ServerHandler {
public:
    /// Returns a CallToolResult object. Cancelled (terminal) when the client cancels.
    using ToolFunction = std::function<boost::asio::awaitable<Outcome<boost::json::object>>(
        boost::json::object arguments, RequestContext ctx)>;
    /// Returns a ReadResourceResult object for `uri` (template variables in `vars`).
    using ResourceReader = std::function<boost::asio::awaitable<Outcome<boost::json::object>>(
        const std::string& uri, const Args& vars, RequestContext ctx)>;
    /// Returns a GetPromptResult object.
    using PromptGetter =
        std::function<boost::asio::awaitable<Outcome<boost::json::object>>(const Args& arguments, RequestContext ctx)>;
    /// Completion values for an argument of a prompt or resource template.
    using Completer = std::function<std::vector<std::string>(
        const boost::json::object& ref, const std::string& argument, const std::string& value, const Args& context)>;

    explicit StaticHandler(StaticHandlerOptions options = {});
    ~StaticHandler() override;

    void add_tool(boost::json::object definition, ToolFunction function);
    /// Removes a tool by name; false when there is none.
    bool remove_tool(std::string_view name);
    bool remove_prompt(std::string_view name);
    void add_resource(boost::json::object definition, ResourceReader reader);
    /// `definition.uriTemplate` with simple `{name}` variables (RFC 6570 level 1).
    void add_resource_template(boost::json::object definition, ResourceReader reader);
    void add_prompt(boost::json::object definition, PromptGetter getter);
    void set_completer(Completer completer);
    /// Serves the Tasks extension from `store` (advertised; tasks/get, tasks/update, tasks/cancel answered by it): the
    /// tools made with task_tool() on the same store start their tasks there.
    void set_task_store(std::shared_ptr<TaskStore> store);

    boost::json::object capabilities() const override;
    Reply<boost::json::object> list_tools(std::string cursor, RequestContext ctx) override;
    Reply<boost::json::object> call_tool(std::string name, boost::json::object arguments, RequestContext ctx) override;
    Reply<boost::json::object> list_resources(std::string cursor, RequestContext ctx) override;
    Reply<boost::json::object> list_resource_templates(std::string cursor, RequestContext ctx) override;
    Reply<boost::json::object> read_resource(std::string uri, RequestContext ctx) override;
    Reply<void> subscribe(std::string uri, RequestContext ctx) override;
    Reply<void> unsubscribe(std::string uri, RequestContext ctx) override;
    Reply<boost::json::object> list_prompts(std::string cursor, RequestContext ctx) override;
    Reply<boost::json::object> get_prompt(std::string name, Args arguments, RequestContext ctx) override;
    Reply<boost::json::object> complete(boost::json::object params, RequestContext ctx) override;
    Reply<boost::json::object> extension_request(std::string method, boost::json::object params,
                                                 RequestContext ctx) override;

private:
    struct Entry;
    using Entries = std::vector<std::shared_ptr<Entry>>;
    Outcome<boost::json::object> page(const Entries& all, const std::string& cursor, std::string_view key,
                                      const RequestContext& ctx) const;

    StaticHandlerOptions options_;
    Entries tools_, resources_, templates_, prompts_;
    Completer completer_;
    std::shared_ptr<TaskStore> tasks_;
};

/// Matches `uri` against a level-1 URI template ("demo://greeting/{name}"); fills `vars` on success.
bool match_uri_template(std::string_view tmpl, std::string_view uri, ServerHandler::Args& vars);

}  // namespace switchboard::mcp
