// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663) on the wire, for both sides: a server may answer a
// tools/call with a task handle (CreateTaskResult: resultType "task" and the Task's fields, flat); the client polls
// tasks/get (a DetailedTask: the Task, plus `result` when completed, `error` when failed, `inputRequests` when
// input_required), answers input with tasks/update and cancels with tasks/cancel (both acknowledged with an empty
// result). A client opts in per request with _meta clientCapabilities.extensions["io.modelcontextprotocol/tasks"].
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::mcp {

inline constexpr std::string_view tasks_extension = "io.modelcontextprotocol/tasks";

namespace tasks_method {
inline constexpr std::string_view get = "tasks/get";
inline constexpr std::string_view update = "tasks/update";
inline constexpr std::string_view cancel = "tasks/cancel";
}  // namespace tasks_method

/// Whether `method` is one of the extension's requests (tasks/get, tasks/update, tasks/cancel).
bool is_tasks_method(std::string_view method);

enum class TaskStatus { working, input_required, completed, failed, cancelled };

std::string_view to_string(TaskStatus s);
/// nullopt for a status the extension does not define.
std::optional<TaskStatus> task_status_from_string(std::string_view s);
/// completed, failed and cancelled: nothing changes a task after that.
bool is_terminal(TaskStatus s);

/// A task as tasks/get and a CreateTaskResult carry it. Times are ISO 8601 strings as on the wire.
struct Task {
    std::string id;  ///< taskId
    TaskStatus status = TaskStatus::working;
    std::string status_message;
    std::string created_at, last_updated_at;
    std::optional<std::int64_t> ttl_ms;  ///< null on the wire: kept until the server decides
    std::optional<std::int64_t> poll_interval_ms;
    boost::json::object raw;  ///< everything as received (result, error, inputRequests of a DetailedTask)

    /// nullopt when `v` has no string taskId or an unknown status. ttlMs and pollIntervalMs (2025-11-25's ttl and
    /// pollInterval too) are read as non-negative milliseconds, at most a year. `keep_raw` false: `raw` stays empty
    /// (a follower reading every poll needs only the fields).
    static std::optional<Task> from_json(const boost::json::value& v, bool keep_raw = true);
    /// The Task's own fields (not result, error or inputRequests).
    boost::json::object to_json() const;
};

/// Whether a request's result is a task handle (resultType "task" with a taskId) rather than the result itself.
bool is_task_handle(const boost::json::value& result);

/// Whether a client's capabilities (a request's _meta clientCapabilities, or a legacy initialize's) declare the
/// extension.
bool declares_tasks(const boost::json::object& client_capabilities);

/// The ISO 8601 UTC time of `ms` milliseconds since the epoch ("2026-07-28T12:00:00.123Z").
std::string iso8601_utc(std::int64_t ms_since_epoch);

}  // namespace switchboard::mcp
