#include <switchboard/jsonrpc/async_event.hpp>
#include <switchboard/mcp/server.hpp>
#include <switchboard/mcp/version.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <set>

namespace switchboard::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using jsonrpc::Error;
namespace code = jsonrpc::code;

struct Server::Entry {
    json::object definition;
    std::string key;  // name, uri or uriTemplate
    ToolHandler tool;
    ResourceReader reader;
    PromptGetter prompt;
};

namespace {

Error invalid_params(std::string msg) { return Error{code::invalid_params, std::move(msg), {}, false}; }

Server::Args string_args(const json::value* v) {
    Server::Args out;
    if (v && v->is_object())
        for (const auto& [k, val] : v->get_object())
            out[std::string(k)] = val.is_string() ? std::string(val.get_string()) : json::serialize(val);
    return out;
}

}  // namespace

bool match_uri_template(std::string_view tmpl, std::string_view uri, Server::Args& vars) {
    std::size_t t = 0, u = 0;
    Server::Args found;
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

// One client on one channel.
struct Server::Session : std::enable_shared_from_this<Server::Session> {
    Server& server;
    std::shared_ptr<jsonrpc::Connection> conn;
    std::string legacy_version;  // set by initialize
    std::set<std::string> legacy_subscriptions;
    std::set<std::string> tools_listeners;  // serialized ids of listen streams that asked for toolsListChanged
    std::map<std::string, std::set<std::string>> listens;  // serialized listen id -> resource URIs

    json::value server_info;  // serverInfo for every modern result's _meta, built once

    Session(Server& s, std::shared_ptr<jsonrpc::Connection> c)
        : server(s), conn(std::move(c)), server_info(s.options_.info.to_json()) {}

    json::object capabilities() const {
        json::object caps;
        if (!server.tools_.empty()) caps["tools"] = json::object{{"listChanged", server.options_.tools_list_changed}};
        if (!server.resources_.empty() || !server.templates_.empty())
            caps["resources"] = json::object{{"subscribe", true}, {"listChanged", false}};
        if (!server.prompts_.empty()) caps["prompts"] = json::object{{"listChanged", false}};
        if (server.completer_) caps["completions"] = json::object{};
        caps["logging"] = json::object{};
        return caps;
    }

    json::array supported_versions() const {
        json::array v;
        if (server.options_.modern)
            for (auto m : modern_versions) v.emplace_back(m);
        if (server.options_.legacy)
            for (auto l : legacy_versions) v.emplace_back(l);
        return v;
    }

    awaitable<Outcome<json::value>> handle(std::string method, json::value params, jsonrpc::IncomingRequest req) {
        json::object p = params.is_object() ? std::move(params.get_object()) : json::object{};
        const json::object* meta = nullptr;
        if (const auto* m = p.if_contains("_meta"); m && m->is_object()) meta = &m->get_object();
        const bool modern = meta && meta->contains(meta::protocol_version);

        if (method == "initialize") co_return initialize(p);
        if (modern) {
            if (!server.options_.modern)
                co_return Error{code::method_not_found,
                                "This server does not speak protocol " + std::string(modern_version),
                                {},
                                false};
            const auto& v = meta->at(meta::protocol_version);
            std::string requested = v.is_string() ? std::string(v.get_string()) : json::serialize(v);
            if (!is_modern_version(requested))
                co_return Error{code::unsupported_protocol_version, "Unsupported protocol version",
                                json::object{{"supported", supported_versions()}, {"requested", requested}}, false};
            if (!meta->contains(meta::client_capabilities))
                co_return invalid_params(std::string("missing _meta \"") + std::string(meta::client_capabilities) +
                                         "\"");
        } else if (method == "server/discover" && !server.options_.modern) {
            co_return Error{code::method_not_found, "Method not found: server/discover", {}, false};
        }

        auto r = co_await dispatch(method, p, req, modern);
        if (r && modern && r->is_object()) {
            auto& o = r->get_object();
            if (!o.contains("resultType")) o["resultType"] = "complete";
            auto& rm = o["_meta"];
            if (!rm.is_object()) rm = json::object{};
            rm.get_object()[meta::server_info] = server_info;
        }
        co_return r;
    }

    Outcome<json::value> initialize(const json::object& p) {
        // A modern-only server names the versions it speaks: a legacy client can only show this message.
        if (!server.options_.legacy)
            return Error{
                code::unsupported_protocol_version,
                fmt::format("This server speaks only protocol {}; initialize is not supported", modern_version),
                json::object{{"supported", supported_versions()}}, false};
        auto requested = string_field(p, "protocolVersion");
        legacy_version = is_legacy_version(requested) ? requested : std::string(latest_legacy_version);
        json::object r{{"protocolVersion", legacy_version},
                       {"capabilities", capabilities()},
                       {"serverInfo", server.options_.info.to_json()}};
        if (!server.options_.instructions.empty()) r["instructions"] = server.options_.instructions;
        return json::value(std::move(r));
    }

    template <class Convert>
    Outcome<json::value> page(const std::vector<std::shared_ptr<Entry>>& all, const json::object& p,
                              std::string_view key, Convert&& convert, bool modern_cacheable) {
        std::size_t start = 0;
        if (const auto* c = p.if_contains("cursor"); c && c->is_string()) {
            std::string_view s = c->get_string();
            auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), start);
            if (ec != std::errc() || ptr != s.data() + s.size() || start > all.size())
                return invalid_params("Invalid cursor");
        }
        const std::size_t size = server.options_.page_size ? server.options_.page_size : all.size();
        const std::size_t end = std::min(all.size(), start + std::max<std::size_t>(size, 1));
        json::array items;
        for (std::size_t i = start; i < end; ++i) items.push_back(convert(*all[i]));
        json::object r{{key, std::move(items)}};
        if (end < all.size()) r["nextCursor"] = std::to_string(end);
        if (modern_cacheable) {
            r["ttlMs"] = 60'000;
            r["cacheScope"] = "public";
        }
        return json::value(std::move(r));
    }

    const Entry* find(const std::vector<std::shared_ptr<Entry>>& all, std::string_view key) const {
        for (const auto& e : all)
            if (e->key == key) return e.get();
        return nullptr;
    }

    // `modern`: the request carried 2026-07-28 `_meta` (decided once, in handle()).
    awaitable<Outcome<json::value>> dispatch(const std::string& method, json::object& p,
                                             const jsonrpc::IncomingRequest& req, bool modern) {
        auto definition = [](const Entry& e) { return json::value(e.definition); };
        if (method == "ping") co_return json::value(json::object{});
        if (method == "server/discover") {
            json::object r{{"supportedVersions", supported_versions()}, {"capabilities", capabilities()}};
            if (!server.options_.instructions.empty()) r["instructions"] = server.options_.instructions;
            r["_meta"] = json::object{{meta::server_info, server.options_.info.to_json()}};
            co_return json::value(std::move(r));
        }
        if (method == "tools/list") co_return page(server.tools_, p, "tools", definition, modern);
        if (method == "prompts/list") co_return page(server.prompts_, p, "prompts", definition, modern);
        if (method == "resources/list") co_return page(server.resources_, p, "resources", definition, modern);
        if (method == "resources/templates/list")
            co_return page(server.templates_, p, "resourceTemplates", definition, modern);
        if (method == "tools/call") {
            auto name = string_field(p, "name");
            const Entry* tool = find(server.tools_, name);
            if (!tool) co_return invalid_params("Unknown tool: " + name);
            auto* a = p.if_contains("arguments");
            json::object args = a && a->is_object() ? json::object(std::move(a->get_object())) : json::object();
            auto r = co_await tool->tool(std::move(args), req);
            if (!r) co_return r.error();
            co_return json::value(std::move(*r));
        }
        if (method == "resources/read") {
            auto uri = string_field(p, "uri");
            Args vars;
            if (const Entry* res = find(server.resources_, uri)) {
                auto r = co_await res->reader(uri, vars);
                if (!r) co_return r.error();
                co_return json::value(std::move(*r));
            }
            for (const auto& t : server.templates_) {
                if (!match_uri_template(t->key, uri, vars)) continue;
                auto r = co_await t->reader(uri, vars);
                if (!r) co_return r.error();
                co_return json::value(std::move(*r));
            }
            // 2026-07-28 moved "resource not found" from -32002 to -32602.
            co_return Error{modern ? code::invalid_params : code::resource_not_found_legacy,
                            "Resource not found: " + uri, json::object{{"uri", uri}}, false};
        }
        if (method == "resources/subscribe" || method == "resources/unsubscribe") {
            auto uri = string_field(p, "uri");
            if (uri.empty()) co_return invalid_params("missing \"uri\"");
            if (method == "resources/subscribe")
                legacy_subscriptions.insert(uri);
            else
                legacy_subscriptions.erase(uri);
            co_return json::value(json::object{});
        }
        if (method == "subscriptions/listen") co_return co_await listen(p, req);
        if (method == "prompts/get") {
            auto name = string_field(p, "name");
            const Entry* prompt = find(server.prompts_, name);
            if (!prompt) co_return invalid_params("Unknown prompt: " + name);
            auto args = string_args(p.if_contains("arguments"));
            if (const auto* defs = prompt->definition.if_contains("arguments"); defs && defs->is_array())
                for (const auto& d : defs->get_array()) {
                    const auto& o = d.get_object();
                    const auto* req_flag = o.if_contains("required");
                    auto arg = string_field(o, "name");
                    if (req_flag && req_flag->is_bool() && req_flag->get_bool() && !args.count(arg))
                        co_return invalid_params(
                            fmt::format("Missing required argument \"{}\" for prompt \"{}\"", arg, name));
                }
            auto r = co_await prompt->prompt(args);
            if (!r) co_return r.error();
            co_return json::value(std::move(*r));
        }
        if (method == "completion/complete") {
            if (!server.completer_) co_return Error{code::method_not_found, "Method not found: " + method, {}, false};
            json::object ref;
            if (const auto* r = p.if_contains("ref"); r && r->is_object()) ref = r->get_object();
            std::string arg, value;
            if (const auto* a = p.if_contains("argument"); a && a->is_object()) {
                arg = string_field(a->get_object(), "name");
                value = string_field(a->get_object(), "value");
            }
            Args context;
            if (const auto* c = p.if_contains("context"); c && c->is_object())
                context = string_args(c->get_object().if_contains("arguments"));
            auto values = server.completer_(ref, arg, value, context);
            const auto total = values.size();
            if (values.size() > 100) values.resize(100);  // the spec's maximum per response
            json::array arr;
            for (auto& v : values) arr.emplace_back(v);
            co_return json::value(json::object{
                {"completion", json::object{{"values", std::move(arr)}, {"total", total}, {"hasMore", total > 100}}}});
        }
        if (method == "logging/setLevel") co_return json::value(json::object{});
        co_return Error{code::method_not_found, "Method not found: " + method, {}, false};
    }

    // 2026-07-28: a long-lived request; acknowledged at once, then held open until the client cancels it.
    awaitable<Outcome<json::value>> listen(const json::object& p, const jsonrpc::IncomingRequest& req) {
        json::object agreed;
        std::set<std::string> uris;
        if (const auto* n = p.if_contains("notifications"); n && n->is_object()) {
            if (const auto* rs = n->get_object().if_contains("resourceSubscriptions"); rs && rs->is_array()) {
                json::array list;
                for (const auto& u : rs->get_array())
                    if (u.is_string()) {
                        uris.insert(std::string(u.get_string()));
                        list.push_back(u);
                    }
                agreed["resourceSubscriptions"] = std::move(list);
            }
        }
        const auto key = json::serialize(req.id());
        if (const auto* n = p.if_contains("notifications"); n && n->is_object() && server.options_.tools_list_changed)
            if (const auto* t = n->get_object().if_contains("toolsListChanged"); t && t->is_bool() && t->get_bool()) {
                agreed["toolsListChanged"] = true;
                tools_listeners.insert(key);
            }
        listens[key] = std::move(uris);
        conn->notify("notifications/subscriptions/acknowledged",
                     json::object{{"_meta", json::object{{meta::subscription_id, req.id()}}},
                                  {"notifications", std::move(agreed)}});
        asio::steady_timer forever(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
        co_await forever.async_wait(asio::as_tuple(asio::use_awaitable));  // ends on cancellation
        listens.erase(key);
        tools_listeners.erase(key);
        co_return json::value(json::object{{"_meta", json::object{{meta::subscription_id, req.id()}}}});
    }

    void tools_changed() {
        if (!legacy_version.empty()) conn->notify("notifications/tools/list_changed", json::object{});
        for (const auto& key : tools_listeners)
            conn->notify("notifications/tools/list_changed",
                         json::object{{"_meta", json::object{{meta::subscription_id, json::parse(key)}}}});
    }

    void resource_updated(const std::string& uri) {
        if (legacy_subscriptions.count(uri))
            conn->notify("notifications/resources/updated", json::object{{"uri", uri}});
        for (const auto& [key, set] : listens) {
            if (!set.count(uri)) continue;
            conn->notify(
                "notifications/resources/updated",
                json::object{{"_meta", json::object{{meta::subscription_id, json::parse(key)}}}, {"uri", uri}});
        }
    }
};

