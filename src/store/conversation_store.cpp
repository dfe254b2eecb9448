#include <switchboard/store/conversation_store.hpp>

#include "sqlite.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace switchboard::store {

namespace json = boost::json;
namespace fs = std::filesystem;
using sqlite::Statement;
using sqlite::Transaction;

namespace {

/// 'SWBD' in PRAGMA application_id: marks the file as ours (a foreign SQLite file is refused, not migrated).
constexpr std::int64_t application_id = 0x53574244;

/// migrations[i] takes the schema from version i to i + 1; each runs in the one migration transaction.
constexpr std::array<const char*, ConversationStore::schema_version> migrations = {
    // 0 -> 1
    R"sql(
CREATE TABLE conversations (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  settings TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE messages (
  id INTEGER PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL,
  record TEXT NOT NULL,
  meta TEXT NOT NULL DEFAULT '{}',
  created_ms INTEGER NOT NULL
);
CREATE UNIQUE INDEX messages_by_conversation ON messages(conversation_id, seq);
CREATE INDEX conversations_by_updated ON conversations(updated_ms);
)sql",
    // 1 -> 2: ids are never given twice (a deleted conversation's id stays gone: a link to it must not open another).
    R"sql(
CREATE TABLE ids (name TEXT PRIMARY KEY, last INTEGER NOT NULL);
INSERT INTO ids VALUES ('conversations', (SELECT coalesce(max(id), 0) FROM conversations));
)sql",
    // 2 -> 3: tool calls answered with a task (the Tasks extension) whose result is not stored yet.
    R"sql(
CREATE TABLE running_tasks (
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  tool_call_id TEXT NOT NULL,
  server TEXT NOT NULL,
  tool TEXT NOT NULL,
  task_id TEXT NOT NULL,
  status TEXT NOT NULL,
  status_message TEXT NOT NULL DEFAULT '',
  assistant TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY (conversation_id, tool_call_id)
);
)sql",
};

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Creates the missing directories of `dir`, each 0700 (the conversations are private).
void create_private_dirs(const fs::path& dir) {
    if (dir.empty() || fs::exists(dir)) return;
    create_private_dirs(dir.parent_path());
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw StoreError(dir.string() + ": cannot create the directory: " + std::strerror(errno));
}

// Creates the file 0600 when missing, so SQLite (which gives the -wal and -shm files the database's mode) never
// makes it world-readable under a lax umask.
void create_private_file(const fs::path& file) {
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) throw StoreError(file.string() + ": cannot create the file: " + std::strerror(errno));
    ::close(fd);
}

json::value parse_json(std::string_view text) {
    json::error_code ec;
    auto v = json::parse(text, ec);
    return ec ? json::value() : v;
}

json::array strings_json(const std::set<std::string>& s) {
    json::array a;
    for (const auto& x : s) a.emplace_back(x);
    return a;
}

std::set<std::string> strings_from(const json::object& o, std::string_view key) {
    std::set<std::string> out;
    if (const auto* a = o.if_contains(key); a && a->is_array())
        for (const auto& x : a->get_array())
            if (x.is_string()) out.emplace(x.get_string());
    return out;
}

constexpr std::string_view info_columns =
    "SELECT c.id, c.title, c.model, c.created_ms, c.updated_ms, "
    "(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) FROM conversations c ";

ConversationInfo read_info(const Statement& s) {
    return ConversationInfo{s.int64(0), s.text(1), s.text(2), s.int64(3), s.int64(4), s.int64(5)};
}

}  // namespace

json::object ConversationSettings::to_json() const {
    json::object o;
    o["serversOff"] = strings_json(servers_off);
    json::array tools;
    for (const auto& [server, tool] : tools_off) tools.push_back(json::object{{"server", server}, {"tool", tool}});
    o["toolsOff"] = std::move(tools);
    o["approvedTools"] = strings_json(approved_tools);
    o["approvedServers"] = strings_json(approved_servers);
    return o;
}

