#include <switchboard/mcp/server_handler.hpp>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

namespace switchboard::mcp {

namespace json = boost::json;

namespace {

ServerHandler::Reply<json::object> empty_list(std::string_view key) {
    json::object r;
    r[key] = json::array{};
    co_return r;
}

ServerHandler::Reply<json::object> not_found(std::string_view method) { co_return method_not_found(method); }

}  // namespace

jsonrpc::Error method_not_found(std::string_view method) {
    return jsonrpc::Error{jsonrpc::code::method_not_found, "Method not found: " + std::string(method)};
}

ServerHandler::Args to_args(const json::value* v) {
    ServerHandler::Args out;
    if (v && v->is_object())
        for (const auto& [k, val] : v->get_object())
            out[std::string(k)] = val.is_string() ? std::string(val.get_string()) : json::serialize(val);
    return out;
}

json::object ServerHandler::capabilities() const { return {}; }

ServerHandler::Reply<json::object> ServerHandler::list_tools(std::string, RequestContext) {
    return empty_list("tools");
}

ServerHandler::Reply<json::object> ServerHandler::call_tool(std::string, json::object, RequestContext) {
    return not_found("tools/call");
}

ServerHandler::Reply<json::object> ServerHandler::list_resources(std::string, RequestContext) {
    return empty_list("resources");
}

ServerHandler::Reply<json::object> ServerHandler::list_resource_templates(std::string, RequestContext) {
    return empty_list("resourceTemplates");
}

ServerHandler::Reply<json::object> ServerHandler::read_resource(std::string, RequestContext) {
    return not_found("resources/read");
}

ServerHandler::Reply<void> ServerHandler::subscribe(std::string, RequestContext) {
    co_return method_not_found("resources/subscribe");
}

ServerHandler::Reply<void> ServerHandler::unsubscribe(std::string, RequestContext) {
    co_return method_not_found("resources/unsubscribe");
}

ServerHandler::Reply<json::object> ServerHandler::list_prompts(std::string, RequestContext) {
    return empty_list("prompts");
}

ServerHandler::Reply<json::object> ServerHandler::get_prompt(std::string, Args, RequestContext) {
    return not_found("prompts/get");
}

ServerHandler::Reply<json::object> ServerHandler::complete(json::object, RequestContext) {
    return not_found("completion/complete");
}

ServerHandler::Reply<json::object> ServerHandler::extension_request(std::string method, json::object, RequestContext) {
    co_return method_not_found(method);
}

void ServerHandler::notify_list_changed(ListKind kind) {
    std::erase_if(listeners_, [](const auto& w) { return w.expired(); });
    const auto listeners = listeners_;  // a listener may add another
    for (const auto& w : listeners)
        if (auto l = w.lock()) l->list_changed(kind);
}

void ServerHandler::notify_resource_updated(const std::string& uri) {
    std::erase_if(listeners_, [](const auto& w) { return w.expired(); });
    const auto listeners = listeners_;  // a listener may add another
    for (const auto& w : listeners)
        if (auto l = w.lock()) l->resource_updated(uri);
}

void ServerHandler::add_listener(std::weak_ptr<ChangeListener> listener) {
    std::erase_if(listeners_, [](const auto& w) { return w.expired(); });
    listeners_.push_back(std::move(listener));
}

}  // namespace switchboard::mcp
