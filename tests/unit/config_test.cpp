#include <switchboard/host/config.hpp>
#include <switchboard/transport/http_client.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace sh = switchboard::host;
namespace transport = switchboard::transport;
using namespace std::chrono_literals;

namespace {

sh::EnvLookup fake_env(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
        const auto it = vars.find(std::string(name));
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

sh::Config parse(std::string_view text, std::map<std::string, std::string> vars = {}) {
    return sh::parse_config(text, "test.json", fake_env(std::move(vars)));
}

std::string config_error(std::string_view text) {
    try {
        parse(text);
    } catch (const sh::ConfigError& e) {
        return e.what();
    }
    return "(no error)";
}

// A fresh directory per test, removed afterwards.
class TempDir {
public:
    TempDir() {
        auto pattern = (std::filesystem::temp_directory_path() / "switchboard-config-XXXXXX").string();
        path_ = mkdtemp(pattern.data());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path write(const std::filesystem::path& relative, std::string_view text) const {
        const auto file = path_ / relative;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream(file) << text;
        return file;
    }

private:
    std::filesystem::path path_;
};

}  // namespace

TEST(Config, ParsesClaudeDesktopFormat) {
    const auto config = parse(R"({
        "mcpServers": {
            "filesystem": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                "env": {"DEBUG": "1"}
            },
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}}
        }
    })");
    EXPECT_EQ(config.source, "test.json");
    EXPECT_TRUE(config.warnings.empty());
    ASSERT_EQ(config.servers.size(), 2u);
    const auto& fs = config.servers[0];
    EXPECT_EQ(fs.name, "filesystem");
    EXPECT_EQ(fs.type, sh::TransportKind::stdio);
    EXPECT_EQ(fs.command, "npx");
    EXPECT_EQ(fs.args, (std::vector<std::string>{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}));
    EXPECT_EQ(fs.env, (std::map<std::string, std::string>{{"DEBUG", "1"}}));
    EXPECT_TRUE(fs.enabled);
    EXPECT_FALSE(fs.lazy);
    EXPECT_EQ(fs.startup_timeout, 30s);
    EXPECT_EQ(fs.tool_timeout, 60s);
    EXPECT_EQ(fs.max_reconnect_attempts, 10);
    EXPECT_TRUE(fs.invalid.empty()) << fs.invalid;
    const auto& remote = config.servers[1];
    EXPECT_EQ(remote.type, sh::TransportKind::http);
    EXPECT_EQ(remote.url, "https://example.com/mcp");
    EXPECT_EQ(remote.headers.at("Authorization"), "Bearer x");
    EXPECT_TRUE(remote.invalid.empty()) << remote.invalid;
}

TEST(Config, ParsesVsCodeServersFormatWithType) {
    const auto config = parse(R"({
        "$schema": "https://example.com/schema.json",
        "inputs": [{"type": "promptString", "id": "token"}],
        "servers": {
            "github": {"type": "http", "url": "https://api.example.com/mcp/"},
            "events": {"type": "sse", "url": "https://example.com/events"},
            "local": {"type": "stdio", "command": "python", "args": ["server.py"]}
        }
    })");
    EXPECT_TRUE(config.warnings.empty()) << config.warnings.front();
    ASSERT_EQ(config.servers.size(), 3u);
    EXPECT_EQ(config.servers[0].type, sh::TransportKind::http);
    // An explicit type wins over inference from the url.
    EXPECT_EQ(config.servers[1].type, sh::TransportKind::sse);
    EXPECT_EQ(config.servers[2].type, sh::TransportKind::stdio);
    EXPECT_EQ(config.servers[2].command, "python");
    for (const auto& s : config.servers) EXPECT_TRUE(s.invalid.empty()) << s.name << ": " << s.invalid;
}

