// agent::parse_definition and agent::discover: every frontmatter form, errors at the file's line, discovery order.
#include <switchboard/agent/definition.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

namespace switchboard::agent {
namespace {

namespace fs = std::filesystem;
using Kind = Definition::Kind;
using Strings = std::vector<std::string>;

Definition parse_ok(std::string_view text, Kind kind = Kind::agent,
                    const fs::path& path = "/p/.switchboard/agents/a.md") {
    std::string error;
    auto d = parse_definition(text, kind, path, error);
    EXPECT_TRUE(d) << error;
    EXPECT_TRUE(error.empty()) << error;
    return d ? *d : Definition{};
}

std::string parse_error(std::string_view text, Kind kind = Kind::agent,
                        const fs::path& path = "/p/.switchboard/agents/a.md") {
    std::string error;
    auto d = parse_definition(text, kind, path, error);
    EXPECT_FALSE(d) << "parsed: " << text;
    return error;
}

TEST(Definition, SwitchboardAgentWithMcpMap) {
    const auto d = parse_ok(R"(---
name: researcher
description: Looks things up.
model: gpt-4o
tools: [read_*, "notes__search"]
maxTurns: 12
mcp:
  required: [notes]
  optional: [weather, maps]
---

You are a researcher.
Be brief.
)");
    EXPECT_EQ(d.kind, Kind::agent);
    EXPECT_EQ(d.name, "researcher");
    EXPECT_EQ(d.description, "Looks things up.");
    EXPECT_EQ(d.model, "gpt-4o");
    ASSERT_TRUE(d.tools);
    EXPECT_EQ(*d.tools, (Strings{"read_*", "notes__search"}));
    EXPECT_EQ(d.max_turns, 12);
    EXPECT_EQ(d.required, (Strings{"notes"}));
    EXPECT_EQ(d.optional, (Strings{"weather", "maps"}));
    EXPECT_TRUE(d.inline_servers.empty());
    EXPECT_TRUE(d.fork);
    EXPECT_EQ(d.body, "You are a researcher.\nBe brief.");
    EXPECT_EQ(d.line, 1);
    EXPECT_EQ(d.origin, "switchboard");
    EXPECT_EQ(d.path, fs::path("/p/.switchboard/agents/a.md"));
}

TEST(Definition, McpListIsRequired) {
    const auto d = parse_ok("---\ndescription: x\nmcp: [a, b, a]\n---\nbody\n");
    EXPECT_EQ(d.required, (Strings{"a", "b"}));
    EXPECT_TRUE(d.optional.empty());
    EXPECT_EQ(d.name, "a");  // the file's stem
}

TEST(Definition, ClaudeCodeAgentFile) {
    const auto d = parse_ok(R"(---
name: code-reviewer
description: Expert code review specialist. Use proactively after writing code.
tools: Read, Grep, Glob, Bash(git diff *)
model: inherit
color: purple
permissionMode: default
hooks:
  PreToolUse:
    - matcher: Bash
mcpServers:
  - github
  - playwright:
      type: stdio
      command: npx
      args: ["-y", "@playwright/mcp@latest"]
      env:
        DEBUG: "1"
        PORT: 9000
---
You are a senior code reviewer.
)",
                            Kind::agent, "/home/u/.claude/agents/code-reviewer.md");
    EXPECT_EQ(d.name, "code-reviewer");
    EXPECT_EQ(d.origin, "claude");
    ASSERT_TRUE(d.tools);
    EXPECT_EQ(*d.tools, (Strings{"Read", "Grep", "Glob", "Bash(git diff *)"}));
    EXPECT_EQ(d.model, "");  // inherit
    EXPECT_EQ(d.required, (Strings{"github", "playwright"}));
    ASSERT_EQ(d.inline_servers.size(), 1u);
    const auto& s = d.inline_servers[0];
    EXPECT_EQ(s.name, "playwright");
    EXPECT_EQ(s.type, host::TransportKind::stdio);
    EXPECT_EQ(s.command, "npx");
    EXPECT_EQ(s.args, (Strings{"-y", "@playwright/mcp@latest"}));
    EXPECT_EQ(s.env.at("DEBUG"), "1");
    EXPECT_EQ(s.env.at("PORT"), "9000");  // a number, as in a hand-written config (with a warning)
    EXPECT_TRUE(s.lazy);
    EXPECT_TRUE(s.invalid.empty()) << s.invalid;
    EXPECT_EQ(d.body, "You are a senior code reviewer.");
}

TEST(Definition, McpServersAsMapAndWithoutTools) {
    const auto d = parse_ok(R"(---
description: x
mcpServers:
  github:
  remote:
    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer t"}
---
)");
    EXPECT_FALSE(d.tools);  // absent: every main-context tool
    EXPECT_EQ(d.required, (Strings{"github", "remote"}));
    ASSERT_EQ(d.inline_servers.size(), 1u);
    EXPECT_EQ(d.inline_servers[0].type, host::TransportKind::http);
    EXPECT_EQ(d.inline_servers[0].headers.at("Authorization"), "Bearer t");
    EXPECT_TRUE(d.inline_servers[0].lazy);
}

TEST(Definition, InlineServerProblemsAreWarnings) {
    const auto d = parse_ok("---\ndescription: x\nmcpServers:\n  - bad:\n      comand: npx\n---\n");
    ASSERT_EQ(d.inline_servers.size(), 1u);
    EXPECT_FALSE(d.inline_servers[0].invalid.empty());
    ASSERT_EQ(d.warnings.size(), 2u);  // the unknown key, and that it cannot start
    EXPECT_NE(d.warnings[0].find("a.md:5: server \"bad\": unknown key \"comand\""), std::string::npos) << d.warnings[0];
    EXPECT_NE(d.warnings[1].find("a.md:5: server \"bad\": needs \"command\""), std::string::npos) << d.warnings[1];
}

TEST(Definition, ToolsForms) {
    EXPECT_EQ(*parse_ok("---\ndescription: x\ntools: []\n---\n").tools, Strings{});
    EXPECT_EQ(*parse_ok("---\ndescription: x\ntools: Read\n---\n").tools, Strings{"Read"});
    EXPECT_EQ(*parse_ok("---\ndescription: x\ntools:\n  - a\n  - b\n---\n").tools, (Strings{"a", "b"}));
    EXPECT_FALSE(parse_ok("---\ndescription: x\ntools:\n---\n").tools);  // written without a value: absent
}

TEST(Definition, SkillDefaults) {
    const auto d = parse_ok(
        "---\nallowed-tools: Read Grep Bash(git diff *)\n---\n\nSummarise the diff.\nBriefly.\n\n"
        "## Steps\n1. Read it.\n",
        Kind::skill, "/p/.claude/skills/diff-summary/SKILL.md");
    EXPECT_EQ(d.kind, Kind::skill);
    EXPECT_EQ(d.name, "diff-summary");  // the folder
    EXPECT_EQ(d.description, "Summarise the diff. Briefly.");
    EXPECT_FALSE(d.fork);
    EXPECT_EQ(d.allowed_tools, (Strings{"Read", "Grep", "Bash(git diff *)"}));
}

TEST(Definition, SkillForks) {
    const auto ctx = parse_ok("---\nname: s\ndescription: d\ncontext: fork\nagent: researcher\n---\nDo it.\n",
                              Kind::skill, "/p/.switchboard/skills/s/SKILL.md");
    EXPECT_TRUE(ctx.fork);
    EXPECT_EQ(ctx.run_as, "researcher");
    const auto mcp = parse_ok("---\ndescription: d\nmcp: [weather]\n---\n", Kind::skill, "/p/skills/forecast/SKILL.md");
    EXPECT_TRUE(mcp.fork);
    EXPECT_EQ(mcp.required, Strings{"weather"});
    EXPECT_FALSE(parse_ok("---\ndescription: d\ncontext: inherit\n---\n", Kind::skill, "/p/skills/x/SKILL.md").fork);
}

TEST(Definition, NoFrontmatter) {
    const auto skill = parse_ok("Just instructions.\n", Kind::skill, "/p/skills/plain/SKILL.md");
    EXPECT_EQ(skill.name, "plain");
    EXPECT_EQ(skill.description, "Just instructions.");
    EXPECT_EQ(skill.body, "Just instructions.");
    EXPECT_NE(parse_error("Just a prompt.\n").find("a.md:1: an agent needs a \"description\""), std::string::npos);
}

TEST(Definition, CrLfAndBom) {
    const auto d = parse_ok("\xEF\xBB\xBF---\r\nname: x\r\ndescription: y\r\n---\r\nbody\r\n");
    EXPECT_EQ(d.name, "x");
    EXPECT_EQ(d.description, "y");
    EXPECT_EQ(d.body, "body");
}

TEST(Definition, ErrorsNameTheFileLine) {
    // Line numbers are the file's: the `---` line is 1.
    EXPECT_EQ(parse_error("---\nname: ok\ndescription: x\nmaxTurns: 0\n---\n"),
              "/p/.switchboard/agents/a.md:4: \"maxTurns\" must be a positive integer");
    EXPECT_EQ(parse_error("---\ndescription: x\nmaxTurns: many\n---\n"),
              "/p/.switchboard/agents/a.md:3: \"maxTurns\" must be a positive integer");
    EXPECT_EQ(parse_error("---\ndescription: x\n\nmcp:\n  required: notes\n---\n"),
              "/p/.switchboard/agents/a.md:5: \"mcp.required\" must be a list of server names");
    EXPECT_EQ(parse_error("---\ndescription: x\nmcp:\n  needed: [a]\n---\n"),
              "/p/.switchboard/agents/a.md:4: \"mcp\" has only \"required\" and \"optional\", not \"needed\"");
    EXPECT_EQ(parse_error("---\ndescription: x\ntools: {a: 1}\n---\n"),
              "/p/.switchboard/agents/a.md:3: \"tools\" must be a list of strings");
    EXPECT_EQ(parse_error("---\ndescription: [a]\n---\n"),
              "/p/.switchboard/agents/a.md:2: \"description\" must be a string");
    EXPECT_EQ(parse_error("---\ndescription: x\nmcpServers: github\n---\n"),
              "/p/.switchboard/agents/a.md:3: \"mcpServers\" must be a list of server names and {name: config} maps");
    EXPECT_EQ(parse_error("---\ndescription: x\nmcpServers:\n  - gh: [1]\n---\n"),
              "/p/.switchboard/agents/a.md:4: \"mcpServers\": server \"gh\" must be a config mapping");
    EXPECT_EQ(
        parse_error("---\ndescription: x\nagent: a\n\ncontext: sideways\n---\n", Kind::skill, "/p/skills/s/SKILL.md"),
        "/p/skills/s/SKILL.md:5: \"context\" must be \"fork\" (or \"inherit\"), not \"sideways\"");
    EXPECT_EQ(parse_error("name: x\n---\n---\njust: text\n"),
              "/p/.switchboard/agents/a.md:1: an agent needs a "
              "\"description\"");
    EXPECT_EQ(parse_error("---\nname: x\n"),
              "/p/.switchboard/agents/a.md:1: the frontmatter has no closing \"---\" line");
    EXPECT_EQ(parse_error("---\n- a\n- b\n---\n"),
              "/p/.switchboard/agents/a.md:2: the frontmatter must be a mapping of keys to values");
}

TEST(Definition, YamlSyntaxErrorLine) {
    const auto error = parse_error("---\nname: x\ndescription: y\ntools: [a, b\nmodel: m\n---\n");
    EXPECT_TRUE(error.starts_with("/p/.switchboard/agents/a.md:")) << error;
    // yaml-cpp reports the unclosed flow sequence where it gives up: within the frontmatter, after line 4.
    const auto line = std::stoi(error.substr(std::string("/p/.switchboard/agents/a.md:").size()));
    EXPECT_GE(line, 4) << error;
    EXPECT_LE(line, 6) << error;
    EXPECT_EQ(parse_error("---\ndescription: x\nname: a: b\n---\n").substr(0, 31), "/p/.switchboard/agents/a.md:3: ");
}

TEST(Definition, Names) {
    EXPECT_TRUE(is_valid_name("code-reviewer_2"));
    EXPECT_FALSE(is_valid_name(""));
    EXPECT_FALSE(is_valid_name("Code-Reviewer"));
    EXPECT_FALSE(is_valid_name("a.b"));
    EXPECT_FALSE(is_valid_name(std::string(65, 'a')));
    EXPECT_EQ(parse_error("---\ndescription: x\nname: Code Reviewer\n---\n"),
              "/p/.switchboard/agents/a.md:3: invalid name \"Code Reviewer\": use 1 to 64 of a-z, 0-9, '-' and '_'");
    // The file's stem is not normalised either.
    EXPECT_NE(parse_error("---\ndescription: x\n---\n", Kind::agent, "/p/agents/My Agent.md")
                  .find("/p/agents/My Agent.md:1: no \"name\", and the file name \"My Agent\" is not a valid name"),
              std::string::npos);
}

// ---- discovery -----------------------------------------------------------------------------------------------------

class Discover : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("switchboard-defs-" + std::to_string(::getpid()) + "-" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        options_.project_dir = root_ / "project";
        options_.config_home = root_ / "config";
        options_.home = root_ / "home";
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const fs::path& path, std::string_view text) {
        fs::create_directories(path.parent_path());
        std::ofstream(path) << text;
    }
    static std::string agent(std::string_view description) {
        return "---\ndescription: " + std::string(description) + "\n---\nprompt\n";
    }

