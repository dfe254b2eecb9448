// MCP Apps (io.modelcontextprotocol/ui): a tool's _meta.ui, a view's _meta.ui and the gateway's ui:// URI renaming.
#include <switchboard/agent/tool_schema.hpp>
#include <switchboard/host/tool_index.hpp>
#include <switchboard/mcp/apps.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

using namespace switchboard;
namespace json = boost::json;

namespace {

mcp::Tool apps_tool(std::string_view text) { return mcp::Tool::from_json(json::parse(text)); }

}  // namespace

TEST(AppsToolUi, ReadsResourceUriAndVisibility) {
    auto t = apps_tool(R"({"name":"t","inputSchema":{"type":"object"},
        "_meta":{"ui":{"resourceUri":"ui://a/view.html","visibility":["app"]}}})");
    auto ui = mcp::tool_ui(t);
    ASSERT_TRUE(ui);
    EXPECT_EQ(ui->resource_uri, "ui://a/view.html");
    EXPECT_FALSE(ui->model);
    EXPECT_TRUE(ui->app);
    EXPECT_FALSE(mcp::model_visible(t));
    // And to_json() keeps _meta for the --json outputs and the gateway.
    EXPECT_EQ(json::serialize(t.to_json().at("_meta").at("ui").at("resourceUri")), "\"ui://a/view.html\"");
}

TEST(AppsToolUi, DefaultsToBothAndReadsTheLegacyFlatKey) {
    auto legacy = apps_tool(R"({"name":"t","_meta":{"ui/resourceUri":"ui://old/x"}})");
    ASSERT_TRUE(mcp::tool_ui(legacy));
    EXPECT_EQ(mcp::app_resource_uri(legacy), "ui://old/x");
    EXPECT_TRUE(mcp::model_visible(legacy));
    // _meta.ui's URI wins over the flat key.
    auto both = apps_tool(R"({"name":"t","_meta":{"ui":{"resourceUri":"ui://new/x"},"ui/resourceUri":"ui://old/x"}})");
    EXPECT_EQ(mcp::app_resource_uri(both), "ui://new/x");
    EXPECT_TRUE(mcp::tool_ui(both)->model);
    EXPECT_FALSE(mcp::tool_ui(apps_tool(R"({"name":"plain"})")));
    EXPECT_TRUE(mcp::model_visible(apps_tool(R"({"name":"plain"})")));
    // An empty visibility list: neither the model nor the app (a malformed entry is skipped).
    auto none = apps_tool(R"({"name":"t","_meta":{"ui":{"visibility":[3]}}})");
    EXPECT_FALSE(mcp::model_visible(none));
    EXPECT_FALSE(mcp::tool_ui(none)->app);
}

TEST(AppsViewMeta, TheReadContentsItemWinsOverTheListing) {
    auto listing = json::parse(R"({"uri":"ui://a","_meta":{"ui":{"prefersBorder":false}}})").as_object();
    auto item = json::parse(R"({"uri":"ui://a","_meta":{"ui":{"csp":{"connectDomains":["https://x"]}}}})").as_object();
    EXPECT_TRUE(mcp::view_ui_meta(item, &listing).contains("csp"));
    EXPECT_FALSE(mcp::view_ui_meta(item, &listing).contains("prefersBorder"));
    auto bare = json::parse(R"({"uri":"ui://a"})").as_object();
    EXPECT_EQ(mcp::view_ui_meta(bare, &listing).at("prefersBorder"), false);
    EXPECT_TRUE(mcp::view_ui_meta(bare, nullptr).empty());
}

TEST(AppsUiUriMap, SharedUrisArePrefixedAndResolveToTheirServer) {
    mcp::UiUriMap map;
    map.add("alpha", "ui://demo/counter.html");
    map.add("beta", "ui://demo/counter.html");
    map.add("beta", "ui://beta/only.html");
    map.add("alpha", "demo://not-ui");  // not a ui:// URI: never renamed
    EXPECT_EQ(map.exposed("alpha", "ui://demo/counter.html"), "ui://alpha__demo/counter.html");
    EXPECT_EQ(map.exposed("beta", "ui://demo/counter.html"), "ui://beta__demo/counter.html");
    EXPECT_EQ(map.exposed("beta", "ui://beta/only.html"), "ui://beta/only.html");
    auto a = map.resolve("ui://alpha__demo/counter.html");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->server, "alpha");
    EXPECT_EQ(a->uri, "ui://demo/counter.html");
    EXPECT_EQ(map.resolve("ui://beta__demo/counter.html")->server, "beta");
    EXPECT_EQ(map.resolve("ui://beta/only.html")->server, "beta");
    EXPECT_FALSE(map.resolve("ui://demo/counter.html"));  // shared: ambiguous, so only the prefixed forms route
    EXPECT_FALSE(map.resolve("ui://gamma__demo/counter.html"));
}

TEST(AppsUiUriMap, RewritesBothKeysOfAToolsMeta) {
    auto tool = json::parse(R"({"name":"t","_meta":{"ui":{"resourceUri":"ui://x/v"},"ui/resourceUri":"ui://x/v"}})")
                    .as_object();
    mcp::rewrite_tool_ui_uri(tool, [](std::string_view uri) { return mcp::prefixed_ui_uri("s", uri); });
    EXPECT_EQ(tool.at("_meta").at("ui").at("resourceUri"), "ui://s__x/v");
    EXPECT_EQ(tool.at("_meta").at("ui/resourceUri"), "ui://s__x/v");
}

TEST(AppsCapability, DeclaresTheMcpAppMimeType) {
    EXPECT_EQ(json::serialize(mcp::ui_extension_capability()), R"({"mimeTypes":["text/html;profile=mcp-app"]})");
}

TEST(AppsCapability, AClientDeclaresItWithTheAppMimeTypeOrNoList) {
    auto caps = [](std::string_view text) { return json::parse(text).as_object(); };
    EXPECT_TRUE(mcp::declares_ui(
        caps(R"({"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}})")));
    EXPECT_TRUE(mcp::declares_ui(caps(R"({"extensions":{"io.modelcontextprotocol/ui":{}}})")));
    EXPECT_FALSE(
        mcp::declares_ui(caps(R"({"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/plain"]}}})")));
    EXPECT_FALSE(mcp::declares_ui(caps(R"({"extensions":{"io.modelcontextprotocol/ui":true}})")));
    EXPECT_FALSE(mcp::declares_ui(caps(R"({"sampling":{}})")));
}

TEST(AppsVisibility, AnAppOnlyToolIsNotOfferedToTheModelButStaysInTheIndex) {
    auto list = std::make_shared<std::vector<mcp::Tool>>();
    list->push_back(
        apps_tool(R"({"name":"view","_meta":{"ui":{"resourceUri":"ui://d/v","visibility":["model","app"]}}})"));
    list->push_back(apps_tool(R"({"name":"app_step","_meta":{"ui":{"resourceUri":"ui://d/v","visibility":["app"]}}})"));
    list->push_back(apps_tool(R"({"name":"plain"})"));
    host::ServerTools st;
    st.server = "demo";
    st.shared = list;
    auto index = host::ToolIndex::build({st});
    EXPECT_TRUE(index.find("app_step"));  // its app calls it through the host's usual call path
    std::vector<std::string> offered;
    for (const auto& t : agent::openai_tools(index)) offered.emplace_back(t.at("function").at("name").as_string());
    EXPECT_EQ(offered, (std::vector<std::string>{"plain", "view"}));
}
