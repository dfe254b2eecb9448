#include <switchboard/mcp/tasks.hpp>

#include <fmt/format.h>

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

// An integer field; fractional or out-of-range numbers are not integers the extension allows.
std::optional<std::int64_t> integer_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v) return std::nullopt;
    if (v->is_int64()) return v->get_int64();
    if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        return static_cast<std::int64_t>(v->get_uint64());
    return std::nullopt;
}

}  // namespace

std::optional<Task> Task::from_json(const json::value& v) {
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
    t.ttl_ms = integer_of(*o, "ttlMs");
    t.poll_interval_ms = integer_of(*o, "pollIntervalMs");
    t.raw = *o;
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