TEST(Config, TypeAliasesAndUnknownType) {
    const auto config = parse(R"({"mcpServers": {
        "a": {"type": "streamable-http", "url": "https://x/mcp"},
        "b": {"type": "streamableHttp", "url": "https://x/mcp"},
        "c": {"type": "websocket", "url": "wss://x/mcp"},
        "d": {"type": "carrier-pigeon", "url": "https://x/mcp"}
    }})");
    EXPECT_EQ(config.find("a")->type, sh::TransportKind::http);
    EXPECT_EQ(config.find("b")->type, sh::TransportKind::http);
    EXPECT_EQ(config.find("c")->type, sh::TransportKind::ws);
    EXPECT_TRUE(config.find("c")->invalid.empty());
    EXPECT_NE(config.find("d")->invalid.find("carrier-pigeon"), std::string::npos) << config.find("d")->invalid;
}

TEST(Config, BothMapsAreMergedAndFirstDefinitionWins) {
    const auto config = parse(R"({
        "mcpServers": {"shared": {"command": "first"}, "only-claude": {"command": "c"}},
        "servers": {"shared": {"command": "second"}, "only-vscode": {"command": "v"}}
    })");
    ASSERT_EQ(config.servers.size(), 3u);
    EXPECT_EQ(config.find("shared")->command, "first");
    EXPECT_NE(config.find("only-vscode"), nullptr);
    ASSERT_EQ(config.warnings.size(), 1u);
    EXPECT_NE(config.warnings[0].find("\"shared\""), std::string::npos) << config.warnings[0];
}

TEST(Config, AcceptsCommentsAndTrailingCommas) {
    const auto config = parse(R"({
        // line comment
        "servers": {
            /* block comment */
            "a": {"command": "x", "args": ["1", "2",],},
        },
    })");
    ASSERT_EQ(config.servers.size(), 1u);
    EXPECT_EQ(config.servers[0].args, (std::vector<std::string>{"1", "2"}));
}

TEST(Config, InvalidJsonReportsLineAndColumn) {
    // Missing comma on line 3: the parser stops at "args", column 26.
    const std::string text =
        "{\n"
        "  \"mcpServers\": {\n"
        "    \"a\": {\"command\": \"x\" \"args\": []}\n"
        "  }\n"
        "}\n";
    const auto message = config_error(text);
    EXPECT_TRUE(message.starts_with("test.json:3:26: ")) << message;
}

TEST(Config, InvalidJsonColumnCountsCharactersNotBytes) {
    const auto message = config_error("{\"mcpServers\": {\"é\": @}}");
    EXPECT_TRUE(message.starts_with("test.json:1:22: ")) << message;
}

TEST(Config, TruncatedJsonReportsEndOfInput) {
    const auto message = config_error("{\n  \"mcpServers\": {\n");
    EXPECT_TRUE(message.starts_with("test.json:3:1: ")) << message;
}

TEST(Config, DocumentWithoutServerMapThrows) {
    EXPECT_EQ(config_error(R"({"mcp": {}})"), "test.json: no \"mcpServers\" (or VS Code \"servers\") object");
    EXPECT_NE(config_error(R"({"mcpServers": []})").find("must be an object"), std::string::npos);
    EXPECT_NE(config_error(R"([1, 2])").find("test.json: "), std::string::npos);
}

TEST(Config, UnknownTopLevelKeyWarns) {
    const auto config = parse(R"({"mcpServers": {}, "mcpServer": {}})");
    ASSERT_EQ(config.warnings.size(), 1u);
    EXPECT_EQ(config.warnings[0], "test.json: unknown top-level key \"mcpServer\" (did you mean \"mcpServers\"?)");
}

TEST(Config, InfersTypeFromCommandOrUrl) {
    const auto config = parse(R"({"mcpServers": {
        "stdio": {"command": "srv", "url": "https://ignored"},
        "ws": {"url": "ws://localhost:9000/mcp"},
        "wss": {"url": "WSS://example.com/mcp"},
        "sse": {"url": "https://example.com/sse?token=a/b#frag"},
        "http": {"url": "https://example.com/mcp"},
        "not-sse": {"url": "https://example.com/sse/messages"},
        "nothing": {"args": ["x"]}
    }})");
    EXPECT_EQ(config.find("stdio")->type, sh::TransportKind::stdio);
    EXPECT_EQ(config.find("ws")->type, sh::TransportKind::ws);
    EXPECT_EQ(config.find("wss")->type, sh::TransportKind::ws);
    EXPECT_EQ(config.find("sse")->type, sh::TransportKind::sse);
    EXPECT_EQ(config.find("http")->type, sh::TransportKind::http);
    EXPECT_EQ(config.find("not-sse")->type, sh::TransportKind::http);
    for (const auto* name : {"stdio", "ws", "wss", "sse", "http", "not-sse"})
        EXPECT_TRUE(config.find(name)->invalid.empty()) << name << ": " << config.find(name)->invalid;
    EXPECT_EQ(config.find("nothing")->invalid, "needs \"command\" (stdio) or \"url\" (http, sse, ws)");
}

