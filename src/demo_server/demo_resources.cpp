#include "demo_server.hpp"

#include <fmt/format.h>

#include <charconv>

namespace switchboard::demo {

namespace json = boost::json;
using boost::asio::awaitable;
using jsonrpc::Outcome;

namespace {

constexpr std::string_view readme_text =
    "Switchboard demo MCP server\n"
    "\n"
    "Tools: echo, add, slow (progress, log messages, cancellable), fail, image, structured, bump, write_stderr, exit.\n"
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

// `bytes` deterministic bytes (i * 7 mod 251), written straight out as base64: the payload is never held twice. The
// bytes repeat every 251, so their base64 repeats every lcm(3, 251) = 753 bytes (1,004 characters): one period is
// encoded, then copied, which makes a 64 MiB blob cost about what copying it costs.
json::string blob_base64(std::size_t bytes) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    static constexpr std::size_t period_bytes = 753, period_chars = period_bytes / 3 * 4;
    auto byte = [](std::size_t i) { return static_cast<unsigned char>((i * 7) % 251); };
    auto encode = [&](std::size_t i, char* o) {  // the 4 characters of bytes i, i+1, i+2 (those below `bytes`)
        const bool two = i + 1 < bytes, three = i + 2 < bytes;
        const unsigned v = byte(i) << 16 | (two ? byte(i + 1) << 8 : 0u) | (three ? byte(i + 2) : 0u);
        o[0] = alphabet[v >> 18];
        o[1] = alphabet[(v >> 12) & 63];
        o[2] = two ? alphabet[(v >> 6) & 63] : '=';
        o[3] = three ? alphabet[v & 63] : '=';
    };
    json::string out;
    const std::size_t chars = (bytes + 2) / 3 * 4;
    out.reserve(chars);
    char period[period_chars];
    std::size_t i = 0;
    for (; i < bytes && i < period_bytes; i += 3) encode(i, period + i / 3 * 4);
    out.append(period, period + (i / 3 * 4));
    while (out.size() / 4 * 3 + period_bytes <= bytes) out.append(period, period + period_chars);  // whole groups only
    // The tail: whatever part of a period is left, and the padding of the last group (computed, not copied).
    for (i = out.size() / 4 * 3; i < bytes; i += 3) {
        char quad[4];
        encode(i, quad);
        out.append(quad, quad + 4);
    }
    return out;
}

}  // namespace

void add_demo_resources(mcp::StaticHandler& server, DemoState& state) {
    server.add_resource(
        resource("demo://text/readme", "readme", "Demo README", "What this demo server offers", "text/plain"),
        [](const std::string& uri, const mcp::StaticHandler::Args&, mcp::RequestContext)
            -> awaitable<Outcome<json::object>> { co_return contents(uri, "text/plain", "text", readme_text); });

    auto logo = resource("demo://binary/logo.png", "logo.png", "Demo logo", "A 1x1 PNG image", "image/png");
    logo["size"] = png_size;
    server.add_resource(std::move(logo),
                        [](const std::string& uri, const mcp::StaticHandler::Args&,
                           mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                            co_return contents(uri, "image/png", "blob", png_base64);
                        });

    server.add_resource(resource("demo://counter", "counter", "Counter",
                                 "The value incremented by the bump tool (subscribable)", "text/plain"),
                        [&state](const std::string& uri, const mcp::StaticHandler::Args&,
                                 mcp::RequestContext ctx) -> awaitable<Outcome<json::object>> {
                            auto r = contents(uri, "text/plain", "text", std::to_string(state.counter));
                            // bump changes it at any time: not to be cached (2026-07-28 requires a ttlMs, so 0;
                            // the server-wide minute would apply otherwise). Subscribers hear of each change.
                            if (ctx.era() == mcp::Era::modern) r["ttlMs"] = 0;
                            co_return r;
                        });

    for (int i = 1; i <= 10; ++i) {
        server.add_resource(resource(fmt::format("demo://items/{}", i), fmt::format("item-{}", i),
                                     fmt::format("Item {}", i), fmt::format("Demo item number {}", i), "text/plain"),
                            [i](const std::string& uri, const mcp::StaticHandler::Args&,
                                mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                                co_return contents(uri, "text/plain", "text", fmt::format("item {}", i));
                            });
    }

    json::object greeting{{"uriTemplate", "demo://greeting/{name}"},
                          {"name", "greeting"},
                          {"title", "Greeting"},
                          {"description", "A greeting for {name}"},
                          {"mimeType", "text/plain"}};
    server.add_resource_template(std::move(greeting),
                                 [](const std::string& uri, const mcp::StaticHandler::Args& vars,
                                    mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                                     auto it = vars.find("name");
                                     std::string name = it != vars.end() ? it->second : std::string("world");
                                     co_return contents(uri, "text/plain", "text", fmt::format("Hello, {}!", name));
                                 });

    if (!state.blob_template) return;
    json::object blob{{"uriTemplate", "demo://blob/{bytes}"},
                      {"name", "blob"},
                      {"title", "Blob"},
                      {"description", "{bytes} bytes of deterministic binary data (up to 256 MiB)"},
                      {"mimeType", "application/octet-stream"}};
    server.add_resource_template(
        std::move(blob),
        [](const std::string& uri, const mcp::StaticHandler::Args& vars,
           mcp::RequestContext) -> awaitable<Outcome<json::object>> {
            std::size_t bytes = 0;
            const std::string& text = vars.at("bytes");
            auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
            if (ec != std::errc() || p != text.data() + text.size() || bytes > (256u << 20))
                co_return jsonrpc::Error{
                    jsonrpc::code::invalid_params, "bytes must be an integer up to 268435456", {}, false};
            json::array list;
            list.push_back(json::object{{"uri", uri}, {"mimeType", "application/octet-stream"}});
            list.back().get_object()["blob"] = blob_base64(bytes);
            json::object r;
            r["contents"] = std::move(list);
            co_return r;
        });
}

}  // namespace switchboard::demo
