#include <switchboard/mcp/static_handler.hpp>
#include <switchboard/mcp/task_store.hpp>
#include <switchboard/mcp/types.hpp>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace switchboard::mcp {

namespace json = boost::json;

struct StaticHandler::Entry {
    json::object definition;
    std::string key;  // name, uri or uriTemplate
    ToolFunction tool;
    ResourceReader reader;
    PromptGetter prompt;
};

namespace {

Error invalid_params_error(std::string msg) { return Error{code::invalid_params, std::move(msg)}; }

template <class Entries>
auto find(const Entries& all, std::string_view key) {
    auto it = std::find_if(all.begin(), all.end(), [key](const auto& e) { return e->key == key; });
    return it == all.end() ? nullptr : *it;
}

}  // namespace

bool match_uri_template(std::string_view tmpl, std::string_view uri, ServerHandler::Args& vars) {
    std::size_t t = 0, u = 0;
    ServerHandler::Args found;
    while (t < tmpl.size()) {
        if (tmpl[t] == '{') {
            auto close = tmpl.find('}', t);
            if (close == std::string_view::npos) return false;
            std::string name(tmpl.substr(t + 1, close - t - 1));
            t = close + 1;
            // A variable runs to the next literal character of the template (or the end), never across '/'.
            char stop = t < tmpl.size() ? tmpl[t] : '\0';
            auto end = u;
            while (end < uri.size() && uri[end] != '/' && (stop == '\0' || uri[end] != stop)) ++end;
            if (end == u) return false;
            found[name] = std::string(uri.substr(u, end - u));
            u = end;
        } else {
            if (u >= uri.size() || uri[u] != tmpl[t]) return false;
            ++t;
            ++u;
        }
    }
    if (u != uri.size()) return false;
    vars = std::move(found);
    return true;
}

StaticHandler::StaticHandler(StaticHandlerOptions options) : options_(options) {}
StaticHandler::~StaticHandler() = default;

namespace {

// An entry keyed by a field of its definition ("name", "uri", "uriTemplate").
template <class Entry>
std::shared_ptr<Entry> make_entry(json::object definition, std::string_view key_field) {
    auto e = std::make_shared<Entry>();
    e->key = string_field(definition, key_field);
    e->definition = std::move(definition);
    return e;
}

}  // namespace

void StaticHandler::add_tool(json::object definition, ToolFunction function) {
    tools_.emplace_back(make_entry<Entry>(std::move(definition), "name"))->tool = std::move(function);
}

bool StaticHandler::remove_tool(std::string_view name) {
    return std::erase_if(tools_, [name](const auto& e) { return e->key == name; }) > 0;
}

bool StaticHandler::remove_prompt(std::string_view name) {
    return std::erase_if(prompts_, [name](const auto& e) { return e->key == name; }) > 0;
}

void StaticHandler::add_resource(json::object definition, ResourceReader reader) {
    resources_.emplace_back(make_entry<Entry>(std::move(definition), "uri"))->reader = std::move(reader);
}

void StaticHandler::add_resource_template(json::object definition, ResourceReader reader) {
    templates_.emplace_back(make_entry<Entry>(std::move(definition), "uriTemplate"))->reader = std::move(reader);
}

void StaticHandler::add_prompt(json::object definition, PromptGetter getter) {
    prompts_.emplace_back(make_entry<Entry>(std::move(definition), "name"))->prompt = std::move(getter);
}

void StaticHandler::set_completer(Completer completer) { completer_ = std::move(completer); }

json::object StaticHandler::capabilities() const {
    json::object caps;
    if (!tools_.empty()) caps["tools"] = json::object{{"listChanged", options_.tools_list_changed}};
    if (!resources_.empty() || !templates_.empty())
        caps["resources"] = json::object{{"subscribe", true}, {"listChanged", false}};
    if (!prompts_.empty()) caps["prompts"] = json::object{{"listChanged", options_.prompts_list_changed}};
    if (completer_) caps["completions"] = json::object{};
    if (tasks_) caps["extensions"] = json::object{{tasks_extension, json::object{}}};
    return caps;
}

void StaticHandler::set_task_store(std::shared_ptr<TaskStore> store) { tasks_ = std::move(store); }

ServerHandler::Reply<json::object> StaticHandler::extension_request(std::string method, json::object params,
                                                                    RequestContext ctx) {
    if (!tasks_ || !is_tasks_method(method)) co_return method_not_found(method);
    auto store = tasks_;  // held: the handler's store may be replaced while this runs
    co_return co_await store->handle(std::move(method), std::move(params), std::move(ctx));
}

