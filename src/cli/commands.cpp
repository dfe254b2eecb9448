#include "cli.hpp"

#include <fmt/format.h>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <map>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using host::ServerConnection;

namespace {

void print_json(const json::value& v) { fmt::print("{}\n", json::serialize(v)); }

std::string first_line(const std::string& s, std::size_t max = 80) {
    auto line = s.substr(0, s.find('\n'));
    return line.size() > max ? line.substr(0, max - 1) + "…" : line;
}

host::ConnectOptions listing(bool tools, bool resources, bool prompts) {
    host::ConnectOptions o;
    o.list_tools = tools;
    o.list_resources = resources;
    o.list_prompts = prompts;
    return o;
}

// Reports servers that failed, on stderr, so that listings on stdout stay clean.
void report_failures(const std::vector<ServerConnection>& servers) {
    for (const auto& s : servers)
        if (s.phase == ServerConnection::Phase::error)
            fmt::print(stderr, "switchboard: server \"{}\" failed: {}\n", s.config->name, s.error);
}

bool any_failed(const std::vector<ServerConnection>& servers) {
    return std::any_of(servers.begin(), servers.end(),
                       [](const auto& s) { return s.phase == ServerConnection::Phase::error; });
}

// Connects the one named server (no listings) or explains why not.
awaitable<std::optional<ServerConnection>> connect_named(const host::Config& config, const std::string& name,
                                                         host::ConnectOptions options) {
    const auto* sc = config.find(name);
    if (!sc) {
        std::vector<std::string> names;
        for (const auto& s : config.servers) names.push_back(s.name);
        fmt::print(stderr, "switchboard: no server \"{}\" in {} (servers: {})\n", name, config.source,
                   fmt::join(names, ", "));
        co_return std::nullopt;
    }
    auto ex = co_await asio::this_coro::executor;
    auto s = co_await host::connect_server(ex, *sc, options);
    if (s.phase != ServerConnection::Phase::connected) {
        fmt::print(stderr, "switchboard: server \"{}\" failed: {}\n", name, s.error);
        co_return std::nullopt;
    }
    co_return s;
}

awaitable<void> close_one(ServerConnection& s) {
    if (s.session) co_await s.session->close();
}

}  // namespace

std::vector<IndexedTool> index_tools(const std::vector<ServerConnection>& servers) {
    std::map<std::string, int> count;
    for (const auto& s : servers)
        for (const auto& t : s.tools) ++count[t.name];
    std::vector<IndexedTool> out;
    for (const auto& s : servers)
        for (const auto& t : s.tools)
            out.push_back({count[t.name] > 1 ? s.config->name + "__" + t.name : t.name, &s, &t});
    return out;
}

std::string render_content(const std::vector<mcp::Content>& content) {
    std::vector<std::string> parts;
    for (const auto& c : content) {
        if (c.type == "text") {
            parts.push_back(c.text());
        } else if (c.type == "image" || c.type == "audio") {
            parts.push_back(fmt::format("[{}, {} bytes]", c.mime_type().empty() ? c.type : c.mime_type(),
                                        mcp::base64_decoded_size(c.data())));
        } else if (c.type == "resource_link") {
            parts.push_back(fmt::format("[resource link: {}]", mcp::string_field(c.raw, "uri")));
        } else if (c.type == "resource") {
            const auto* r = c.raw.if_contains("resource");
            std::vector<mcp::ResourceContents> one;
            if (r) one.push_back(mcp::ResourceContents::from_json(*r));
            parts.push_back(render_contents(one));
        } else {
            parts.push_back(json::serialize(c.raw));
        }
    }
    return fmt::format("{}", fmt::join(parts, "\n"));
}

std::string render_contents(const std::vector<mcp::ResourceContents>& contents) {
    std::vector<std::string> parts;
    for (const auto& c : contents) {
        if (c.text)
            parts.push_back(*c.text);
        else if (c.blob)
            parts.push_back(fmt::format("[{}, {} bytes] {}", c.mime_type.empty() ? "binary" : c.mime_type,
                                        mcp::base64_decoded_size(*c.blob), c.uri));
        else
            parts.push_back(fmt::format("[empty] {}", c.uri));
    }
    return fmt::format("{}", fmt::join(parts, "\n"));
}