// The host and transport agree on one rule: a trailing slash after /sse still means HTTP+SSE.
TEST(Config, SseUrlWithTrailingSlashIsSse) {
    const auto config = parse(R"({"mcpServers": {"slash": {"url": "https://h/sse/"}}})");
    EXPECT_EQ(config.find("slash")->type, sh::TransportKind::sse);
    EXPECT_EQ(transport::infer_remote_kind("https://h/sse/"), transport::RemoteKind::sse);
}

TEST(Config, TypeWithoutItsEndpointOrBadSchemeIsInvalid) {
    const auto config = parse(R"({"mcpServers": {
        "stdio": {"type": "stdio", "url": "https://x"},
        "http": {"type": "http", "command": "x"},
        "scheme": {"url": "ftp://example.com/mcp"},
        "bare": {"type": "sse", "url": "example.com/sse"}
    }})");
    EXPECT_EQ(config.find("stdio")->invalid, "type \"stdio\" needs \"command\"");
    EXPECT_EQ(config.find("http")->invalid, "type \"http\" needs \"url\"");
    EXPECT_NE(config.find("scheme")->invalid.find("http://, https://, ws:// or wss://"), std::string::npos);
    EXPECT_FALSE(config.find("bare")->invalid.empty());
}

TEST(ExpandVars, ExpandsSetUnsetAndEmptyVariables) {
    const auto env = fake_env({{"SET", "value"}, {"EMPTY", ""}});
    std::vector<std::string> missing;
    EXPECT_EQ(sh::expand_vars("a ${SET} b", env, &missing), "a value b");
    EXPECT_EQ(sh::expand_vars("${SET:-d}", env, &missing), "value");
    EXPECT_EQ(sh::expand_vars("${UNSET:-d}", env, &missing), "d");
    EXPECT_EQ(sh::expand_vars("${EMPTY:-d}", env, &missing), "d");  // shell `:-`: empty counts as unset
    EXPECT_EQ(sh::expand_vars("[${EMPTY}]", env, &missing), "[]");
    EXPECT_TRUE(missing.empty());
    EXPECT_EQ(sh::expand_vars("[${UNSET}${UNSET}${OTHER}]", env, &missing), "[]");
    EXPECT_EQ(missing, (std::vector<std::string>{"UNSET", "OTHER"}));
    EXPECT_EQ(sh::expand_vars("${UNSET}", env, &missing), "");
    EXPECT_EQ(missing.size(), 2u);  // still once per name across calls
}

TEST(ExpandVars, LeavesNonReferencesLiteral) {
    const auto env = fake_env({{"SET", "v"}});
    EXPECT_EQ(sh::expand_vars("cost $5 and $SET", env), "cost $5 and $SET");
    EXPECT_EQ(sh::expand_vars("${SET} ${SET", env), "v ${SET");
    EXPECT_EQ(sh::expand_vars("${not a name}", env), "${not a name}");
    EXPECT_EQ(sh::expand_vars("${env:SET}", env), "v");
    EXPECT_EQ(sh::expand_vars("${UNSET:-${SET}}", env), "v");
    EXPECT_EQ(sh::expand_vars("${UNSET:-}x", env), "x");
}

