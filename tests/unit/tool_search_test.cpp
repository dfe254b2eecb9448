// Tool search (agent/tool_search.hpp): the tokenizer, BM25 ranking, the automatic rule; the catalog files
// (host/tool_catalog.hpp): atomic writes, invalidation by the config entry's hash, filters applied on load, the
// skills a lazy server serves recorded beside its tools (and offered from there, agent/mcp_skills.hpp); the config's
// toolSearch key.
#include <switchboard/agent/mcp_skills.hpp>
#include <switchboard/agent/tool_search.hpp>
#include <switchboard/host/config.hpp>
#include <switchboard/host/tool_catalog.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace switchboard::agent {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

using Tokens = std::vector<std::string>;

TEST(SearchTokens, SplitsOnSeparatorsAndCamelCaseAndLowersCase) {
    EXPECT_EQ(search_tokens("echo_2"), (Tokens{"echo", "2"}));
    EXPECT_EQ(search_tokens("read-file.v2"), (Tokens{"read", "file", "v2"}));
    EXPECT_EQ(search_tokens("getUserName"), (Tokens{"get", "user", "name"}));
    EXPECT_EQ(search_tokens("getHTTPResponse_code"), (Tokens{"get", "http", "response", "code"}));
    EXPECT_EQ(search_tokens("Returns its message unchanged (extra tool 2)."),
              (Tokens{"returns", "its", "message", "unchanged", "extra", "tool", "2"}));
    EXPECT_EQ(search_tokens("github__create_pull_request"), (Tokens{"github", "create", "pull", "request"}));
    EXPECT_EQ(search_tokens("  __ "), Tokens{});
    EXPECT_EQ(search_tokens("ABC"), (Tokens{"abc"}));
}

TEST(Bm25, MatchesTheFormula) {
    Bm25 index;  // k1 1.2, b 0.75
    index.add({"a", "b", "a"});
    index.add({"b", "c"});
    index.add({"c", "d", "e", "f"});
    // avgdl = 3. "a" occurs in 1 of 3 documents: idf = ln(1 + (3 - 1 + .5) / (1 + .5)).
    const double idf_a = std::log(1.0 + 2.5 / 1.5);
    const double tf = 2.0 * 2.2 / (2.0 + 1.2 * (1 - 0.75 + 0.75 * 3.0 / 3.0));
    EXPECT_NEAR(index.score(0, {"a"}), idf_a * tf, 1e-9);
    EXPECT_EQ(index.score(1, {"a"}), 0.0);
    // A repeated query token counts once.
    EXPECT_NEAR(index.score(0, {"a", "a"}), index.score(0, {"a"}), 1e-12);
    // Shorter documents win for the same term frequency: "c" in doc 1 (length 2) beats doc 2 (length 4).
    EXPECT_GT(index.score(1, {"c"}), index.score(2, {"c"}));
}

TEST(Bm25, RanksBestFirstOnlyMatchesAndHonoursTheLimit) {
    Bm25 index;
    index.add({"weather", "forecast"});
    index.add({"echo", "message"});
    index.add({"echo", "2", "message"});
    index.add({"echo", "1", "message"});
    auto r = index.rank({"echo", "2"}, 10);
    ASSERT_EQ(r.size(), 3u);  // the weather document does not match
    EXPECT_EQ(r[0].first, 2u);
    EXPECT_GT(r[0].second, r[1].second);
    EXPECT_EQ(index.rank({"echo"}, 2).size(), 2u);
    EXPECT_TRUE(index.rank({"nothing"}, 5).empty());
    // The shortest document first; ties (documents 2 and 3) keep the order added.
    auto ties = index.rank({"message"}, 10);
    ASSERT_EQ(ties.size(), 3u);
    EXPECT_EQ(ties[0].first, 1u);
    EXPECT_EQ(ties[1].first, 2u);
    EXPECT_EQ(ties[2].first, 3u);
    EXPECT_DOUBLE_EQ(ties[1].second, ties[2].second);
}

SearchableTool tool(std::string server, std::string name, std::string description, json::object properties = {}) {
    SearchableTool t;
    t.server = std::move(server);
    t.tool.name = std::move(name);
    t.tool.description = std::move(description);
    t.tool.input_schema = json::object{{"type", "object"}, {"properties", std::move(properties)}};
    return t;
}

