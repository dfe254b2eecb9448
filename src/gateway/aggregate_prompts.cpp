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

// Prompts and completion.
namespace switchboard::gateway {

using detail::strip_upstream_meta;

namespace {

Error invalid_params(std::string message) { return Error{code::invalid_params, std::move(message)}; }

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Prompts: a name several servers share becomes `server__prompt`, as for tools.

std::vector<AggregateHandler::ExposedPrompt> AggregateHandler::expose_prompts(
    const std::vector<host::PromptInfo>& prompts) {
    std::map<std::string, int> count;
    for (const auto& p : prompts) ++count[p.prompt.name];
    std::vector<ExposedPrompt> out;
    std::set<std::string> taken;
    for (const auto& p : prompts) {
        auto name = count[p.prompt.name] > 1 ? p.server + "__" + p.prompt.name : p.prompt.name;
        if (!taken.insert(name).second) continue;  // a server listing the same name twice
        out.push_back(ExposedPrompt{std::move(name), p.server, &p.prompt});
    }
    return out;
}

Reply AggregateHandler::list_prompts(std::string cursor, mcp::RequestContext) {
    auto self = shared_from_this();
    const auto prompts = context_->prompts();
    json::array list;
    for (const auto& e : expose_prompts(prompts)) {
        json::object o = e.prompt->raw;
        o["name"] = e.name;
        list.push_back(std::move(o));
    }
    co_return page_of(std::move(list), "prompts", "name", cursor, page_size_);
}

Reply AggregateHandler::get_prompt(std::string name, Args arguments, mcp::RequestContext ctx) {
    auto self = shared_from_this();
    const auto prompts = context_->prompts();
    std::string server, own_name;
    for (const auto& e : expose_prompts(prompts)) {
        if (e.name != name) continue;
        server = e.server;
        own_name = e.prompt->name;
    }
    if (server.empty()) co_return invalid_params(fmt::format("Unknown prompt: {}", name));
    ClientRelay::Registration registration;
    if (relay_) registration = relay_->enter(server, ctx);
    auto r = co_await context_->get_prompt(server, std::move(own_name), std::move(arguments), ctx.trace());
    if (!r) co_return upstream_error(server, r.error());
    json::object result = r->raw;
    strip_upstream_meta(result);
    co_return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Completion: to the server that owns the ref.

Reply AggregateHandler::complete(json::object params, mcp::RequestContext) {
    auto self = shared_from_this();
    const auto* ref_value = params.if_contains("ref");
    if (!ref_value || !ref_value->is_object()) co_return invalid_params("missing \"ref\"");
    json::object ref = ref_value->get_object();
    const auto type = mcp::string_field(ref, "type");
    std::string server;
    if (type == "ref/prompt") {
        const auto name = mcp::string_field(ref, "name");
        const auto prompts = context_->prompts();
        for (const auto& e : expose_prompts(prompts)) {
            if (e.name != name) continue;
            server = e.server;
            ref["name"] = e.prompt->name;
        }
        if (server.empty()) co_return invalid_params(fmt::format("Unknown prompt: {}", name));
    } else if (type == "ref/resource") {
        const auto uri = mcp::string_field(ref, "uri");
        for (const auto& t : context_->resource_templates())
            if (t.resource_template.uri_template == uri) {
                server = t.server;
                break;
            }
        if (server.empty())
            for (const auto& r : context_->resources())
                if (r.resource.uri == uri) {
                    server = r.server;
                    break;
                }
        if (server.empty()) co_return invalid_params(fmt::format("Unknown resource or template: {}", uri));
    } else {
        co_return invalid_params(fmt::format("unknown ref type \"{}\"", type));
    }
    std::string argument, value;
    if (const auto* a = params.if_contains("argument"); a && a->is_object()) {
        argument = mcp::string_field(a->get_object(), "name");
        value = mcp::string_field(a->get_object(), "value");
    }
    Args context_args;
    if (const auto* c = params.if_contains("context"); c && c->is_object())
        context_args = mcp::to_args(c->get_object().if_contains("arguments"));
    auto r = co_await context_->complete(server, std::move(ref), std::move(argument), std::move(value),
                                         std::move(context_args));
    if (!r) co_return upstream_error(server, r.error());
    json::array values;
    for (const auto& v : r->values) values.emplace_back(v);
    json::object completion;
    completion["values"] = std::move(values);
    if (r->total) completion["total"] = *r->total;
    completion["hasMore"] = r->has_more;
    json::object result;
    result["completion"] = std::move(completion);
    co_return result;
}

}  // namespace switchboard::gateway
