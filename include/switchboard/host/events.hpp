// Health phases of a server and the events the Host raises (phase changes, list changes, resource updates, server
// log messages, progress). Front ends (CLI watch, chat runner, gateway) subscribe with a callback.
//
// Thread-safety: single owner; emit and subscribe on the Host's executor. Callbacks run synchronously inside emit and
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

/// idle: not started (lazy, disabled, or before start); starting: spawning/dialing; initializing: MCP handshake;
/// listing: fetching tools/resources/prompts; connected: usable; reconnecting: lost, waiting or retrying;
/// error: gave up (start failed or reconnect attempts exhausted); disconnected: closed by the host.
enum class Phase { idle, starting, initializing, listing, connected, reconnecting, error, disconnected };
inline constexpr int phase_count = 8;

std::string_view to_string(Phase phase);

struct Event {
    enum class Kind {
        phase_changed,      ///< `phase` is the new phase, `message` the error when it is `error`/`reconnecting`
        tools_changed,      ///< the tool index was rebuilt (server connected, lost, list_changed, config applied)
        prompts_changed,    ///< a server's prompt list changed
        resources_changed,  ///< a server's resource (or template) list changed
        resource_updated,   ///< notifications/resources/updated: `uri`; the cached content was dropped
        log_message,        ///< notifications/message: `data` is its params
        progress,           ///< progress of a tool call: `tool_call_id`, `data` {progress,total,message}
        attachments_changed,
    };
    Kind kind;
    std::string server;
    Phase phase = Phase::idle;
    std::string message;
    std::string uri;
    std::string tool_call_id;
    boost::json::value data;
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