TEST(RankTools, UsesNamesDescriptionsAndParameterNames) {
    std::vector<SearchableTool> tools{
        tool("files", "read_file", "Reads a file from disk", json::object{{"path", json::object{}}}),
        tool("github", "createPullRequest", "Opens a pull request", json::object{{"base", json::object{}}}),
        tool("weather", "forecast", "The weather for a city", json::object{{"city", json::object{}}}),
        tool("lazyserver", "echo_1", "Returns its message unchanged (extra tool 1)."),
        tool("lazyserver", "echo_2", "Returns its message unchanged (extra tool 2)."),
    };
    EXPECT_EQ(rank_tools(tools, "echo 2", 5).front(), 4u);
    EXPECT_EQ(rank_tools(tools, "pull request", 5).front(), 1u);
    EXPECT_EQ(rank_tools(tools, "city", 5), (std::vector<std::size_t>{2}));  // a parameter name
    EXPECT_EQ(rank_tools(tools, "github", 5), (std::vector<std::size_t>{1}));  // the server's name
    EXPECT_EQ(rank_tools(tools, "read a file", 1), (std::vector<std::size_t>{0}));
    EXPECT_TRUE(rank_tools(tools, "", 5).empty());
    EXPECT_EQ(tools[4].qualified_name(), "lazyserver__echo_2");
}

TEST(ToolSearchWanted, ConfigDecidesElseTenPercentOfAKnownWindow) {
    EXPECT_TRUE(tool_search_wanted(true, false, 0, std::nullopt));
    EXPECT_FALSE(tool_search_wanted(false, true, 1'000'000, 1000));
    // 4000 bytes = 1000 tokens: more than 10% of 8000, not of 10000.
    EXPECT_TRUE(tool_search_wanted(std::nullopt, true, 4000, 8000));
    EXPECT_FALSE(tool_search_wanted(std::nullopt, true, 4000, 10000));
    EXPECT_FALSE(tool_search_wanted(std::nullopt, true, 4000, std::nullopt));  // no window: never automatic
    EXPECT_FALSE(tool_search_wanted(std::nullopt, false, 4000, 8000));          // nothing to search
}

struct CatalogDir {
    CatalogDir() {
        path = fs::temp_directory_path() /
               ("switchboard-catalog-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(path);
    }
    ~CatalogDir() { fs::remove_all(path); }
    fs::path path;
};

host::ServerConfig lazy_server() {
    host::ServerConfig s;
    s.name = "lazyserver";
    s.command = "demo";
    s.args = {"--extra-tools", "3"};
    s.lazy = true;
    return s;
}

std::vector<mcp::Tool> two_tools() {
    mcp::Tool a;
    a.name = "echo_1";
    a.description = "one";
    a.input_schema = json::object{{"type", "object"}};
    mcp::Tool b = a;
    b.name = "echo_2";
    return {a, b};
}

TEST(ToolCatalog, SavesAtomicallyAndLoadsWhileTheEntryIsUnchanged) {
    CatalogDir dir;
    host::ToolCatalog catalog(dir.path / "catalog");
    auto server = lazy_server();
    std::string error;
    ASSERT_TRUE(catalog.save(server, two_tools(), &error)) << error;
    EXPECT_EQ(catalog.file("lazyserver"), dir.path / "catalog" / "lazyserver.json");
    EXPECT_TRUE(fs::exists(catalog.file("lazyserver")));
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& f : fs::directory_iterator(dir.path / "catalog")) ++files;
    EXPECT_EQ(files, 1u);  // no temporary file left behind
    auto loaded = catalog.load(server);
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->tools.size(), 2u);
    EXPECT_EQ(loaded->tools[1].name, "echo_2");
    EXPECT_GT(loaded->updated, 0);

    // Timing and the filters do not change what runs; the filters apply on load.
    auto filtered = server;
    filtered.keep_warm = std::chrono::seconds(30);
    filtered.excluded_tools = {"echo_1"};
    loaded = catalog.load(filtered);
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->tools.size(), 1u);
    EXPECT_EQ(loaded->tools[0].name, "echo_2");

    // A changed command, argument or variable is another server: the entry is stale.
    auto changed = server;
    changed.args.push_back("--legacy-only");
    EXPECT_FALSE(catalog.load(changed));
    changed = server;
    changed.env["TOKEN"] = "x";
    EXPECT_FALSE(catalog.load(changed));
    EXPECT_TRUE(catalog.read("lazyserver"));  // still there, for `catalog` to show as stale
    EXPECT_NE(host::catalog_hash(server), host::catalog_hash(changed));
    EXPECT_EQ(host::catalog_hash(server), host::catalog_hash(lazy_server()));
}

