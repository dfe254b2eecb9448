// `switchboard conversations ...`: the real binary against a database filled through the store API.
#include "harness.hpp"

#include <switchboard/store/conversation_store.hpp>

#include <boost/json/parse.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

namespace switchboard::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using store::ConversationStore;
using store::StoredMessage;

StoredMessage stored(llm::Message m, json::object meta = {}) {
    StoredMessage s;
    s.message = std::move(m);
    s.meta = std::move(meta);
    return s;
}

class CliConversations : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-cliconv-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = dir_ / "conversations.db";
        ConversationStore s(db_);
        weather_ = s.create("Weather in Paris", "gpt-4o");
        s.create("Shopping list", "llama3");
        std::vector<StoredMessage> turn;
        turn.push_back(stored(llm::Message::user("Will it rain in Paris tomorrow?"),
                              {{"attachments", json::array{json::object{{"uri", "file:///notes.txt"}}}}}));
        auto a = llm::Message::assistant("");
        a.reasoning = "I should ask the weather tool.";
        llm::ToolCall call;
        call.id = "call_1";
        call.name = "weather__forecast";
        call.arguments = R"({"city":"Paris"})";
        a.tool_calls.push_back(call);
        a.usage = llm::Usage{500, 30};
        turn.push_back(stored(std::move(a)));
        llm::Message result;
        result.role = llm::Role::tool;
        result.tool_call_id = "call_1";
        result.name = "weather__forecast";
        result.content.push_back(llm::MessagePart::make_text("Rain, 14 °C, code: ```x```"));
        turn.push_back(stored(std::move(result), {{"server", "weather"}, {"durationMs", 87}, {"isError", false}}));
        turn.push_back(stored(llm::Message::assistant("Yes, take an umbrella.")));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // updated later than "Shopping list"
        s.append(weather_, turn);
    }
    void TearDown() override { fs::remove_all(dir_); }

    int cli(const std::string& args, std::string& out) {
        return run_command(std::string(SWITCHBOARD_CLI) + " " + args + " 2>&1", out);
    }
    bool has(const std::string& out, const std::string& what) { return out.find(what) != std::string::npos; }

    fs::path dir_;
    fs::path db_;
    std::int64_t weather_ = 0;
};

TEST_F(CliConversations, ListsNewestFirst) {
    std::string out;
    ASSERT_EQ(cli("conversations --db " + db_.string(), out), 0) << out;
    EXPECT_TRUE(has(out, "TITLE")) << out;
    auto weather = out.find("Weather in Paris");
    auto shopping = out.find("Shopping list");
    ASSERT_NE(weather, std::string::npos) << out;
    ASSERT_NE(shopping, std::string::npos) << out;
    EXPECT_LT(weather, shopping) << out;  // updated by its messages
    EXPECT_TRUE(has(out, "gpt-4o")) << out;
    EXPECT_TRUE(has(out, "just now")) << out;

    ASSERT_EQ(cli("conversations --search PARIS --db " + db_.string(), out), 0) << out;
    EXPECT_TRUE(has(out, "Weather in Paris")) << out;
    EXPECT_FALSE(has(out, "Shopping")) << out;
    // The global form of --db works too.
    ASSERT_EQ(cli("--db " + db_.string() + " conversations --search shop", out), 0) << out;
    EXPECT_TRUE(has(out, "Shopping list")) << out;
}

TEST_F(CliConversations, ListJson) {
    std::string out;
    ASSERT_EQ(cli("conversations --json --db " + db_.string(), out), 0) << out;
    auto v = json::parse(out);
    const auto& arr = v.as_array();
    ASSERT_EQ(arr.size(), 2u);
    EXPECT_EQ(arr[0].at("id").as_int64(), weather_);
    EXPECT_EQ(arr[0].at("title").as_string(), "Weather in Paris");
    EXPECT_EQ(arr[0].at("model").as_string(), "gpt-4o");
    EXPECT_EQ(arr[0].at("messages").as_int64(), 4);
    EXPECT_EQ(arr[1].at("messages").as_int64(), 0);
    EXPECT_TRUE(arr[0].at("updated").is_string());
}

