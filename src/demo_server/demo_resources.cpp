#include "demo_server.hpp"

#include <fmt/format.h>

namespace switchboard::demo {

namespace json = boost::json;
using boost::asio::awaitable;
using jsonrpc::Outcome;

namespace {

constexpr std::string_view readme_text =
    "Switchboard demo MCP server\n"
    "\n"
    "Tools: echo, add, slow (progress, cancellable), fail, image, structured, bump, write_stderr, exit.\n"
    "Resources: demo://text/readme, demo://binary/logo.png, demo://counter, demo://items/1 ... demo://items/10.\n"
    "Template: demo://greeting/{name}. Prompts: greet, summarize, plain.\n";

json::object contents(std::string_view uri, std::string_view mime, std::string_view field, std::string_view value) {
    json::array list;
    list.push_back(json::object{{"uri", uri}, {"mimeType", mime}, {field, value}});
    return json::object{{"contents", std::move(list)}};
}

json::object resource(std::string_view uri, std::string_view name, std::string_view title, std::string_view description,
                      std::string_view mime) {
    return json::object{
        {"uri", uri}, {"name", name}, {"title", title}, {"description", description}, {"mimeType", mime}};
}

}  // namespace

void add_demo_resources(mcp::Server& server, DemoState& state) {
    server.add_resource(
        resource("demo://text/readme", "readme", "Demo README", "What this demo server offers", "text/plain"),
        [](const std::string& uri, const mcp::Server::Args&) -> awaitable<Outcome<json::object>> {
            co_return contents(uri, "text/plain", "text", readme_text);
        });

    auto logo = resource("demo://binary/logo.png", "logo.png", "Demo logo", "A 1x1 PNG image", "image/png");
    logo["size"] = png_size;
    server.add_resource(std::move(logo),
                        [](const std::string& uri, const mcp::Server::Args&) -> awaitable<Outcome<json::object>> {
                            co_return contents(uri, "image/png", "blob", png_base64);
                        });

    server.add_resource(resource("demo://counter", "counter", "Counter",
                                 "The value incremented by the bump tool (subscribable)", "text/plain"),
                        [&state](const std::string& uri, const mcp::Server::Args&) -> awaitable<Outcome<json::object>> {
                            co_return contents(uri, "text/plain", "text", std::to_string(state.counter));
                        });

    for (int i = 1; i <= 10; ++i) {
        server.add_resource(resource(fmt::format("demo://items/{}", i), fmt::format("item-{}", i),
                                     fmt::format("Item {}", i), fmt::format("Demo item number {}", i), "text/plain"),
                            [i](const std::string& uri, const mcp::Server::Args&) -> awaitable<Outcome<json::object>> {
                                co_return contents(uri, "text/plain", "text", fmt::format("item {}", i));
                            });
    }

    json::object greeting{{"uriTemplate", "demo://greeting/{name}"},
                          {"name", "greeting"},
                          {"title", "Greeting"},
                          {"description", "A greeting for {name}"},
                          {"mimeType", "text/plain"}};
    server.add_resource_template(
        std::move(greeting),
        [](const std::string& uri, const mcp::Server::Args& vars) -> awaitable<Outcome<json::object>> {
            auto it = vars.find("name");
            std::string name = it != vars.end() ? it->second : std::string("world");
            co_return contents(uri, "text/plain", "text", fmt::format("Hello, {}!", name));
        });
}

}  // namespace switchboard::demo
