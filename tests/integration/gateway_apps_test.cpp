// MCP Apps through the gateway: `switchboard serve` in front of two instances of the official example app server
// @modelcontextprotocol/server-basic-vanillajs (tool get-time, view ui://get-time/mcp-app.html) and two demo servers
// with --apps (counter, counter_bump, csp_probe; views ui://demo/...). Every tool name and every ui:// URI clashes.
// The client is the official TypeScript SDK v2 client declaring io.modelcontextprotocol/ui
// (tests/peers/scripts/sdk_apps_client.mjs), in both protocol eras.
#include "harness.hpp"
#include "net_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

class GatewayApps : public ::testing::Test {
protected:
    static std::string q(const std::string& s) { return json::serialize(json::value(s)); }

    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-gateway-apps-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
        const auto basic =
            std::string(PEERS_DIR) + "/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js";
        auto basic_entry = [&] {
            return R"({"command": )" + q(peers_node()) + R"(, "args": [)" + q(basic) +
                   R"(, "--stdio"], "startupTimeoutMs": 60000})";
        };
        auto demo_entry = [&](const std::string& name) {
            return R"({"command": )" + q(demo_server()) + R"(, "args": ["--apps", "--name", )" + q(name) + "]}";
        };
        std::ofstream(dir_ / "config.json")
            << R"({"mcpServers": {"basic1": )" << basic_entry() << R"(, "basic2": )" << basic_entry()
            << R"(, "alpha": )" << demo_entry("alpha") << R"(, "beta": )" << demo_entry("beta") << "}}";
        gateway_ =
            start_listening(SWITCHBOARD_CLI, {"--config", (dir_ / "config.json").string(), "serve", "--port", "0"});
        ASSERT_TRUE(gateway_);
    }
    void TearDown() override {
        gateway_.reset();
        fs::remove_all(dir_);
    }

    json::object client(const std::string& era, const std::string& calls, bool declares_ui = true) {
        std::string out;
        const auto cmd = std::string(declares_ui ? "" : "SDK_APPS_NO_UI=1 ") + peers_node() + " " + PEERS_DIR +
                         "/scripts/sdk_apps_client.mjs " + gateway_->url + " " + era + " " + calls;
        EXPECT_EQ(run_command(cmd + " 2>&1", out), 0) << out << gateway_->log();
        json::error_code ec;
        auto v = json::parse(out, ec);
        EXPECT_FALSE(ec) << out << gateway_->log();
        return ec || !v.is_object() ? json::object() : v.as_object();
    }

    static std::string uri_of(const json::object& v, const std::string& tool) {
        const auto& meta = v.at("tools").at(tool);
        if (!meta.is_object()) return "(no _meta)";
        return std::string(meta.at("ui").at("resourceUri").as_string());
    }

    fs::path dir_;
    std::unique_ptr<ListeningServer> gateway_;
};

TEST_F(GatewayApps, TheSdkClientSeesRenamedViewsReadsEachFromItsServerAndCallsEachAppsTools) {
    int bumps = 0;
    for (const std::string era : {"legacy", "modern"}) {
        SCOPED_TRACE(era);
        auto v = client(era, R"('alpha__counter_bump={"by":2}' 'beta__counter_bump={"by":5}' 'alpha__counter={}' )"
                             R"('basic1__get-time={}' 'basic2__get-time={}')");
        ASSERT_TRUE(v.contains("tools")) << json::serialize(v);
        ++bumps;
        // The gateway declares the extension.
        EXPECT_TRUE(v.at("extensions").as_object().contains("io.modelcontextprotocol/ui")) << json::serialize(v);
        // Shared URIs become ui://<server>__<authority><path>, in _meta.ui and the legacy flat key alike.
        EXPECT_EQ(uri_of(v, "alpha__counter"), "ui://alpha__demo/counter.html");
        EXPECT_EQ(uri_of(v, "beta__counter"), "ui://beta__demo/counter.html");
        EXPECT_EQ(uri_of(v, "beta__counter_bump"), "ui://beta__demo/counter.html");
        EXPECT_EQ(uri_of(v, "basic1__get-time"), "ui://basic1__get-time/mcp-app.html");
        EXPECT_EQ(uri_of(v, "basic2__get-time"), "ui://basic2__get-time/mcp-app.html");
        EXPECT_EQ(v.at("tools").at("alpha__counter").at("ui/resourceUri"), "ui://alpha__demo/counter.html");
        // The app-only tool stays listed (its app calls it) with its visibility.
        EXPECT_EQ(json::serialize(v.at("tools").at("alpha__counter_bump").at("ui").at("visibility")), R"(["app"])");
        // resources/list carries the same renamed URIs, one per server.
        const auto& resources = v.at("resources").as_array();
        for (const auto* uri : {"ui://alpha__demo/counter.html", "ui://beta__demo/csp-probe.html",
                                "ui://basic1__get-time/mcp-app.html", "ui://basic2__get-time/mcp-app.html"})
            EXPECT_NE(std::find(resources.begin(), resources.end(), json::value(uri)), resources.end()) << uri;
        // Each view is read from its own server (the demo writes its --name into the page), under the asked URI,
        // with the read item's _meta.ui.
        const auto& views = v.at("views").as_object();
        ASSERT_EQ(views.size(), 6u) << json::serialize(v);
        for (const std::string server : {"alpha", "beta"}) {
            const auto& view = views.at("ui://" + server + "__demo/counter.html").as_object();
            EXPECT_EQ(view.at("server"), json::value(server));
            EXPECT_EQ(view.at("uri"), json::value("ui://" + server + "__demo/counter.html"));
            EXPECT_EQ(view.at("mimeType"), "text/html;profile=mcp-app");
            EXPECT_EQ(view.at("meta").at("ui").at("prefersBorder"), true);
        }
        for (const std::string server : {"basic1", "basic2"}) {
            const auto& view = views.at("ui://" + server + "__get-time/mcp-app.html").as_object();
            EXPECT_TRUE(view.at("html").as_bool());
            EXPECT_EQ(view.at("mimeType"), "text/html;profile=mcp-app");
        }
        // Each app's tools reach their own upstream: the two counters move apart.
        const auto& calls = v.at("calls").as_object();
        EXPECT_EQ(calls.at("alpha__counter_bump").at("structured").at("count"), 2 * bumps);
        EXPECT_EQ(calls.at("beta__counter_bump").at("structured").at("count"), 5 * bumps);
        EXPECT_EQ(calls.at("alpha__counter").at("text"), json::value("counter = " + std::to_string(2 * bumps)));
        EXPECT_TRUE(calls.at("basic1__get-time").at("structured").as_object().contains("time"));
        EXPECT_TRUE(calls.at("basic2__get-time").at("structured").as_object().contains("time"));
    }
}