Outcome<json::object> StaticHandler::page(const Entries& all, const std::string& cursor, std::string_view key,
                                          const RequestContext& ctx) const {
    std::size_t start = 0;
    if (!cursor.empty()) {
        auto [ptr, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), start);
        if (ec != std::errc() || ptr != cursor.data() + cursor.size() || start > all.size())
            return invalid_params_error("Invalid cursor");
    }
    const std::size_t size = options_.page_size ? options_.page_size : all.size();
    const std::size_t end = std::min(all.size(), start + std::max<std::size_t>(size, 1));
    json::array items;
    for (std::size_t i = start; i < end; ++i) items.push_back(all[i]->definition);
    json::object r;
    r[key] = std::move(items);
    if (end < all.size()) r["nextCursor"] = std::to_string(end);
    if (ctx.era() == Era::modern) {  // 2026-07-28 CacheableResult
        r["ttlMs"] = 60'000;
        r["cacheScope"] = "public";
    }
    return r;
}

ServerHandler::Reply<json::object> StaticHandler::list_tools(std::string cursor, RequestContext ctx) {
    co_return page(tools_, cursor, "tools", ctx);
}

ServerHandler::Reply<json::object> StaticHandler::list_resources(std::string cursor, RequestContext ctx) {
    co_return page(resources_, cursor, "resources", ctx);
}

ServerHandler::Reply<json::object> StaticHandler::list_resource_templates(std::string cursor, RequestContext ctx) {
    co_return page(templates_, cursor, "resourceTemplates", ctx);
}

ServerHandler::Reply<json::object> StaticHandler::list_prompts(std::string cursor, RequestContext ctx) {
    co_return page(prompts_, cursor, "prompts", ctx);
}

ServerHandler::Reply<json::object> StaticHandler::call_tool(std::string name, json::object arguments,
                                                            RequestContext ctx) {
    auto tool = find(tools_, name);  // held: the tool may be removed while it runs
    if (!tool) co_return invalid_params_error("Unknown tool: " + name);
    co_return co_await tool->tool(std::move(arguments), std::move(ctx));
}

ServerHandler::Reply<json::object> StaticHandler::read_resource(std::string uri, RequestContext ctx) {
    Args vars;
    auto entry = find(resources_, uri);
    for (auto it = templates_.begin(); !entry && it != templates_.end(); ++it)
        if (match_uri_template((*it)->key, uri, vars)) entry = *it;
    if (entry) co_return co_await entry->reader(uri, vars, std::move(ctx));
    // 2026-07-28 moved "resource not found" from -32002 to -32602.
    co_return Error{ctx.era() == Era::modern ? code::invalid_params : code::resource_not_found_legacy,
                    "Resource not found: " + uri, json::object{{"uri", uri}}};
}

ServerHandler::Reply<void> StaticHandler::subscribe(std::string, RequestContext) { co_return Outcome<void>{}; }

ServerHandler::Reply<void> StaticHandler::unsubscribe(std::string, RequestContext) { co_return Outcome<void>{}; }

ServerHandler::Reply<json::object> StaticHandler::get_prompt(std::string name, Args arguments, RequestContext ctx) {
    auto prompt = find(prompts_, name);
    if (!prompt) co_return invalid_params_error("Unknown prompt: " + name);
    if (const auto* defs = prompt->definition.if_contains("arguments"); defs && defs->is_array())
        for (const auto& d : defs->get_array()) {
            const auto& o = d.get_object();
            const auto* required = o.if_contains("required");
            auto arg = string_field(o, "name");
            if (required && required->is_bool() && required->get_bool() && !arguments.count(arg))
                co_return invalid_params_error(
                    fmt::format("Missing required argument \"{}\" for prompt \"{}\"", arg, name));
        }
    co_return co_await prompt->prompt(arguments, std::move(ctx));
}

ServerHandler::Reply<json::object> StaticHandler::complete(json::object params, RequestContext) {
    if (!completer_) co_return method_not_found("completion/complete");
    json::object ref;
    if (const auto* r = params.if_contains("ref"); r && r->is_object()) ref = r->get_object();
    std::string arg, value;
    if (const auto* a = params.if_contains("argument"); a && a->is_object()) {
        arg = string_field(a->get_object(), "name");
        value = string_field(a->get_object(), "value");
    }
    Args context;
    if (const auto* c = params.if_contains("context"); c && c->is_object())
        context = to_args(c->get_object().if_contains("arguments"));
    auto values = completer_(ref, arg, value, context);
    const auto total = values.size();
    if (values.size() > 100) values.resize(100);  // the spec's maximum per response
    json::array arr;
    for (auto& v : values) arr.emplace_back(v);
    json::object completion{{"values", std::move(arr)}, {"total", total}, {"hasMore", total > 100}};
    json::object r;
    r["completion"] = std::move(completion);
    co_return r;
}

}  // namespace switchboard::mcp
