// `switchboard agents`: the real binary in a temporary project (HOME and XDG_CONFIG_HOME point inside it too).
#include "harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace switchboard::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

class CliAgents : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("switchboard-cliagents-" + std::to_string(::getpid()) + "-" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        project_ = root_ / "project";
        fs::create_directories(project_);
        fs::create_directories(root_ / "home");
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const fs::path& path, std::string_view text) {
        fs::create_directories(path.parent_path());
        std::ofstream(path) << text;
    }

    void write_config() {
        write(project_ / ".mcp.json", R"({"mcpServers": {
            "demo": {"command": "/bin/false"},
            "notes": {"command": "/bin/false", "lazy": true},
            "weather": {"command": "/bin/false", "lazy": true}}})");
    }

    void write_definitions() {
        write(project_ / ".switchboard/agents/researcher.md", R"(---
name: researcher
description: Researches.
mcp:
  required: [notes]
  optional: [weather, ghost]
---
Research.
)");
        write(project_ / ".claude/agents/reviewer.md", R"(---
name: reviewer
description: Reviews code.
tools: Read, Grep, Bash
model: sonnet
mcpServers:
  - demo
  - playwright:
      type: stdio
      command: npx
      args: ["-y", "@playwright/mcp@latest"]
---
Review.
)");
        write(project_ / ".switchboard/skills/forecast/SKILL.md", "---\nmcp: [weather]\n---\nForecast the weather.\n");
        write(root_ / "home/.claude/skills/plain/SKILL.md", "---\ndescription: Plain.\n---\nNo servers.\n");
    }

    // Runs the binary in the project; stdout to `out`, stderr to `err`.
    int cli(const std::string& args, std::string& out, std::string& err, const fs::path& cwd = {}) {
        const auto err_file = root_ / "stderr.txt";
        const auto dir = cwd.empty() ? project_ : cwd;
        const auto status = run_command("cd '" + dir.string() + "' && HOME='" + (root_ / "home").string() +
                                            "' XDG_CONFIG_HOME='" + (root_ / "config").string() + "' " +
                                            SWITCHBOARD_CLI + " " + args + " 2>'" + err_file.string() + "'",
                                        out);
        std::ifstream in(err_file);
        err.assign(std::istreambuf_iterator<char>(in), {});
        return status;
    }

    static const json::object* find(const json::value& list, std::string_view name) {
        for (const auto& v : list.as_array())
            if (v.as_object().at("name").as_string() == name) return &v.as_object();
        return nullptr;
    }
    static json::array strings(std::initializer_list<const char*> items) {
        json::array a;
        for (const auto* s : items) a.emplace_back(s);
        return a;
    }

    fs::path root_;
    fs::path project_;
};

TEST_F(CliAgents, JsonListsEverythingWithLazyAndMissing) {
    write_config();
    write_definitions();
    std::string out, err;
    ASSERT_EQ(cli("agents --json", out, err), 0) << out << err;
    const auto v = json::parse(out);
    ASSERT_EQ(v.as_array().size(), 4u) << out;
    // Agents first, then skills, each in discovery order.
    EXPECT_EQ(v.as_array()[0].as_object().at("name"), "researcher");
    EXPECT_EQ(v.as_array()[1].as_object().at("name"), "reviewer");
    EXPECT_EQ(v.as_array()[2].as_object().at("name"), "forecast");
    EXPECT_EQ(v.as_array()[3].as_object().at("name"), "plain");

    const auto* researcher = find(v, "researcher");
    EXPECT_EQ(researcher->at("kind"), "agent");
    EXPECT_EQ(researcher->at("description"), "Researches.");
    EXPECT_EQ(researcher->at("path").as_string(), (project_ / ".switchboard/agents/researcher.md").string());
    EXPECT_EQ(researcher->at("required"), strings({"notes"}));
    EXPECT_EQ(researcher->at("optional"), strings({"weather", "ghost"}));
    EXPECT_EQ(researcher->at("missing"), strings({"ghost"}));
    EXPECT_EQ(researcher->at("lazy"), strings({"notes", "weather"}));

    const auto* reviewer = find(v, "reviewer");
    EXPECT_EQ(reviewer->at("required"), strings({"demo", "playwright"}));
    EXPECT_EQ(reviewer->at("missing"), json::array());  // playwright is inline
    EXPECT_EQ(reviewer->at("lazy"), strings({"playwright"}));
    EXPECT_EQ(reviewer->at("origin"), "claude");
    EXPECT_EQ(reviewer->at("model"), "sonnet");

    const auto* forecast = find(v, "forecast");
    EXPECT_EQ(forecast->at("kind"), "skill");
    EXPECT_EQ(forecast->at("description"), "Forecast the weather.");
    EXPECT_EQ(forecast->at("lazy"), strings({"weather"}));
    EXPECT_EQ(forecast->at("fork"), true);
    EXPECT_EQ(find(v, "plain")->at("fork"), false);
    EXPECT_EQ(err, "");
}