Server::Server(ServerOptions options) : options_(std::move(options)) {}
Server::~Server() = default;

void Server::add_tool(json::object definition, ToolHandler handler) {
    auto e = std::make_shared<Entry>();
    e->key = string_field(definition, "name");
    e->definition = std::move(definition);
    e->tool = std::move(handler);
    tools_.push_back(std::move(e));
}

void Server::add_resource(json::object definition, ResourceReader reader) {
    auto e = std::make_shared<Entry>();
    e->key = string_field(definition, "uri");
    e->definition = std::move(definition);
    e->reader = std::move(reader);
    resources_.push_back(std::move(e));
}

void Server::add_resource_template(json::object definition, ResourceReader reader) {
    auto e = std::make_shared<Entry>();
    e->key = string_field(definition, "uriTemplate");
    e->definition = std::move(definition);
    e->reader = std::move(reader);
    templates_.push_back(std::move(e));
}

void Server::add_prompt(json::object definition, PromptGetter getter) {
    auto e = std::make_shared<Entry>();
    e->key = string_field(definition, "name");
    e->definition = std::move(definition);
    e->prompt = std::move(getter);
    prompts_.push_back(std::move(e));
}

void Server::set_completer(Completer completer) { completer_ = std::move(completer); }

awaitable<void> Server::serve(std::shared_ptr<jsonrpc::Channel> channel) {
    auto ex = co_await asio::this_coro::executor;
    jsonrpc::Connection::Options copts;
    copts.peer_name = "client";
    copts.reply_to_invalid = true;
    copts.finish_incoming_on_eof = std::chrono::seconds(5);
    auto conn = jsonrpc::Connection::create(ex, std::move(channel), copts);
    auto session = std::make_shared<Session>(*this, conn);
    sessions_.push_back(session);
    std::weak_ptr<Session> weak = session;
    conn->on_request([weak](std::string method, json::value params,
                            jsonrpc::IncomingRequest req) -> awaitable<Outcome<json::value>> {
        auto s = weak.lock();
        if (!s) co_return Error{code::internal_error, "server is shutting down", {}, false};
        co_return co_await s->handle(std::move(method), std::move(params), std::move(req));
    });
    conn->on_notification(
        [](const std::string& method, const json::value&) { spdlog::debug("client notification {}", method); });
    jsonrpc::AsyncEvent ended;
    conn->on_close([&ended](const Error& why) {
        spdlog::debug("session ended: {}", why.message);
        ended.set();
    });
    conn->start();
    for (bool over = false; !over;) over = co_await ended.wait_for(std::chrono::hours(24));
    co_await conn->close();
    std::erase_if(sessions_, [](const auto& w) { return w.expired(); });
}

bool Server::remove_tool(std::string_view name) {
    return std::erase_if(tools_, [name](const auto& e) { return e->key == name; }) > 0;
}

void Server::notify_tools_list_changed() {
    for (const auto& w : sessions_)
        if (auto s = w.lock()) s->tools_changed();
}

void Server::notify_resource_updated(const std::string& uri) {
    for (const auto& w : sessions_)
        if (auto s = w.lock()) s->resource_updated(uri);
}

}  // namespace switchboard::mcp
