// Confined stdio servers (host/sandbox.hpp), through the real `switchboard` binary: a hostile server's attacks, each
// refused when confined and shown to succeed when not (so that every test fails with confinement off), on both layers
// (bwrap, and Landlock as where user namespaces are refused); and real servers working confined. Network attacks only
// ever reach listeners on this machine's loopback: one on 127.0.0.1 stands for "outside".
#include "harness.hpp"
#include "net_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <fstream>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace switchboard::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

std::string hostile() { return std::string(SOURCE_DIR) + "/tests/peers/scripts/hostile_server.py"; }
std::string jq(const std::string& s) { return json::serialize(json::value(s)); }

class Sandbox : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() / ("switchboard-sandbox-" + std::to_string(::getpid()) + "-" +
                                           std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        home = dir / "home";
        fs::create_directories(home / ".ssh");
        std::ofstream(home / ".ssh" / "id_ed25519") << "-----BEGIN OPENSSH PRIVATE KEY-----\n";
        std::ofstream(home / ".bashrc") << "# the user's\n";
        std::ofstream(dir / "conversations.db") << "SQLite format 3";
        write_config(R"("sandboxEnabled": true)");
    }
    void TearDown() override {
        if (!unix_socket.empty()) fs::remove(unix_socket);
        fs::remove_all(dir);
    }

    void write_config(const std::string& extra) {
        // ${SWITCHBOARD_STATE_DIR} is given to a confined server anyway; the entry names it for the unconfined runs.
        std::ofstream(dir / "config.json")
            << R"({"mcpServers": {"h": {"command": "python3", "args": [)" << jq(hostile())
            << R"(], "env": {"SWITCHBOARD_STATE_DIR": "${SWITCHBOARD_STATE_DIR}"}, )" << extra << "}}}";
    }
    std::string layer_flag() const { return GetParam() == "landlock" ? " --sandbox-layer landlock" : ""; }

    // One attack through `switchboard call`: the tool's text ("ok: ..." or "refused: ...").
    std::string attack(const std::string& tool, const std::string& args, bool confined, std::string* all = nullptr) {
        std::string out;
        run_command("cd " + dir.string() + " && HOME=" + home.string() + " SECRET_TOKEN=hunter2 " + SWITCHBOARD_CLI +
                        " --config config.json --db " + (dir / "conversations.db").string() +
                        (confined ? layer_flag() : " --no-sandbox") + " call " + tool + " '" + args + "' 2>&1",
                    out);
        if (all) *all = out;
        for (const auto* mark : {"ok: ", "refused: "})
            if (const auto at = out.rfind(mark); at != std::string::npos && (at == 0 || out[at - 1] == '\n'))
                return out.substr(at, out.find('\n', at) - at);
        return "no answer: " + out;
    }

    // Refused when confined, and done when not: the attack is real and the sandbox is what stops it.
    void refused_only_when_confined(const std::string& tool, const std::string& args) {
        SCOPED_TRACE(tool + " " + args);
        std::string out;
        EXPECT_TRUE(attack(tool, args, true, &out).starts_with("refused: ")) << out;
        EXPECT_TRUE(attack(tool, args, false, &out).starts_with("ok: ")) << out;
    }

    fs::path dir, home;
    std::string unix_socket;
};

TEST_P(Sandbox, SecretsCannotBeRead) {
    refused_only_when_confined("read", R"({"path": "~/.ssh/id_ed25519"})");
    refused_only_when_confined("read", R"({"path": ")" + (dir / "conversations.db").string() + R"("})");
    refused_only_when_confined("read", R"({"path": ")" + (dir / "config.json").string() + R"("})");
}

