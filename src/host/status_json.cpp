#include <switchboard/host/status_json.hpp>

#include <boost/json/array.hpp>

namespace switchboard::host {

namespace json = boost::json;

namespace {

json::array strings(const std::vector<std::string>& v) { return json::array(v.begin(), v.end()); }

}  // namespace

json::value sandbox_json(const ServerStatus& s) {
    if (s.sandbox_layer.empty() && s.sandbox_error.empty()) return nullptr;  // a remote server
    json::object o{{"layer", s.sandbox_layer.empty() ? json::value(nullptr) : json::value(s.sandbox_layer)}};
    if (!s.sandbox_error.empty()) o["error"] = s.sandbox_error;
    if (s.sandbox) {
        const auto& p = *s.sandbox;
        o["profile"] = p.profile.empty() ? json::value(nullptr) : json::value(p.profile);
        o["stateDir"] = p.state_dir;
        o["writable"] = strings(p.writable);
        o["hidden"] = strings(p.hidden);
        o["readable"] = strings(p.readable);
        o["allowedDomains"] = strings(p.allowed_domains);
        o["deniedDomains"] = strings(p.denied_domains);
        if (!p.fallback.empty()) o["fallback"] = p.fallback;
    }
    json::array refusals;
    for (const auto& r : s.sandbox_refusals)
        refusals.push_back(json::object{
            {"kind", r.kind},
            {"target", r.target},
            {"detail", r.detail},
            {"atMs", std::chrono::duration_cast<std::chrono::milliseconds>(r.at.time_since_epoch()).count()}});
    o["refusals"] = std::move(refusals);
    return o;
}

json::object to_json(const ServerStatus& s) {
    json::object o;
    o["name"] = s.name;
    o["transport"] = host::to_string(s.transport);
    o["phase"] = s.enabled ? std::string(host::to_string(s.phase)) : std::string("disabled");
    o["enabled"] = s.enabled;
    o["lazy"] = s.lazy;
    if (s.lazy) {
        o["lifecycle"] = s.lifecycle();
        o["leases"] = s.leases;
        const auto ms = s.keep_warm.count();
        if (ms % 1000 == 0)
            o["keepWarmSeconds"] = ms / 1000;
        else
            o["keepWarmSeconds"] = static_cast<double>(ms) / 1000.0;
    }
    o["timeInPhaseMs"] = s.time_in_phase.count();
    json::object per_phase;
    for (int i = 0; i < host::phase_count; ++i)
        if (s.time_per_phase[i].count() > 0)
            per_phase[host::to_string(static_cast<Phase>(i))] = s.time_per_phase[i].count();
    o["phaseTimesMs"] = std::move(per_phase);
    o["era"] = s.era ? json::value(mcp::to_string(*s.era)) : json::value(nullptr);
    o["protocolVersion"] = s.protocol_version.empty() ? json::value(nullptr) : json::value(s.protocol_version);
    o["tools"] = s.tools;
    o["resources"] = s.resources;
    o["prompts"] = s.prompts;
    o["connectMs"] = s.connect_time.count();
    o["reconnects"] = s.reconnects;
    // Why the connection was last lost, kept once it is back: a server that reconnected says what happened.
    if (s.last_lost.empty())
        o["lastLost"] = nullptr;
    else
        o["lastLost"] = json::object{
            {"cause", s.last_lost},
            {"atMs", std::chrono::duration_cast<std::chrono::milliseconds>(s.last_lost_at.time_since_epoch()).count()}};
    o["logLevel"] = s.log_level.empty() ? json::value(nullptr) : json::value(s.log_level);
    o["activeCalls"] = s.active_calls;
    o["held"] = s.held;  // definitions held until a person approves them (switchboard pins)
    o["error"] = s.last_error.empty() ? json::value(nullptr) : json::value(s.last_error);
    o["stderrTail"] = s.stderr_tail;
    o["sandbox"] = sandbox_json(s);
    return o;
}

}  // namespace switchboard::host
