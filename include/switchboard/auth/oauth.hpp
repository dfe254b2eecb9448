// The MCP authorization flow for one remote server (OAuth 2.1 as the 2025-11-25 and 2026-07-28 specs profile it),
// as an http::Authorizer: every HTTP transport asks it for the Authorization header and shows it the server's 401s
// and 403s.
//
//   401 (or no token yet)
//     -> refresh the token when there is a refresh token
//     -> else discovery (auth/metadata.hpp): Protected Resource Metadata -> authorization server metadata
//     -> a client identity: pre-registered (config), a Client ID Metadata Document URL (when the server supports
//        it), the registration kept from last time, or Dynamic Client Registration (RFC 7591)
//     -> a grant: authorization code with PKCE S256 (an authorization server that does not advertise S256 is
//        refused), `state`, the `resource` indicator (RFC 8707) and the `iss` check (RFC 9207); or, when
//        configured, client credentials (client secret or a private_key_jwt assertion) or a JWT bearer assertion
//        (workload identity)
//     -> tokens stored in the TokenStore (0600), never logged
//   403 insufficient_scope -> authorize again for the scopes held plus the ones asked for (step-up), twice at most
//   DPoP (RFC 9449, auth/dpop.hpp), when both servers take it: the token is bound to a key kept with it, and every
//   request (token requests included) carries a fresh proof; a server's `use_dpop_nonce` refusal is answered by
//   sending the same request again with its nonce, never by a new login.
//
// A flow that needs the user (an authorization code) runs only when a UserAgent is set (`switchboard auth login`,
// the web UI, the conformance client). Without one the authorizer gives up and reports needs_login(): the host
// shows the server in phase `needs-auth` and waits for a login instead of reconnecting in a loop.
//
// One flow at a time: requests refused while a flow runs wait for it and are retried with its result.
//
// Thread-safety: single owner, on the executor given at construction.
#pragma once

#include <switchboard/auth/jwt.hpp>
#include <switchboard/auth/metadata.hpp>
#include <switchboard/auth/token_store.hpp>
#include <switchboard/auth/user_agent.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/http/authorizer.hpp>
#include <switchboard/http/client.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::auth {

/// A server's `oauth` config entry.
struct OAuthSettings {
    enum class Grant { authorization_code, client_credentials, jwt_bearer, enterprise };
    Grant grant = Grant::authorization_code;
    std::string client_id;            ///< pre-registered client (else CIMD or Dynamic Client Registration)
    std::string client_secret;        ///< with client_id
    std::string auth_method;          ///< token endpoint auth; empty: chosen from what the server supports
    std::string client_metadata_url;  ///< a Client ID Metadata Document (https URL) to use as client_id
    std::vector<std::string> scopes;  ///< asked for when neither the server's challenge nor its metadata names any
    int redirect_port = 0;            ///< the loopback port of `auth login`; 0: any free port
    std::string private_key_pem;      ///< client_credentials with private_key_jwt
    std::string assertion;            ///< jwt_bearer: the workload's JWT
    /// enterprise (enterprise-managed authorization, SEP-990): the user's ID token from the enterprise identity
    /// provider is exchanged there for an ID-JAG (RFC 8693), which the MCP server's authorization server takes as a
    /// JWT bearer grant (RFC 7523) from the pre-registered client.
    std::string idp_token_endpoint;
    std::string idp_client_id;
    std::string id_token;
    std::string client_name = "Switchboard";
    /// DPoP (RFC 9449) sender-constrained tokens. automatic: when the authorization server advertises it and the
    /// MCP server takes it (a DPoP challenge, or DPoP in its resource metadata); always: refuse to go without;
    /// never: Bearer tokens only.
    enum class Dpop { automatic, always, never };
    Dpop dpop = Dpop::automatic;

    bool operator==(const OAuthSettings&) const = default;
};

/// "authorization_code", "client_credentials", "jwt_bearer", "enterprise" (nullopt otherwise).
std::optional<OAuthSettings::Grant> parse_grant(std::string_view text);
std::string_view to_string(OAuthSettings::Grant grant);

class OAuthAuthorizer final : public http::Authorizer, public std::enable_shared_from_this<OAuthAuthorizer> {
public:
    enum class Status {
        unknown,      ///< nothing tried yet (no stored token)
        authorized,   ///< holds a token
        needs_login,  ///< the server needs a login the authorizer cannot do alone
        failed,       ///< the flow failed (refused metadata, an error from the authorization server, ...)
    };

    /// `http_options` carries the transport's CA file and timeouts for the authorization server requests.
    OAuthAuthorizer(boost::asio::any_io_executor ex, std::string server_name, std::string server_url,
                    OAuthSettings settings, std::shared_ptr<TokenStore> store, http::ClientOptions http_options = {});
    ~OAuthAuthorizer() override;