TEST_P(Sandbox, NothingOutsideItsOwnDirectoriesCanBeWritten) {
    refused_only_when_confined("write", R"({"path": "~/.bashrc"})");
    // A symlink planted in its own writable state directory does not lead out of it.
    refused_only_when_confined("symlink_escape", R"({"directory": "$SWITCHBOARD_STATE_DIR", "target": "~/.bashrc"})");
    std::string out;
    EXPECT_TRUE(attack("write", R"({"path": "$SWITCHBOARD_STATE_DIR/notes"})", true, &out).starts_with("ok: ")) << out;
    EXPECT_TRUE(attack("write", R"({"path": "$TMPDIR/scratch"})", true, &out).starts_with("ok: ")) << out;
    std::ifstream bashrc(home / ".bashrc");
    std::string text((std::istreambuf_iterator<char>(bashrc)), {});
    EXPECT_NE(text.find("pwned"), std::string::npos) << "the unconfined runs did write it";
}

TEST_P(Sandbox, TheHostsLoopbackAndTheOutsideAreOutOfReach) {
    auto outside = start_listening(demo_server(), {"--http", "0"});  // the gateway's port, or anywhere "outside"
    ASSERT_TRUE(outside);
    const auto port = std::to_string(outside->port);
    refused_only_when_confined("connect", R"({"host": "127.0.0.1", "port": ")" + port + R"("})");
    // Through the proxy, a domain nobody allowed: refused by name, and logged with it.
    std::string out;
    const auto refused = attack("fetch", R"({"url": "http://localhost:)" + port + R"(/mcp"})", true, &out);
    EXPECT_TRUE(
        refused.starts_with("refused: HTTP 403: switchboard: \"localhost\" is not in server \"h\"'s "
                            "allowedDomains"))
        << out;
    EXPECT_NE(out.find("localhost"), std::string::npos) << out;
    EXPECT_TRUE(attack("fetch", R"({"url": "http://localhost:)" + port + R"(/mcp"})", false, &out).starts_with("ok: "))
        << out;
}

TEST_P(Sandbox, AnAllowedDomainIsReachedThroughTheProxy) {
    auto outside = start_listening(demo_server(), {"--http", "0"});
    ASSERT_TRUE(outside);
    write_config(R"("sandboxEnabled": true, "sandbox": {"network": {"allowedDomains": ["localhost"],
                    "allowedAddresses": ["127.0.0.1/32"]}})");
    std::string out;
    const auto url = "http://localhost:" + std::to_string(outside->port) + "/mcp";
    EXPECT_TRUE(attack("fetch", R"({"url": ")" + url + R"("})", true, &out).starts_with("ok: HTTP")) << out;
    // Straight out, without the proxy, stays refused.
    EXPECT_TRUE(
        attack("connect", R"({"host": "127.0.0.1", "port": ")" + std::to_string(outside->port) + R"("})", true, &out)
            .starts_with("refused: "))
        << out;
}

TEST_P(Sandbox, NoUnixSocketsNoPtraceNoSecretsInItsEnvironment) {
    // A Unix socket of the host's (in /run when we may write there, as the daemons' are).
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    unix_socket = (::access("/run", W_OK) == 0 ? fs::path("/run") : dir) /
                  ("switchboard-test-" + std::to_string(::getpid()) + ".sock");
    fs::remove(unix_socket);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, unix_socket.c_str(), sizeof a.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(fd, 8), 0);
    refused_only_when_confined("unix", R"({"path": ")" + unix_socket + R"("})");
    refused_only_when_confined("unix_high_bits", R"({"path": ")" + unix_socket + R"("})");
    if (GetParam() == "bwrap") {  // where the bridge finds the proxy cannot be changed (its /run is read-only)
        std::string out;
        EXPECT_TRUE(attack("swap_bridge", R"({"target": ")" + unix_socket + R"("})", true, &out)
                        .starts_with("refused: [Errno 30]"))
            << out;
    }
    ::close(fd);
    refused_only_when_confined("ptrace_parent", "{}");
    std::string out;
    EXPECT_EQ(attack("environment", "{}", true, &out).find("SECRET_TOKEN"), std::string::npos) << out;
    EXPECT_NE(attack("environment", "{}", false, &out).find("SECRET_TOKEN"), std::string::npos) << out;
}