TEST_F(CliConversations, ShowJson) {
    std::string out;
    ASSERT_EQ(cli("conversations show " + std::to_string(weather_) + " --json --db " + db_.string(), out), 0) << out;
    auto v = json::parse(out);
    const auto& o = v.as_object();
    EXPECT_EQ(o.at("id").as_int64(), weather_);
    EXPECT_EQ(o.at("title").as_string(), "Weather in Paris");
    EXPECT_TRUE(o.at("settings").is_object());
    const auto& ms = o.at("messages").as_array();
    ASSERT_EQ(ms.size(), 4u);
    EXPECT_EQ(ms[1].at("role").as_string(), "assistant");
    EXPECT_EQ(ms[1].at("reasoning").as_string(), "I should ask the weather tool.");
    EXPECT_EQ(ms[1].at("tool_calls").at(0).at("function").at("name").as_string(), "weather__forecast");
    EXPECT_EQ(ms[2].at("meta").at("server").as_string(), "weather");
    EXPECT_EQ(ms[0].at("meta").at("attachments").at(0).at("uri").as_string(), "file:///notes.txt");
}

TEST_F(CliConversations, ShowMarkdown) {
    std::string out;
    ASSERT_EQ(cli("conversations show " + std::to_string(weather_) + " --markdown --db " + db_.string(), out), 0)
        << out;
    EXPECT_TRUE(has(out, "# Weather in Paris")) << out;
    auto user = out.find("## User");
    auto assistant = out.find("## Assistant");
    ASSERT_NE(user, std::string::npos) << out;
    ASSERT_NE(assistant, std::string::npos) << out;
    EXPECT_LT(user, assistant);
    EXPECT_TRUE(has(out, "Will it rain in Paris tomorrow?")) << out;
    EXPECT_TRUE(has(out, "<details><summary>Reasoning</summary>")) << out;
    EXPECT_TRUE(has(out, "→ `weather__forecast {\"city\":\"Paris\"}`")) << out;
    // The result is folded under its call, in a fence longer than the backticks inside it.
    EXPECT_TRUE(has(out, "Result (weather, 87 ms):\n\n````\nRain, 14 °C, code: ```x```\n````")) << out;
    EXPECT_FALSE(has(out, "## Tool")) << out;
    EXPECT_TRUE(has(out, "Yes, take an umbrella.")) << out;
    EXPECT_TRUE(has(out, "file:///notes.txt")) << out;
}

TEST_F(CliConversations, RenameAndDelete) {
    std::string out;
    const auto id = std::to_string(weather_);
    ASSERT_EQ(cli("conversations rename " + id + " 'Rain check' --db " + db_.string(), out), 0) << out;
    ASSERT_EQ(cli("conversations delete " + id + " --db " + db_.string(), out), 0) << out;
    EXPECT_TRUE(has(out, "Deleted conversation " + id)) << out;
    ConversationStore s(db_);
    EXPECT_FALSE(s.find(weather_).has_value());
    EXPECT_TRUE(s.messages(weather_).empty());
    ASSERT_EQ(s.list().size(), 1u);
}

TEST_F(CliConversations, RenameShows) {
    std::string out;
    ASSERT_EQ(cli("conversations rename " + std::to_string(weather_) + " 'Rain check' --db " + db_.string(), out), 0)
        << out;
    ConversationStore s(db_);
    EXPECT_EQ(s.find(weather_)->title, "Rain check");
}

TEST_F(CliConversations, UnknownIdFails) {
    std::string out;
    for (const std::string cmd : {"show 999", "delete 999", "rename 999 x"}) {
        EXPECT_EQ(cli("conversations " + cmd + " --db " + db_.string(), out), 1) << cmd << ": " << out;
        EXPECT_TRUE(has(out, "no conversation 999 in " + db_.string())) << out;
    }
    // A database that does not exist is not created by looking.
    auto missing = dir_ / "none" / "c.db";
    EXPECT_EQ(cli("conversations show 1 --db " + missing.string(), out), 1) << out;
    EXPECT_TRUE(has(out, "no conversation 1 in " + missing.string())) << out;
    EXPECT_EQ(cli("conversations --db " + missing.string(), out), 0) << out;
    EXPECT_FALSE(fs::exists(missing));
}

TEST_F(CliConversations, NotADatabase) {
    auto bad = dir_ / "bad.db";
    {
        std::FILE* f = std::fopen(bad.c_str(), "w");
        for (int i = 0; i < 100; ++i) std::fputs("not sqlite at all\n", f);
        std::fclose(f);
    }
    std::string out;
    EXPECT_EQ(cli("conversations --db " + bad.string(), out), 1) << out;
    EXPECT_TRUE(has(out, bad.string() + ": not a Switchboard conversations database")) << out;
}

}  // namespace
}  // namespace switchboard::test
