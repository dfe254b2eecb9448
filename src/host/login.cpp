#include <switchboard/host/login.hpp>

#include <switchboard/host/transport_factory.hpp>
#include <switchboard/mcp/client_session.hpp>

namespace switchboard::host {

namespace asio = boost::asio;
using asio::awaitable;

awaitable<LoginResult> run_login(asio::any_io_executor ex, std::shared_ptr<const ServerConfig> entry,
                                 std::shared_ptr<auth::OAuthAuthorizer> authorizer, std::chrono::seconds timeout) {
    LoginResult out;
    ServerConfig config = *entry;
    authorizer->forget_tokens();  // a fresh login, even when a token is stored
    config.startup_timeout = timeout;
    ChannelHooks hooks;
    hooks.authorizer = authorizer;
    auto channel = co_await open_channel(ex, config, 64u * 1024 * 1024, hooks);
    if (!channel) {
        out.problem = channel.error().message;
        co_return out;
    }
    mcp::ClientOptions co;
    co.server_name = config.name;
    co.connect_timeout = timeout;
    co.request_timeout = timeout;
    auto session = co_await mcp::ClientSession::connect(ex, *channel, std::move(co));
    if (session) {
        auto list = co_await (*session)->list_tools();
        if (list) out.tools = list->size();
        co_await (*session)->close();
    }
    out.logged_in = authorizer->status() == auth::OAuthAuthorizer::Status::authorized;
    if (out.logged_in) co_return out;
    if (!authorizer->problem().empty()) {
        out.problem = authorizer->problem();
    } else if (session) {
        out.asked = false;
        out.problem = "server \"" + config.name + "\" did not ask for a login: it answers without one";
    } else {
        out.problem = session.error().describe();
    }
    co_return out;
}

}  // namespace switchboard::host