    fs::path root_;
    DiscoveryOptions options_;
};

TEST_F(Discover, OrderAndShadowing) {
    const auto p = options_.project_dir;
    write(p / ".switchboard/agents/alpha.md", agent("project switchboard"));
    write(options_.config_home / "switchboard/agents/alpha.md", agent("user switchboard"));
    write(options_.config_home / "switchboard/agents/beta.md", agent("user switchboard"));
    write(p / ".claude/agents/beta.md", agent("project claude"));
    write(p / ".claude/agents/gamma.md", agent("project claude"));
    write(p / ".claude/agents/notes.txt", "not an agent");
    write(options_.home / ".claude/agents/gamma.md", agent("home claude"));
    write(options_.home / ".claude/agents/delta.md", agent("home claude"));
    write(p / ".switchboard/skills/forecast/SKILL.md", "---\nmcp: [weather]\n---\nForecast.\n");
    write(p / ".switchboard/skills/empty/README.md", "no SKILL.md here");
    write(options_.home / ".claude/skills/forecast/SKILL.md", "Other forecast.\n");
    write(options_.home / ".claude/skills/alpha/SKILL.md", "A skill may share an agent's name.\n");

    const auto found = discover(options_);
    EXPECT_TRUE(found.errors.empty()) << found.errors.front();
    std::vector<std::string> seen;
    for (const auto& d : found.definitions)
        seen.push_back((d.kind == Kind::agent ? "agent " : "skill ") + d.name + " " + d.description);
    EXPECT_EQ(seen, (Strings{"agent alpha project switchboard", "agent beta user switchboard",
                             "agent gamma project claude", "agent delta home claude", "skill forecast Forecast.",
                             "skill alpha A skill may share an agent's name."}));
    EXPECT_EQ(found.definitions[0].origin, "switchboard");
    EXPECT_EQ(found.definitions[2].origin, "claude");
    EXPECT_EQ(found.definitions[0].path, p / ".switchboard/agents/alpha.md");
    ASSERT_EQ(found.notes.size(), 4u);
    EXPECT_EQ(found.notes[0], (options_.config_home / "switchboard/agents/alpha.md").string() +
                                  ": agent \"alpha\" shadowed by " + (p / ".switchboard/agents/alpha.md").string());
    EXPECT_NE(found.notes[3].find("skill \"forecast\" shadowed by"), std::string::npos) << found.notes[3];
}