TEST(Config, ExpandsVariablesInCommandArgsEnvUrlAndHeaders) {
    const auto config = parse(R"({"mcpServers": {
        "${NAME}": {
            "command": "${BIN}",
            "args": ["--port", "${PORT:-8080}"],
            "env": {"${KEY}": "${TOKEN}"},
            "cwd": "${BIN}"
        },
        "remote": {"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
    }})",
                              {{"NAME", "n"}, {"BIN", "/bin/srv"}, {"TOKEN", "t0k"}, {"HOST", "h"}, {"KEY", "k"}});
    const auto* local = config.find("${NAME}");  // names are not expanded
    ASSERT_NE(local, nullptr);
    EXPECT_EQ(local->command, "/bin/srv");
    EXPECT_EQ(local->args, (std::vector<std::string>{"--port", "8080"}));
    EXPECT_EQ(local->env, (std::map<std::string, std::string>{{"${KEY}", "t0k"}}));  // keys are not expanded
    EXPECT_EQ(local->cwd, "${BIN}");
    EXPECT_TRUE(local->invalid.empty()) << local->invalid;
    const auto* remote = config.find("remote");
    EXPECT_EQ(remote->url, "https://h/mcp");
    EXPECT_EQ(remote->headers.at("Authorization"), "Bearer t0k");
}

TEST(Config, MissingVariableInvalidatesOnlyThatServer) {
    const auto config = parse(R"({"mcpServers": {
        "needs-key": {"command": "srv", "env": {"API_KEY": "${API_KEY}"}},
        "fine": {"command": "srv", "args": ["${HOME:-/root}"]}
    }})");
    EXPECT_EQ(config.find("needs-key")->invalid, "environment variable ${API_KEY} is not set (used in \"env\")");
    EXPECT_EQ(config.find("needs-key")->env.at("API_KEY"), "");
    EXPECT_TRUE(config.find("fine")->invalid.empty()) << config.find("fine")->invalid;
    EXPECT_EQ(config.find("fine")->args[0], "/root");
}

TEST(Config, VsCodeInputVariablesAreRejected) {
    const auto config = parse(R"({"servers": {"gh": {"command": "gh", "env": {"TOKEN": "${input:token}"}}}})");
    EXPECT_EQ(config.find("gh")->invalid, "VS Code input variables are not supported: ${input:token}");
}

TEST(Config, UnknownKeyWarnsWithSuggestion) {
    const auto config = parse(R"({"mcpServers": {"x": {
        "comand": "srv", "command": "srv", "autoApprove": ["a"], "description": "d", "frobnicate": 1
    }}})");
    ASSERT_EQ(config.warnings.size(), 2u);
    EXPECT_EQ(config.warnings[0], "test.json: server \"x\": unknown key \"comand\" (did you mean \"command\"?)");
    EXPECT_EQ(config.warnings[1], "test.json: server \"x\": unknown key \"frobnicate\"");
    EXPECT_TRUE(config.find("x")->invalid.empty());
}

TEST(Config, WrongValueTypeMakesServerInvalid) {
    const auto config = parse(R"({"mcpServers": {
        "args": {"command": "srv", "args": "--flag"},
        "enabled": {"command": "srv", "enabled": "yes"},
        "timeout": {"command": "srv", "toolTimeoutMs": -5},
        "headers": {"url": "https://x", "headers": {"X-Num": 5}},
        "entry": "npx srv",
        "ok": {"command": "srv"}
    }})");
    EXPECT_EQ(config.find("args")->invalid, "\"args\" must be an array of strings");
    EXPECT_NE(config.find("enabled")->invalid.find("\"enabled\""), std::string::npos);
    EXPECT_NE(config.find("timeout")->invalid.find("\"toolTimeoutMs\" must be a positive integer"), std::string::npos);
    EXPECT_NE(config.find("headers")->invalid.find("\"headers\""), std::string::npos);
    EXPECT_EQ(config.find("entry")->invalid, "entry must be an object");
    EXPECT_TRUE(config.find("ok")->invalid.empty());
}

TEST(Config, EnvScalarsAreConvertedWithWarning) {
    const auto config = parse(R"({"mcpServers": {"x": {"command": "srv", "env": {"PORT": 8080, "DEBUG": true}}}})");
    const auto* server = config.find("x");
    EXPECT_EQ(server->env.at("PORT"), "8080");
    EXPECT_EQ(server->env.at("DEBUG"), "true");
    EXPECT_TRUE(server->invalid.empty());
    EXPECT_EQ(config.warnings.size(), 2u);
}