TEST(ToolCatalog, DefaultDirFollowsXdgCacheHome) {
    auto env = [](std::map<std::string, std::string> vars) -> host::EnvLookup {
        return [vars](std::string_view name) -> std::optional<std::string> {
            auto it = vars.find(std::string(name));
            if (it == vars.end()) return std::nullopt;
            return it->second;
        };
    };
    EXPECT_EQ(host::ToolCatalog::default_dir(env({{"XDG_CACHE_HOME", "/c"}, {"HOME", "/h"}})),
              fs::path("/c/switchboard/catalog"));
    EXPECT_EQ(host::ToolCatalog::default_dir(env({{"HOME", "/h"}})), fs::path("/h/.cache/switchboard/catalog"));
    EXPECT_EQ(host::ToolCatalog::default_dir(env({})), fs::path());
}

TEST(ToolCatalog, AnUnreadableOrForeignFileIsNoEntry) {
    CatalogDir dir;
    host::ToolCatalog catalog(dir.path);
    fs::create_directories(dir.path);
    std::ofstream(dir.path / "lazyserver.json") << "not json";
    EXPECT_FALSE(catalog.read("lazyserver"));
    std::ofstream(dir.path / "lazyserver.json") << R"({"server": "other", "tools": []})";
    EXPECT_FALSE(catalog.read("lazyserver"));
}

std::vector<mcp::Skill> one_skill(const std::string& name) {
    const auto md = "---\nname: " + name + "\ndescription: Fills forms\n---\nDo it.\n";
    const auto text = R"({"uri": "skill://)" + name + R"(/SKILL.md", "frontmatter": {"name": ")" + name +
                      R"(", "description": "Fills forms", "context": "fork"}, "_meta": {"x": 1}, "resources": [
                          {"uri": "skill://)" + name + R"(/SKILL.md", "size": )" + std::to_string(md.size()) +
                      R"(, "digest": ")" + mcp::sha256_digest(md) + R"("}]})";
    std::string error;
    auto s = mcp::parse_skill(json::parse(text), error);
    EXPECT_TRUE(s) << error;
    return s ? std::vector<mcp::Skill>{*s} : std::vector<mcp::Skill>{};
}

TEST(ToolCatalog, RecordsSkillsEntriesAsListedAndKeepsThemWhenOnlyToolsAreSaved) {
    CatalogDir dir;
    host::ToolCatalog catalog(dir.path / "catalog");
    auto server = lazy_server();
    std::string error;
    ASSERT_TRUE(catalog.save(server, two_tools(), one_skill("pdf-forms"), &error)) << error;
    auto loaded = catalog.load(server);
    ASSERT_TRUE(loaded && loaded->skills);
    ASSERT_EQ(loaded->skills->size(), 1u);
    const auto& skill = loaded->skills->front();
    EXPECT_EQ(skill.name(), "pdf-forms");
    EXPECT_EQ(skill.uri, "skill://pdf-forms/SKILL.md");
    ASSERT_TRUE(skill.files);
    EXPECT_EQ(skill.files->front().digest, one_skill("pdf-forms").front().files->front().digest);
    EXPECT_TRUE(skill.entry.contains("_meta"));  // the entry as the server sent it
    EXPECT_EQ(mcp::string_field(skill.frontmatter, "context"), "fork");

    // A tool list recorded later (tools_changed) keeps the skills of the current entry.
    ASSERT_TRUE(catalog.save(server, {two_tools()[0]}, &error)) << error;
    loaded = catalog.load(server);
    ASSERT_TRUE(loaded && loaded->skills);
    EXPECT_EQ(loaded->tools.size(), 1u);
    EXPECT_EQ(loaded->skills->size(), 1u);
    // Not those of an entry recorded for another command: they are another server's.
    auto changed = server;
    changed.args.push_back("--other");
    ASSERT_TRUE(catalog.save(changed, two_tools(), &error)) << error;
    loaded = catalog.load(changed);
    ASSERT_TRUE(loaded);
    EXPECT_FALSE(loaded->skills);
    // nullopt: no skills key (a server without the extension).
    ASSERT_TRUE(catalog.save(server, two_tools(), std::nullopt, &error)) << error;
    std::ifstream in(catalog.file("lazyserver"));
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text.find("\"skills\""), std::string::npos) << text;
}

