// /api/info and the settings page: the config's `llm` base URL and model, and its `roots` (the directories a server
// asking during a web page's call is given), changed in the file (in place, atomically, the file's other bytes kept)
// and used at once.
#include "routes.hpp"

#include <switchboard/host/config_edit.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/webapi/json_request.hpp>
#include <switchboard/webapi/page_asks.hpp>

#include <fmt/format.h>

namespace switchboard::webapi {

namespace json = boost::json;
namespace bhttp = http::bhttp;
namespace fs = std::filesystem;
using boost::asio::awaitable;
using Service = std::shared_ptr<ChatService>;

namespace {

json::object effective(const ChatService& svc) {
    const auto& s = svc.options().settings;
    return json::object{{"configured", s.configured()}, {"model", s.model}, {"baseUrl", s.base_url}};
}

awaitable<void> info(PoolRef weak, Service svc, Options o, http::Responder& res) {
    auto pool = lock(weak);
    std::error_code ec;
    const auto& source = pool->config().source;
    auto path = fs::absolute(source, ec);
    json::object body;
    body["version"] = SWITCHBOARD_VERSION;
    body["configPath"] = ec ? source : path.string();
    body["tokenRequired"] = o->token_required;
    body["llm"] = effective(*svc);
    co_await send_json(res, std::move(body));
}

// The `llm` object as the file has it ({} when there is none or it is not an object).
json::object file_llm(const host::ServerPool& pool) {
    const auto file = config_file(pool);
    try {
        auto v = host::raw_top_level_member(host::read_config_text(file), "llm", file.string());
        return v.is_object() ? v.as_object() : json::object();
    } catch (const std::exception& e) {
        throw http::HttpError(bhttp::status::conflict, e.what());
    }
}

json::object llm_body(const host::ServerPool& pool, const ChatService& svc) {
    const auto raw = file_llm(pool);
    json::object body;
    body["baseUrl"] = raw.contains("baseUrl") && raw.at("baseUrl").is_string() ? raw.at("baseUrl") : json::value("");
    body["model"] = raw.contains("model") && raw.at("model").is_string() ? raw.at("model") : json::value("");
    body["effective"] = effective(svc);
    return body;
}

awaitable<void> get_llm(PoolRef weak, Service svc, http::Responder& res) {
    auto pool = lock(weak);
    co_await send_json(res, llm_body(*pool, *svc));
}

std::string optional_string(const json::object& body, std::string_view key) {
    const auto* v = body.if_contains(key);
    if (!v || v->is_null()) return {};
    if (!v->is_string()) throw http::HttpError(bhttp::status::bad_request, fmt::format("\"{}\" must be a string", key));
    return std::string(v->get_string());
}

awaitable<void> set_llm(PoolRef weak, Service svc, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto base_url = optional_string(body, "baseUrl");
    const auto model = optional_string(body, "model");
    // ${VAR} is kept as written; a literal must be an http(s) URL up to /v1.
    if (!base_url.empty() && !base_url.starts_with("${") && !base_url.starts_with("http://") &&
        !base_url.starts_with("https://"))
        throw http::HttpError(bhttp::status::bad_request,
                              "\"baseUrl\" must start with http:// or https:// (e.g. http://127.0.0.1:8080/v1)");
    auto llm = file_llm(*pool);  // its other keys (apiKey, contextWindow, ...) stay
    if (base_url.empty())
        llm.erase("baseUrl");
    else
        llm["baseUrl"] = base_url;
    if (model.empty())
        llm.erase("model");
    else
        llm["model"] = model;
    std::optional<host::Config> config;
    try {
        config = host::edit_config_member(config_file(*pool), "llm", llm);
    } catch (const host::ConfigError& e) {
        throw http::HttpError(bhttp::status::bad_request, e.what());
    } catch (const std::exception& e) {
        throw http::HttpError(bhttp::status::internal_server_error, e.what());
    }
    if (o->config_written) o->config_written();
    if (svc->options().model_for) {
        auto [settings, client] = svc->options().model_for(*config);
        svc->set_llm(std::move(settings), std::move(client));
    }
    co_await pool->apply(std::move(*config));  // the pool's copy of the config; its servers are unchanged
    co_await send_json(res, llm_body(*pool, *svc));
}

json::object roots_body(const host::ServerPool& pool) {
    json::array written, in_use;
    for (const auto& r : pool.config().roots) written.emplace_back(r);
    const auto roots = page_roots(pool.config());  // (not a temporary in the loop: its list would dangle)
    for (const auto& root : roots.at("roots").as_array()) in_use.push_back(root);
    json::object body;
    body["roots"] = std::move(written);
    body["effective"] = std::move(in_use);
    return body;
}

awaitable<void> get_roots(PoolRef weak, http::Responder& res) {
    auto pool = lock(weak);
    co_await send_json(res, roots_body(*pool));
}

// POST /api/settings/roots {"roots": ["/abs/dir", "${HOME}/src"]}: written to the config; the servers are told the
// list changed (notifications/roots/list_changed) and ask again.
awaitable<void> set_roots(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto* list = body.if_contains("roots");
    if (!list || !list->is_array())
        throw http::HttpError(bhttp::status::bad_request, "\"roots\" must be a list of directories");
    json::array roots;
    for (const auto& r : list->get_array()) {
        if (!r.is_string() || r.get_string().empty())
            throw http::HttpError(bhttp::status::bad_request, "each root must be a directory's path");
        const std::string dir(r.get_string());
        std::error_code ec;
        const auto expanded = host::expand_vars(dir, host::process_env());
        if (!dir.starts_with("${") && (!fs::path(expanded).is_absolute() || !fs::is_directory(expanded, ec)))
            throw http::HttpError(bhttp::status::bad_request,
                                  fmt::format("root \"{}\" is not a directory given by its absolute path", dir));
        roots.emplace_back(dir);
    }
    std::optional<host::Config> config;
    try {
        config = host::edit_config_member(config_file(*pool), "roots", roots);
    } catch (const host::ConfigError& e) {
        throw http::HttpError(bhttp::status::bad_request, e.what());
    } catch (const std::exception& e) {
        throw http::HttpError(bhttp::status::internal_server_error, e.what());
    }
    if (o->config_written) o->config_written();
    co_await pool->apply(std::move(*config));  // its servers are unchanged
    pool->notify_roots_changed();
    co_await send_json(res, roots_body(*pool));
}

}  // namespace

void add_settings_routes(http::Router& r, PoolRef pool, Service svc, Options o) {
    using Req = http::ServerRequest;
    using Res = http::Responder;
    add_route(r, bhttp::verb::get, "/api/info", [pool, svc, o](Req&, Res& res) { return info(pool, svc, o, res); });
    add_route(r, bhttp::verb::get, "/api/settings/llm",
              [pool, svc](Req&, Res& res) { return get_llm(pool, svc, res); });
    add_route(r, bhttp::verb::post, "/api/settings/llm",
              [pool, svc, o](Req& q, Res& res) { return set_llm(pool, svc, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/settings/roots", [pool](Req&, Res& res) { return get_roots(pool, res); });
    add_route(r, bhttp::verb::post, "/api/settings/roots",
              [pool, o](Req& q, Res& res) { return set_roots(pool, o, q, res); });
}

}  // namespace switchboard::webapi
