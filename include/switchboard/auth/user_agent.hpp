// The part of an authorization code flow that involves the user: showing them the authorization server's page and
// receiving the redirect back. Three kinds:
//
//   BrowserUserAgent   `switchboard auth login`: listens on 127.0.0.1 (a random or configured port), opens the
//                      system browser (xdg-open; the URL is printed too, for a machine without one), and waits for
//                      the redirect to /callback.
//   HeadlessUserAgent  tests and the conformance client: GETs the authorization URL without following redirects
//                      and reads the code from the Location header (an authorization server that approves at once).
//   (the web UI)       the gateway's /oauth/callback route receives the redirect; see webapi.
//
// Thread-safety: single owner, on the executor it was made with.
#pragma once

#include <switchboard/http/client.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace switchboard::auth {

/// The redirect back from the authorization server, or why there is none.
using Redirect = boost::system::result<std::string, std::string>;

class UserAgent {
public:
    virtual ~UserAgent() = default;
    /// The redirect URI to register and send; valid once prepare() succeeded.
    virtual std::string redirect_uri() const = 0;
    /// Gets ready to receive a redirect (binds the loopback port). Empty on success, else why not.
    virtual boost::asio::awaitable<std::string> prepare() = 0;
    /// Shows `authorization_url` to the user and waits for the redirect: the full URL it was sent to (code, state,
    /// iss in its query), or an error.
    virtual boost::asio::awaitable<Redirect> authorize(std::string authorization_url) = 0;
};

class HeadlessUserAgent final : public UserAgent {
public:
    HeadlessUserAgent(boost::asio::any_io_executor ex, std::string redirect_uri, http::ClientOptions options = {});
    std::string redirect_uri() const override { return redirect_uri_; }
    boost::asio::awaitable<std::string> prepare() override;
    boost::asio::awaitable<Redirect> authorize(std::string authorization_url) override;

private:
    std::shared_ptr<http::Client> client_;
    std::string redirect_uri_;
};

class BrowserUserAgent final : public UserAgent {
public:
    struct Options {
        int port = 0;  ///< 0: any free port
        std::chrono::seconds timeout{300};
        bool open_browser = true;  ///< run xdg-open (or $BROWSER)
        /// Told the URL to open (the CLI prints it, so a user without a browser here can open it elsewhere).
        std::function<void(const std::string& url)> show;
    };
    BrowserUserAgent(boost::asio::any_io_executor ex, Options options);
    ~BrowserUserAgent() override;
    std::string redirect_uri() const override;
    boost::asio::awaitable<std::string> prepare() override;
    boost::asio::awaitable<Redirect> authorize(std::string authorization_url) override;

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

/// Opens `url` in the user's browser ($BROWSER, else xdg-open), detached; false when there is no way to.
bool open_in_browser(const std::string& url);

}  // namespace switchboard::auth
