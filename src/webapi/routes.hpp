// The route groups of the web API (private to this library; api.cpp puts them together).
#pragma once

#include <switchboard/host/config_edit.hpp>
#include <switchboard/http/server.hpp>
#include <switchboard/webapi/api.hpp>
#include <switchboard/webapi/chat_service.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

namespace switchboard::webapi {

using PoolRef = std::weak_ptr<host::ServerPool>;
using Options = std::shared_ptr<const ApiOptions>;

/// /api/info, /api/servers, /api/servers/{restart,enable,save,remove}.
void add_server_routes(http::Router& r, PoolRef pool, Options options);
/// /api/tools, /api/tools/call, /api/tools/respond, /api/resources, /api/resources/read, /api/resources/watch,
/// /api/prompts, /api/prompts/get, /api/complete, /api/catalog. `chat`: whose model and page questions "Try it" uses.
void add_catalog_routes(http::Router& r, PoolRef pool, std::shared_ptr<ChatService> chat, Options options);

/// {"servers": [ServerStatus + "config", ...]} (docs/api.md).
boost::json::object servers_json(const host::ServerPool& pool);
/// One server's ServerStatus + "config"; nullopt when it is no longer configured.
std::optional<boost::json::object> server_json(const host::ServerPool& pool, std::string_view name);

/// /api/pins, /api/pins/approve, /api/pins/reset.
void add_pins_routes(http::Router& r, PoolRef pool, Options options);

/// /api/registry/search, /api/registry/plan, /api/registry/add, /api/servers/import (registry_routes.cpp).
void add_registry_routes(http::Router& r, PoolRef pool, Options options);

/// /api/servers/sandbox/allow: a refused path or domain allowed in a confined server's entry.
void add_sandbox_routes(http::Router& r, PoolRef pool, Options options);

/// /api/conversations..., /api/chat..., /api/models.
void add_chat_routes(http::Router& r, PoolRef pool, std::shared_ptr<ChatService> chat, Options options);

/// Adds a route whose errors are answered in the API's own shape: {"error": {"status": N, "message": "..."}} (the
/// listener's default error body is JSON-RPC's, for /mcp).
void add_route(http::Router& r, http::bhttp::verb method, std::string path, http::Handler handler);

/// /api/servers/login (the web UI's "Log in") and /oauth/callback, where the authorization server sends the browser
/// back.
void add_login_routes(http::Router& r, PoolRef pool, Options options);

/// /api/info, /api/settings/llm.
void add_settings_routes(http::Router& r, PoolRef pool, std::shared_ptr<ChatService> chat, Options options);

/// The config file the pool was loaded from (409 when it was not loaded from a file: edits need one).
std::filesystem::path config_file(const host::ServerPool& pool);

/// Writes a server entry's edit to the config file (atomically, checked as the loader checks it), has the file watcher
/// take note, applies the result and answers `{"servers": [...], "warnings": [...]}` (servers_routes.cpp).
boost::asio::awaitable<void> apply_edit(std::shared_ptr<host::ServerPool> pool, Options o, std::string name,
                                        std::string previous, std::optional<boost::json::object> entry,
                                        http::Responder& res);

/// Runs `write` on the config file (an edit through host/config_edit), has the file watcher take note, applies the
/// result: `{"servers": [...], "warnings": [...]}`. A ConfigError is a 400, any other failure a 500.
boost::asio::awaitable<boost::json::object> write_and_apply(
    std::shared_ptr<host::ServerPool> pool, Options o,
    std::function<host::ConfigFileEdit(const std::filesystem::path&)> write);

/// The pool, or 503 when the gateway is stopping.
std::shared_ptr<host::ServerPool> lock(const PoolRef& pool);
/// 404 unless `server` is configured.
void require_server(const host::ServerPool& pool, const std::string& server);
/// A request that reached the server and failed there (or could not reach it): 502, naming the server.
[[noreturn]] void upstream_failed(const std::string& server, const jsonrpc::Error& e);

/// POST /api/tools/call with "stream": true (live_routes.cpp): the call's progress, task status and the server's log
/// messages as events while it runs, then its result; the client going away cancels it on the server.
/// A server's requests during the call are the page's to answer (`server_request` events, answered with
/// POST /api/tools/respond); the first event, `call`, names the call for those answers.
boost::asio::awaitable<void> stream_tool_call(std::shared_ptr<host::ServerPool> pool, std::shared_ptr<ChatService> chat,
                                              std::string server, std::string tool, boost::json::object arguments,
                                              http::Responder& res);
/// POST /api/tools/respond {"callId", "requestId", "answer"}: the page's answer to what a server asked during a
/// "Try it" call.
boost::asio::awaitable<void> respond_to_call(std::shared_ptr<ChatService> chat, Options options, http::ServerRequest& req,
                                             http::Responder& res);
/// GET /api/resources/watch?server=&uri= (live_routes.cpp): subscribed while the stream is open; the contents, read
/// from the server, first and after every update.
boost::asio::awaitable<void> watch_resource(PoolRef pool, http::ServerRequest& req, http::Responder& res);

}  // namespace switchboard::webapi