// The same servers straight from the CLI (no gateway: the views keep their own URIs).
// A host that renders no views is not shown app-only tools (its model would get them) and cannot call them; the
// other app tools stay, as plain tools.
TEST_F(GatewayApps, AClientWithoutTheExtensionIsNeitherShownNorLetCallAppOnlyTools) {
    for (const std::string era : {"legacy", "modern"}) {
        SCOPED_TRACE(era);
        const auto v = client(era, R"('alpha__counter_bump={"by":1}' 'alpha__counter={}')", false);
        ASSERT_TRUE(v.contains("tools")) << json::serialize(v);
        const auto& tools = v.at("tools").as_object();
        EXPECT_FALSE(tools.contains("alpha__counter_bump")) << json::serialize(v);
        EXPECT_FALSE(tools.contains("beta__counter_bump")) << json::serialize(v);
        EXPECT_TRUE(tools.contains("alpha__counter")) << json::serialize(v);
        EXPECT_TRUE(tools.contains("basic1__get-time")) << json::serialize(v);
        const auto& calls = v.at("calls").as_object();
        EXPECT_NE(std::string(calls.at("alpha__counter_bump").at("error").as_string()).find("only for its MCP App"),
                  std::string::npos)
            << json::serialize(v);
        EXPECT_EQ(calls.at("alpha__counter").at("text"), "counter = 0") << json::serialize(v);
    }
}

TEST_F(GatewayApps, TheCliMarksAppToolsKeepsTheirMetaAndNamesTheViewOfACall) {
    const auto cli = std::string(SWITCHBOARD_CLI) + " --config '" + (dir_ / "config.json").string() + "' ";
    std::string out;
    ASSERT_EQ(run_command(cli + "tools", out), 0) << out;
    auto line_of = [&out](const std::string& name) {
        auto at = out.find(name + " ");
        return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
    };
    EXPECT_NE(line_of("alpha__counter").find("[app] "), std::string::npos) << out;
    EXPECT_NE(line_of("alpha__counter_bump").find("[app only] "), std::string::npos) << out;
    EXPECT_NE(line_of("basic1__get-time").find("[app] "), std::string::npos) << out;
    EXPECT_EQ(line_of("alpha__echo").find("[app"), std::string::npos) << out;

    ASSERT_EQ(run_command(cli + "tools --json", out), 0) << out;
    bool seen = false;
    const auto listed = json::parse(out);
    for (const auto& t : listed.as_array())
        if (t.at("name") == "beta__counter_bump") {
            seen = true;
            EXPECT_EQ(t.at("_meta").at("ui").at("resourceUri"), "ui://demo/counter.html");
            EXPECT_EQ(json::serialize(t.at("_meta").at("ui").at("visibility")), R"(["app"])");
        }
    EXPECT_TRUE(seen) << out;

    ASSERT_EQ(run_command(cli + "call alpha__counter '{}'", out), 0) << out;
    EXPECT_EQ(out,
              "counter = 0\napp: ui://demo/counter.html (interactive view: run `switchboard serve`, open "
              "http://127.0.0.1:3333/#/tools/alpha__counter)\n");
    ASSERT_EQ(run_command(cli + "call alpha__echo '{\"message\": \"hi\"}'", out), 0) << out;
    EXPECT_EQ(out, "hi\n");  // not an app: no app line
}

}  // namespace
}  // namespace switchboard::test