TEST_P(Sandbox, OtherProcessesAreHiddenByTheBwrapLayerOnly) {
    std::string out;
    const auto confined = attack("processes", "{}", true, &out);
    ASSERT_TRUE(confined.starts_with("ok: ")) << out;
    const bool sees_host = confined.find(":switchboard ") != std::string::npos || confined.ends_with(":switchboard");
    if (GetParam() == "bwrap")
        EXPECT_FALSE(sees_host) << confined;  // its own pid namespace: bwrap, the launcher and itself
    else
        EXPECT_TRUE(sees_host) << confined;  // Landlock has no pid namespace: docs/config.md says so
    const auto open = attack("processes", "{}", false, &out);
    EXPECT_TRUE(open.find(":switchboard ") != std::string::npos || open.ends_with(":switchboard")) << open;
}

INSTANTIATE_TEST_SUITE_P(Layers, Sandbox, ::testing::Values("bwrap", "landlock"),
                         [](const auto& info) { return info.param; });

// Where no layer can be had, a server that asked to be confined does not start, and says why and how to fix it.
TEST(SandboxRefusal, NoLayerMeansNoStartWithTheCauseAndTheFix) {
    const auto dir = fs::temp_directory_path() / ("switchboard-sandbox-none-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"mcpServers": {"h": {"command": "python3", "args": [)" << jq(hostile())
                                       << R"(], "sandboxEnabled": true}}})";
    std::string out;
    const int rc =
        run_command("cd " + dir.string() + " && HOME=" + dir.string() + " SWITCHBOARD_BWRAP=/nonexistent/bwrap " +
                        SWITCHBOARD_CLI + " --config config.json --sandbox-layer bwrap status 2>&1",
                    out);
    EXPECT_NE(rc, 0) << out;
    EXPECT_NE(out.find("asks to be confined, and no sandbox can be had here"), std::string::npos) << out;
    EXPECT_NE(out.find("/nonexistent/bwrap"), std::string::npos) << out;
    EXPECT_NE(out.find("\"sandboxEnabled\": false"), std::string::npos) << out;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace switchboard::test

namespace switchboard::test {
namespace {

// Real servers under the default profile: server-filesystem writes where it is allowed to and nowhere else,
// server-memory keeps its file in its state directory from one run to the next, server-everything and a server
// started through npx (from the local install, offline: its cache and logs written where the npx profile allows)
// start and list; the hostile Python server above is the Python one.
class SandboxRealServers : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() / ("switchboard-sandbox-real-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir / "home");
        fs::create_directories(dir / "work" / "out");
        const std::string peers = PEERS_DIR;
        const auto pkg = [&](const std::string& name) {
            return jq(peers + "/node_modules/@modelcontextprotocol/" + name + "/dist/index.js");
        };
        const auto node = jq(peers_node());
        std::ofstream(dir / "config.json") << R"({"sandboxEnabled": true, "mcpServers": {
            "fs": {"command": )" << node << R"(, "args": [)"
                                           << pkg("server-filesystem") << ", " << jq((dir / "work").string()) << R"(],
                   "sandbox": {"filesystem": {"allowWrite": [)"
                                           << jq((dir / "work" / "out").string()) << R"(]}}},
            "memory": {"command": )" << node
                                           << R"(, "args": [)" << pkg("server-memory") << R"(],
                       "env": {"MEMORY_FILE_PATH": "${SWITCHBOARD_STATE_DIR}/memory.jsonl"}},
            "everything": {"command": )" << node
                                           << R"(, "args": [)" << pkg("server-everything") << R"(, "stdio"]},
            "viaNpx": {"command": "npx", "args": ["--offline", "--no-install", "mcp-server-memory"], "cwd": )"
                                           << jq(peers) << R"(,
                       "env": {"npm_config_update_notifier": "false"},
                       "sandbox": {"network": {"deniedDomains": ["*"]}}}}})";
    }
    void TearDown() override { fs::remove_all(dir); }

    int cli(const std::string& args, std::string& out) {
        const auto node_dir = fs::path(peers_node()).parent_path().string();
        return run_command("cd " + dir.string() + " && HOME=" + (dir / "home").string() +
                               " PATH=" + (node_dir.empty() ? "" : node_dir + ":") + "$PATH " + SWITCHBOARD_CLI +
                               " --config config.json " + args + " 2>&1",
                           out);
    }
    fs::path dir;
};

TEST_F(SandboxRealServers, WorkConfinedUnderTheDefaultProfile) {
    std::string out;
    ASSERT_EQ(cli("status --json", out), 0) << out;
    const auto v = json::parse(out.substr(out.find("{\"servers\"")));
    for (const auto& s : v.at("servers").as_array()) {
        SCOPED_TRACE(json::serialize(s));
        EXPECT_EQ(s.at("phase").as_string(), "connected");
        EXPECT_EQ(s.at("sandbox").at("layer").as_string(), "bwrap");
        EXPECT_GT(s.at("tools").as_int64(), 0);
    }
    const auto& npx = v.at("servers").as_array()[3];
    EXPECT_EQ(npx.at("sandbox").at("profile").as_string(), "npx");

    // Writable where allowed; elsewhere refused by the sandbox although the server itself would allow it.
    const auto inside = (dir / "work" / "out" / "a.txt").string();
    EXPECT_EQ(cli("call fs__write_file '{\"path\": " + jq(inside) + ", \"content\": \"hi\"}'", out), 0) << out;
    EXPECT_TRUE(fs::exists(inside)) << out;
    const auto outside = (dir / "work" / "b.txt").string();
    cli("call fs__write_file '{\"path\": " + jq(outside) + ", \"content\": \"hi\"}'", out);
    EXPECT_FALSE(fs::exists(outside)) << out;
    EXPECT_NE(out.find("read-only file system"), std::string::npos) << out;

    // The memory server's file, in its state directory, from one process to the next.
    ASSERT_EQ(cli(R"(call memory__create_entities '{"entities": [{"name": "Ada", "entityType": "person",
                  "observations": ["wrote the first program"]}]}')",
                  out),
              0)
        << out;
    ASSERT_EQ(cli("call memory__read_graph '{}'", out), 0) << out;
    EXPECT_NE(out.find("Ada"), std::string::npos) << out;
    EXPECT_TRUE(fs::exists(dir / "home/.local/state/switchboard/servers/memory/memory.jsonl"));
}

