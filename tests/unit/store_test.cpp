#include <switchboard/store/conversation_store.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace llm = switchboard::llm;
using switchboard::store::ConversationSettings;
using switchboard::store::ConversationStore;
using switchboard::store::StoredMessage;
using switchboard::store::StoreError;

class Store : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-store-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        file_ = dir_ / "conversations.db";
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Raw SQL on the file, as another program would do it.
    void raw_sql(const std::string& sql) {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(file_.c_str(), &db), SQLITE_OK);
        char* err = nullptr;
        EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
        sqlite3_free(err);
        sqlite3_close(db);
    }

    fs::path dir_;
    fs::path file_;
};

std::string error_of(const fs::path& file) {
    try {
        ConversationStore s(file);
    } catch (const StoreError& e) {
        return e.what();
    }
    return "";
}

StoredMessage stored(llm::Message m, json::object meta = {}) {
    StoredMessage s;
    s.message = std::move(m);
    s.meta = std::move(meta);
    return s;
}

llm::ToolCall call(std::string id, std::string name, std::string arguments) {
    llm::ToolCall c;
    c.id = std::move(id);
    c.name = std::move(name);
    c.arguments = std::move(arguments);
    return c;
}

llm::Message tool_message(std::string id, std::string name, std::string text) {
    llm::Message m;
    m.role = llm::Role::tool;
    m.tool_call_id = std::move(id);
    m.name = std::move(name);
    m.content.push_back(llm::MessagePart::make_text(std::move(text)));
    return m;
}

// One assistant turn with two tool calls and their results: what the agent appends at once.
std::vector<StoredMessage> tool_batch(int i) {
    auto a = llm::Message::assistant("");
    a.reasoning = "think " + std::to_string(i);
    a.tool_calls.push_back(call("c" + std::to_string(i) + "a", "echo", R"({"message":"hi"})"));
    a.tool_calls.push_back(call("c" + std::to_string(i) + "b", "add", R"({"a":1,"b":2})"));
    a.usage = llm::Usage{100 + i, 20};
    std::vector<StoredMessage> out;
    out.push_back(stored(std::move(a)));
    out.push_back(stored(tool_message("c" + std::to_string(i) + "a", "echo", "hi"), {{"server", "demo"}}));
    out.push_back(stored(tool_message("c" + std::to_string(i) + "b", "add", "3"), {{"server", "demo"}}));
    return out;
}

// The task that the first call of `batch` (tool_batch) became, running in conversation `id`.
switchboard::store::RunningTask first_call_task(std::int64_t id, const std::vector<StoredMessage>& batch) {
    switchboard::store::RunningTask t;
    t.conversation = id;
    t.tool_call_id = batch[0].message.tool_calls.at(0).id;
    t.server = "demo";
    t.tool = "echo";
    t.task_id = "task-1";
    t.status = "working";
    t.assistant = batch[0].message;
    return t;
}