ConversationSettings ConversationSettings::from_json(const json::value& v) {
    ConversationSettings s;
    const auto* o = v.if_object();
    if (!o) return s;
    s.servers_off = strings_from(*o, "serversOff");
    s.approved_tools = strings_from(*o, "approvedTools");
    s.approved_servers = strings_from(*o, "approvedServers");
    if (const auto* a = o->if_contains("toolsOff"); a && a->is_array())
        for (const auto& t : a->get_array())
            if (const auto* to = t.if_object()) {
                auto server = mcp::string_field(*to, "server");
                auto tool = mcp::string_field(*to, "tool");
                if (!server.empty() && !tool.empty()) s.tools_off.emplace(std::move(server), std::move(tool));
            }
    return s;
}

fs::path ConversationStore::default_path() {
    fs::path base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg == '/') {
        base = xdg;
    } else {
        const char* home = std::getenv("HOME");
        if (!home || !*home) {
            const auto* pw = ::getpwuid(::getuid());
            home = pw && pw->pw_dir ? pw->pw_dir : "/tmp";
        }
        base = fs::path(home) / ".local" / "share";
    }
    return base / "switchboard" / "conversations.db";
}

ConversationStore::ConversationStore(fs::path file) : file_(std::move(file)) {
    create_private_dirs(file_.parent_path());
    create_private_file(file_);
    if (sqlite3_open_v2(file_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
        std::string what = file_.string() + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
        sqlite3_close(db_);
        throw StoreError(what);
    }
    try {
        sqlite3_extended_result_codes(db_, 1);
        sqlite3_busy_timeout(db_, 5000);
        // The first read of the file: where a non-database says so.
        int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
        if ((rc & 0xff) == SQLITE_NOTADB)
            throw StoreError(file_.string() + ": not a Switchboard conversations database (" + sqlite3_errmsg(db_) +
                             ")");
        if (rc != SQLITE_OK) sqlite::fail(db_, file_);
        // WAL + synchronous=NORMAL keeps the file consistent through any crash: a commit is a set of frames appended
        // to the WAL, each checksummed and salted, and the WAL is fsynced before a checkpoint copies pages into the
        // database (which is fsynced before the WAL is reset). Recovery ignores frames after the last valid commit
        // frame, so a torn write loses at most the last transactions (and only on power loss or an OS crash: after a
        // process crash or kill -9 the OS still has every committed frame), never half of one and never the
        // database's integrity.
        sqlite::exec(db_, file_, "PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL");
        migrate();
    } catch (...) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
    }
}

ConversationStore::~ConversationStore() { sqlite3_close(db_); }

std::int64_t ConversationStore::pragma_int(const char* name) const {
    Statement s(db_, file_, std::string("PRAGMA ") + name);
    return s.step() ? s.int64(0) : 0;
}

void ConversationStore::migrate() {
    auto version = pragma_int("user_version");
    if (version == schema_version && pragma_int("application_id") == application_id) return;
    Transaction tx(db_, file_);
    version = pragma_int("user_version");  // again under the write lock: another process may have migrated
    const auto app = pragma_int("application_id");
    if (app != 0 && app != application_id)
        throw StoreError(file_.string() + ": not a Switchboard conversations database (application_id " +
                         std::to_string(app) + ")");
    if (version > schema_version)
        throw StoreError(file_.string() + ": the conversations database has schema version " +
                         std::to_string(version) + ", newer than this Switchboard understands (" +
                         std::to_string(schema_version) + "); upgrade Switchboard");
    if (version == 0) {
        Statement tables(db_, file_, "SELECT count(*) FROM sqlite_master");
        if (tables.step() && tables.int64(0) > 0)
            throw StoreError(file_.string() +
                             ": not a Switchboard conversations database (an SQLite file with other tables)");
    }
    for (auto v = version; v < schema_version; ++v) sqlite::exec(db_, file_, migrations[static_cast<std::size_t>(v)]);
    sqlite::exec(db_, file_, ("PRAGMA user_version=" + std::to_string(schema_version)).c_str());
    sqlite::exec(db_, file_, ("PRAGMA application_id=" + std::to_string(application_id)).c_str());
    tx.commit();
}

