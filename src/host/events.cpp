#include <switchboard/host/events.hpp>

namespace switchboard::host {

std::string_view to_string(Phase phase) {
    switch (phase) {
    case Phase::idle: return "idle";
    case Phase::starting: return "starting";
    case Phase::initializing: return "initializing";
    case Phase::listing: return "listing";
    case Phase::connected: return "connected";
    case Phase::reconnecting: return "reconnecting";
    case Phase::error: return "error";
    case Phase::disconnected: return "disconnected";
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
    case Event::Kind::attachments_changed: return "attachments_changed";
    }
    return "?";
}

}  // namespace switchboard::host
