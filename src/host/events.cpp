#include <switchboard/host/events.hpp>

namespace switchboard::host {

std::string_view to_string(Phase phase) {
    switch (phase) {
    case Phase::idle: return "idle";
    case Phase::dormant: return "dormant";
    case Phase::starting: return "starting";
    case Phase::initializing: return "initializing";
    case Phase::listing: return "listing";
    case Phase::connected: return "connected";
    case Phase::reconnecting: return "reconnecting";
    case Phase::error: return "error";
    case Phase::disconnected: return "disconnected";
    case Phase::needs_auth: return "needs-auth";
    }
    return "?";
}

std::string_view to_string(Event::Kind kind) {
    switch (kind) {
    case Event::Kind::phase_changed: return "phase_changed";
    case Event::Kind::tools_changed: return "tools_changed";
    case Event::Kind::prompts_changed: return "prompts_changed";
    case Event::Kind::resources_changed: return "resources_changed";
    case Event::Kind::resource_updated: return "resource_updated";
    case Event::Kind::log_message: return "log_message";
    case Event::Kind::progress: return "progress";
    case Event::Kind::leases_changed: return "leases_changed";
    case Event::Kind::attachments_changed: return "attachments_changed";
    case Event::Kind::stderr_line: return "stderr_line";
    case Event::Kind::elicitation_complete: return "elicitation_complete";
    case Event::Kind::pins_held: return "pins_held";
    case Event::Kind::sandbox_refused: return "sandbox_refused";
    }
    return "?";
}

namespace {
Event make(Event::Kind kind, std::string server) {
    Event e{kind, std::move(server), Phase::idle, {}, {}, {}, nullptr};
    return e;
}
}  // namespace

Event Event::phase_changed(std::string server, Phase phase, std::string error) {
    auto e = make(Kind::phase_changed, std::move(server));
    e.phase = phase;
    e.message = std::move(error);
    return e;
}
Event Event::tools_changed(std::string server) { return make(Kind::tools_changed, std::move(server)); }
Event Event::prompts_changed(std::string server) { return make(Kind::prompts_changed, std::move(server)); }
Event Event::resources_changed(std::string server) { return make(Kind::resources_changed, std::move(server)); }
Event Event::resource_updated(std::string server, std::string uri, boost::json::value params) {
    auto e = make(Kind::resource_updated, std::move(server));
    e.uri = std::move(uri);
    e.data = std::move(params);
    return e;
}
Event Event::log_message(std::string server, boost::json::value params) {
    auto e = make(Kind::log_message, std::move(server));
    e.data = std::move(params);
    return e;
}
Event Event::progress(std::string server, std::string call_id, boost::json::value data) {
    auto e = make(Kind::progress, std::move(server));
    e.call_id = std::move(call_id);
    e.data = std::move(data);
    return e;
}
Event Event::leases_changed(std::string server, std::size_t leases) {
    auto e = make(Kind::leases_changed, std::move(server));
    e.message = std::to_string(leases);
    return e;
}
Event Event::attachments_changed(std::string server, std::string uri) {
    auto e = make(Kind::attachments_changed, std::move(server));
    e.uri = std::move(uri);
    return e;
}
Event Event::elicitation_complete(std::string server, boost::json::value params) {
    auto e = make(Kind::elicitation_complete, std::move(server));
    e.data = std::move(params);
    return e;
}
Event Event::pins_held(std::string server, std::size_t held) {
    auto e = make(Kind::pins_held, std::move(server));
    e.message = std::to_string(held);
    return e;
}
Event Event::sandbox_refused(std::string server, std::string kind, std::string target) {
    auto e = make(Kind::sandbox_refused, std::move(server));
    e.data = boost::json::object{{"kind", kind}, {"target", target}};
    e.message = std::move(target);
    return e;
}
Event Event::stderr_line(std::string server, std::string line) {
    auto e = make(Kind::stderr_line, std::move(server));
    e.message = std::move(line);
    return e;
}

}  // namespace switchboard::host