TEST(ToolCatalog, AFileWithoutSkillsFromAnOlderVersionStillLoads) {
    CatalogDir dir;
    host::ToolCatalog catalog(dir.path);
    fs::create_directories(dir.path);
    auto server = lazy_server();
    std::ofstream(dir.path / "lazyserver.json")
        << R"({"server": "lazyserver", "configHash": ")" << host::catalog_hash(server)
        << R"(", "updated": 1700000000, "tools": [{"name": "echo_1", "inputSchema": {"type": "object"}}]})";
    auto loaded = catalog.load(server);
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->tools.size(), 1u);
    EXPECT_EQ(loaded->tools[0].name, "echo_1");
    EXPECT_EQ(loaded->updated, 1700000000);
    EXPECT_FALSE(loaded->skills);
    // Offering skills from it finds none, and says nothing.
    std::vector<Definition> defs;
    std::vector<std::string> notes;
    add_catalog_skills(server, catalog, defs, notes);
    EXPECT_TRUE(defs.empty());
    EXPECT_TRUE(notes.empty());
    // A malformed entry in a skills list is left out; the others load.
    std::ofstream(dir.path / "lazyserver.json")
        << R"({"server": "lazyserver", "configHash": ")" << host::catalog_hash(server)
        << R"(", "tools": [], "skills": [{"uri": "skill://x/SKILL.md"}, 7]})";
    loaded = catalog.load(server);
    ASSERT_TRUE(loaded && loaded->skills);
    EXPECT_TRUE(loaded->skills->empty());
}

TEST(CatalogSkills, AreServedSkillDefinitionsMarkedAsFromTheCatalogAndALocalNameWins) {
    CatalogDir dir;
    host::ToolCatalog catalog(dir.path);
    auto server = lazy_server();
    auto skills = one_skill("pdf-forms");
    auto other = one_skill("report");
    skills.push_back(other.front());
    std::string error;
    ASSERT_TRUE(catalog.save(server, two_tools(), skills, &error)) << error;
    std::vector<Definition> defs(1);
    defs[0].kind = Definition::Kind::skill;
    defs[0].name = "report";  // a local skill of the same name
    std::vector<std::string> notes;
    add_catalog_skills(server, catalog, defs, notes);
    ASSERT_EQ(defs.size(), 3u);
    EXPECT_EQ(defs[1].name, "pdf-forms");
    EXPECT_EQ(defs[1].origin, "mcp:lazyserver");
    EXPECT_EQ(defs[1].required, std::vector<std::string>{"lazyserver"});
    EXPECT_TRUE(defs[1].from_catalog);
    ASSERT_TRUE(defs[1].served);
    EXPECT_EQ(defs[1].served->uri, "skill://pdf-forms/SKILL.md");
    EXPECT_TRUE(defs[1].body.empty());  // nothing read before it runs
    EXPECT_EQ(defs[2].name, "lazyserver-report");
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("offered as \"lazyserver-report\""), std::string::npos) << notes[0];
    // A stale entry (the command changed) offers nothing.
    auto changed = server;
    changed.command = "other";
    std::vector<Definition> none;
    add_catalog_skills(changed, catalog, none, notes);
    EXPECT_TRUE(none.empty());
}

TEST(ConfigToolSearch, IsAKnownTopLevelKey) {
    auto c = host::parse_config(R"({"mcpServers": {}, "toolSearch": true})", "t.json");
    EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
    EXPECT_EQ(c.tool_search, true);
    c = host::parse_config(R"({"mcpServers": {}})", "t.json");
    EXPECT_FALSE(c.tool_search);
    c = host::parse_config(R"({"mcpServers": {}, "toolSearch": "yes"})", "t.json");
    EXPECT_FALSE(c.tool_search);
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_NE(c.warnings[0].find("toolSearch"), std::string::npos);
}

}  // namespace
}  // namespace switchboard::agent
