// Editing one server entry of a config file: everything else stays byte for byte; a bad entry never reaches the file.
#include <switchboard/host/config_edit.hpp>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace host = switchboard::host;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

const std::string jsonc = R"({
  // the model we use
  "llm": {"model": "m"},
  "mcpServers": {
    // the first one
    "alpha": {
      "command": "a" // trailing comment
    },
    /* block */
    "beta": { "url": "http://127.0.0.1:1/mcp" }
  }
}
)";

host::ServerEntryEdit set(std::string name, std::string_view entry, std::string previous = {}) {
    return {std::move(name), std::move(previous), json::parse(entry).as_object()};
}

std::string contents_of(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

host::EnvLookup no_env() {
    return [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
}

}  // namespace

TEST(ConfigEdit, ReplacingAnEntryKeepsEveryOtherByte) {
    const auto out = host::edit_server_entry(jsonc, set("alpha", R"({"command": "x", "args": ["1", "2"]})"), "f");
    EXPECT_EQ(out, R"({
  // the model we use
  "llm": {"model": "m"},
  "mcpServers": {
    // the first one
    "alpha": {
      "command": "x",
      "args": ["1", "2"]
    },
    /* block */
    "beta": { "url": "http://127.0.0.1:1/mcp" }
  }
}
)");
}

TEST(ConfigEdit, AddingGoesAfterTheLastEntryWithItsIndent) {
    const auto out = host::edit_server_entry(jsonc, set("gamma", R"({"command": "g"})"), "f");
    EXPECT_NE(
        out.find("\"beta\": { \"url\": \"http://127.0.0.1:1/mcp\" },\n    \"gamma\": {\n      \"command\": \"g\"\n"
                 "    }\n  }\n}"),
        std::string::npos)
        << out;
    EXPECT_NE(out.find("// the first one"), std::string::npos);
    const auto parsed = host::parse_config(out, "f", no_env());
    ASSERT_EQ(parsed.servers.size(), 3u);
    EXPECT_EQ(parsed.servers[2].command, "g");
}

TEST(ConfigEdit, AddingToAnEmptyMapOrAfterATrailingComma) {
    auto out = host::edit_server_entry("{\"mcpServers\": {}}", set("a", R"({"command": "c"})"), "f");
    EXPECT_EQ(host::parse_config(out, "f", no_env()).servers.at(0).command, "c");
    out = host::edit_server_entry("{\"mcpServers\": {\n  \"a\": {\"command\": \"c\"},\n}}",
                                  set("b", R"({"command": "d"})"), "f");
    EXPECT_NE(out.find("\"a\": {\"command\": \"c\"},\n  \"b\": {\n    \"command\": \"d\"\n  },"), std::string::npos)
        << out;
    EXPECT_EQ(host::parse_config(out, "f", no_env()).servers.size(), 2u);
}

TEST(ConfigEdit, RemovingTheFirstOrTheLastEntry) {
    auto out = host::edit_server_entry(jsonc, {"alpha", {}, std::nullopt}, "f");
    auto parsed = host::parse_config(out, "f", no_env());
    ASSERT_EQ(parsed.servers.size(), 1u);
    EXPECT_EQ(parsed.servers[0].name, "beta");
    EXPECT_NE(out.find("/* block */"), std::string::npos);

    out = host::edit_server_entry(jsonc, {"beta", {}, std::nullopt}, "f");
    parsed = host::parse_config(out, "f", no_env());
    ASSERT_EQ(parsed.servers.size(), 1u);
    EXPECT_EQ(parsed.servers[0].name, "alpha");
    EXPECT_NE(out.find("// the model we use"), std::string::npos);
    EXPECT_THROW(host::edit_server_entry(jsonc, {"nope", {}, std::nullopt}, "f"), host::ConfigError);
}