void ConversationStore::require(std::int64_t id) const {
    Statement s(db_, file_, "SELECT 1 FROM conversations WHERE id = ?1");
    s.bind(1, id);
    if (!s.step()) throw StoreError(file_.string() + ": no conversation " + std::to_string(id));
}

std::int64_t ConversationStore::create(std::string_view title, std::string_view model) {
    const auto now = now_ms();
    Transaction tx(db_, file_);
    std::int64_t id = 0;
    {
        Statement next(db_, file_,
                       "UPDATE ids SET last = max(last, (SELECT coalesce(max(id), 0) FROM conversations)) + 1 "
                       "WHERE name = 'conversations' RETURNING last");
        if (!next.step()) throw StoreError(file_.string() + ": no id counter for conversations");
        id = next.int64(0);
    }
    Statement s(db_, file_,
                "INSERT INTO conversations (id, title, model, created_ms, updated_ms, settings) "
                "VALUES (?1, ?2, ?3, ?4, ?4, '{}')");
    s.bind(1, id).bind(2, title).bind(3, model).bind(4, now).run();
    tx.commit();
    return id;
}

std::optional<ConversationInfo> ConversationStore::find(std::int64_t id) const {
    std::string sql(info_columns);  // appended, not `+`: GCC 12 warns falsely (-Warray-bounds) on the temporary
    sql += "WHERE c.id = ?1";
    Statement s(db_, file_, sql);
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_info(s);
}

std::vector<ConversationInfo> ConversationStore::list(std::string_view title_contains) const {
    // lower() folds ASCII only; good enough for a title filter.
    std::string sql(info_columns);
    sql += "WHERE ?1 = '' OR instr(lower(c.title), lower(?1)) > 0 ORDER BY c.updated_ms DESC, c.id DESC";
    Statement s(db_, file_, sql);
    s.bind(1, title_contains);
    std::vector<ConversationInfo> out;
    while (s.step()) out.push_back(read_info(s));
    return out;
}

bool ConversationStore::rename(std::int64_t id, std::string_view title) {
    Statement s(db_, file_, "UPDATE conversations SET title = ?2 WHERE id = ?1");
    s.bind(1, id).bind(2, title).run();
    return sqlite3_changes(db_) > 0;
}

void ConversationStore::set_model(std::int64_t id, std::string_view model) {
    Statement s(db_, file_, "UPDATE conversations SET model = ?2 WHERE id = ?1");
    s.bind(1, id).bind(2, model).run();
    if (sqlite3_changes(db_) == 0) require(id);
}

bool ConversationStore::remove(std::int64_t id) {
    Statement s(db_, file_, "DELETE FROM conversations WHERE id = ?1");  // messages: ON DELETE CASCADE
    s.bind(1, id).run();
    return sqlite3_changes(db_) > 0;
}

ConversationSettings ConversationStore::settings(std::int64_t id) const {
    Statement s(db_, file_, "SELECT settings FROM conversations WHERE id = ?1");
    s.bind(1, id);
    if (!s.step()) throw StoreError(file_.string() + ": no conversation " + std::to_string(id));
    return ConversationSettings::from_json(parse_json(s.text(0)));
}

void ConversationStore::save_settings(std::int64_t id, const ConversationSettings& settings) {
    Statement s(db_, file_, "UPDATE conversations SET settings = ?2 WHERE id = ?1");
    s.bind(1, id).bind(2, json::serialize(settings.to_json())).run();
    if (sqlite3_changes(db_) == 0) require(id);
}

