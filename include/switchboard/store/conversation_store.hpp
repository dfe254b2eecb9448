// Conversations on disk: one SQLite file (WAL, foreign keys on, a schema version with migrations). A conversation
// has a title, a model, timestamps, and its settings (per-conversation server/tool overrides and remembered
// approvals); its messages are stored in order, each with its complete record (llm::Message::to_json: content, tool
// calls with arguments, reasoning, usage, timings) and `meta` (attachments of a user message; server, tool, isError,
// denied and duration of a tool result).
//
// Every append is one transaction: a crash or kill -9 mid-turn leaves the file consistent and every message either
// fully there or absent. The calls are short synchronous statements (the loop's thread is blocked for well under a
// millisecond per message).
//
// Errors throw StoreError, whose message names the file and what SQLite said.
//
// Thread-safety: single owner.
#pragma once

#include <switchboard/llm/message.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct sqlite3;

namespace switchboard::store {

class StoreError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct ConversationInfo {
    std::int64_t id = 0;
    std::string title;
    std::string model;
    std::int64_t created_ms = 0;  ///< Unix epoch milliseconds
    std::int64_t updated_ms = 0;
    std::int64_t message_count = 0;
};

/// What a conversation remembers besides its messages.
struct ConversationSettings {
    std::set<std::string> servers_off;                       ///< switched off for this conversation
    std::set<std::pair<std::string, std::string>> tools_off;  ///< (server, tool)
    std::set<std::string> approved_tools;                    ///< "always for this tool" (exposed names)
    std::set<std::string> approved_servers;                  ///< "always for this server"
    boost::json::object to_json() const;
    static ConversationSettings from_json(const boost::json::value& v);
    bool operator==(const ConversationSettings&) const = default;
};

struct StoredMessage {
    std::int64_t id = 0;
    std::int64_t created_ms = 0;
    llm::Message message;
    boost::json::object meta;
};

/// A tool call of a conversation that a server answered with a task (the Tasks extension) whose result is not stored
/// yet: enough to poll it again after a restart and to store its result with the message that asked for it.
struct RunningTask {
    std::int64_t conversation = 0;
    std::string tool_call_id;
    std::string server;
    std::string tool;  ///< the exposed name the model used
    std::string task_id;
    std::string status;  ///< as last seen: working, input_required
    std::string status_message;
    llm::Message assistant;  ///< the message whose tool call started it (stored with the results, not before)
    std::int64_t created_ms = 0;
    std::int64_t updated_ms = 0;
};

class ConversationStore {
public:
    /// Opens (creating the file and its directory when missing) and migrates to the current schema.
    explicit ConversationStore(std::filesystem::path file);
    ~ConversationStore();
    ConversationStore(const ConversationStore&) = delete;
    ConversationStore& operator=(const ConversationStore&) = delete;

    /// $XDG_DATA_HOME/switchboard/conversations.db (~/.local/share/... when unset).
    static std::filesystem::path default_path();
    static constexpr int schema_version = 3;

    const std::filesystem::path& path() const { return file_; }

    std::int64_t create(std::string_view title, std::string_view model);
    std::optional<ConversationInfo> find(std::int64_t id) const;
    /// Newest first; `title_contains` filters case-insensitively.
    std::vector<ConversationInfo> list(std::string_view title_contains = {}) const;
    bool rename(std::int64_t id, std::string_view title);
    void set_model(std::int64_t id, std::string_view model);
    /// Deletes the conversation and its messages; false when there was none.
    bool remove(std::int64_t id);

    ConversationSettings settings(std::int64_t id) const;
    void save_settings(std::int64_t id, const ConversationSettings& settings);

    /// Records a running task, or its new status (keyed by conversation and tool call).
    void save_task(const RunningTask& task);
    /// The running tasks of one conversation (0: of all), oldest first.
    std::vector<RunningTask> running_tasks(std::int64_t conversation) const;

    /// Appends messages in one transaction (and updates `updated`); returns their ids. A tool message's running task
    /// goes in the same transaction: a task's result is stored exactly once. A batch with a followed task's result
    /// (a tool message whose meta has "task") whose running task is no longer recorded was already stored by
    /// another writer: nothing is stored and the result is empty.
    std::vector<std::int64_t> append(std::int64_t conversation, std::span<const StoredMessage> messages);
    std::vector<StoredMessage> messages(std::int64_t conversation) const;

    /// PRAGMA integrity_check: "ok" or what is wrong.
    std::string integrity_check() const;

private:
    void migrate();
    std::int64_t pragma_int(const char* name) const;
    /// Throws StoreError when there is no conversation `id`.
    void require(std::int64_t id) const;

    std::filesystem::path file_;
    sqlite3* db_ = nullptr;
};

}  // namespace switchboard::store