TEST(ConfigEdit, RenamingReplacesTheKeyAndRefusesATakenName) {
    const auto out = host::edit_server_entry(jsonc, set("renamed", R"({"command": "a"})", "alpha"), "f");
    const auto parsed = host::parse_config(out, "f", no_env());
    ASSERT_EQ(parsed.servers.size(), 2u);
    EXPECT_EQ(parsed.servers[0].name, "renamed");
    try {
        host::edit_server_entry(jsonc, set("beta", R"({"command": "a"})", "alpha"), "f");
        FAIL() << "a taken name was accepted";
    } catch (const host::ConfigError& e) {
        EXPECT_STREQ(e.what(), "f: a server named \"beta\" already exists");
    }
}

TEST(ConfigEdit, KeysWithEscapesAndStringsWithBracesAreFoundRight) {
    const std::string text = R"({"mcpServers": {"a\"b": {"command": "{[/* not a comment"}, "c": {"command": "d"}}})";
    const auto out = host::edit_server_entry(text, set("c", R"({"command": "e"})"), "f");
    const auto parsed = host::parse_config(out, "f", no_env());
    EXPECT_EQ(parsed.find("a\"b")->command, "{[/* not a comment");
    EXPECT_EQ(parsed.find("c")->command, "e");
}

TEST(ConfigEdit, TheFileIsWrittenOnlyWhenTheEntryIsValidAndKeepsItsMode) {
    const auto dir = fs::temp_directory_path() / ("sb-config-edit-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto file = dir / "settings.json";
    { std::ofstream(file) << jsonc; }
    ::chmod(file.c_str(), 0600);

    // A url that is not one, a wrong type, an empty name: refused with the reason, the file untouched.
    try {
        host::edit_config_file(file, set("beta", R"({"url": "ftp://x"})"), no_env());
        FAIL() << "a bad url was written";
    } catch (const host::ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("server \"beta\""), std::string::npos) << e.what();
    }
    EXPECT_THROW(host::edit_config_file(file, set("beta", R"({"command": 5})"), no_env()), host::ConfigError);
    EXPECT_THROW(host::edit_config_file(file, set("", R"({"command": "x"})"), no_env()), host::ConfigError);
    EXPECT_EQ(contents_of(file), jsonc);

    // An unset variable is allowed with a warning: the file is where the user sets things up for later.
    auto edit = host::edit_config_file(file, set("gamma", R"({"url": "${GAMMA_URL}", "comand": "x"})"), no_env());
    EXPECT_EQ(edit.config.servers.size(), 3u);
    ASSERT_EQ(edit.warnings.size(), 2u);
    EXPECT_NE(edit.warnings[0].find("comand"), std::string::npos);
    EXPECT_NE(edit.warnings[1].find("${GAMMA_URL}"), std::string::npos);
    EXPECT_NE(contents_of(file).find("// the first one"), std::string::npos);
    struct ::stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    // No temporary file is left beside it.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
    fs::remove_all(dir);
}

TEST(ConfigEdit, RawEntriesAreWhatTheFileSays) {
    const auto raw = host::raw_server_entries(R"({"mcpServers": {"a": {"url": "${U}"}, "b": 3}})", "f");
    ASSERT_EQ(raw.size(), 1u);
    EXPECT_EQ(raw.at("a").at("url").as_string(), "${U}");
}

TEST(ConfigEdit, ATopLevelMemberIsReplacedInPlaceOrAddedFirst) {
    auto out =
        host::set_top_level_member(jsonc, "llm", json::parse(R"({"baseUrl": "http://h/v1", "model": "x"})"), "f");
    EXPECT_NE(
        out.find("  // the model we use\n  \"llm\": {\n    \"baseUrl\": \"http://h/v1\",\n    \"model\": \"x\"\n  },"),
        std::string::npos)
        << out;
    EXPECT_NE(out.find("// the first one"), std::string::npos);
    EXPECT_EQ(host::raw_top_level_member(out, "llm", "f").at("model").as_string(), "x");

    const std::string bare = "{\n  \"mcpServers\": {}\n}\n";
    out = host::set_top_level_member(bare, "llm", json::parse(R"({"model": "m"})"), "f");
    EXPECT_EQ(out, "{\n  \"llm\": {\n    \"model\": \"m\"\n  },\n  \"mcpServers\": {}\n}\n");
    EXPECT_TRUE(host::raw_top_level_member(bare, "llm", "f").is_null());
}
