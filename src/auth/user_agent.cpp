#include <switchboard/auth/user_agent.hpp>

#include <switchboard/core/spawn.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/http/server.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/url/parse.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace switchboard::auth {

namespace asio = boost::asio;
using asio::awaitable;

// --- HeadlessUserAgent ------------------------------------------------------------------------------------------

HeadlessUserAgent::HeadlessUserAgent(asio::any_io_executor ex, std::string redirect_uri, http::ClientOptions options)
    : redirect_uri_(std::move(redirect_uri)) {
    options.follow_redirects = false;
    options.authorizer = nullptr;
    if (options.server_name.empty()) options.server_name = "authorization";
    client_ = std::make_shared<http::Client>(ex, std::move(options));
}

awaitable<std::string> HeadlessUserAgent::prepare() { co_return std::string(); }

awaitable<Redirect> HeadlessUserAgent::authorize(std::string authorization_url) {
    http::Request req;
    req.url = std::move(authorization_url);
    auto r = co_await client_->request(std::move(req));
    if (!r) co_return Redirect(boost::system::in_place_error, r.error().message);
    auto location = std::string(r->header("Location"));
    if (r->status / 100 != 3 || location.empty())
        co_return Redirect(boost::system::in_place_error,
                           fmt::format("the authorization endpoint answered {} without a redirect",
                                       http::status_text(r->status, r->reason)));
    co_return Redirect(boost::system::in_place_value, location);
}

// --- BrowserUserAgent -------------------------------------------------------------------------------------------

bool open_in_browser(const std::string& url) {
    // $BROWSER may carry arguments ("firefox --new-window"): words separated by spaces, the URL appended.
    std::vector<std::string> words;
    if (const char* b = std::getenv("BROWSER"); b && *b) {
        std::istringstream in(b);
        for (std::string w; in >> w;) words.push_back(w);
    }
    if (words.empty()) words.push_back("xdg-open");
    words.push_back(url);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    const std::string& opener = words.front();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // The browser's chatter is not ours to print.
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, opener.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return false;
    // xdg-open returns once it handed the URL over; reaped in the background so it leaves no zombie.
    std::thread([pid] {
        int status = 0;
        ::waitpid(pid, &status, 0);
    }).detach();
    return true;
}

struct BrowserUserAgent::Impl {
    Impl(asio::any_io_executor e, Options o) : ex(e), options(std::move(o)) {}
    asio::any_io_executor ex;
    Options options;
    std::unique_ptr<http::Server> server;
    std::string redirect_uri;
    std::string received;  // the redirect's full URL
    std::shared_ptr<core::OneShotEvent> arrived = std::make_shared<core::OneShotEvent>();
};

BrowserUserAgent::BrowserUserAgent(asio::any_io_executor ex, Options options)
    : impl_(std::make_shared<Impl>(ex, std::move(options))) {}

BrowserUserAgent::~BrowserUserAgent() {
    if (impl_->server) impl_->server->stop();
}

std::string BrowserUserAgent::redirect_uri() const { return impl_->redirect_uri; }

awaitable<std::string> BrowserUserAgent::prepare() {
    if (impl_->server) co_return std::string();
    http::Router routes;
    std::weak_ptr<Impl> weak = impl_;
    routes.add(
        http::bhttp::verb::get, "/callback",
        [weak](http::ServerRequest& req, http::Responder& res) -> awaitable<void> {
            auto self = weak.lock();
            http::Reply reply;
            reply.content_type = "text/html; charset=utf-8";
            if (!self) {
                reply.status = http::bhttp::status::gone;
                reply.body = "<p>This login is over.</p>";
            } else {
                if (!self->arrived->is_set()) {
                    const auto target = std::string_view(req.target().data(), req.target().size());
                    const auto q = target.find('?');
                    self->received = self->redirect_uri + std::string(q == target.npos ? "" : target.substr(q));
                    self->arrived->set();
                }
                const bool failed = self->received.find("error=") != std::string::npos;
                reply.body = failed ? "<!doctype html><title>Switchboard</title><p>The login was refused. "
                                      "Switchboard shows why; you can close this tab.</p>"
                                    : "<!doctype html><title>Switchboard</title><p>Logged in. You can close "
                                      "this tab and go back to Switchboard.</p>";
            }
            co_await res.send(std::move(reply));
        },
        http::RouteOptions{false});
    http::ServerOptions so;
    so.name = "auth login";
    so.address = "127.0.0.1";
    so.port = static_cast<std::uint16_t>(impl_->options.port);
    so.max_body_size = 16 * 1024;
    so.allowed_origins = {"*"};  // a top-level navigation from the authorization server's page
    auto server = std::make_unique<http::Server>(impl_->ex, std::move(routes), std::move(so));
    if (auto ec = server->listen())
        co_return fmt::format("cannot listen on 127.0.0.1:{} for the login redirect: {}", impl_->options.port,
                              ec.message());
    impl_->redirect_uri = fmt::format("http://127.0.0.1:{}/callback", server->port());
    auto* raw = server.get();
    impl_->server = std::move(server);
    core::spawn_logged(impl_->ex, raw->run(), "the login redirect listener");
    co_return std::string();
}

awaitable<Redirect> BrowserUserAgent::authorize(std::string authorization_url) {
    auto impl = impl_;
    // One agent may serve several flows (a step-up asks again): each waits for its own redirect.
    impl->received.clear();
    impl->arrived = std::make_shared<core::OneShotEvent>();
    if (impl->options.show) impl->options.show(authorization_url);
    if (impl->options.open_browser && !open_in_browser(authorization_url))
        spdlog::debug("no browser could be opened (xdg-open or $BROWSER)");
    auto arrived = impl->arrived;
    const bool got = co_await arrived->wait_for(impl->options.timeout);
    if (!got)
        co_return Redirect(boost::system::in_place_error,
                           fmt::format("no redirect arrived within {} s", impl->options.timeout.count()));
    co_return Redirect(boost::system::in_place_value, impl->received);
}

}  // namespace switchboard::auth
