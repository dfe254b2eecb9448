// The web UI's "Log in" for a server in phase needs-auth. POST /api/servers/login starts the server's OAuth flow in
// the gateway, with the gateway itself as the redirect target (/oauth/callback on the address the page uses), and
// answers with the authorization URL for the page to open. The authorization server sends the browser back to
// /oauth/callback; the flow exchanges the code, the token lands in the token store, and the pool's server, waiting
// in needs-auth, notices it and connects. The callback needs no API token: the `state` it carries is the secret.
#include "routes.hpp"

#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/host/login.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/host/transport_factory.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <boost/url/parse.hpp>
#include <fmt/format.h>

#include <map>

namespace switchboard::webapi {

namespace json = boost::json;
namespace bhttp = http::bhttp;
using boost::asio::awaitable;

namespace {

constexpr std::chrono::seconds login_timeout{600};

struct PendingLogin {
    std::string server;
    std::string redirect_uri;
    std::string authorization_url;  // set when the flow reaches the user
    std::string redirect;           // set by the callback
    bool finished = false;
    host::LoginResult result;
    std::shared_ptr<core::OneShotEvent> progress = std::make_shared<core::OneShotEvent>();  // url or finished
    std::shared_ptr<core::OneShotEvent> redirected = std::make_shared<core::OneShotEvent>();
    std::shared_ptr<core::OneShotEvent> done = std::make_shared<core::OneShotEvent>();
};

/// The logins waiting for their callback, by `state` (one executor: no lock).
std::map<std::string, std::weak_ptr<PendingLogin>>& waiting() {
    static std::map<std::string, std::weak_ptr<PendingLogin>> m;
    return m;
}

std::string param(std::string_view url, std::string_view name) {
    auto u = boost::urls::parse_uri_reference(url);
    if (!u) return {};
    for (auto p : u->params())
        if (p.key == name) return std::string(p.value);
    return {};
}

class WebUserAgent final : public auth::UserAgent {
public:
    explicit WebUserAgent(std::shared_ptr<PendingLogin> p) : p_(std::move(p)) {}
    std::string redirect_uri() const override { return p_->redirect_uri; }
    awaitable<std::string> prepare() override { co_return std::string(); }
    awaitable<auth::Redirect> authorize(std::string authorization_url) override {
        auto p = p_;
        const auto state = param(authorization_url, "state");
        waiting()[state] = p;
        p->authorization_url = std::move(authorization_url);
        p->progress->set();
        auto redirected = p->redirected;
        const bool got = co_await redirected->wait_for(login_timeout);
        waiting().erase(state);
        if (!got)
            co_return auth::Redirect(boost::system::in_place_error,
                                     fmt::format("no login within {} s", login_timeout.count()));
        co_return auth::Redirect(boost::system::in_place_value, p->redirect);
    }

private:
    std::shared_ptr<PendingLogin> p_;
};

awaitable<void> run_flow(boost::asio::any_io_executor ex, std::shared_ptr<const host::ServerConfig> config,
                         std::shared_ptr<auth::OAuthAuthorizer> authorizer, std::shared_ptr<PendingLogin> p) {
    p->result = co_await host::run_login(ex, std::move(config), std::move(authorizer), login_timeout);
    p->finished = true;
    p->progress->set();
    p->done->set();
}

awaitable<void> start_login(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto name = required_string(body, "name");
    require_server(*pool, name);
    const auto* sc = pool->config().find(name);
    auto authorizer = sc ? host::make_authorizer(pool->executor(), *sc, pool->token_store()) : nullptr;
    if (!authorizer)
        throw http::HttpError(bhttp::status::bad_request,
                              fmt::format("server \"{}\" does not log in with OAuth (a stdio server, \"oauth\": false, "
                                          "or an Authorization header in its entry)",
                                          name));
    auto p = std::make_shared<PendingLogin>();
    p->server = name;
    const auto host = http::header_value(req, "Host");
    p->redirect_uri = fmt::format("http://{}/oauth/callback", host.empty() ? "127.0.0.1" : host);
    authorizer->set_user_agent(std::make_shared<WebUserAgent>(p));
    core::spawn_logged(pool->executor(),
                       run_flow(pool->executor(), std::make_shared<const host::ServerConfig>(*sc), authorizer, p),
                       "web login " + name);
    // Until the flow reaches the user (discovery, registration) or ends without them.
    auto progress = p->progress;
    co_await progress->wait_for(std::chrono::seconds(30));
    json::object out;
    if (!p->authorization_url.empty()) {
        out["authorizationUrl"] = p->authorization_url;
    } else if (p->finished && p->result.logged_in) {
        out["loggedIn"] = true;
    } else {
        throw http::HttpError(
            bhttp::status::bad_gateway,
            p->finished ? p->result.problem : fmt::format("server \"{}\": the login did not start within 30 s", name));
    }
    co_await send_json(res, std::move(out), bhttp::status::ok);
}

std::string html_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '&': out += "&amp;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

awaitable<void> callback(http::ServerRequest& req, http::Responder& res) {
    const auto target = std::string_view(req.target().data(), req.target().size());
    const auto state = param(target, "state");
    auto it = waiting().find(state);
    auto p = it == waiting().end() ? nullptr : it->second.lock();
    http::Reply reply;
    reply.content_type = "text/html; charset=utf-8";
    reply.headers.emplace_back("Cache-Control", "no-store");
    std::string text;
    if (!p || state.empty()) {
        reply.status = bhttp::status::bad_request;
        text = "This login is unknown or already over. Start it again from Switchboard's Servers page.";
    } else {
        const auto q = target.find('?');
        p->redirect = p->redirect_uri + std::string(q == target.npos ? std::string_view() : target.substr(q));
        p->redirected->set();
        auto done = p->done;
        co_await done->wait_for(std::chrono::seconds(20));
        if (p->finished && p->result.logged_in) {
            text = fmt::format("Logged in to \"{}\". You can close this tab; Switchboard connects the server now.",
                               p->server);
        } else {
            reply.status = bhttp::status::bad_gateway;
            text = p->finished ? p->result.problem : "The login is still being completed; see Switchboard.";
        }
    }
    reply.body = fmt::format(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Switchboard login</title>"
        "</head><body style=\"font-family:sans-serif;margin:3em\"><p>{}</p></body></html>",
        html_escape(text));
    co_await res.send(std::move(reply));
}

}  // namespace

void add_login_routes(http::Router& r, PoolRef pool, Options options) {
    add_route(
        r, bhttp::verb::post, "/api/servers/login",
        [pool, options](http::ServerRequest& q, http::Responder& res) { return start_login(pool, options, q, res); });
    http::RouteOptions open;
    open.requires_token = false;  // the browser comes back from the authorization server without our token
    r.add(bhttp::verb::get, "/oauth/callback", callback, open);
}

}  // namespace switchboard::webapi
