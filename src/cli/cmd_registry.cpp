// `registry search|show|add`: the MCP Registry from the command line. `add` turns a server.json into a config entry
// (registry/server_json.hpp): the values it needs asked for (secrets without echo, kept in the env file beside the
// config), the package file checked against its fileSha256, the exact command shown and confirmed before anything
// is written.
#include "cli.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/host/config_edit.hpp>
#include <switchboard/host/env_file.hpp>
#include <switchboard/registry/registry_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <iostream>
#include <unistd.h>

namespace switchboard::cli {

namespace json = boost::json;
namespace asio = boost::asio;
namespace fs = std::filesystem;
using asio::awaitable;
using registry::RegistryClient;
using registry::RegistryError;
using registry::RegistryOptions;

namespace {

RegistryOptions registry_options(const GlobalOptions& g, const RegistryCommand& c) {
    std::string from_config;
    auto env = host::process_env();
    std::optional<fs::path> explicit_file;
    if (g.config_file) explicit_file = *g.config_file;
    if (auto file = host::find_config_file(explicit_file, fs::current_path(), env)) {
        try {
            from_config = host::load_config_file(*file, env).registry;
        } catch (const std::exception&) {
            // A config that does not load has no say here; `add` reports it when it edits the file.
        }
    }
    RegistryOptions o;
    o.url = registry::registry_url(c.registry, from_config);
    o.cache_dir = registry::default_cache_dir();
    o.timeout = std::chrono::seconds(c.timeout_s);
    return o;
}

// Runs one registry coroutine to its end on a loop of its own; false (reported) when it threw.
template <class Make>
bool drive(std::string_view command, Make make) {
    asio::io_context ctx;
    std::exception_ptr error;
    asio::co_spawn(ctx, make(), [&](std::exception_ptr e) { error = e; });
    ctx.run();
    if (!error) return true;
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        fmt::print(stderr, "switchboard registry {}: {}\n", command, e.what());
    }
    return false;
}

awaitable<void> search_into(RegistryOptions o, std::string term, std::size_t limit, registry::SearchResult* out) {
    RegistryClient client(co_await asio::this_coro::executor, std::move(o));
    *out = co_await client.search(std::move(term), limit);
}

awaitable<void> get_into(RegistryOptions o, std::string name, std::string version, registry::Listing* out) {
    RegistryClient client(co_await asio::this_coro::executor, std::move(o));
    *out = co_await client.get(std::move(name), std::move(version));
}

awaitable<void> check_into(RegistryOptions o, registry::Package p, std::string* out) {
    RegistryClient client(co_await asio::this_coro::executor, std::move(o));
    *out = co_await client.check_file(std::move(p));
}

std::string flags_of(const registry::Input& in) {
    std::vector<std::string> f;
    if (in.required) f.emplace_back("required");
    if (in.secret) f.emplace_back("secret");
    if (in.default_value) f.push_back("default " + *in.default_value);
    if (!in.choices.empty()) f.push_back(fmt::format("one of {}", fmt::join(in.choices, "|")));
    return f.empty() ? std::string() : fmt::format(" ({})", fmt::join(f, ", "));
}

void print_questions(const registry::ServerDocument& doc, registry::Choice choice) {
    try {
        for (const auto& q : registry::questions(doc, choice))
            fmt::print("      {}{}{}\n", q.label, flags_of(q.input),
                       q.input.description.empty() ? "" : ": " + core::shorten(q.input.description, 100));
    } catch (const RegistryError& e) {
        fmt::print("      cannot be added: {}\n", e.what());
    }
}

bool interactive() { return ::isatty(STDIN_FILENO) && ::isatty(STDERR_FILENO); }

std::optional<std::string> ask_line(const std::string& prompt) {
    fmt::print(stderr, "{}", prompt);
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    return line;
}

}  // namespace

