// Skills through the gateway (gateway/skill_directory.hpp): `switchboard serve` in front of two official TypeScript SDK
// v2 skill servers (tests/peers/sdk2_skills_server.mjs) whose skill "report-writer" clashes, and a local skill folder
// (`serve --skills`). Clients are official: the TS SDK v2 client's SkillsClient (which checks every file's size and
// digest, and SKILL.md's frontmatter against the entry) and the MCP Inspector v2 CLI (`--verify`: the SEP-2640
// conformance and digest checks), each in both protocol eras.
#include "harness.hpp"
#include "net_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

class GatewaySkills : public ::testing::Test {
protected:
    // Members, not free functions: the unity build puts other tests' helpers of the same names beside these.
    static std::string q(const std::string& s) { return json::serialize(json::value(s)); }

    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-gateway-skills-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_ / ".switchboard/skills/meeting-notes/templates");
        std::ofstream(dir_ / ".switchboard/skills/meeting-notes/SKILL.md")
            << "---\nname: meeting-notes\ndescription: Writes meeting notes from a transcript\n---\n\nList the "
               "decisions first, then the actions (templates/notes.md).\n";
        std::ofstream(dir_ / ".switchboard/skills/meeting-notes/templates/notes.md") << "# Decisions\n\n# Actions\n";
        // "docs" serves pdf-forms and report-writer; "Team_B" only report-writer: that name clashes, pdf-forms not.
        const std::string server = PEERS_DIR + std::string("/sdk2_skills_server.mjs");
        std::ofstream(dir_ / "config.json") << R"({"mcpServers": {
            "docs": {"command": )" << q(peers_node())
                                            << R"(, "args": [)" << q(server) << R"(], "startupTimeoutMs": 60000},
            "Team_B": {"command": )" << q(peers_node())
                                            << R"(, "args": [)" << q(server)
                                            << R"(, "--only", "report-writer"], "startupTimeoutMs": 60000},
            "demo": {"command": )" << q(demo_server())
                                            << R"(}
        }})";
    }
    void TearDown() override {
        gateway_.reset();
        fs::remove_all(dir_);
    }

    // From the test's folder, so that `--skills` finds its .switchboard/skills.
    void start(const std::string& extra) {
        const auto d = dir_.string();
        gateway_ = start_listening("/bin/sh", {"-c", "cd '" + d + "' && exec " + std::string(SWITCHBOARD_CLI) +
                                                         " --config '" + d + "/config.json' serve --port 0 " + extra});
        ASSERT_TRUE(gateway_);
    }

    json::value sdk2_client(const std::string& era) {
        std::string out;
        const auto cmd = peers_node() + " " + PEERS_DIR + "/scripts/sdk2_skills_client.mjs " + gateway_->url + " " + era;
        EXPECT_EQ(run_command(cmd + " 2>&1", out), 0) << out << gateway_->log();
        json::error_code ec;
        auto v = json::parse(out, ec);
        EXPECT_FALSE(ec) << out << gateway_->log();
        return ec ? json::value(json::object()) : v;
    }

    // The Inspector v2 CLI; its exit status, and its stdout in `out`.
    int inspector(const std::string& args, std::string& out) {
        const auto cli = std::string(PEERS_DIR) +
                         "/node_modules/@modelcontextprotocol/inspector/clients/launcher/"
                         "build/index.js";
        return run_command("HOME=" + dir_.string() + " " + peers_node() + " " + cli + " --cli " + gateway_->url + " " + args +
                               " --format json 2>&1",
                           out);
    }

    static std::map<std::string, json::object> by_name(const json::value& listing) {
        std::map<std::string, json::object> out;
        for (const auto& s : listing.at("skills").as_array())
            out[std::string(s.at("name").as_string())] = s.as_object();
        return out;
    }

    fs::path dir_;
    std::unique_ptr<ListeningServer> gateway_;
};

