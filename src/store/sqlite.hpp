// A thin RAII layer over the SQLite C API for the store: statements, transactions, errors that name the file.
// Private to src/store.
#pragma once

#include <switchboard/store/conversation_store.hpp>

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace switchboard::store::sqlite {

/// "<file>: <what SQLite said>".
[[noreturn]] inline void fail(sqlite3* db, const std::filesystem::path& file) {
    throw StoreError(file.string() + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

/// Runs statements that return no rows.
inline void exec(sqlite3* db, const std::filesystem::path& file, const char* sql) {
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, file);
}

/// One prepared statement; bind, step through its rows, finalized on destruction.
class Statement {
public:
    Statement(sqlite3* db, const std::filesystem::path& file, std::string_view sql) : db_(db), file_(file) {
        if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK)
            fail(db, file);
    }
    ~Statement() { sqlite3_finalize(stmt_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int i, std::int64_t v) {
        check(sqlite3_bind_int64(stmt_, i, v));
        return *this;
    }
    Statement& bind(int i, std::string_view v) {
        // A default-constructed string_view has no data pointer, which SQLite would bind as NULL: bind "" instead.
        check(sqlite3_bind_text64(stmt_, i, v.data() ? v.data() : "", v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
        return *this;
    }

    /// true: a row is ready; false: done.
    bool step() {
        int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        fail(db_, file_);
    }
    /// Runs a statement that returns no rows.
    void run() {
        while (step()) {
        }
    }
    void reset() {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }

    std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
    std::string text(int col) const {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
    }

private:
    void check(int rc) {
        if (rc != SQLITE_OK) fail(db_, file_);
    }
    sqlite3* db_;
    const std::filesystem::path& file_;
    sqlite3_stmt* stmt_ = nullptr;
};

/// BEGIN IMMEDIATE (takes the write lock at once, so a busy database waits in busy_timeout here rather than failing
/// half-way); rolled back unless commit() was reached.
class Transaction {
public:
    Transaction(sqlite3* db, const std::filesystem::path& file) : db_(db), file_(file) {
        exec(db, file, "BEGIN IMMEDIATE");
    }
    ~Transaction() {
        if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit() {
        exec(db_, file_, "COMMIT");
        open_ = false;
    }

private:
    sqlite3* db_;
    const std::filesystem::path& file_;
    bool open_ = true;
};

}  // namespace switchboard::store::sqlite
