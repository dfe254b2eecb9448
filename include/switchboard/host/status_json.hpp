// A server's status as JSON: what `switchboard status --json` prints per server and what the web API serves.
//
// Thread-safety: free function.
#pragma once

#include <switchboard/host/pool.hpp>

#include <boost/json/object.hpp>

namespace switchboard::host {

/// name, transport, phase ("disabled" for a disabled server), enabled, lazy (+ lifecycle, leases, keepWarmSeconds),
/// timeInPhaseMs, phaseTimesMs, era, protocolVersion, tools, resources, prompts, connectMs, reconnects, activeCalls,
/// error, stderrTail, sandbox (sandbox_json).
boost::json::object to_json(const ServerStatus& status);

/// A stdio server's confinement: {layer: "bwrap"|"landlock"|"container"|"unconfined", error?, profile, stateDir,
/// writable, hidden, readable, allowedDomains, deniedDomains, fallback?, refusals: [{kind, target, detail, atMs}]};
/// null for a remote server.
boost::json::value sandbox_json(const ServerStatus& status);

}  // namespace switchboard::host