TEST_F(GatewaySkills, TheSdkV2ClientListsGetsAndVerifiesEverySkillInBothEras) {
    start("");
    for (const std::string era : {"legacy", "modern"}) {
        SCOPED_TRACE(era);
        auto v = sdk2_client(era);
        ASSERT_TRUE(v.is_object());
        EXPECT_TRUE(v.at("supported").as_bool()) << v;
        auto skills = by_name(v);
        // The clashing name is renamed for both servers, the other keeps its name and its URIs.
        EXPECT_EQ(skills.size(), 3u) << v;
        ASSERT_TRUE(skills.count("pdf-forms")) << v;
        ASSERT_TRUE(skills.count("docs-report-writer")) << v;
        ASSERT_TRUE(skills.count("team-b-report-writer")) << v;
        EXPECT_EQ(skills["pdf-forms"].at("uri").as_string(), "skill://pdf-forms/SKILL.md");
        EXPECT_EQ(skills["team-b-report-writer"].at("uri").as_string(), "skill://team-b-report-writer/SKILL.md");
        // Every file was read through the gateway and verified by the client (size, digest, frontmatter).
        for (auto& [name, s] : skills)
            for (const auto& f : s.at("files").as_array()) EXPECT_TRUE(f.at("verified").as_bool()) << name << ": " << v;
        EXPECT_EQ(skills["pdf-forms"].at("files").as_array().size(), 2u) << v;  // SKILL.md and references/FIELDS.md
    }
}

TEST_F(GatewaySkills, TheInspectorCliListsAndVerifiesSkillsInBothEras) {
    start("");
    for (const std::string era : {"legacy", "modern"}) {
        SCOPED_TRACE(era);
        std::string out;
        // --verify: SEP-2640 conformance, then every file's digest; --require-digests: no "dynamic" excuse.
        EXPECT_EQ(inspector("--protocol-era " + era + " --method skills/list --verify --require-digests", out), 0)
            << out << gateway_->log();
        int verified = 0;
        std::istringstream lines(out);
        for (std::string line; std::getline(lines, line);) {
            json::error_code ec;
            auto report = json::parse(line, ec);
            if (ec || !report.is_object() || !report.as_object().contains("outcome")) continue;
            EXPECT_EQ(report.at("outcome").as_string(), "verified") << line;
            ++verified;
        }
        EXPECT_EQ(verified, 3) << out;
        // skills/get and resources/read of a renamed skill's file go to its own server.
        ASSERT_EQ(
            inspector("--protocol-era " + era + " --method resources/read --uri skill://team-b-report-writer/SKILL.md",
                      out),
            0)
            << out;
        EXPECT_NE(out.find("name: team-b-report-writer"), std::string::npos) << out;
        ASSERT_EQ(inspector("--protocol-era " + era + " --method skills/get --uri skill://pdf-forms/SKILL.md", out), 0)
            << out;
        EXPECT_NE(out.find("skill://pdf-forms/references/FIELDS.md"), std::string::npos) << out;
    }
}

TEST_F(GatewaySkills, LocalSkillsAreServedWithSkillsAndNotWithout) {
    start("");
    std::string out;
    ASSERT_EQ(inspector("--method skills/list", out), 0) << out;
    EXPECT_EQ(out.find("meeting-notes"), std::string::npos) << out;
    gateway_.reset();

    start("--skills");
    for (const std::string era : {"legacy", "modern"}) {
        SCOPED_TRACE(era);
        auto skills = by_name(sdk2_client(era));
        ASSERT_TRUE(skills.count("meeting-notes"));
        const auto& files = skills["meeting-notes"].at("files").as_array();
        ASSERT_EQ(files.size(), 2u);
        for (const auto& f : files) EXPECT_TRUE(f.at("verified").as_bool()) << json::serialize(files);
    }
    // A path out of the skill's folder is not a file of it.
    ASSERT_NE(inspector("--method resources/read --uri skill://meeting-notes/..%2F..%2Fconfig.json", out), 0);
    EXPECT_EQ(out.find("mcpServers"), std::string::npos) << out;
}

TEST_F(GatewaySkills, AGatewayWithoutSkillServersDoesNotDeclareTheExtension) {
    std::ofstream(dir_ / "config.json") << R"({"mcpServers": {"demo": {"command": )" << q(demo_server()) << "}}}";
    start("");
    std::string out;
    EXPECT_NE(inspector("--method skills/list", out), 0) << out;
    EXPECT_NE(out.find("does not declare"), std::string::npos) << out;
}

}  // namespace
}  // namespace switchboard::test