std::vector<std::int64_t> ConversationStore::append(std::int64_t conversation, std::span<const StoredMessage> messages) {
    std::vector<std::int64_t> ids;
    if (messages.empty()) return ids;
    const auto now = now_ms();
    Transaction tx(db_, file_);
    require(conversation);
    Statement last(db_, file_, "SELECT coalesce(max(seq), 0) FROM messages WHERE conversation_id = ?1");
    last.bind(1, conversation);
    auto seq = last.step() ? last.int64(0) : 0;
    Statement insert(db_, file_,
                     "INSERT INTO messages (conversation_id, seq, role, record, meta, created_ms) "
                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    Statement done(db_, file_, "DELETE FROM running_tasks WHERE conversation_id = ?1 AND tool_call_id = ?2");
    for (const auto& m : messages) {
        if (m.message.role == llm::Role::tool && !m.message.tool_call_id.empty()) {
            done.bind(1, conversation).bind(2, m.message.tool_call_id).run();
            done.reset();
            // A followed task's result (meta "task") whose row is gone was stored by another writer (serve's
            // start-up and chat --resume following one task): roll back, so it is stored once.
            if (sqlite3_changes(db_) == 0 && m.meta.contains("task")) return {};
        }
        insert.bind(1, conversation)
            .bind(2, ++seq)
            .bind(3, llm::to_string(m.message.role))
            .bind(4, json::serialize(m.message.to_json()))
            .bind(5, json::serialize(m.meta))
            .bind(6, m.created_ms != 0 ? m.created_ms : now);
        insert.run();
        insert.reset();
        ids.push_back(sqlite3_last_insert_rowid(db_));
    }
    Statement touch(db_, file_, "UPDATE conversations SET updated_ms = max(updated_ms, ?2) WHERE id = ?1");
    touch.bind(1, conversation).bind(2, now).run();
    tx.commit();
    return ids;
}

void ConversationStore::save_task(const RunningTask& t) {
    const auto now = now_ms();
    Statement s(db_, file_,
                "INSERT INTO running_tasks (conversation_id, tool_call_id, server, tool, task_id, status, "
                "status_message, assistant, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) "
                "ON CONFLICT (conversation_id, tool_call_id) DO UPDATE SET task_id = ?5, status = ?6, "
                "status_message = ?7, updated_ms = ?9");
    s.bind(1, t.conversation)
        .bind(2, t.tool_call_id)
        .bind(3, t.server)
        .bind(4, t.tool)
        .bind(5, t.task_id)
        .bind(6, t.status)
        .bind(7, t.status_message)
        .bind(8, json::serialize(t.assistant.to_json()))
        .bind(9, now)
        .run();
}

std::vector<RunningTask> ConversationStore::running_tasks(std::int64_t conversation) const {
    Statement s(db_, file_,
                "SELECT conversation_id, tool_call_id, server, tool, task_id, status, status_message, assistant, "
                "created_ms, updated_ms FROM running_tasks WHERE ?1 = 0 OR conversation_id = ?1 "
                "ORDER BY created_ms, conversation_id, tool_call_id");
    s.bind(1, conversation);
    std::vector<RunningTask> out;
    while (s.step()) {
        RunningTask t{s.int64(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5), s.text(6), {},
                      s.int64(8), s.int64(9)};
        auto message = llm::Message::from_json(parse_json(s.text(7)));
        if (!message)
            throw StoreError(file_.string() + ": the running task " + t.task_id + " of conversation " +
                             std::to_string(t.conversation) + " has no valid message record");
        t.assistant = std::move(*message);
        out.push_back(std::move(t));
    }
    return out;
}

std::vector<StoredMessage> ConversationStore::messages(std::int64_t conversation) const {
    Statement s(db_, file_,
                "SELECT id, record, meta, created_ms FROM messages WHERE conversation_id = ?1 ORDER BY seq");
    s.bind(1, conversation);
    std::vector<StoredMessage> out;
    while (s.step()) {
        StoredMessage m;
        m.id = s.int64(0);
        auto message = llm::Message::from_json(parse_json(s.text(1)));
        if (!message)
            throw StoreError(file_.string() + ": message " + std::to_string(m.id) + " of conversation " +
                             std::to_string(conversation) + " is not a valid message record");
        m.message = std::move(*message);
        if (auto meta = parse_json(s.text(2)); meta.is_object()) m.meta = std::move(meta.get_object());
        m.created_ms = s.int64(3);
        out.push_back(std::move(m));
    }
    return out;
}

std::string ConversationStore::integrity_check() const {
    Statement s(db_, file_, "PRAGMA integrity_check");
    std::string out;
    while (s.step()) {
        if (!out.empty()) out += "\n";
        out += s.text(0);
    }
    return out;
}

}  // namespace switchboard::store