int registry_search(const GlobalOptions& g, const RegistryCommand& c) {
    const auto o = registry_options(g, c);
    registry::SearchResult result;
    if (!drive("search", [&] { return search_into(o, c.term, c.limit, &result); })) return 1;
    if (g.json) {
        json::array list;
        for (const auto& l : result.servers) list.push_back(registry::summary_json(l));
        print_json(json::object{{"registry", o.url}, {"servers", std::move(list)}, {"more", result.more}});
        return 0;
    }
    if (result.servers.empty()) {
        fmt::print("No server on {} matches \"{}\".\n", o.url, c.term);
        return 0;
    }
    std::size_t width = 4;
    for (const auto& l : result.servers) width = std::max(width, l.server.name.size());
    width = std::min<std::size_t>(width, 60);
    for (const auto& l : result.servers) {
        fmt::print("{:<{}}  {:<10}  {:<14}{}  {}\n", l.server.name, width, core::shorten(l.server.version, 10),
                   core::shorten(registry::kinds_of(l.server), 14), l.status == "active" ? "" : " [" + l.status + "]",
                   core::first_line(l.server.description, 70));
    }
    if (result.more) fmt::print("(more on {}: --limit N, up to 100, or a narrower term)\n", o.url);
    fmt::print("`switchboard registry show NAME` says what one needs; `registry add NAME` adds it.\n");
    return 0;
}

int registry_show(const GlobalOptions& g, const RegistryCommand& c) {
    const auto o = registry_options(g, c);
    auto [name, version] = registry::split_name_version(c.name);
    if (!c.version.empty()) version = c.version;
    registry::Listing l;
    if (!drive("show", [&] { return get_into(o, name, version, &l); })) return 1;
    if (g.json) {
        print_json(json::object{{"registry", o.url}, {"status", l.status}, {"server", l.document}});
        return 0;
    }
    const auto& d = l.server;
    fmt::print("{}  {}  [{}]\n", d.name, d.version, l.status);
    if (!d.title.empty()) fmt::print("  {}\n", d.title);
    if (!d.description.empty()) fmt::print("  {}\n", d.description);
    if (!d.repository.empty()) fmt::print("  repository: {}\n", d.repository);
    if (!d.website.empty()) fmt::print("  website: {}\n", d.website);
    if (!d.packages.empty()) fmt::print("  packages:\n");
    for (std::size_t i = 0; i < d.packages.size(); ++i) {
        const auto& p = d.packages[i];
        fmt::print("    {}  {}{} ({}){}\n", p.registry_type, p.identifier, p.version.empty() ? "" : "@" + p.version,
                   p.transport, p.base_url.empty() ? "" : " from " + p.base_url);
        print_questions(d, {registry::Choice::Kind::package, i});
    }
    if (!d.remotes.empty()) fmt::print("  remotes:\n");
    for (std::size_t i = 0; i < d.remotes.size(); ++i) {
        fmt::print("    {}  {}\n", d.remotes[i].type, d.remotes[i].url);
        print_questions(d, {registry::Choice::Kind::remote, i});
    }
    if (l.status == "deprecated") fmt::print("  This version is deprecated.\n");
    fmt::print("Add it: switchboard registry add {}{}\n", d.name, version.empty() ? "" : "@" + version);
    return 0;
}