TEST_F(SandboxRealServers, SandboxCheckReportsARefusedDomainAndTheBlockThatAllowsIt) {
    // A server that fetches from a domain nobody allowed as it starts (the proxy refuses it by name: no lookup).
    std::ofstream(dir / "config.json") << R"J({"mcpServers": {"fetcher": {"command": "python3", "args": ["-c",
        "import urllib.request, sys, runpy\ntry: urllib.request.urlopen('http://api.example.test/v1', timeout=5)\nexcept Exception as e: print(e, file=sys.stderr)\nrunpy.run_path(sys.argv[1], run_name='__main__')", )J"
                                       << jq(hostile()) << "]}}}";
    std::string out;
    EXPECT_EQ(cli("sandbox check fetcher --wait 2", out), 1) << out;
    EXPECT_NE(out.find("server \"fetcher\": confined by bwrap"), std::string::npos) << out;
    EXPECT_NE(out.find("started    "), std::string::npos) << out;
    EXPECT_NE(out.find(" tools, 0 resources, 0 prompts (nothing called)"), std::string::npos) << out;
    EXPECT_NE(out.find("domain  api.example.test"), std::string::npos) << out;
    EXPECT_NE(out.find(R"("sandbox": {"network":{"allowedDomains":["api.example.test"]}})"), std::string::npos) << out;
}

}  // namespace
}  // namespace switchboard::test