    /// A user agent makes interactive flows possible (auth login, the web UI, tests).
    void set_user_agent(std::shared_ptr<UserAgent> agent) { user_agent_ = std::move(agent); }
    /// Ignore stored tokens and authorize anew at the next challenge (`auth login` on a server already logged in).
    void forget_tokens();
    /// Reads the token store again when it changed since (a login elsewhere); true when that brought a new token.
    bool reload_from_store();
    /// Asks the authorization server to revoke the stored tokens (RFC 7009; `auth logout`), refresh token first.
    /// Empty when they were revoked, else why not (no revocation endpoint, a refusal, no network): the caller
    /// forgets them anyway.
    boost::asio::awaitable<std::string> revoke();

    Status status() const { return status_; }
    /// Why the last flow failed or why a login is needed; names the server, never holds a secret.
    const std::string& problem() const { return problem_; }
    /// The granted scope of the current token.
    std::string scope() const { return creds_.tokens.scope; }
    std::int64_t expires_at() const { return creds_.tokens.expires_at; }
    const std::string& issuer() const { return creds_.issuer; }
    /// Called after every change of status (the host's phase follows it).
    void on_status(std::function<void()> f) { on_status_ = std::move(f); }

    // http::Authorizer
    boost::asio::awaitable<http::Fields> authorization(boost::beast::http::verb method, const http::Url& url) override;
    boost::asio::awaitable<bool> challenged(const http::Url& url, unsigned status, const http::Fields& headers,
                                            const http::Fields& sent) override;
    std::string scrub(std::string text) const override;

private:
    struct Flow;
    boost::asio::awaitable<bool> run_challenge(unsigned status, std::vector<std::string> challenges);
    boost::asio::awaitable<bool> refresh();
    boost::asio::awaitable<bool> authorize(std::string challenge_scope, std::string metadata_url, bool step_up);
    boost::asio::awaitable<bool> discover(const std::string& metadata_url);
    boost::asio::awaitable<bool> obtain_client(Flow& flow);
    boost::asio::awaitable<bool> code_grant(Flow& flow);
    boost::asio::awaitable<bool> direct_grant(Flow& flow);
    boost::asio::awaitable<bool> enterprise_grant(Flow& flow);
    /// POSTs a token request; on success stores the tokens. `form` lacks the client authentication.
    boost::asio::awaitable<bool> token_request(std::string form, const std::string& what);
    void add_client_auth(std::string& form, http::Fields& headers) const;
    std::string choose_scope(const std::string& challenge_scope, bool step_up) const;
    /// Decides whether this authorization uses DPoP and picks its key (flow_dpop_key_). False, with `problem` set,
    /// when it cannot go on (DPoP required but impossible).
    bool choose_dpop(std::string& problem);
    /// The key the current tokens are bound to (nullptr for Bearer tokens).
    const Key* dpop_key();
    bool fail(Status status, std::string problem);
    void set_status(Status s);
    void load_stored();
    void save();

    boost::asio::any_io_executor ex_;
    std::string server_name_;
    std::string server_url_;
    std::optional<http::Url> url_;
    OAuthSettings settings_;
    std::shared_ptr<TokenStore> store_;
    std::shared_ptr<http::Client> http_;
    std::shared_ptr<UserAgent> user_agent_;

    std::optional<ResourceMetadata> resource_;
    std::optional<ServerMetadata> server_;
    std::string resource_id_;  ///< what `resource` parameters carry
    ServerCredentials creds_;
    std::string store_stamp_;

    Status status_ = Status::unknown;
    std::string problem_;
    std::function<void()> on_status_;
    bool flow_running_ = false;
    std::shared_ptr<core::OneShotEvent> flow_done_;          ///< set when the running flow ends
    std::chrono::steady_clock::time_point failed_at_{};      ///< when a flow the user took part in failed
    std::chrono::steady_clock::time_point stamp_checked_{};  ///< the token file's stamp was last looked at
    bool user_involved_ = false;
    std::int64_t refresh_margin_ = 60;  ///< seconds before expiry when a token is refreshed
    std::uint64_t flows_ = 0;           ///< challenge flows finished (a request that waited for one sees it)
    int step_ups_ = 0;                  ///< re-authorizations for scope since the last success
    std::string failed_refresh_for_;    ///< the access token whose refresh failed (not tried twice)

    // DPoP
    std::string flow_dpop_key_;        ///< the key (PEM) this flow's token requests prove; empty: Bearer. It
                                       ///< becomes the tokens' key only with the tokens it obtained
    bool rs_offers_dpop_ = false;      ///< the MCP server's last 401 had a DPoP challenge
    bool rs_offers_bearer_ = false;    ///< ... and a Bearer one
    std::string as_nonce_, rs_nonce_;  ///< the last DPoP-Nonce of the authorization server, of the MCP server
    std::optional<Key> dpop_key_;      ///< parsed from creds_.tokens.dpop_key
    std::string dpop_key_pem_;         ///< what dpop_key_ was parsed from
};

}  // namespace switchboard::auth