TEST_F(Discover, BadFilesAreErrorsAndTheOthersLoad) {
    const auto dir = options_.project_dir / ".switchboard/agents";
    write(dir / "good.md", agent("fine"));
    write(dir / "bad.md", "---\ndescription: x\nmaxTurns: -1\n---\n");
    write(dir / "huge.md", std::string(max_definition_size + 1, 'x'));
    const auto found = discover(options_);
    ASSERT_EQ(found.definitions.size(), 1u);
    EXPECT_EQ(found.definitions[0].name, "good");
    ASSERT_EQ(found.errors.size(), 2u);
    EXPECT_EQ(found.errors[0], (dir / "bad.md").string() + ":3: \"maxTurns\" must be a positive integer");
    EXPECT_NE(found.errors[1].find("huge.md: larger than"), std::string::npos) << found.errors[1];
}

TEST_F(Discover, ProjectIsHome) {
    options_.home = options_.project_dir;  // run from ~: ~/.claude is read once
    write(options_.project_dir / ".claude/agents/one.md", agent("x"));
    const auto found = discover(options_);
    EXPECT_EQ(found.definitions.size(), 1u);
    EXPECT_TRUE(found.notes.empty());
}

TEST_F(Discover, FromEnvironment) {
    const char* old_xdg = std::getenv("XDG_CONFIG_HOME");
    const std::string saved = old_xdg ? old_xdg : "";
    ::setenv("XDG_CONFIG_HOME", "/xdg", 1);
    auto o = DiscoveryOptions::from_environment("/work");
    EXPECT_EQ(o.project_dir, fs::path("/work"));
    EXPECT_EQ(o.config_home, fs::path("/xdg"));
    ::unsetenv("XDG_CONFIG_HOME");
    o = DiscoveryOptions::from_environment("/work");
    if (const char* home = std::getenv("HOME"); home && *home) {
        EXPECT_EQ(o.home, fs::path(home));
        EXPECT_EQ(o.config_home, fs::path(home) / ".config");
    }
    if (old_xdg) ::setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace switchboard::agent
