#include "cli.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <unistd.h>

#include <algorithm>
#include <map>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using host::Host;
using host::Phase;
using host::ServerStatus;

namespace {

constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

void print_json(const json::value& v) { fmt::print("{}\n", json::serialize(v)); }

std::string first_line(const std::string& s, std::size_t max = 80) {
    auto line = s.substr(0, s.find('\n'));
    return line.size() > max ? line.substr(0, max - 1) + "…" : line;
}

std::string phase_name(const ServerStatus& s) {
    return s.enabled ? std::string(host::to_string(s.phase)) : std::string("disabled");
}

bool failed(const ServerStatus& s) { return s.enabled && s.phase == Phase::error; }

// "850ms", "12.3s", "4m05s".
std::string short_duration(std::chrono::milliseconds d) {
    const auto n = d.count();
    if (n < 1000) return fmt::format("{}ms", n);
    if (n < 60'000) return fmt::format("{:.1f}s", static_cast<double>(n) / 1000.0);
    return fmt::format("{}m{:02}s", n / 60'000, (n / 1000) % 60);
}

// Starts a host on `config` and waits until every server has connected or failed.
awaitable<std::shared_ptr<Host>> start_host(host::Config config) {
    auto ex = co_await asio::this_coro::executor;
    auto h = Host::create(ex, std::move(config), host::HostOptions{});
    h->start();
    co_await h->wait_until_settled();
    co_return h;
}

// Reports servers that failed, on stderr, so that listings on stdout stay clean.
void report_failures(const Host& h) {
    for (const auto& s : h.status())
        if (failed(s)) fmt::print(stderr, "switchboard: server \"{}\" failed: {}\n", s.name, s.last_error);
}

bool any_failed(const Host& h) {
    auto st = h.status();
    return std::any_of(st.begin(), st.end(), failed);
}

// The config reduced to the one named server, or nullopt (reported) when there is no such server.
std::optional<host::Config> only_server(const host::Config& config, const std::string& name) {
    const auto* sc = config.find(name);
    if (!sc) {
        std::vector<std::string> names;
        for (const auto& s : config.servers) names.push_back(s.name);
        fmt::print(stderr, "switchboard: no server \"{}\" in {} (servers: {})\n", name, config.source,
                   fmt::join(names, ", "));
        return std::nullopt;
    }
    host::Config subset;
    subset.source = config.source;
    subset.servers.push_back(*sc);
    return subset;
}

json::value status_json(const std::vector<ServerStatus>& servers) {
    json::array arr;
    for (const auto& s : servers) {
        json::object o;
        o["name"] = s.name;
        o["transport"] = host::to_string(s.transport);
        o["phase"] = phase_name(s);
        o["enabled"] = s.enabled;
        o["lazy"] = s.lazy;
        o["timeInPhaseMs"] = s.time_in_phase.count();
        json::object per_phase;
        for (int i = 0; i < host::phase_count; ++i)
            if (s.time_per_phase[i].count() > 0)
                per_phase[host::to_string(static_cast<Phase>(i))] = s.time_per_phase[i].count();
        o["phaseTimesMs"] = std::move(per_phase);
        o["era"] = s.era ? json::value(mcp::to_string(*s.era)) : json::value(nullptr);
        o["protocolVersion"] = s.protocol_version.empty() ? json::value(nullptr) : json::value(s.protocol_version);
        o["tools"] = s.tools;
        o["resources"] = s.resources;
        o["prompts"] = s.prompts;
        o["connectMs"] = s.connect_time.count();
        o["reconnects"] = s.reconnects;
        o["error"] = s.last_error.empty() ? json::value(nullptr) : json::value(s.last_error);
        o["stderrTail"] = s.stderr_tail;
        arr.push_back(std::move(o));
    }
    return arr;
}

}  // namespace

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

std::string render_status(const std::vector<ServerStatus>& servers) {
    std::string out = fmt::format("{:<20} {:<9} {:<12} {:>8} {:<11} {:>5} {:>9} {:>7} {:>8}\n", "SERVER", "TRANSPORT",
                                  "PHASE", "FOR", "PROTOCOL", "TOOLS", "RESOURCES", "PROMPTS", "MS");
    for (const auto& s : servers) {
        out +=
            fmt::format("{:<20} {:<9} {:<12} {:>8} {:<11} {:>5} {:>9} {:>7} {:>8}\n", s.name,
                        host::to_string(s.transport), phase_name(s), s.enabled ? short_duration(s.time_in_phase) : "-",
                        s.protocol_version.empty() ? "-" : s.protocol_version, s.tools, s.resources, s.prompts,
                        s.connect_time.count());
        if (!s.last_error.empty() && (s.phase == Phase::error || s.phase == Phase::reconnecting))
            out += fmt::format("  error: {}\n", s.last_error);
    }
    return out;
}

awaitable<int> status(const host::Config& config, const GlobalOptions& g) {
    auto ex = co_await asio::this_coro::executor;
    if (!g.watch) {
        auto h = co_await start_host(config);
        if (g.json)
            print_json(status_json(h->status()));
        else
            fmt::print("{}", render_status(h->status()));
        const int code = any_failed(*h) ? 1 : 0;
        co_await h->shutdown();
        co_return code;
    }

    // --watch: redraw on every host event and each second (time in phase), until Ctrl-C.
    auto h = Host::create(ex, config, host::HostOptions{});
    asio::steady_timer wake(ex);
    auto sub = h->events().subscribe([&wake](const host::Event& e) {
        if (e.kind != host::Event::Kind::log_message && e.kind != host::Event::Kind::progress) wake.cancel();
    });
    h->start();
    asio::signal_set signals(ex, SIGINT, SIGTERM);
    const bool tty = ::isatty(STDOUT_FILENO) != 0;
    using namespace asio::experimental::awaitable_operators;
    for (;;) {
        if (g.json)
            print_json(status_json(h->status()));
        else
            fmt::print("{}{}(Ctrl-C to quit)\n", tty ? "\033[H\033[2J" : "\n", render_status(h->status()));
        std::fflush(stdout);
        wake.expires_after(std::chrono::seconds(1));
        auto r = co_await (wake.async_wait(as_tuple_awaitable) || signals.async_wait(as_tuple_awaitable));
        if (r.index() == 1) break;
    }
    h->events().unsubscribe(sub);
    co_await h->shutdown();
    co_return 0;
}

awaitable<int> tools(const host::Config& config, const GlobalOptions& g) {
    auto h = co_await start_host(config);
    report_failures(*h);
    const auto& index = h->tool_index();
    if (g.json) {
        json::array arr;
        for (const auto& t : index.tools()) {
            json::object o;
            o["name"] = t.name;
            o["server"] = t.server;
            o["tool"] = t.tool->name;
            o["description"] = t.tool->description;
            o["inputSchema"] = t.tool->input_schema;
            arr.push_back(std::move(o));
        }
        print_json(arr);
    } else {
        for (const auto& t : index.tools())
            fmt::print("{:<28} {:<16} {}\n", t.name, t.server, first_line(t.tool->description));
    }
    const int code = any_failed(*h) ? 1 : 0;
    co_await h->shutdown();
    co_return code;
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

    // "server__tool" names one server: start only that one.
    host::Config subset;
    subset.source = config.source;
    if (auto sep = args.name.find("__"); sep != std::string::npos)
        if (const auto* sc = config.find(args.name.substr(0, sep))) subset.servers.push_back(*sc);
    const bool narrowed = !subset.servers.empty();
    auto h = co_await start_host(narrowed ? subset : config);

    host::ExecuteOptions opts;
    opts.on_progress = [](const jsonrpc::Progress& p) {
        if (p.total)
            fmt::print(stderr, "progress: {}/{}{}{}\n", p.progress, *p.total, p.message.empty() ? "" : " ", p.message);
        else
            fmt::print(stderr, "progress: {}{}{}\n", p.progress, p.message.empty() ? "" : " ", p.message);
    };
    host::ToolCall tc;
    tc.id = "cli";
    tc.name = args.name;
    tc.arguments = args.arguments;

    // Ctrl-C (or SIGTERM) cancels the call on the server: the losing branch sends notifications/cancelled.
    using namespace asio::experimental::awaitable_operators;
    asio::signal_set signals(ex, SIGINT, SIGTERM);
    auto outcome = co_await (h->execute_tool(tc, opts) || signals.async_wait(asio::use_awaitable));
    int exit_code = 0;
    using Status = host::ToolExecutionResult::Status;
    if (outcome.index() == 1) {
        fmt::print(stderr, "switchboard: call cancelled\n");
        exit_code = 130;
    } else {
        auto& r = std::get<0>(outcome);
        switch (r.status) {
        case Status::ok:
        case Status::tool_error:
            if (g.json)
                print_json(r.raw);
            else
                fmt::print("{}\n", r.text());
            exit_code = r.is_error ? 1 : 0;
            break;
        case Status::unknown_tool:
            report_failures(*h);
            fmt::print(stderr, "switchboard: {} (`switchboard tools` lists them)\n", r.text());
            exit_code = 1;
            break;
        case Status::bad_arguments:
            fmt::print(stderr, "switchboard: {}\n", r.text());
            exit_code = 2;
            break;
        case Status::failed:
        case Status::cancelled:
            fmt::print(stderr, "switchboard: {} failed: {}\n", args.name, r.text());
            exit_code = 1;
            break;
        }
    }
    co_await h->shutdown();
    co_return exit_code;
}

awaitable<int> resources(const host::Config& config, const GlobalOptions& g) {
    auto h = co_await start_host(config);
    report_failures(*h);
    auto res = h->resources();
    auto templates = h->resource_templates();
    if (g.json) {
        json::array arr;
        for (const auto& r : res) {
            json::object o = r.resource.raw;
            o["server"] = r.server;
            arr.push_back(std::move(o));
        }
        for (const auto& t : templates) {
            json::object o = t.resource_template.raw;
            o["server"] = t.server;
            arr.push_back(std::move(o));
        }
        print_json(arr);
    } else {
        for (const auto& r : res)
            fmt::print("{:<16} {:<40} {:<24} {}\n", r.server, r.resource.uri, r.resource.name, r.resource.mime_type);
        for (const auto& t : templates)
            fmt::print("{:<16} {:<40} {:<24} {} (template)\n", t.server, t.resource_template.uri_template,
                       t.resource_template.name, t.resource_template.mime_type);
    }
    const int code = any_failed(*h) ? 1 : 0;
    co_await h->shutdown();
    co_return code;
}

awaitable<int> read(const host::Config& config, const GlobalOptions& g, std::string server, std::string uri) {
    auto subset = only_server(config, server);
    if (!subset) co_return 1;
    auto h = co_await start_host(std::move(*subset));
    auto r = co_await h->read_resource(server, uri);
    int exit_code = 0;
    if (!r) {
        fmt::print(stderr, "switchboard: reading {} failed: {}\n", uri, r.error().describe());
        exit_code = 1;
    } else if (g.json) {
        print_json(r->raw);
    } else {
        fmt::print("{}\n", render_contents(r->contents));
    }
    co_await h->shutdown();
    co_return exit_code;
}

awaitable<int> prompts(const host::Config& config, const GlobalOptions& g) {
    auto h = co_await start_host(config);
    report_failures(*h);
    auto all = h->prompts();
    if (g.json) {
        json::array arr;
        for (const auto& p : all) {
            json::object o = p.prompt.raw;
            o["server"] = p.server;
            arr.push_back(std::move(o));
        }
        print_json(arr);
    } else {
        for (const auto& p : all) {
            std::vector<std::string> args;
            for (const auto& a : p.prompt.arguments) args.push_back(a.required ? a.name : "[" + a.name + "]");
            fmt::print("{:<16} {:<20} {:<30} {}\n", p.server, p.prompt.name, fmt::join(args, " "),
                       first_line(p.prompt.description, 60));
        }
    }
    const int code = any_failed(*h) ? 1 : 0;
    co_await h->shutdown();
    co_return code;
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
    auto subset = only_server(config, server);
    if (!subset) co_return 1;
    auto h = co_await start_host(std::move(*subset));
    auto r = co_await h->get_prompt(server, name, args);
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
    co_await h->shutdown();
    co_return exit_code;
}

}  // namespace switchboard::cli
