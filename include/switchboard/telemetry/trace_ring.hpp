// The local trace file that `switchboard trace [ID]` reads: the newest few thousand finished spans, one JSON object
// per line, kept whether or not anything is exported, so that a slow or failed call can be looked at after the fact
// without running a collector. Processes add their spans by rewriting the file whole (atomically, under a lock), so a
// reader never sees half a line and two writers do not lose each other's spans.
//
// The file is private (0600 in a 0700 directory): span attributes carry tool names, models and error messages.
//
// Thread-safety: free functions; save_spans serializes writers of one file through a lock file beside it.
#pragma once

#include <switchboard/core/trace.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::telemetry {

/// A span as one line of the file: {"traceId", "spanId", "parentSpanId" (roots: absent), "traceState" (when set),
/// "name", "kind" (1 internal, 2 server, 3 client), "start", "end" (ns since the epoch), "attributes" {key: value},
/// "events" [{"name", "time", "attributes"}], "status" {"code", "message"} (absent when unset), "sampled"}.
boost::json::object span_to_json(const trace::SpanData& span);

/// The span back; nullopt when it has no valid traceId and spanId. Unknown keys and values of the wrong type are
/// ignored.
std::optional<trace::SpanData> span_from_json(const boost::json::value& v);

/// $SWITCHBOARD_TRACE_FILE, else $XDG_STATE_HOME/switchboard/traces.jsonl, else
/// $HOME/.local/state/switchboard/traces.jsonl; empty when none of them is set.
std::filesystem::path default_ring_path();

/// Appends `spans` to the file, keeps the newest `max_spans` and rewrites it atomically with mode 0600, creating the
/// directory (0700) when missing. Lines that do not parse are dropped. Returns an error message, empty on success.
std::string save_spans(const std::filesystem::path& file,
                       const std::vector<std::shared_ptr<const trace::SpanData>>& spans, std::size_t max_spans = 4000);

/// The file's spans, oldest first; lines that do not parse are skipped, a missing file is empty.
std::vector<trace::SpanData> load_spans(const std::filesystem::path& file);

struct TraceSummary {
    std::string trace_id;   ///< 32 hex digits
    std::string root_name;  ///< the earliest span whose parent is not in the file
    std::uint64_t start_ns = 0, end_ns = 0;
    std::size_t spans = 0;
    bool error = false;  ///< some span has the error status
};

/// The newest `limit` traces (by start), newest first.
std::vector<TraceSummary> recent_traces(const std::vector<trace::SpanData>& spans, std::size_t limit);

/// The spans of the trace whose id is `trace_id_prefix` (32 hex digits) or starts with it (at least 8, matching one
/// trace only), in file order. Empty when there is no such trace; then `error` (when given) says why: no trace with
/// that id, several, or not an id.
std::vector<const trace::SpanData*> spans_of_trace(const std::vector<trace::SpanData>& spans,
                                                   std::string_view trace_id_prefix, std::string* error = nullptr);

/// The spans as a tree, children under their parent by start time: one line per span (name, kind, duration,
/// offset from the trace's start, [error.type: message], tool, model, token counts, finish reasons) and a "·" line per
/// event. A span whose parent is not among them (the remote client's span) is a root, with "(parent ID not here)".
std::string render_tree(std::vector<const trace::SpanData*> spans);

}  // namespace switchboard::telemetry