awaitable<int> status(const host::Config& config, const GlobalOptions& g) {
    auto ex = co_await asio::this_coro::executor;
    auto servers = co_await host::connect_all(ex, config, listing(true, true, true));
    if (g.json) {
        json::array arr;
        for (const auto& s : servers) {
            json::object o;
            o["name"] = s.config->name;
            o["transport"] = host::to_string(s.config->type);
            o["phase"] = host::to_string(s.phase);
            o["era"] = s.session ? json::value(mcp::to_string(s.session->era())) : json::value(nullptr);
            o["protocolVersion"] = s.session ? json::value(s.session->protocol_version()) : json::value(nullptr);
            o["tools"] = s.tools.size();
            o["resources"] = s.resources.size();
            o["prompts"] = s.prompts.size();
            o["connectMs"] = s.connect_time.count();
            o["error"] = s.error.empty() ? json::value(nullptr) : json::value(s.error);
            arr.push_back(std::move(o));
        }
        print_json(arr);
    } else {
        fmt::print("{:<20} {:<9} {:<10} {:<11} {:>5} {:>9} {:>7} {:>8}\n", "SERVER", "TRANSPORT", "PHASE", "PROTOCOL",
                   "TOOLS", "RESOURCES", "PROMPTS", "MS");
        for (const auto& s : servers) {
            fmt::print("{:<20} {:<9} {:<10} {:<11} {:>5} {:>9} {:>7} {:>8}\n", s.config->name,
                       host::to_string(s.config->type), host::to_string(s.phase),
                       s.session ? s.session->protocol_version() : "-", s.tools.size(), s.resources.size(),
                       s.prompts.size(), s.connect_time.count());
            if (!s.error.empty()) fmt::print("  error: {}\n", s.error);
        }
    }
    co_await host::close_all(servers);
    co_return any_failed(servers) ? 1 : 0;
}

awaitable<int> tools(const host::Config& config, const GlobalOptions& g) {
    auto ex = co_await asio::this_coro::executor;
    auto servers = co_await host::connect_all(ex, config, listing(true, false, false));
    report_failures(servers);
    auto index = index_tools(servers);
    if (g.json) {
        json::array arr;
        for (const auto& t : index) {
            json::object o;
            o["name"] = t.name;
            o["server"] = t.server->config->name;
            o["tool"] = t.tool->name;
            o["description"] = t.tool->description;
            o["inputSchema"] = t.tool->input_schema;
            arr.push_back(std::move(o));
        }
        print_json(arr);
    } else {
        for (const auto& t : index)
            fmt::print("{:<28} {:<16} {}\n", t.name, t.server->config->name, first_line(t.tool->description));
    }
    co_await host::close_all(servers);
    co_return any_failed(servers) ? 1 : 0;
}

awaitable<int> call(const host::Config& config, const GlobalOptions& g, CallArgs args) {
    json::error_code ec;
    auto parsed = json::parse(args.arguments, ec);
    if (ec || !parsed.is_object()) {
        fmt::print(stderr, "switchboard: the arguments must be a JSON object, e.g. '{{\"message\": \"hi\"}}'{}\n",
                   ec ? " (" + ec.message() + ")" : "");
        co_return 2;
    }
    auto ex = co_await asio::this_coro::executor;

    // "server__tool" names one server: connect only that one.
    host::Config subset;
    subset.source = config.source;
    if (auto sep = args.name.find("__"); sep != std::string::npos)
        if (const auto* sc = config.find(args.name.substr(0, sep))) subset.servers.push_back(*sc);
    const bool narrowed = !subset.servers.empty();
    auto servers = co_await host::connect_all(ex, narrowed ? subset : config, listing(true, false, false));
    auto index = index_tools(servers);
    std::string bare = narrowed ? args.name.substr(args.name.find("__") + 2) : args.name;
    auto it = std::find_if(index.begin(), index.end(), [&](const IndexedTool& t) {
        return t.name == args.name || (narrowed && t.tool->name == bare);
    });
    if (it == index.end()) {
        report_failures(servers);
        fmt::print(stderr, "switchboard: no tool \"{}\" (`switchboard tools` lists them)\n", args.name);
        co_await host::close_all(servers);
        co_return 1;
    }
    auto session = it->server->session;
    mcp::CallOptions opts;
    opts.timeout = it->server->config->tool_timeout;
    opts.on_progress = [](const jsonrpc::Progress& p) {
        if (p.total)
            fmt::print(stderr, "progress: {}/{}{}{}\n", p.progress, *p.total, p.message.empty() ? "" : " ", p.message);
        else
            fmt::print(stderr, "progress: {}{}{}\n", p.progress, p.message.empty() ? "" : " ", p.message);
    };

    // Ctrl-C (or SIGTERM) cancels the call on the server: the losing branch sends notifications/cancelled.
    using namespace asio::experimental::awaitable_operators;
    asio::signal_set signals(ex, SIGINT, SIGTERM);
    auto outcome = co_await (session->call_tool(it->tool->name, parsed.get_object(), opts) ||
                             signals.async_wait(asio::use_awaitable));
    int exit_code = 0;
    if (outcome.index() == 1) {
        fmt::print(stderr, "switchboard: call cancelled\n");
        exit_code = 130;
    } else {
        auto& r = std::get<0>(outcome);
        if (!r) {
            fmt::print(stderr, "switchboard: {} failed: {}\n", args.name, r.error().describe());
            exit_code = 1;
        } else if (g.json) {
            print_json(r->raw);
            exit_code = r->is_error ? 1 : 0;
        } else {
            auto text = render_content(r->content);
            if (text.empty() && r->structured_content) text = json::serialize(*r->structured_content);
            fmt::print("{}\n", text);
            exit_code = r->is_error ? 1 : 0;
        }
    }
    co_await host::close_all(servers);
    co_return exit_code;
}

