#include <switchboard/mcp/tasks.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace switchboard::mcp {

namespace json = boost::json;

bool is_tasks_method(std::string_view method) {
    return method == tasks_method::get || method == tasks_method::update || method == tasks_method::cancel;
}

std::string_view to_string(TaskStatus s) {
    switch (s) {
    case TaskStatus::working: return "working";
    case TaskStatus::input_required: return "input_required";
    case TaskStatus::completed: return "completed";
    case TaskStatus::failed: return "failed";
    case TaskStatus::cancelled: return "cancelled";
    }
    return "working";
}

std::optional<TaskStatus> task_status_from_string(std::string_view s) {
    for (auto t : {TaskStatus::working, TaskStatus::input_required, TaskStatus::completed, TaskStatus::failed,
                   TaskStatus::cancelled})
        if (to_string(t) == s) return t;
    return std::nullopt;
}

bool is_terminal(TaskStatus s) {
    return s == TaskStatus::completed || s == TaskStatus::failed || s == TaskStatus::cancelled;
}

namespace {

std::string text_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// A duration in milliseconds: a non-negative number, bounded (1e300 must become neither undefined behaviour nor an
// overflowing clock); 2025-11-25 named the fields without "Ms" (`legacy`).
std::optional<std::int64_t> millis_of(const json::object& o, std::string_view key, std::string_view legacy) {
    const auto* v = o.if_contains(key);
    if (!v || !v->is_number()) v = o.if_contains(legacy);
    if (!v || !v->is_number() || v->to_number<double>() < 0) return std::nullopt;
    constexpr double year_ms = 365.0 * 24 * 3600 * 1000;
    return static_cast<std::int64_t>(std::min(v->to_number<double>(), year_ms));
}

}  // namespace

std::optional<Task> Task::from_json(const json::value& v, bool keep_raw) {
    const auto* o = v.if_object();
    if (!o) return std::nullopt;
    const auto* id = o->if_contains("taskId");
    if (!id || !id->is_string()) return std::nullopt;
    auto status = task_status_from_string(text_of(*o, "status"));
    if (!status) return std::nullopt;
    Task t;
    t.id = std::string(id->get_string());
    t.status = *status;
    t.status_message = text_of(*o, "statusMessage");
    t.created_at = text_of(*o, "createdAt");
    t.last_updated_at = text_of(*o, "lastUpdatedAt");
    t.ttl_ms = millis_of(*o, "ttlMs", "ttl");
    t.poll_interval_ms = millis_of(*o, "pollIntervalMs", "pollInterval");
    if (keep_raw) t.raw = *o;
    return t;
}

json::object Task::to_json() const {
    json::object o;
    o["taskId"] = id;
    o["status"] = to_string(status);
    if (!status_message.empty()) o["statusMessage"] = status_message;
    o["createdAt"] = created_at;
    o["lastUpdatedAt"] = last_updated_at;
    if (ttl_ms)
        o["ttlMs"] = *ttl_ms;
    else
        o["ttlMs"] = nullptr;
    if (poll_interval_ms) o["pollIntervalMs"] = *poll_interval_ms;
    return o;
}

bool is_task_handle(const json::value& result) {
    const auto* o = result.if_object();
    if (!o) return false;
    const auto* type = o->if_contains("resultType");
    const auto* id = o->if_contains("taskId");
    return type && type->is_string() && type->get_string() == "task" && id && id->is_string();
}

bool declares_tasks(const json::object& client_capabilities) {
    const auto* e = client_capabilities.if_contains("extensions");
    const auto* ext = e && e->is_object() ? e->get_object().if_contains(tasks_extension) : nullptr;
    return ext && ext->is_object();
}

std::string iso8601_utc(std::int64_t ms) {
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                       tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
}

}  // namespace switchboard::mcp