TEST(Config, EnabledAndDisabled) {
    const auto config = parse(R"({"mcpServers": {
        "default": {"command": "a"},
        "off": {"command": "a", "enabled": false},
        "cursor-off": {"command": "a", "disabled": true},
        "cursor-on": {"command": "a", "disabled": false}
    }})");
    EXPECT_TRUE(config.find("default")->enabled);
    EXPECT_FALSE(config.find("off")->enabled);
    EXPECT_FALSE(config.find("cursor-off")->enabled);
    EXPECT_TRUE(config.find("cursor-on")->enabled);
}

TEST(Config, TimeoutsAndLimitsAreParsed) {
    const auto config = parse(R"({"mcpServers": {"x": {
        "command": "a", "startupTimeoutMs": 1500, "toolTimeoutMs": 120000.0, "maxReconnectAttempts": 0,
        "lazy": true, "allowedTools": ["read", "list"], "excludedTools": ["delete"]
    }}})");
    const auto* server = config.find("x");
    EXPECT_TRUE(server->invalid.empty()) << server->invalid;
    EXPECT_EQ(server->startup_timeout, 1500ms);
    EXPECT_EQ(server->tool_timeout, 120s);
    EXPECT_EQ(server->max_reconnect_attempts, 0);
    EXPECT_TRUE(server->lazy);
    EXPECT_EQ(server->allowed_tools, (std::vector<std::string>{"read", "list"}));
    EXPECT_EQ(server->excluded_tools, (std::vector<std::string>{"delete"}));

    const auto bad = parse(R"({"mcpServers": {"x": {"command": "a", "maxReconnectAttempts": -1}}})");
    EXPECT_FALSE(bad.find("x")->invalid.empty());
}

TEST(Config, ServersKeepFileOrderAndFindWorks) {
    const auto config = parse(R"({"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"},
                                                  "mid": {"command": "m"}}})");
    ASSERT_EQ(config.servers.size(), 3u);
    EXPECT_EQ(config.servers[0].name, "zeta");
    EXPECT_EQ(config.servers[1].name, "alpha");
    EXPECT_EQ(config.servers[2].name, "mid");
    EXPECT_EQ(config.find("alpha"), &config.servers[1]);
    EXPECT_EQ(config.find("nope"), nullptr);
}

TEST(Config, TransportKindToString) {
    EXPECT_EQ(sh::to_string(sh::TransportKind::stdio), "stdio");
    EXPECT_EQ(sh::to_string(sh::TransportKind::http), "http");
    EXPECT_EQ(sh::to_string(sh::TransportKind::sse), "sse");
    EXPECT_EQ(sh::to_string(sh::TransportKind::ws), "ws");
}

TEST(FindConfigFile, FollowsLookupOrder) {
    const TempDir dir;
    const auto project = dir.path() / "project";
    const auto home = dir.path() / "home";
    const auto xdg = dir.path() / "xdg";
    std::filesystem::create_directories(project);
    const auto env = fake_env({{"HOME", home.string()}, {"XDG_CONFIG_HOME", xdg.string()}});
    const auto home_only = fake_env({{"HOME", home.string()}});

    EXPECT_EQ(sh::find_config_file(std::nullopt, project, env), std::nullopt);

    // Home fallback is only used when XDG_CONFIG_HOME is unset.
    const auto home_file = dir.write("home/.config/switchboard/settings.json", "{}");
    EXPECT_EQ(sh::find_config_file(std::nullopt, project, home_only), home_file);
    EXPECT_EQ(sh::find_config_file(std::nullopt, project, env), std::nullopt);

    const auto xdg_file = dir.write("xdg/switchboard/settings.json", "{}");
    EXPECT_EQ(sh::find_config_file(std::nullopt, project, env), xdg_file);

    const auto project_file = dir.write("project/.mcp.json", "{}");
    EXPECT_EQ(sh::find_config_file(std::nullopt, project, env), project_file);

    // An explicit file wins, even when it does not exist.
    const auto explicit_file = dir.path() / "missing.json";
    EXPECT_EQ(sh::find_config_file(explicit_file, project, env), explicit_file);
}

