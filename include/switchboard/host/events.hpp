// Health phases of a server and the events the pool raises (phase changes, list changes, resource updates, server
// log messages, progress). Front ends (CLI watch, chat runner, gateway, web UI) subscribe with a callback.
//
// Thread-safety: single owner; emit and subscribe on the pool's executor. Callbacks run synchronously inside emit and
// must not block; they may unsubscribe themselves (and others) while being called.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace switchboard::host {

/// idle: not started (disabled, or before start); dormant: a lazy server nobody holds a lease on, not running;
/// starting: spawning/dialing; initializing: MCP handshake; listing: fetching tools/resources/prompts; connected:
/// usable; reconnecting: lost, waiting or retrying; error: gave up (start failed or reconnect attempts exhausted);
/// disconnected: closed by the host.
/// needs_auth: the server asks for an OAuth login that only the user can give (`switchboard auth login`, the web
/// UI); the host waits for one instead of reconnecting.
enum class Phase {
    idle,
    dormant,
    starting,
    initializing,
    listing,
    connected,
    reconnecting,
    error,
    disconnected,
    needs_auth
};
inline constexpr int phase_count = 10;

std::string_view to_string(Phase phase);

/// starting, initializing or listing.
inline bool is_starting(Phase p) { return p == Phase::starting || p == Phase::initializing || p == Phase::listing; }

struct Event {
    enum class Kind {
        phase_changed,      ///< `phase` is the new phase, `message` the error when it is `error`/`reconnecting`
        tools_changed,      ///< a server's tool list changed (`server`; empty: every server, e.g. after apply)
        prompts_changed,    ///< a server's prompt list changed
        resources_changed,  ///< a server's resource (or template) list changed
        resource_updated,   ///< notifications/resources/updated: `uri`; the cached content was dropped
        log_message,        ///< notifications/message: `data` is its params
        progress,           ///< progress of a tool call: `call_id`, `data` {progress,total,message}
        leases_changed,     ///< a lazy server's lease count changed (`message` is the count)
        attachments_changed,
        stderr_line,           ///< a stdio server wrote a line to stderr (`message`; its status's tail has it too)
        elicitation_complete,  ///< notifications/elicitation/complete: `data` is its params ({elicitationId})
        pins_held,             ///< what a server lists that is held changed (`message` is how many are held now)
        sandbox_refused,       ///< a confined server was refused a path or domain (`message`: what; `data`: {kind, target})
    };
    Kind kind;
    std::string server;
    Phase phase = Phase::idle;
    std::string message;
    std::string uri;
    std::string call_id;
    boost::json::value data;

    static Event phase_changed(std::string server, Phase phase, std::string error = {});
    static Event tools_changed(std::string server);
    static Event prompts_changed(std::string server);
    static Event resources_changed(std::string server);
    static Event resource_updated(std::string server, std::string uri, boost::json::value params);
    static Event log_message(std::string server, boost::json::value params);
    static Event progress(std::string server, std::string call_id, boost::json::value data);
    static Event leases_changed(std::string server, std::size_t leases);
    static Event attachments_changed(std::string server, std::string uri);
    static Event stderr_line(std::string server, std::string line);
    static Event elicitation_complete(std::string server, boost::json::value params);
    static Event pins_held(std::string server, std::size_t held);
    static Event sandbox_refused(std::string server, std::string kind, std::string target);
};

std::string_view to_string(Event::Kind kind);

class EventBus {
public:
    using Callback = std::function<void(const Event&)>;
    using Id = std::uint64_t;

    Id subscribe(Callback cb) {
        const Id id = next_++;
        subscribers_->emplace(id, std::make_shared<Callback>(std::move(cb)));
        return id;
    }
    void unsubscribe(Id id) { subscribers_->erase(id); }

    void emit(const Event& e) {
        if (subscribers_->empty()) return;
        // A snapshot: callbacks may (un)subscribe while we iterate.
        auto snapshot = *subscribers_;
        for (auto& [id, cb] : snapshot)
            if (subscribers_->count(id)) (*cb)(e);
    }
    std::size_t size() const { return subscribers_->size(); }

private:
    Id next_ = 1;
    std::shared_ptr<std::map<Id, std::shared_ptr<Callback>>> subscribers_ =
        std::make_shared<std::map<Id, std::shared_ptr<Callback>>>();
};

}  // namespace switchboard::host
