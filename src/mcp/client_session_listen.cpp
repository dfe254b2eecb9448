#include <switchboard/core/json_number.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/mcp/client_session.hpp>
#include <switchboard/mcp/apps.hpp>
#include <switchboard/mcp/tasks.hpp>

#include "client_session_listen.hpp"
#include "client_trace.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

// Subscriptions: resources/subscribe in the legacy era, one subscriptions/listen stream in 2026-07-28 (reopened with
// its whole filter on every change), and the stream a followed task opens.
namespace switchboard::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
awaitable<Outcome<void>> ClientSession::subscribe(std::string uri) {
    if (era_ == Era::legacy) {
        json::object params{{"uri", uri}};
        auto r = co_await request("resources/subscribe", std::move(params));
        if (!r) co_return r.error();
        subscribed_.insert(std::move(uri));
        co_return Outcome<void>{};
    }
    subscribed_.insert(std::move(uri));
    co_return co_await reopen_listen();
}

awaitable<Outcome<void>> ClientSession::unsubscribe(std::string uri) {
    if (!subscribed_.erase(uri)) co_return Outcome<void>{};
    if (era_ == Era::legacy) {
        json::object params{{"uri", std::move(uri)}};
        auto r = co_await request("resources/unsubscribe", std::move(params));
        if (!r) co_return r.error();
        co_return Outcome<void>{};
    }
    co_return co_await reopen_listen();
}

awaitable<Outcome<void>> ClientSession::listen_for_changes() {
    if (era_ == Era::legacy || listen_) co_return Outcome<void>{};
    co_return co_await reopen_listen();
}

awaitable<Outcome<void>> ClientSession::reopen_listen() {
    if (listen_) {
        listen_->cancel.emit(asio::cancellation_type::terminal);  // sends notifications/cancelled for it
        listen_.reset();
    }
    json::object filter;
    if (has_capability("tools", "listChanged")) filter["toolsListChanged"] = true;
    if (has_capability("prompts", "listChanged")) filter["promptsListChanged"] = true;
    if (has_capability("resources", "listChanged")) filter["resourcesListChanged"] = true;
    if (!subscribed_.empty()) {
        json::array uris;
        for (const auto& u : subscribed_) uris.emplace_back(u);
        filter["resourceSubscriptions"] = std::move(uris);
    }
    if (filter.empty()) co_return Outcome<void>{};

    auto l = std::make_shared<Listen>();
    listen_ = l;
    open_listen(l, std::move(filter), fmt::format("[{}] subscriptions/listen", options_.server_name));
    co_await l->settled.wait_for(std::chrono::seconds(10));
    if (l->acknowledged) co_return Outcome<void>{};
    if (l->error) co_return *l->error;
    co_return Error::make_local(
        code::timeout,
        fmt::format("server \"{}\" did not acknowledge subscriptions/listen within 10 s", options_.server_name));
}

void ClientSession::open_listen(std::shared_ptr<Listen> l, json::object filter, std::string what) {
    json::object params{{"_meta", modern_meta()}, {"notifications", std::move(filter)}};
    auto conn = connection_;
    // The stream holds its Listen (the cancellation signal lives as long as the request it is bound to).
    asio::co_spawn(
        conn->get_executor(),
        [conn, l, params = std::move(params)]() mutable -> awaitable<void> {
            jsonrpc::RequestOptions ro;
            ro.timeout = std::chrono::hours(24 * 365);  // a listen stream lasts until cancelled
            ro.reset_timeout_on_progress = false;
            ro.on_sent = [l](std::int64_t id) { l->id = id; };
            // A server that does not offer it answers with an error: the caller goes on without it.
            auto r = co_await conn->request("subscriptions/listen", std::move(params), ro);
            if (!r) l->error = r.error();
            l->settled.set();
        },
        asio::bind_cancellation_slot(l->cancel.slot(),
                                     [what = std::move(what)](std::exception_ptr e) { core::log_exception(e, what); }));
}

}  // namespace switchboard::mcp
