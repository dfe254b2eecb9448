// The server side of MCP as an interface: one virtual function per request a client can send about content (tools,
// resources, prompts, completion). mcp::Server runs the sessions (eras, handshake, `_meta`, subscriptions, input
// rounds) and calls the handler; StaticHandler is the registry implementation, and a gateway implements it over a
// host context. The defaults answer empty lists and "method not found".
//
// A handler also announces changes to every session it serves (notify_list_changed, notify_resource_updated); each
// session passes them on as the client's era and subscriptions ask.
//
// Thread-safety: single owner; all calls on the executor that runs the sessions.
#pragma once

#include <switchboard/jsonrpc/error.hpp>
#include <switchboard/mcp/request_context.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace switchboard::mcp {

enum class ListKind { tools, prompts, resources };

/// Where a handler's announcements go: a session (mcp::Server registers each one it runs).
class ChangeListener {
public:
    virtual ~ChangeListener() = default;
    virtual void list_changed(ListKind kind) = 0;
    virtual void resource_updated(const std::string& uri) = 0;
};

class ServerHandler {
public:
    using Args = std::map<std::string, std::string>;
    template <class T>
    using Reply = boost::asio::awaitable<Outcome<T>>;

    virtual ~ServerHandler() = default;

    /// The ServerCapabilities to advertise, without `logging` (the session answers logging itself). Default: none.
    virtual boost::json::object capabilities() const;

    // Lists take the client's cursor (empty: first page) and return the result object ({"tools": [...],
    // "nextCursor": ...}). Calls return the protocol's result object (CallToolResult, ReadResourceResult, ...).
    virtual Reply<boost::json::object> list_tools(std::string cursor, RequestContext ctx);
    virtual Reply<boost::json::object> call_tool(std::string name, boost::json::object arguments, RequestContext ctx);
    virtual Reply<boost::json::object> list_resources(std::string cursor, RequestContext ctx);
    virtual Reply<boost::json::object> list_resource_templates(std::string cursor, RequestContext ctx);
    virtual Reply<boost::json::object> read_resource(std::string uri, RequestContext ctx);
    /// A client subscribes to `uri` (legacy resources/subscribe, or a modern subscriptions/listen naming it); the
    /// session delivers notify_resource_updated(uri) to it from then on.
    virtual Reply<void> subscribe(std::string uri, RequestContext ctx);
    virtual Reply<void> unsubscribe(std::string uri, RequestContext ctx);
    virtual Reply<boost::json::object> list_prompts(std::string cursor, RequestContext ctx);
    virtual Reply<boost::json::object> get_prompt(std::string name, Args arguments, RequestContext ctx);
    /// completion/complete: `params` as sent (ref, argument, context); returns a CompleteResult.
    virtual Reply<boost::json::object> complete(boost::json::object params, RequestContext ctx);
    /// Any other request (an extension's methods: skills/list, skills/get, resources/directory/read, ...): `params`
    /// as sent; returns the result object. Default: "method not found".
    virtual Reply<boost::json::object> extension_request(std::string method, boost::json::object params,
                                                         RequestContext ctx);

    /// Tells every session served that a list changed (legacy: notifications/<kind>/list_changed; modern: to the
    /// listen streams that asked for it). Advertise `<kind>.listChanged` in capabilities() to use it.
    void notify_list_changed(ListKind kind);
    /// Tells every session subscribed to `uri` that it changed (notifications/resources/updated).
    void notify_resource_updated(const std::string& uri);

    /// Registers a session for the announcements; it is dropped when it expires.
    void add_listener(std::weak_ptr<ChangeListener> listener);

private:
    std::vector<std::weak_ptr<ChangeListener>> listeners_;
};

/// Prompt arguments and completion context from their JSON object: strings as they are, other values serialized.
ServerHandler::Args to_args(const boost::json::value* v);

/// The JSON-RPC error for a method the handler does not implement.
jsonrpc::Error method_not_found(std::string_view method);

}  // namespace switchboard::mcp
