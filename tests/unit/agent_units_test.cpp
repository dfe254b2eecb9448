// The agent layer's pure parts: schema normalisation for strict endpoints, approvals, elicitation checks, sampling
// requests as chat messages, file URIs.
#include <switchboard/agent/approvals.hpp>
#include <switchboard/agent/fork_registry.hpp>
#include <switchboard/agent/server_requests.hpp>
#include <switchboard/agent/tool_runner.hpp>
#include <switchboard/agent/tool_schema.hpp>

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace switchboard::agent {
namespace {

namespace json = boost::json;

json::object obj(const char* text) { return json::parse(text).as_object(); }

TEST(ToolSchema, NormalisedForStrictEndpoints) {
    auto s = normalise_schema(obj(R"({"$schema": "http://json-schema.org/draft-07/schema#", "$id": "x",
        "properties": {"a": {"type": "string"}}, "required": ["a"]})"));
    EXPECT_EQ(s.at("type"), "object");
    EXPECT_FALSE(s.contains("$schema"));
    EXPECT_FALSE(s.contains("$id"));
    EXPECT_EQ(s.at("required").as_array().size(), 1u);
    // An empty schema gets type and properties; a bad "required" goes.
    auto e = normalise_schema(obj(R"({"required": "a"})"));
    EXPECT_EQ(e.at("type"), "object");
    EXPECT_TRUE(e.at("properties").as_object().empty());
    EXPECT_FALSE(e.contains("required"));
}

TEST(ToolSchema, OpenAiToolsFromAnIndex) {
    auto list = std::make_shared<std::vector<mcp::Tool>>();
    list->push_back(mcp::Tool::from_json(json::parse(R"({"name": "echo", "description": "Echoes",
        "inputSchema": {"type": "object", "properties": {"m": {"type": "string"}}}})")));
    list->push_back(mcp::Tool::from_json(json::parse(R"({"name": "bare", "title": "Bare tool", "inputSchema": {}})")));
    host::ServerTools st;
    st.server = "demo";
    st.shared = list;
    auto index = host::ToolIndex::build({st});
    auto tools = openai_tools(index);
    ASSERT_EQ(tools.size(), 2u);
    const auto& bare = tools[0].at("function").as_object();  // sorted by name
    EXPECT_EQ(bare.at("name"), "bare");
    EXPECT_EQ(bare.at("description"), "Bare tool");  // the title stands in for a missing description
    EXPECT_EQ(bare.at("parameters").at("type"), "object");
    EXPECT_EQ(tools[1].at("type"), "function");
}

TEST(Approvals, PatternsRememberedAndAll) {
    Approvals a;
    EXPECT_FALSE(a.allows("echo", "demo", "echo"));
    a.patterns = {"github__*"};
    EXPECT_TRUE(a.allows("create_issue", "github", "create_issue"));  // matched as server__tool
    EXPECT_TRUE(a.allows("github__create_issue", "github", "create_issue"));
    EXPECT_FALSE(a.allows("echo", "demo", "echo"));
    a.remember(Decision::always_tool, "echo", "demo");
    EXPECT_TRUE(a.allows("echo", "demo", "echo"));
    EXPECT_FALSE(a.allows("add", "demo", "add"));
    a.remember(Decision::allow_once, "add", "demo");
    a.remember(Decision::deny, "add", "demo");
    EXPECT_FALSE(a.allows("add", "demo", "add"));
    a.remember(Decision::always_server, "add", "demo");
    EXPECT_TRUE(a.allows("add", "demo", "add"));
    Approvals all;
    all.all = true;
    EXPECT_TRUE(all.allows("x", "y", "x"));
}

// What a fork remembers for "always for this tool" (server__tool) counts under any exposed name of that tool, and
// for no other server's tool of the same name.
TEST(Approvals, AQualifiedToolCountsUnderAnyExposedNameOfThatServersTool) {
    Approvals a;
    a.remember(Decision::always_tool, "notes__echo", "notes");
    EXPECT_TRUE(a.allows("echo", "notes", "echo"));  // exposed bare in the fork, or in another context
    EXPECT_TRUE(a.allows("notes__echo", "notes", "echo"));
    EXPECT_FALSE(a.allows("echo", "main", "echo"));  // the parent's own echo is another server's
    EXPECT_FALSE(a.allows("main__echo", "main", "echo"));
}

// The published file names the context each fork came from; a file written before that field existed still reads.
TEST(ForkRegistry, PublishesTheParentContextAndReadsFilesWithoutIt) {
    const auto dir = std::filesystem::temp_directory_path() / ("sb-forks-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    {
        ForkRegistry registry(dir);
        RunningFork f;
        f.kind = "agent";
        f.name = "researcher";
        f.parent = "web:12";
        f.depth = 1;
        f.servers = {"notes"};
        f.started_at_ms = 1700000000000;
        registry.add(f);
        auto read = read_published_forks(dir);
        ASSERT_EQ(read.size(), 1u);
        EXPECT_EQ(read[0].pid, ::getpid());
        ASSERT_EQ(read[0].forks.size(), 1u);
        EXPECT_EQ(read[0].forks[0].parent, "web:12");
        EXPECT_EQ(read[0].forks[0].name, "researcher");
        EXPECT_EQ(read[0].forks[0].servers, std::vector<std::string>{"notes"});
        EXPECT_EQ(read[0].forks[0].started_at_ms, 1700000000000);
    }
    EXPECT_TRUE(read_published_forks(dir).empty());  // removed with the last fork (here: the registry)
    // An older process's file (this process's pid, so that it counts as live): no "parent".
    std::ofstream(dir / ("forks-" + std::to_string(::getpid()) + ".json"))
        << R"({"pid": 1, "forks": [{"kind": "skill", "name": "old", "depth": 2, "servers": [], "startedAtMs": 5}]})";
    auto read = read_published_forks(dir);
    ASSERT_EQ(read.size(), 1u);
    ASSERT_EQ(read[0].forks.size(), 1u);
    EXPECT_EQ(read[0].forks[0].name, "old");
    EXPECT_EQ(read[0].forks[0].depth, 2);
    EXPECT_EQ(read[0].forks[0].parent, "");
    std::filesystem::remove_all(dir);
}

TEST(Elicitation, AnswersCheckedAgainstTheFormSchema) {
    auto schema = obj(R"({"type": "object", "properties": {
        "name": {"type": "string", "minLength": 2}, "age": {"type": "integer", "minimum": 0},
        "tier": {"type": "string", "enum": ["free", "pro"]}, "ok": {"type": "boolean"}}, "required": ["name"]})");
    EXPECT_EQ(check_elicitation(schema, obj(R"({"name": "Ada", "age": 36, "tier": "pro", "ok": true})")), "");
    EXPECT_NE(check_elicitation(schema, obj(R"({"age": 3})")).find("\"name\" is required"), std::string::npos);
    EXPECT_NE(check_elicitation(schema, obj(R"({"name": "A"})")).find("at least 2"), std::string::npos);
    EXPECT_NE(check_elicitation(schema, obj(R"({"name": "Ada", "age": 1.5})")).find("whole number"),
              std::string::npos);
    EXPECT_NE(check_elicitation(schema, obj(R"({"name": "Ada", "age": -1})")).find("at least 0"), std::string::npos);
    EXPECT_NE(check_elicitation(schema, obj(R"({"name": "Ada", "tier": "gold"})")).find("one of"), std::string::npos);
    EXPECT_NE(check_elicitation(schema, obj(R"({"name": "Ada", "ok": "yes"})")).find("true or false"),
              std::string::npos);
    EXPECT_NE(check_elicitation(schema, obj(R"({"name": "Ada", "extra": 1})")).find("not asked for"),
              std::string::npos);
}

TEST(Sampling, RequestBecomesChatMessagesAndTheAnswerAResult) {
    auto msgs = sampling_messages(obj(R"({"systemPrompt": "Be brief.", "messages": [
        {"role": "user", "content": {"type": "text", "text": "Hi?"}},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        {"role": "user", "content": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}}]})"));
    ASSERT_EQ(msgs.size(), 4u);
    EXPECT_EQ(msgs[0].role, llm::Role::system);
    EXPECT_EQ(msgs[1].text(), "Hi?");
    EXPECT_EQ(msgs[2].role, llm::Role::assistant);
    EXPECT_EQ(msgs[3].content.at(0).kind, llm::MessagePart::Kind::image);
    llm::ChatResponse r;
    r.message = llm::Message::assistant("Fine.");
    r.finish_reason = "length";
    auto result = sampling_result(r, "qwen3");
    EXPECT_EQ(result.at("role"), "assistant");
    EXPECT_EQ(result.at("content").at("text"), "Fine.");
    EXPECT_EQ(result.at("model"), "qwen3");
    EXPECT_EQ(result.at("stopReason"), "maxTokens");
}

TEST(Roots, FileUrisArePercentEncoded) {
    EXPECT_EQ(file_uri("/tmp/a b/ü"), "file:///tmp/a%20b/%C3%BC");
    EXPECT_EQ(file_uri("/srv/x/../y"), "file:///srv/y");
}

TEST(ToolRunner, MediaDescribedForTextOnlyModels) {
    std::vector<llm::MessagePart> parts{llm::MessagePart::make_text("hi"),
                                        llm::MessagePart{llm::MessagePart::Kind::image, {}, "image/png", "AAAA"}};
    auto out = describe_media(parts);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].text, "hi");
    EXPECT_EQ(out[1].kind, llm::MessagePart::Kind::text);
    EXPECT_NE(out[1].text.find("image/png"), std::string::npos);
    EXPECT_NE(out[1].text.find("not shown"), std::string::npos);
}

}  // namespace
}  // namespace switchboard::agent
