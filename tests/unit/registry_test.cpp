// server.json → config entry (registry/server_json.hpp) on the documents the local registry serves (real ones and
// hostile ones), and the env file beside a config (host/env_file.hpp) that keeps the secrets they ask for.
#include <switchboard/host/config.hpp>
#include <switchboard/host/env_file.hpp>
#include <switchboard/registry/server_json.hpp>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace host = switchboard::host;
namespace registry = switchboard::registry;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

registry::ServerDocument document(const std::string& file) {
    std::ifstream in(std::string(SOURCE_DIR) + "/tests/peers/registry/" + file);
    std::ostringstream text;
    text << in.rdbuf();
    auto doc = text.str();  // the local registry's placeholder, filled as it fills it
    if (auto at = doc.find("{{REMOTE_URL}}"); at != std::string::npos) doc.replace(at, 14, "http://127.0.0.1:9/mcp");
    return registry::parse_server_json(json::parse(doc).at("server"), file);
}

registry::Plan plan_of(const std::string& file, std::map<std::string, std::string> answers = {},
                       std::string_view use = {}) {
    const auto doc = document(file);
    return registry::plan(doc, registry::choose(doc, use), answers, registry::default_local_name(doc.name));
}

std::string error_of(const std::string& file, std::map<std::string, std::string> answers = {}) {
    try {
        plan_of(file, std::move(answers));
    } catch (const registry::RegistryError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(ServerJson, EachPackageTypeBecomesItsLaunchLinePinned) {
    auto npm = plan_of("everything.json");
    EXPECT_EQ(registry::shell_words(npm.argv), "npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio");
    EXPECT_TRUE(npm.notes.empty());  // registry.npmjs.org is the standard index
    // The launcher comes from the type: time-mcp-pypi says runtimeHint "python".
    EXPECT_EQ(plan_of("time-pypi.json").display, "uvx time-mcp-pypi@1.0.6");
    EXPECT_EQ(plan_of("time-nuget.json").display, "dnx TimeMcpServer@1.0.8 --yes");
    auto oci = plan_of("airtable.json", {{"AIRTABLE_API_KEY", "k"}}, "oci");
    EXPECT_EQ(registry::shell_words(oci.argv),
              "docker run -i --rm -e AIRTABLE_API_KEY docker.io/domdomegg/airtable-mcp-server:1.7.2");
    auto remote = plan_of("todoist-remote.json");
    EXPECT_EQ(json::serialize(remote.entry), R"({"type":"http","url":"http://127.0.0.1:9/mcp"})");
}

TEST(ServerJson, SecretsBecomeReferencesAndTheirValuesGoAside) {
    auto p = plan_of("airtable.json", {{"AIRTABLE_API_KEY", "pat.x"}});
    EXPECT_EQ(p.entry.at("env").at("AIRTABLE_API_KEY").as_string(), "${AIRTABLE_MCP_SERVER_AIRTABLE_API_KEY}");
    EXPECT_EQ(p.secrets.at("AIRTABLE_MCP_SERVER_AIRTABLE_API_KEY"), "pat.x");
    EXPECT_EQ(p.display.find("pat.x"), std::string::npos);
    const auto qs = registry::questions(document("airtable.json"), {});
    ASSERT_EQ(qs.size(), 1u);
    EXPECT_EQ(qs[0].key, "AIRTABLE_API_KEY");
    EXPECT_TRUE(qs[0].input.required && qs[0].input.secret);
    EXPECT_EQ(qs[0].label, "environment variable AIRTABLE_API_KEY");
}

TEST(ServerJson, ADocumentSpellingTheWholeDockerRunIsTakenAsTheRunLine) {
    auto p = plan_of("github.json", {{"token", "ghp"}});
    EXPECT_EQ(registry::shell_words(p.argv),
              "docker run -i --rm -e 'GITHUB_PERSONAL_ACCESS_TOKEN=${GITHUB_MCP_SERVER_TOKEN}' "
              "ghcr.io/github/github-mcp-server:0.20.2");
    registry::apply_flags(p, {});
    EXPECT_FALSE(p.entry.contains("sandboxEnabled"));  // the container is its sandbox
}

TEST(ServerJson, HostileAndBrokenDocumentsAreRefusedNamingTheField) {
    EXPECT_NE(error_of("bad-shell.json").find("packageArguments"), std::string::npos);
    EXPECT_NE(error_of("bad-env-expansion.json").find("environment variable TOKEN \"${GITHUB_TOKEN}\""),
              std::string::npos);
    EXPECT_NE(error_of("bad-undefined-var.json").find("{root_dir}"), std::string::npos);
    EXPECT_NE(error_of("bad-unknown-type.json").find("it offers: smithery"), std::string::npos);
    EXPECT_NE(error_of("airtable.json").find("AIRTABLE_API_KEY is required"), std::string::npos);
    // A value given with a line break cannot be written as one.
    EXPECT_NE(error_of("airtable.json", {{"AIRTABLE_API_KEY", "a\nb"}}).find("spans lines"), std::string::npos);
    // No exact version, no pin.
    auto doc = document("time-pypi.json");
    doc.packages[0].version = "^1.0";
    EXPECT_THROW(registry::plan(doc, {}, {}, "t"), registry::RegistryError);
    doc.packages[0].version = "latest";
    EXPECT_THROW(registry::plan(doc, {}, {}, "t"), registry::RegistryError);
    // A member of the wrong type.
    EXPECT_THROW(registry::parse_server_json(json::parse(R"({"name":"x","packages":[{"registryType":1}]})"), "t"),
                 registry::RegistryError);
}

TEST(ServerJson, NamesVersionsAndShellWords) {
    EXPECT_EQ(registry::default_local_name("io.github.x/my_server__v2"), "my_server_v2");
    EXPECT_EQ(registry::default_local_name("com.todoist/mcp"), "mcp");
    EXPECT_EQ(registry::split_name_version("io.x/y@1.2.3"),
              std::make_pair(std::string("io.x/y"), std::string("1.2.3")));
    EXPECT_EQ(registry::split_name_version("io.x/y").second, "");
    EXPECT_EQ(registry::shell_words({"a b", "it's", "plain-1.0"}), R"('a b' 'it'\''s' plain-1.0)");
}

class EnvFile : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-envfile-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(EnvFile, IsWrittenPrivateKeepsOtherLinesAndFeedsTheConfig) {
    const auto config = dir_ / ".mcp.json";
    EXPECT_EQ(host::env_file_for(config), dir_ / ".mcp.env");
    EXPECT_EQ(host::env_file_for(dir_ / "settings.json"), dir_ / "settings.env");
    const auto file = host::env_file_for(config);
    std::ofstream(file) << "# mine\nexport OTHER=\"two words\"\nA=old\n";
    host::set_env_file_values(file, {{"A", "new"}, {"B", "b=c"}});
    const auto values = host::read_env_file(file);
    EXPECT_EQ(values.at("A"), "new");
    EXPECT_EQ(values.at("B"), "b=c");
    EXPECT_EQ(values.at("OTHER"), "two words");
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str().rfind("# mine\n", 0), 0u) << text.str();
    struct ::stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_THROW(host::set_env_file_values(file, {{"1BAD", "x"}}), host::ConfigError);
    EXPECT_THROW(host::set_env_file_values(file, {{"OK", "two\nlines"}}), host::ConfigError);

    // The config's ${A} and ${B} expand from it; the process environment wins over the file.
    std::ofstream(config) << R"({"mcpServers": {"s": {"command": "c", "env": {"X": "${A}", "Y": "${B}"}}}})";
    const auto loaded = host::load_config_file(config, [](std::string_view name) -> std::optional<std::string> {
        if (name == "B") return std::string("from-process");
        return std::nullopt;
    });
    EXPECT_EQ(loaded.servers[0].env.at("X"), "new");
    EXPECT_EQ(loaded.servers[0].env.at("Y"), "from-process");
    EXPECT_TRUE(loaded.servers[0].invalid.empty()) << loaded.servers[0].invalid;

    // A broken file: its variables unused, and said so.
    std::ofstream(file) << "not a variable line\n";
    const auto broken = host::load_config_file(config, [](std::string_view) { return std::nullopt; });
    ASSERT_FALSE(broken.warnings.empty());
    EXPECT_NE(broken.warnings[0].find(".mcp.env:1: not a KEY=VALUE line (its variables are not used)"),
              std::string::npos)
        << broken.warnings[0];
}

}  // namespace
