// Client registration: the client identity an authorization presents (pre-registered, a Client ID Metadata
// Document, the one registered last time, or Dynamic Client Registration, RFC 7591).
#include <switchboard/auth/oauth.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "json_fields.hpp"
#include "oauth_internal.hpp"
#include "unix_time.hpp"

namespace switchboard::auth {

namespace json = boost::json;
using boost::asio::awaitable;

awaitable<bool> OAuthAuthorizer::obtain_client(Flow& flow) {
    const auto& issuer = server_->issuer;
    if (!settings_.client_id.empty()) {
        creds_.client = ClientIdentity{};
        creds_.client.issuer = issuer;
        creds_.client.client_id = settings_.client_id;
        creds_.client.client_secret = settings_.client_secret;
        creds_.client.auth_method = settings_.auth_method;
        creds_.client.redirect_uri = flow.redirect_uri;
        co_return true;
    }
    if (server_->client_id_metadata_document_supported && !settings_.client_metadata_url.empty()) {
        creds_.client = ClientIdentity{};
        creds_.client.issuer = issuer;
        creds_.client.client_id = settings_.client_metadata_url;
        creds_.client.auth_method = "none";
        creds_.client.redirect_uri = flow.redirect_uri;
        co_return true;
    }
    const auto& c = creds_.client;
    const bool secret_valid = c.client_secret_expires_at == 0 || c.client_secret_expires_at > now_s() + 60;
    if (!c.client_id.empty() && c.dynamic && c.issuer == issuer && c.redirect_uri == flow.redirect_uri && secret_valid)
        co_return true;  // registered last time
    if (server_->registration_endpoint.empty())
        co_return fail(Status::failed,
                       fmt::format("server \"{}\": its authorization server {} offers no client registration; set "
                                   "\"oauth\": {{\"clientId\": ...}} to a client registered there",
                                   server_name_, issuer));

    const auto& methods = server_->token_endpoint_auth_methods_supported;
    std::string method = "none";
    if (!methods.empty() && !contains(methods, "none")) {
        method = contains(methods, "client_secret_basic")  ? "client_secret_basic"
                 : contains(methods, "client_secret_post") ? "client_secret_post"
                                                           : methods.front();
    }
    json::object body;
    body["client_name"] = settings_.client_name;
    body["redirect_uris"] = json::array{json::value(flow.redirect_uri)};
    body["grant_types"] = json::array{"authorization_code", "refresh_token"};
    body["response_types"] = json::array{"code"};
    body["token_endpoint_auth_method"] = method;
    body["application_type"] = "native";
    if (!settings_.scopes.empty()) body["scope"] = join(settings_.scopes);
    auto req = json_post(server_->registration_endpoint, "application/json", json::serialize(body));
    auto r = co_await http_->request(std::move(req));
    if (!r)
        co_return fail(Status::failed, fmt::format("server \"{}\": client registration at {} failed: {}", server_name_,
                                                   server_->registration_endpoint, r.error().message));
    boost::system::error_code ec;
    auto doc = json::parse(r->body, ec);
    if (r->status / 100 != 2 || ec || !doc.is_object() || str(doc.get_object(), "client_id").empty())
        co_return fail(Status::failed,
                       fmt::format("server \"{}\": client registration at {} was refused: {}", server_name_,
                                   server_->registration_endpoint, oauth_error(r->status, r->body)));
    const auto& o = doc.get_object();
    creds_.client = ClientIdentity{};
    creds_.client.issuer = issuer;
    creds_.client.client_id = str(o, "client_id");
    creds_.client.client_secret = str(o, "client_secret");
    creds_.client.client_secret_expires_at = num(o, "client_secret_expires_at");
    creds_.client.auth_method = str(o, "token_endpoint_auth_method");
    if (creds_.client.auth_method.empty())
        creds_.client.auth_method = creds_.client.client_secret.empty() ? "none" : method == "none" ? "" : method;
    creds_.client.redirect_uri = flow.redirect_uri;
    creds_.client.dynamic = true;
    spdlog::debug("server \"{}\": registered as client {} at {}", server_name_, creds_.client.client_id, issuer);
    co_return true;
}

}  // namespace switchboard::auth
