// A server's status as JSON: what `switchboard status --json` prints per server and what the web API serves.
//
// Thread-safety: free function.
#pragma once

#include <switchboard/host/pool.hpp>

#include <boost/json/object.hpp>

namespace switchboard::host {

/// name, transport, phase ("disabled" for a disabled server), enabled, lazy (+ lifecycle, leases, keepWarmSeconds),
/// timeInPhaseMs, phaseTimesMs, era, protocolVersion, tools, resources, prompts, connectMs, reconnects, activeCalls,
/// error, stderrTail.
boost::json::object to_json(const ServerStatus& status);

}  // namespace switchboard::host
