// The pool's per-server state and the state shared with background tasks. Private to the pool's .cpp files.
#pragma once

#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/task_group.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/host/tool_pins.hpp>

#include <boost/asio/steady_timer.hpp>

#include <deque>
#include <map>

namespace switchboard::host {

using pool_clock = std::chrono::steady_clock;

/// The empty tool list every server starts with (shared: no allocation per server).
std::shared_ptr<const std::vector<mcp::Tool>> no_tools();

struct ServerPool::Server {
    ServerConfig config;
    Phase phase = Phase::idle;
    pool_clock::time_point since = pool_clock::now();
    std::array<pool_clock::duration, phase_count> time_in{};
    std::string last_error;
    std::deque<std::string> stderr_lines;
    std::shared_ptr<mcp::ClientSession> session;
    /// Connected with an open session: a request can go out now.
    bool serving() const;
    std::optional<mcp::Era> era;
    std::shared_ptr<const std::vector<mcp::Tool>> tools = no_tools();  // shared with every context's tool index
    std::vector<mcp::Prompt> prompts;
    ResourceListing listing;
    // What the server lists, before pins (pool_pins.cpp): `tools`, `prompts` and the listing's templates are what
    // matches its pins; the rest is held. Each served definition's digest is worked out once per listing.
    std::shared_ptr<const std::vector<mcp::Tool>> served_tools = no_tools();
    std::vector<mcp::Prompt> served_prompts;
    std::vector<mcp::ResourceTemplate> served_templates;
    std::vector<std::string> tool_digests, prompt_digests, template_digests;  // of each served definition, in order
    std::vector<HeldDefinition> held;
    std::map<std::string, int> subscriptions;  // uri → holders (subscribe_resource)
    std::string log_level;                     // set_log_level; empty: PoolOptions::log_level
    std::deque<LogMessage> log;                // recent_logs
    std::string last_lost;                     // why the connection was last lost
    std::chrono::system_clock::time_point last_lost_at{};
    int relists = 0;                           // list_changed listings under way (wait_until_settled waits)
    std::uint64_t gen = 0;  // bumped by every stop/launch: coroutines of an older generation leave it alone
    int attempt = 0;
    int reconnects = 0;
    pool_clock::time_point connected_at{};
    std::chrono::milliseconds connect_time{0};
    /// Set (and replaced) on every phase change and when a stop finishes: what waiters of "something changed" await.
    std::shared_ptr<core::OneShotEvent> changed = std::make_shared<core::OneShotEvent>();
    std::shared_ptr<boost::asio::steady_timer> backoff_timer;
    std::size_t active_calls = 0;
    std::size_t leases = 0;
    int closing = 0;  // stops in progress: a new process waits for the old one to be gone
    std::shared_ptr<boost::asio::steady_timer> keep_warm_timer;
    std::shared_ptr<auth::OAuthAuthorizer> oauth;  // remote servers: made at each launch (it reads the token store)

    /// Wakes whoever waits for this server to change.
    void notify() {
        auto old = std::move(changed);
        changed = std::make_shared<core::OneShotEvent>();
        old->set();
    }
};

struct ServerPool::Shared {
    explicit Shared(boost::asio::any_io_executor ex) : tasks(std::move(ex)) {}
    core::TaskGroup tasks;                     // every background coroutine of the pool
    std::shared_ptr<core::OneShotEvent> idle;  // set when active_requests_ drops to 0
    core::OneShotEvent shut_down;
};

struct ServerPool::Held {
    Lease lease;  ///< empty for a server that is not lazy
    std::shared_ptr<Server> server;
};

/// The outcome of one connection attempt.
struct ServerPool::Attempt {
    enum class Result { connected, failed, stopped } result = Result::failed;
    std::string error;  ///< failed: why
    static Attempt connected() { return {Result::connected, {}}; }
    static Attempt stopped() { return {Result::stopped, {}}; }
    static Attempt failed(std::string why) { return {Result::failed, std::move(why)}; }
};

}  // namespace switchboard::host