TEST(LoadConfigFile, ReadsFileAndUsesPathAsSource) {
    const TempDir dir;
    const auto file = dir.write("settings.json", R"({"mcpServers": {"x": {"command": "${BIN}"}}})");
    const auto config = sh::load_config_file(file, fake_env({{"BIN", "/bin/x"}}));
    EXPECT_EQ(config.source, file.string());
    EXPECT_EQ(config.find("x")->command, "/bin/x");
}

TEST(LoadConfigFile, MissingFileThrowsWithPath) {
    const TempDir dir;
    const auto file = dir.path() / "does-not-exist.json";
    try {
        sh::load_config_file(file, fake_env({}));
        FAIL() << "expected ConfigError";
    } catch (const sh::ConfigError& e) {
        const std::string message = e.what();
        EXPECT_TRUE(message.starts_with("cannot read " + file.string() + ": ")) << message;
        EXPECT_NE(message.find("No such file"), std::string::npos) << message;
    }
}

TEST(LoadConfigFile, ParseErrorNamesTheFile) {
    const TempDir dir;
    const auto file = dir.write("bad.json", "{\n  \"mcpServers\": {,}\n}");
    try {
        sh::load_config_file(file, fake_env({}));
        FAIL() << "expected ConfigError";
    } catch (const sh::ConfigError& e) {
        EXPECT_TRUE(std::string(e.what()).starts_with(file.string() + ":2:")) << e.what();
    }
}

namespace {

TEST(Config, UrlPortsOutsideTheRangeAndHostlessUrlsAreInvalid) {
    const auto config = parse(R"({"mcpServers": {
        "wraps": {"url": "http://127.0.0.1:99999/mcp"},
        "zero": {"url": "http://127.0.0.1:0/mcp"},
        "ok": {"url": "http://127.0.0.1:65535/mcp"},
        "default": {"url": "https://example.com/mcp"},
        "nohost": {"url": "http:///mcp"}
    }})");
    // 99999 would otherwise dial 99999 mod 65536 = 34463, whatever listens there.
    EXPECT_EQ(config.find("wraps")->invalid,
              R"("url" has port 99999, outside 1-65535 (got "http://127.0.0.1:99999/mcp"))");
    EXPECT_NE(config.find("zero")->invalid.find("port 0"), std::string::npos) << config.find("zero")->invalid;
    EXPECT_EQ(config.find("ok")->invalid, "");
    EXPECT_EQ(config.find("default")->invalid, "");
    EXPECT_NE(config.find("nohost")->invalid.find("no host"), std::string::npos) << config.find("nohost")->invalid;
}

TEST(Config, DeeplyNestedVariableDefaultsAreBoundedAndFast) {
    // ${X:-${X:-...}} 60,000 deep: no stack overflow, no quadratic rescans, a clear error for that server only.
    std::string nested;
    for (int i = 0; i < 60'000; ++i) nested += "${X:-";
    nested += "end";
    for (int i = 0; i < 60'000; ++i) nested += "}";
    const auto config =
        parse(R"({"mcpServers": {"deep": {"command": ")" + nested + R"("}, "fine": {"command": "x"}}})");
    EXPECT_NE(config.find("deep")->invalid.find("nested more than 16 deep"), std::string::npos)
        << config.find("deep")->invalid.substr(0, 200);
    EXPECT_EQ(config.find("fine")->invalid, "");
    // Realistic nesting still expands.
    EXPECT_EQ(sh::expand_vars("${A:-${B:-${C:-deep}}}", fake_env({})), "deep");
}

TEST(Config, OversizedDocumentsAreRefusedBeforeParsing) {
    std::string big = R"({"mcpServers": {}, "junk": [)";
    while (big.size() <= sh::max_config_size) big += "1,2,3,4,5,6,7,8,9,";
    big += "0]}";
    const auto message = config_error(big);
    EXPECT_NE(message.find("larger than 8 MiB"), std::string::npos) << message;
    TempDir dir;
    const auto file = dir.write("big.json", big);
    try {
        sh::load_config_file(file);
        ADD_FAILURE() << "a 8 MiB+ file was accepted";
    } catch (const sh::ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("big.json: the file is larger than 8 MiB"), std::string::npos) << e.what();
    }
}

}  // namespace