awaitable<int> resources(const host::Config& config, const GlobalOptions& g) {
    auto ex = co_await asio::this_coro::executor;
    auto servers = co_await host::connect_all(ex, config, listing(false, true, false));
    report_failures(servers);
    if (g.json) {
        json::array arr;
        for (const auto& s : servers) {
            for (const auto& r : s.resources) {
                json::object o = r.raw;
                o["server"] = s.config->name;
                arr.push_back(std::move(o));
            }
            for (const auto& t : s.resource_templates) {
                json::object o = t.raw;
                o["server"] = s.config->name;
                arr.push_back(std::move(o));
            }
        }
        print_json(arr);
    } else {
        for (const auto& s : servers) {
            for (const auto& r : s.resources)
                fmt::print("{:<16} {:<40} {:<24} {}\n", s.config->name, r.uri, r.name, r.mime_type);
            for (const auto& t : s.resource_templates)
                fmt::print("{:<16} {:<40} {:<24} {} (template)\n", s.config->name, t.uri_template, t.name, t.mime_type);
        }
    }
    co_await host::close_all(servers);
    co_return any_failed(servers) ? 1 : 0;
}

awaitable<int> read(const host::Config& config, const GlobalOptions& g, std::string server, std::string uri) {
    auto s = co_await connect_named(config, server, listing(false, false, false));
    if (!s) co_return 1;
    auto r = co_await s->session->read_resource(uri);
    int exit_code = 0;
    if (!r) {
        fmt::print(stderr, "switchboard: reading {} failed: {}\n", uri, r.error().describe());
        exit_code = 1;
    } else if (g.json) {
        print_json(r->raw);
    } else {
        fmt::print("{}\n", render_contents(r->contents));
    }
    co_await close_one(*s);
    co_return exit_code;
}

awaitable<int> prompts(const host::Config& config, const GlobalOptions& g) {
    auto ex = co_await asio::this_coro::executor;
    auto servers = co_await host::connect_all(ex, config, listing(false, false, true));
    report_failures(servers);
    if (g.json) {
        json::array arr;
        for (const auto& s : servers)
            for (const auto& p : s.prompts) {
                json::object o = p.raw;
                o["server"] = s.config->name;
                arr.push_back(std::move(o));
            }
        print_json(arr);
    } else {
        for (const auto& s : servers)
            for (const auto& p : s.prompts) {
                std::vector<std::string> args;
                for (const auto& a : p.arguments) args.push_back(a.required ? a.name : "[" + a.name + "]");
                fmt::print("{:<16} {:<20} {:<30} {}\n", s.config->name, p.name, fmt::join(args, " "),
                           first_line(p.description, 60));
            }
    }
    co_await host::close_all(servers);
    co_return any_failed(servers) ? 1 : 0;
}

awaitable<int> prompt(const host::Config& config, const GlobalOptions& g, std::string server, std::string name,
                      std::vector<std::string> key_values) {
    std::map<std::string, std::string> args;
    for (const auto& kv : key_values) {
        auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
            fmt::print(stderr, "switchboard: prompt arguments are key=value, got \"{}\"\n", kv);
            co_return 2;
        }
        args[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    auto s = co_await connect_named(config, server, listing(false, false, false));
    if (!s) co_return 1;
    auto r = co_await s->session->get_prompt(name, args);
    int exit_code = 0;
    if (!r) {
        fmt::print(stderr, "switchboard: prompt \"{}\" failed: {}\n", name, r.error().describe());
        exit_code = 1;
    } else if (g.json) {
        print_json(r->raw);
    } else {
        if (!r->description.empty()) fmt::print("# {}\n", r->description);
        for (const auto& m : r->messages) {
            const auto* o = m.if_object();
            if (!o) continue;
            std::vector<mcp::Content> content;
            if (const auto* c = o->if_contains("content")) {
                if (c->is_array())
                    for (const auto& item : c->get_array()) content.push_back(mcp::Content::from_json(item));
                else
                    content.push_back(mcp::Content::from_json(*c));
            }
            fmt::print("[{}] {}\n", mcp::string_field(*o, "role"), render_content(content));
        }
    }
    co_await close_one(*s);
    co_return exit_code;
}

}  // namespace switchboard::cli
