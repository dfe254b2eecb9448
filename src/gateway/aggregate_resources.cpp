#include "aggregate_common.hpp"

#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/mcp/skills.hpp>
#include <switchboard/mcp/static_handler.hpp>
#include <switchboard/mcp/tasks.hpp>
#include <switchboard/mcp/version.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

// Resources, their templates, subscriptions, and the extensions' requests (tasks, skills).
namespace switchboard::gateway {

using detail::strip_upstream_meta;

// ---------------------------------------------------------------------------------------------------------------
// Resources. A URI listed by several servers belongs to the first of them in config order.

Reply AggregateHandler::list_resources(std::string cursor, mcp::RequestContext) {
    auto self = shared_from_this();
    std::set<std::string> seen;
    json::array list;
    const auto uris = ui_uris();
    for (const auto& r : context_->resources()) {
        auto uri = uris.exposed(r.server, r.resource.uri);
        if (!seen.insert(uri).second) continue;
        list.push_back(r.resource.raw);
        list.back().get_object()["uri"] = std::move(uri);
    }
    co_return page_of(std::move(list), "resources", "uri", cursor, page_size_);
}

Reply AggregateHandler::list_resource_templates(std::string cursor, mcp::RequestContext) {
    auto self = shared_from_this();
    std::set<std::string> seen;
    json::array list;
    for (const auto& t : context_->resource_templates()) {
        if (!seen.insert(t.resource_template.uri_template).second) continue;
        list.push_back(t.resource_template.raw);
    }
    co_return page_of(std::move(list), "resourceTemplates", "uriTemplate", cursor, page_size_);
}

mcp::UiUriMap AggregateHandler::ui_uris() const {
    mcp::UiUriMap map;
    for (const auto& t : context_->tools().tools())
        if (auto ui = mcp::tool_ui(*t.tool); ui && !ui->resource_uri.empty()) map.add(t.server, ui->resource_uri);
    context_->visit_resources([&](const std::string& server, const mcp::Resource& r) { map.add(server, r.uri); });
    return map;
}

std::optional<std::string> AggregateHandler::owner_of_uri(const std::string& uri) const {
    std::optional<std::string> owner;
    context_->visit_resources([&](const std::string& server, const mcp::Resource& r) {
        if (!owner && r.uri == uri) owner = server;
    });
    if (owner) return owner;
    for (const auto& t : context_->resource_templates()) {
        mcp::ServerHandler::Args vars;
        if (mcp::match_uri_template(t.resource_template.uri_template, uri, vars)) return t.server;
    }
    return std::nullopt;
}

Reply AggregateHandler::read_resource(std::string uri, mcp::RequestContext ctx) {
    auto self = shared_from_this();
    if (skills_ && skills_->declared()) {
        // A skill's files are routed by its directory (a renamed skill's URIs are the gateway's own).
        auto skill = co_await skills_->read(uri);
        if (skill) co_return skill_result(std::move(*skill));
    }
    // A ui:// view goes to the server whose it is; a shared URI comes renamed (ui_uris()) and is read by its own.
    std::optional<std::string> server;
    std::string exposed;
    if (uri.starts_with("ui://"))
        if (auto target = ui_uris().resolve(uri)) {
            server = std::move(target->server);
            exposed = std::exchange(uri, std::move(target->uri));
        }
    if (!server) server = owner_of_uri(uri);
    if (!server) {
        json::object data;
        data["uri"] = uri;
        co_return Error{ctx.era() == mcp::Era::modern ? code::invalid_params : code::resource_not_found_legacy,
                        fmt::format("Resource not found: no server of this gateway lists {} or has a template "
                                    "matching it",
                                    uri),
                        std::move(data)};
    }
    // As for tools/call: the server's requests to its client (2026-07-28 allows them here too) come to this client.
    ClientRelay::Registration registration;
    if (relay_) registration = relay_->enter(*server, ctx);
    auto r = co_await context_->read_resource(*server, std::move(uri), host::ReadMode::cached, ctx.trace());
    if (!r) co_return upstream_error(*server, r.error());
    auto result = r->to_json();
    strip_upstream_meta(result);
    if (!exposed.empty())  // the contents name the URI the client asked for
        if (auto* contents = result.if_contains("contents"); contents && contents->is_array())
            for (auto& c : contents->get_array())
                if (auto* o = c.if_object(); o && o->contains("uri")) (*o)["uri"] = exposed;
    co_return result;
}

Reply AggregateHandler::extension_request(std::string method, json::object params, mcp::RequestContext ctx) {
    auto self = shared_from_this();
    if (tasks_ && mcp::is_tasks_method(method)) {
        auto tasks = tasks_;
        co_return co_await tasks->forward(std::move(method), std::move(params), std::move(ctx));
    }
    const bool skill_method = method == "skills/list" || method == "skills/get" || method == "resources/directory/read";
    if (!skill_method || !skills_ || !skills_->declared()) co_return mcp::method_not_found(method);
    auto answer = co_await skills_->answer(std::move(method), std::move(params));
    co_return skill_result(std::move(answer));
}

Outcome<json::object> AggregateHandler::skill_result(SkillAnswer answer) const {
    if (!answer.result) {
        if (answer.server.empty()) return answer.result.error();
        return upstream_error(answer.server, answer.result.error());
    }
    strip_upstream_meta(*answer.result);
    return std::move(*answer.result);
}

mcp::ServerHandler::Reply<void> AggregateHandler::subscribe(std::string uri, mcp::RequestContext) {
    auto self = shared_from_this();
    auto server = owner_of_uri(uri);
    if (!server) {
        json::object data;
        data["uri"] = uri;
        co_return Error{code::resource_not_found_legacy,
                        fmt::format("Resource not found: no server of this gateway lists {}", uri), std::move(data)};
    }
    if (subscribed_.count(uri)) co_return Outcome<void>{};
    // The pool counts holders: the first one subscribes upstream, and every client of the gateway holds its own.
    auto r = co_await context_->pool().subscribe_resource(*server, uri);
    if (!r) co_return upstream_error(*server, r.error());
    subscribed_[uri] = *server;
    co_return Outcome<void>{};
}

mcp::ServerHandler::Reply<void> AggregateHandler::unsubscribe(std::string uri, mcp::RequestContext) {
    auto self = shared_from_this();
    auto it = subscribed_.find(uri);
    if (it == subscribed_.end()) co_return Outcome<void>{};
    const auto server = it->second;
    subscribed_.erase(it);
    auto r = co_await context_->pool().unsubscribe_resource(server, uri);
    if (!r) co_return upstream_error(server, r.error());
    co_return Outcome<void>{};
}

}  // namespace switchboard::gateway