TEST_F(Store, CreatesThePrivateDirectoryAndFile) {
    auto nested = dir_ / "a" / "b" / "conversations.db";
    ConversationStore s(nested);
    EXPECT_EQ(s.path(), nested);
    struct stat st {};
    ASSERT_EQ(::stat(nested.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat((dir_ / "a" / "b").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(s.integrity_check(), "ok");
}

TEST_F(Store, DefaultPathFollowsXdgDataHome) {
    const char* old = std::getenv("XDG_DATA_HOME");
    std::string saved = old ? old : "";
    ::setenv("XDG_DATA_HOME", "/x/data", 1);
    EXPECT_EQ(ConversationStore::default_path(), fs::path("/x/data/switchboard/conversations.db"));
    ::unsetenv("XDG_DATA_HOME");
    auto home = std::getenv("HOME");
    if (home) {
        EXPECT_EQ(ConversationStore::default_path(), fs::path(home) / ".local/share/switchboard/conversations.db");
    }
    if (old) ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
}

TEST_F(Store, CreateListSearchRenameDelete) {
    ConversationStore s(file_);
    auto a = s.create("Weather in Paris", "gpt-x");
    auto b = s.create("Shopping list", "llama");
    auto c = s.create("PARIS trip", "llama");
    // Newest first by updated: make `a` the most recently updated.
    std::vector<StoredMessage> one;
    one.push_back(stored(llm::Message::user("hello")));
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    s.append(a, one);

    auto all = s.list();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].id, a);
    EXPECT_EQ(all[0].title, "Weather in Paris");
    EXPECT_EQ(all[0].model, "gpt-x");
    EXPECT_EQ(all[0].message_count, 1);
    EXPECT_GE(all[0].updated_ms, all[0].created_ms);
    EXPECT_EQ(all[1].id, c);  // same updated_ms as b or later: ties go to the higher id
    EXPECT_EQ(all[2].id, b);

    auto paris = s.list("paris");
    ASSERT_EQ(paris.size(), 2u);
    EXPECT_EQ(paris[0].id, a);
    EXPECT_EQ(paris[1].id, c);
    EXPECT_TRUE(s.list("nothing like this").empty());
    EXPECT_EQ(s.list("%").size(), 0u);  // no LIKE patterns

    EXPECT_TRUE(s.rename(b, "Groceries"));
    EXPECT_EQ(s.find(b)->title, "Groceries");
    EXPECT_FALSE(s.rename(999, "x"));
    s.set_model(b, "qwen");
    EXPECT_EQ(s.find(b)->model, "qwen");
    EXPECT_THROW(s.set_model(999, "x"), StoreError);

    EXPECT_TRUE(s.remove(a));
    EXPECT_FALSE(s.remove(a));
    EXPECT_FALSE(s.find(a).has_value());
    EXPECT_TRUE(s.messages(a).empty());
    EXPECT_EQ(s.list().size(), 2u);
}

TEST_F(Store, DeleteCascadesToMessages) {
    {
        ConversationStore s(file_);
        auto a = s.create("a", "m");
        auto b = s.create("b", "m");
        s.append(a, tool_batch(1));
        s.append(b, tool_batch(2));
        EXPECT_TRUE(s.remove(a));
        EXPECT_EQ(s.messages(b).size(), 3u);
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM messages", -1, &st, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int64(st, 0), 3);  // only b's
    sqlite3_finalize(st);
    sqlite3_close(db);
}

TEST_F(Store, AppendKeepsOrderAndEveryField) {
    std::vector<StoredMessage> in;
    in.push_back(stored(llm::Message::system("You are terse.")));
    auto user = llm::Message::user("What is in this picture?");
    user.content.push_back(llm::MessagePart{llm::MessagePart::Kind::image, {}, "image/png", "iVBORw0KGgo="});
    user.content.push_back(llm::MessagePart{llm::MessagePart::Kind::audio, {}, "audio/wav", "UklGRg=="});
    in.push_back(stored(std::move(user), {{"attachments", json::array{json::object{{"uri", "file:///cat.png"}}}}}));
    auto assistant = llm::Message::assistant("Let me look.");
    assistant.reasoning = "The user wants a description.";
    assistant.tool_calls.push_back(call("call_1", "vision__describe", R"({"detail":"high"})"));
    assistant.usage = llm::Usage{1234, 56};
    assistant.timings = llm::Timings{210, 1830, 2};
    in.push_back(stored(std::move(assistant)));
    in.push_back(stored(tool_message("call_1", "vision__describe", "A cat on a mat."),
                        {{"server", "vision"}, {"tool", "describe"}, {"isError", false}, {"denied", false},
                         {"durationMs", 42}}));
    in.back().created_ms = 1'700'000'000'123;
    in.push_back(stored(llm::Message::assistant("A cat.")));

    std::int64_t id = 0;
    std::vector<std::int64_t> ids;
    {
        ConversationStore s(file_);
        id = s.create("Picture", "gpt-4o");
        ids = s.append(id, std::span<const StoredMessage>(in.data(), 2));
        auto more = s.append(id, std::span<const StoredMessage>(in.data() + 2, in.size() - 2));
        ids.insert(ids.end(), more.begin(), more.end());
        ASSERT_EQ(ids.size(), in.size());
        for (std::size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]);
    }
    ConversationStore s(file_);  // reopened: everything came from the file
    auto out = s.messages(id);
    ASSERT_EQ(out.size(), in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(out[i].id, ids[i]);
        EXPECT_TRUE(out[i].message == in[i].message) << json::serialize(out[i].message.to_json());
        EXPECT_EQ(out[i].meta, in[i].meta);
        EXPECT_GT(out[i].created_ms, 0);
    }
    EXPECT_EQ(out[3].created_ms, 1'700'000'000'123);
    // Spelled out, so a lossy round trip cannot hide behind operator==.
    EXPECT_EQ(out[1].message.content.size(), 3u);
    EXPECT_EQ(out[1].message.content[1].kind, llm::MessagePart::Kind::image);
    EXPECT_EQ(out[1].message.content[1].mime_type, "image/png");
    EXPECT_EQ(out[1].message.content[1].data, "iVBORw0KGgo=");
    EXPECT_EQ(out[1].message.content[2].kind, llm::MessagePart::Kind::audio);
    const auto& a = out[2].message;
    EXPECT_EQ(a.role, llm::Role::assistant);
    EXPECT_EQ(a.reasoning, "The user wants a description.");
    ASSERT_EQ(a.tool_calls.size(), 1u);
    EXPECT_EQ(a.tool_calls[0].id, "call_1");
    EXPECT_EQ(a.tool_calls[0].name, "vision__describe");
    EXPECT_EQ(a.tool_calls[0].arguments, R"({"detail":"high"})");
    EXPECT_EQ(a.usage, (llm::Usage{1234, 56}));
    EXPECT_EQ(a.timings, (llm::Timings{210, 1830, 2}));
    EXPECT_EQ(out[3].message.tool_call_id, "call_1");
    EXPECT_EQ(out[3].message.name, "vision__describe");
    EXPECT_EQ(out[3].meta.at("durationMs").as_int64(), 42);
    EXPECT_EQ(s.find(id)->message_count, 5);
}

TEST_F(Store, AppendToAMissingConversationFails) {
    ConversationStore s(file_);
    std::vector<StoredMessage> one;
    one.push_back(stored(llm::Message::user("x")));
    try {
        s.append(42, one);
        FAIL() << "no error";
    } catch (const StoreError& e) {
        EXPECT_NE(std::string(e.what()).find("no conversation 42"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(s.append(42, {}).empty());
}

TEST_F(Store, SettingsRoundTrip) {
    ConversationSettings in;
    in.servers_off = {"github", "slack"};
    in.tools_off = {{"fs", "delete_file"}, {"fs", "move_file"}, {"git", "push"}};
    in.approved_tools = {"fs__read_file"};
    in.approved_servers = {"weather"};
    EXPECT_EQ(ConversationSettings::from_json(in.to_json()), in);
    EXPECT_EQ(ConversationSettings::from_json(json::value(42)), ConversationSettings{});
    std::int64_t id = 0;
    {
        ConversationStore s(file_);
        id = s.create("t", "m");
        EXPECT_EQ(s.settings(id), ConversationSettings{});
        s.save_settings(id, in);
        EXPECT_THROW(s.save_settings(id + 1, in), StoreError);
        EXPECT_THROW(s.settings(id + 1), StoreError);
    }
    ConversationStore s(file_);
    EXPECT_EQ(s.settings(id), in);
}

TEST_F(Store, ReopenRestoresConversations) {
    {
        ConversationStore s(file_);
        auto id = s.create("kept", "m1");
        s.append(id, tool_batch(0));
    }
    ConversationStore s(file_);
    auto all = s.list();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].title, "kept");
    EXPECT_EQ(all[0].message_count, 3);
    EXPECT_EQ(s.messages(all[0].id)[0].message.tool_calls.size(), 2u);
}

TEST_F(Store, IdsAreNeverGivenTwiceNotEvenAfterTheNewestIsDeleted) {
    std::int64_t b = 0;
    {
        ConversationStore s(file_);
        s.create("a", "m");
        b = s.create("b", "m");
        ASSERT_TRUE(s.remove(b));
        EXPECT_EQ(s.create("c", "m"), b + 1);  // not b: a link to b must not open c
    }
    ConversationStore s(file_);
    EXPECT_EQ(s.create("d", "m"), b + 2);
}

TEST_F(Store, AVersionOneFileIsMigratedWithItsIdsKept) {
    std::int64_t last = 0;
    {
        ConversationStore s(file_);
        s.create("a", "m");
        last = s.create("b", "m");
    }
    raw_sql("DROP TABLE ids");  // what a file of schema 1 looks like
    raw_sql("DROP TABLE running_tasks");
    raw_sql("PRAGMA user_version = 1");
    ConversationStore s(file_);
    EXPECT_EQ(s.list().size(), 2u);
    EXPECT_EQ(s.create("c", "m"), last + 1);
}

// Tasks (the Tasks extension) running for a conversation: saved and updated by tool call, listed, and gone in the
// transaction that appends the call's result.
TEST_F(Store, RunningTasksLastUntilTheirResultIsAppended) {
    ConversationStore s(file_);
    const auto id = s.create("t", "m");
    auto batch = tool_batch(1);
    auto t = first_call_task(id, batch);
    s.save_task(t);
    t.status_message = "step 2/5";
    s.save_task(t);  // the same call: updated, not added
    auto other = t;
    other.tool_call_id = "c1b";
    other.task_id = "task-2";
    s.save_task(other);
    auto running = s.running_tasks(id);
    ASSERT_EQ(running.size(), 2u);
    EXPECT_EQ(running[0].task_id, "task-1");
    EXPECT_EQ(running[0].status_message, "step 2/5");
    ASSERT_EQ(running[0].assistant.tool_calls.size(), 2u);
    EXPECT_EQ(running[0].assistant.tool_calls[1].id, "c1b");
    EXPECT_EQ(s.running_tasks(0).size(), 2u);
    EXPECT_TRUE(s.running_tasks(id + 1).empty());
    s.append(id, batch);  // both results
    EXPECT_TRUE(s.running_tasks(0).empty());
    s.save_task(t);
    s.remove(id);  // a deleted conversation takes its tasks along
    EXPECT_TRUE(s.running_tasks(0).empty());
}

// serve's start-up and chat --resume may follow one stored task at once against one file: only the first writer
// stores its result; the second batch (assistant message included) is rolled back whole.
TEST_F(Store, AFollowedTaskResultIsStoredOnceByTwoWriters) {
    ConversationStore first(file_);
    ConversationStore second(file_);
    const auto id = first.create("t", "m");
    auto batch = tool_batch(1);
    batch[1].meta["task"] = "task-1";  // as agent::follow_interrupted_tasks marks a followed task's result
    auto t = first_call_task(id, batch);
    first.save_task(t);
    ASSERT_EQ(second.running_tasks(id).size(), 1u);  // both saw it running
    EXPECT_EQ(first.append(id, batch).size(), 3u);
    EXPECT_TRUE(second.append(id, batch).empty());
    EXPECT_EQ(second.messages(id).size(), 3u);
    EXPECT_TRUE(first.running_tasks(0).empty());
    // A result that is not a followed task's (no meta "task") has no row to need.
    EXPECT_EQ(second.append(id, tool_batch(2)).size(), 3u);
    EXPECT_EQ(first.messages(id).size(), 6u);
}

TEST_F(Store, AVersionTwoFileGainsTheRunningTasksTable) {
    {
        ConversationStore s(file_);
        s.create("a", "m");
    }
    raw_sql("DROP TABLE running_tasks");
    raw_sql("PRAGMA user_version = 2");
    ConversationStore s(file_);
    EXPECT_EQ(s.list().size(), 1u);
    EXPECT_TRUE(s.running_tasks(0).empty());
}

TEST_F(Store, NewerSchemaVersionIsRefused) {
    { ConversationStore s(file_); }
    raw_sql("PRAGMA user_version = 7");
    auto e = error_of(file_);
    EXPECT_NE(e.find(file_.string()), std::string::npos) << e;
    EXPECT_NE(e.find("schema version 7"), std::string::npos) << e;
    EXPECT_NE(e.find("newer"), std::string::npos) << e;
}

TEST_F(Store, NotADatabaseIsNamed) {
    {
        std::ofstream f(file_);
        for (int i = 0; i < 200; ++i) f << "this is a text file, not a database\n";
    }
    auto e = error_of(file_);
    EXPECT_NE(e.find(file_.string() + ": not a Switchboard conversations database"), std::string::npos) << e;
    // The file is left alone.
    EXPECT_GT(fs::file_size(file_), 1000u);
}

TEST_F(Store, ForeignSqliteFileIsRefused) {
    raw_sql("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
    auto e = error_of(file_);
    EXPECT_NE(e.find("not a Switchboard conversations database"), std::string::npos) << e;
}

TEST_F(Store, FailedAppendLeavesNothing) {
    std::int64_t id = 0;
    std::int64_t updated = 0;
    {
        ConversationStore s(file_);
        id = s.create("t", "m");
        updated = s.find(id)->updated_ms;
    }
    // The second message of the batch (a tool result) is refused by the database, after the first was inserted.
    raw_sql("CREATE TRIGGER refuse_tools BEFORE INSERT ON messages WHEN NEW.role = 'tool' "
            "BEGIN SELECT RAISE(ABORT, 'tool results refused'); END");
    ConversationStore s(file_);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    try {
        s.append(id, tool_batch(1));
        FAIL() << "no error";
    } catch (const StoreError& e) {
        EXPECT_NE(std::string(e.what()).find(file_.string() + ": tool results refused"), std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(s.messages(id).empty());
    EXPECT_EQ(s.find(id)->updated_ms, updated);
    // The connection is usable afterwards (no transaction left open).
    std::vector<StoredMessage> one;
    one.push_back(stored(llm::Message::user("after")));
    EXPECT_EQ(s.append(id, one).size(), 1u);
    EXPECT_EQ(s.messages(id).size(), 1u);
}

// A writer killed with SIGKILL at random moments: the file stays intact and every batch is all there or absent.
TEST_F(Store, KilledWriterLeavesCompleteBatches) {
    std::int64_t id = 0;
    {
        ConversationStore s(file_);
        id = s.create("crash", "m");
    }  // closed before fork: no connection crosses it
    std::mt19937 rng(std::random_device{}());
    constexpr std::size_t batch = 3;
    std::size_t before = 0;
    for (int round = 0; round < 5; ++round) {
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ::close(ready[0]);
            try {
                ConversationStore s(file_);
                for (int i = 0;; ++i) {
                    s.append(id, tool_batch(i));
                    if (i == 0) {
                        [[maybe_unused]] auto n = ::write(ready[1], "x", 1);  // the first batch is in
                        ::close(ready[1]);
                    }
                }
            } catch (...) {
            }
            ::_exit(1);
        }
        ::close(ready[1]);
        char byte = 0;
        ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the writer failed before its first batch";
        ::close(ready[0]);
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 150'000));
        ::kill(child, SIGKILL);
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself (status " << status << ")";

        ConversationStore s(file_);
        ASSERT_EQ(s.integrity_check(), "ok");
        auto ms = s.messages(id);  // throws when a record does not parse
        EXPECT_EQ(ms.size() % batch, 0u) << ms.size();
        EXPECT_GT(ms.size(), before) << "round " << round << " appended nothing";
        before = ms.size();
        for (std::size_t i = 0; i + batch <= ms.size(); i += batch) {
            ASSERT_EQ(ms[i].message.role, llm::Role::assistant);
            ASSERT_EQ(ms[i].message.tool_calls.size(), 2u);
            EXPECT_EQ(ms[i + 1].message.tool_call_id, ms[i].message.tool_calls[0].id);
            EXPECT_EQ(ms[i + 2].message.tool_call_id, ms[i].message.tool_calls[1].id);
        }
        EXPECT_EQ(s.find(id)->message_count, static_cast<std::int64_t>(ms.size()));
    }
}

}  // namespace