int registry_add(const GlobalOptions& g, const RegistryCommand& c) {
    const auto o = registry_options(g, c);
    const auto [name, version] = registry::split_name_version(c.name);
    registry::Listing l;
    if (!drive("add", [&] { return get_into(o, name, version, &l); })) return 1;
    const auto& doc = l.server;
    if (l.status == "deleted") {
        fmt::print(stderr, "switchboard registry add: {} {} was deleted from {}; not added\n", doc.name, doc.version,
                   o.url);
        return 1;
    }
    if (l.status == "deprecated")
        fmt::print(stderr, "switchboard: warning: {} {} is deprecated on {}\n", doc.name, doc.version, o.url);
    const auto local = c.as.empty() ? registry::default_local_name(doc.name) : c.as;
    const auto file = file_to_edit(g, c.scope);
    if (!file) return 2;
    try {  // a clash is said before anything is asked
        if (fs::exists(*file) && host::raw_server_entries(host::read_config_text(*file), file->string()).count(local)) {
            fmt::print(stderr,
                       "switchboard registry add: {} already has a server named \"{}\" (--as NAME adds it "
                       "under another name)\n",
                       file->string(), local);
            return 1;
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "switchboard registry add: {}\n", e.what());
        return 1;
    }
    std::map<std::string, std::string> answers;
    for (const auto& kv : c.values) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
            fmt::print(stderr, "switchboard registry add: -e takes NAME=VALUE, not \"{}\"\n", kv);
            return 2;
        }
        answers[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& h : c.headers) {
        const auto colon = h.find(':');
        if (colon == std::string::npos || colon == 0) {
            fmt::print(stderr, "switchboard registry add: -H takes \"Name: value\", not \"{}\"\n", h);
            return 2;
        }
        auto v = h.substr(colon + 1);
        while (!v.empty() && v.front() == ' ') v.erase(0, 1);
        answers[h.substr(0, colon)] = v;
    }
    registry::Choice choice;
    registry::Plan plan;
    try {
        choice = registry::choose(doc, c.use);
        // What is not given on the command line is asked for, when there is a terminal to ask on.
        if (interactive() && !c.yes) {
            for (const auto& q : registry::questions(doc, choice)) {
                if (answers.count(q.key)) continue;
                fmt::print(stderr, "{}{}{}\n", q.label, flags_of(q.input),
                           q.input.description.empty() ? "" : ": " + q.input.description);
                const auto prompt = fmt::format("  {}{}: ", q.key, q.input.required ? "" : " (Enter: skip)");
                auto v = q.input.secret ? read_secret(prompt) : ask_line(prompt);
                if (!v) break;
                if (!v->empty()) answers[q.key] = *v;
            }
        }
        plan = registry::plan(doc, choice, answers, local);
    } catch (const RegistryError& e) {
        fmt::print(stderr, "switchboard registry add: {}\n", e.what());
        if (std::string_view(e.what()).find(" is required") != std::string_view::npos)
            fmt::print(stderr,
                       "Give values with -e KEY=VALUE (a header with -H \"Name: value\"), or run it in a "
                       "terminal to be asked; `registry show {}` lists them.\n",
                       doc.name);
        return 1;
    }
    registry::apply_flags(plan, {c.confine, c.lazy, c.disabled});
    std::string checked;
    if (choice.kind == registry::Choice::Kind::package) {
        const auto& p = doc.packages[choice.index];
        if (!drive("add", [&] { return check_into(o, p, &checked); })) return 1;
    }
    fmt::print("{} {} from {}{}\n", doc.name, doc.version, o.url,
               doc.description.empty() ? "" : ": " + core::first_line(doc.description, 80));
    fmt::print("Will add \"{}\" to {}:\n  {}\n", local, file->string(), plan.display);
    if (!plan.argv.empty()) {
        const auto* s = plan.entry.if_contains("sandboxEnabled");
        fmt::print("  {}\n", !s              ? "runs in its container"
                             : s->get_bool() ? "confined (sandboxEnabled)"
                                             : "not confined (--no-sandbox)");
    }
    if (!plan.secrets.empty()) {
        std::vector<std::string> vars;
        for (const auto& [k, _] : plan.secrets) vars.push_back(k);
        fmt::print("  secrets {} go to {} (0600)\n", fmt::join(vars, ", "), host::env_file_for(*file).string());
    }
    if (!checked.empty()) fmt::print("  {}\n", checked);
    for (const auto& n : plan.notes) fmt::print("  note: {}\n", n);
    if (!c.yes) {
        if (!interactive()) {
            fmt::print(stderr,
                       "switchboard registry add: not added: confirm with --yes (there is no terminal to ask on)\n");
            return 1;
        }
        auto reply = ask_line(plan.notes.empty() ? "Add it? [y/N] " : "Add it, from that index? [y/N] ");
        if (!reply || (core::ascii_lower(*reply) != "y" && core::ascii_lower(*reply) != "yes")) {
            fmt::print(stderr, "Not added.\n");
            return 1;
        }
    }
    try {
        const auto edited = host::add_server_to_file(*file, local, plan.entry, plan.secrets);
        for (const auto& w : edited.warnings) fmt::print(stderr, "switchboard: warning: {}\n", w);
    } catch (const std::exception& e) {
        fmt::print(stderr, "switchboard registry add: {}\n", e.what());
        return 1;
    }
    fmt::print("Added \"{}\". `switchboard status` connects to it.\n", local);
    return 0;
}

}  // namespace switchboard::cli
