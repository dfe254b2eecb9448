// An OAuth login for one remote server, outside the pool: a connection made only so that the server's 401 (its
// resource metadata, the scopes it asks for) drives the authorizer's flow through its user agent. Used by
// `switchboard auth login` (a browser and a loopback listener) and the web UI's "Log in" (the gateway's own
// /oauth/callback). The token lands in the token store, where the pool's server in phase needs-auth finds it.
//
// Thread-safety: a coroutine on the caller's executor.
#pragma once

#include <switchboard/auth/oauth.hpp>
#include <switchboard/host/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace switchboard::host {

struct LoginResult {
    bool logged_in = false;  ///< the authorizer holds a new token
    bool asked = true;       ///< false: the server answered without asking for a login
    std::string problem;     ///< why not, naming the server (never a secret)
    std::size_t tools = 0;   ///< tools/list after the login (when it worked)
};

/// Runs the login of `config`'s server with `authorizer` (its user agent set; stored tokens forgotten first).
/// `timeout` bounds the whole login, the user's part included.
/// (The config comes by pointer: GCC 12 miscompiles aggregates passed by value to a coroutine.)
boost::asio::awaitable<LoginResult> run_login(boost::asio::any_io_executor ex,
                                              std::shared_ptr<const ServerConfig> entry,
                                              std::shared_ptr<auth::OAuthAuthorizer> authorizer,
                                              std::chrono::seconds timeout);

}  // namespace switchboard::host
