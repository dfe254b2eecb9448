// The tool index: naming is order-independent, safe for LLM APIs, collision-free, and honours the config filters.
#include <switchboard/host/tool_index.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace switchboard::host {
namespace {

mcp::Tool tool(std::string name) {
    mcp::Tool t;
    t.name = std::move(name);
    t.description = "d";
    return t;
}

ServerTools server(std::string name, std::vector<std::string> tools) {
    ServerTools s;
    s.server = std::move(name);
    for (auto& t : tools) s.tools.push_back(tool(t));
    return s;
}

std::vector<std::string> names(const ToolIndex& index) {
    std::vector<std::string> out;
    for (const auto& t : index.tools()) out.push_back(t.name + "=" + t.server + ":" + t.tool->name);
    return out;
}

TEST(ToolIndex, UniqueNamesStayBareSharedNamesArePrefixedForEveryServer) {
    auto index = ToolIndex::build({server("a", {"echo", "add"}), server("b", {"echo", "search"})});
    EXPECT_EQ(names(index),
              (std::vector<std::string>{"a__echo=a:echo", "add=a:add", "b__echo=b:echo", "search=b:search"}));
    ASSERT_NE(index.find("a__echo"), nullptr);
    EXPECT_EQ(index.find("a__echo")->server, "a");
    EXPECT_EQ(index.find("echo"), nullptr);  // no server silently wins the bare name
    EXPECT_EQ(index.exposed_name("b", "echo"), "b__echo");
}

TEST(ToolIndex, TheResultDoesNotDependOnTheOrderServersConnectedIn) {
    std::vector<ServerTools> servers{server("alpha", {"echo", "x.y", "x_y"}), server("beta", {"echo", "x.y"}),
                                     server("gamma", {"z", "echo", std::string(80, 'q')}),
                                     server("delta", {std::string(80, 'q'), "x_y"})};
    const auto expected = names(ToolIndex::build(servers));
    std::mt19937 rng(7);
    for (int i = 0; i < 20; ++i) {
        std::shuffle(servers.begin(), servers.end(), rng);
        for (auto& s : servers) std::shuffle(s.tools.begin(), s.tools.end(), rng);
        EXPECT_EQ(names(ToolIndex::build(servers)), expected);
    }
}

TEST(ToolIndex, NamesAreMadeSafeForLlmApis) {
    EXPECT_EQ(safe_tool_name("get.weather"), "get_weather");
    EXPECT_EQ(safe_tool_name("tool with spaces/ü"), "tool_with_spaces___");
    EXPECT_TRUE(is_safe_tool_name(safe_tool_name("")));
    const auto long_name = safe_tool_name(std::string(100, 'a'));
    EXPECT_EQ(long_name.size(), max_tool_name_length);
    EXPECT_TRUE(is_safe_tool_name(long_name));
    // Two long names with the same 64-character prefix stay apart.
    EXPECT_NE(safe_tool_name(std::string(70, 'a') + "1"), safe_tool_name(std::string(70, 'a') + "2"));
    EXPECT_FALSE(is_safe_tool_name("a.b"));
    EXPECT_FALSE(is_safe_tool_name(std::string(65, 'a')));

    auto index = ToolIndex::build({server("my server.v2", {"do it", "echo"}), server("other", {"echo"})});
    for (const auto& t : index.tools()) EXPECT_TRUE(is_safe_tool_name(t.name)) << t.name;
    EXPECT_NE(index.find("do_it"), nullptr);
    EXPECT_NE(index.find("my_server_v2__echo"), nullptr);
}

TEST(ToolIndex, NamesThatCollideAfterSanitizingOrShorteningGetDistinctSuffixes) {
    const std::string long_a = std::string(70, 'x') + "_one";
    const std::string long_b = std::string(70, 'x') + "_two";
    auto index =
        ToolIndex::build({server("s", {"a.b", "a_b", long_a, long_b}), server("t", {"a__b"}), server("a", {"b"})});
    std::set<std::string> seen;
    for (const auto& t : index.tools()) {
        EXPECT_TRUE(is_safe_tool_name(t.name)) << t.name;
        EXPECT_TRUE(seen.insert(t.name).second) << "duplicate " << t.name;
    }
    EXPECT_EQ(index.size(), 6u);
    // Every tool stays reachable under its own name.
    for (const auto& [srv, tl] : std::vector<std::pair<std::string, std::string>>{
             {"s", "a.b"}, {"s", "a_b"}, {"s", long_a}, {"s", long_b}, {"t", "a__b"}, {"a", "b"}}) {
        auto exposed = index.exposed_name(srv, tl);
        ASSERT_TRUE(exposed) << srv << ":" << tl;
        EXPECT_EQ(index.find(*exposed)->tool->name, tl);
    }
    // A prefixed name keeps a readable server and tool part even when shortened.
    auto prefixed =
        ToolIndex::build({server(std::string(50, 's'), {std::string(40, 't')}), server("b", {std::string(40, 't')})});
    for (const auto& t : prefixed.tools()) {
        EXPECT_TRUE(is_safe_tool_name(t.name)) << t.name;
        EXPECT_NE(t.name.find("__tttt"), std::string::npos) << t.name;
    }
}

TEST(ToolIndex, AllowedAndExcludedToolsFilterBeforeNaming) {
    auto a = server("a", {"echo", "add", "rm"});
    a.excluded = {"rm"};
    auto b = server("b", {"echo", "search"});
    b.allowed = {"search"};
    auto index = ToolIndex::build({a, b});
    // b's echo is filtered out, so a's echo is the only one and keeps its bare name.
    EXPECT_EQ(names(index), (std::vector<std::string>{"add=a:add", "echo=a:echo", "search=b:search"}));
    EXPECT_TRUE(tool_allowed("x", {}, {}));
    EXPECT_FALSE(tool_allowed("x", {"x"}, {"x"}));  // excluded wins
    EXPECT_FALSE(tool_allowed("y", {"x"}, {}));
}

TEST(ToolIndex, AServerListingANameTwiceContributesItOnce) {
    auto index = ToolIndex::build({server("a", {"echo", "echo"})});
    EXPECT_EQ(names(index), (std::vector<std::string>{"echo=a:echo"}));
}

}  // namespace
}  // namespace switchboard::host