TEST_F(CliAgents, BadFileIsReportedAndTheOthersListed) {
    write_config();
    write_definitions();
    write(project_ / ".switchboard/agents/broken.md", "---\nname: broken\ndescription: x\nmcp: weather\n---\n");
    write(project_ / ".claude/agents/researcher.md", "---\ndescription: Shadowed.\n---\n");
    std::string out, err;
    EXPECT_EQ(cli("agents --json", out, err), 1) << out << err;
    const auto v = json::parse(out);
    EXPECT_EQ(v.as_array().size(), 4u) << out;
    EXPECT_EQ(find(v, "researcher")->at("description"), "Researches.");
    EXPECT_NE(err.find((project_ / ".switchboard/agents/broken.md").string() +
                       ":4: \"mcp\" must be a list of server names or {required: [...], optional: [...]}"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("note: " + (project_ / ".claude/agents/researcher.md").string() +
                       ": agent \"researcher\" shadowed by"),
              std::string::npos)
        << err;
}

TEST_F(CliAgents, Table) {
    write_config();
    write_definitions();
    std::string out, err;
    ASSERT_EQ(cli("agents", out, err), 0) << out << err;
    EXPECT_EQ(out.rfind("NAME", 0), 0u) << out;
    for (const auto* s :
         {"researcher", "notes,weather?,ghost?", "notes,weather", "ghost", ".switchboard/agents/researcher.md",
          "reviewer", "demo,playwright", "forecast", "skill", "~/.claude/skills/plain/SKILL.md"})
        EXPECT_NE(out.find(s), std::string::npos) << s << "\n" << out;
}

TEST_F(CliAgents, WithoutConfigEveryServerIsMissing) {
    write_definitions();
    std::string out, err;
    ASSERT_EQ(cli("agents --json", out, err), 0) << out << err;
    const auto v = json::parse(out);
    EXPECT_EQ(find(v, "researcher")->at("missing"), strings({"notes", "weather", "ghost"}));
    EXPECT_EQ(find(v, "reviewer")->at("missing"), strings({"demo"}));
    EXPECT_NE(err.find("no configuration found"), std::string::npos) << err;
}

TEST_F(CliAgents, NothingFound) {
    std::string out, err;
    ASSERT_EQ(cli("agents", out, err), 0) << out << err;
    EXPECT_NE(out.find("No agents or skills"), std::string::npos) << out;
    ASSERT_EQ(cli("agents --json", out, err), 0) << out << err;
    EXPECT_EQ(out, "[]\n");
}

TEST_F(CliAgents, LazyExample) {
    std::string out, err;
    const fs::path example = fs::path(SOURCE_DIR) / "examples/lazy";
    ASSERT_EQ(cli("-c switchboard.json agents --json", out, err, example), 0) << out << err;
    const auto v = json::parse(out);
    ASSERT_EQ(v.as_array().size(), 2u) << out;
    const auto* researcher = find(v, "researcher");
    ASSERT_TRUE(researcher) << out;
    EXPECT_EQ(researcher->at("required"), strings({"notes"}));
    EXPECT_EQ(researcher->at("optional"), strings({"weather"}));
    EXPECT_EQ(researcher->at("lazy"), strings({"notes", "weather"}));
    EXPECT_EQ(researcher->at("missing"), json::array());
    const auto* forecast = find(v, "forecast");
    ASSERT_TRUE(forecast) << out;
    EXPECT_EQ(forecast->at("lazy"), strings({"weather"}));
    EXPECT_EQ(forecast->at("fork"), true);
}

// The examples' lockfiles are committed with them (docs/config.md, "Pinned definitions"): what their servers list
// now is what they pin, or `scripts/run` would start with held tools. Strict mode writes nothing: the check never
// changes the source tree. (A change to the demo server's definitions: `switchboard pins approve demo` in each.)
TEST_F(CliAgents, ExampleLockfilesMatchWhatTheirServersList) {
    const fs::path root(SOURCE_DIR);
    if (!fs::exists(root / "build/switchboard-demo-server")) GTEST_SKIP() << "the examples run build/'s demo server";
    const std::vector<std::pair<fs::path, std::string>> checks{
        {root, "-c examples/switchboard.json --pins strict pins --json"},
        {root / "examples/lazy", "-c switchboard.json --pins strict pins --json"},
        {root / "examples/lazy", "-c switchboard.json --pins strict pins notes --json"},
        {root / "examples/lazy", "-c switchboard.json --pins strict pins weather --json"}};
    for (const auto& [dir, args] : checks) {
        std::string out, err;
        ASSERT_EQ(cli(args, out, err, dir), 0) << args << "\n" << out << err;
        const auto v = json::parse(out);
        for (const auto& server : v.at("servers").as_array()) {
            EXPECT_TRUE(server.at("known").as_bool()) << args << ": " << server;
            EXPECT_TRUE(server.at("held").as_array().empty()) << args << ": " << server;
        }
    }
}

TEST_F(CliAgents, ConnectListsTheSkillsAnEagerServerServesMarkedByServer) {
    write(project_ / ".mcp.json", R"({"mcpServers": {"skills": {"command": )" + json::serialize(json::value(peers_node())) +
                                      R"(, "args": [)" +
                                      json::serialize(json::value(std::string(PEERS_DIR) + "/sdk2_skills_server.mjs")) +
                                      "]}}}");
    std::string out, err;
    // Without --connect no server starts: its skills are not listed, and a note says how to get them.
    ASSERT_EQ(cli("agents", out, err), 0) << out << err;
    EXPECT_EQ(out.find("pdf-forms"), std::string::npos) << out;
    EXPECT_NE(err.find("agents --connect"), std::string::npos) << err;
    // With it: what `run` and `chat` offer, each marked by its server.
    ASSERT_EQ(cli("agents --connect --json", out, err), 0) << out << err;
    const auto v = json::parse(out);
    const auto* pdf = find(v, "pdf-forms");
    ASSERT_TRUE(pdf) << out;
    EXPECT_EQ(pdf->at("kind"), "skill");
    EXPECT_EQ(pdf->at("served").at("server"), "skills");
    EXPECT_EQ(pdf->at("served").at("source"), "server");
    EXPECT_EQ(pdf->at("served").at("dormant"), false);
    ASSERT_TRUE(find(v, "report-writer")) << out;
    ASSERT_EQ(cli("agents --connect", out, err), 0) << out << err;
    EXPECT_NE(out.find("pdf-forms"), std::string::npos) << out;
    EXPECT_NE(out.find("mcp:skills"), std::string::npos) << out;
}

}  // namespace
}  // namespace switchboard::test
