// switchboard: the command-line front end.
#include "cli.hpp"

#include <algorithm>
#include <cctype>
#include <switchboard/core/spawn.hpp>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>

using namespace switchboard;

namespace {

// What a command left running when it ended (the close of a connection it abandoned, a process being reaped) gets
// this long to finish; then the process exits anyway: a command that is over never hangs.
constexpr std::chrono::seconds leftover_grace{10};

int run(const std::function<boost::asio::awaitable<int>()>& command) {
    // One thread runs it and does all its I/O: the hint lets a handler posted from that thread skip the scheduler's
    // lock, and every socket and pipe operation skip its descriptor's lock (about 200 instructions a gateway call).
    // Other threads (Asio's resolver) still post to it safely: the scheduler and the timers keep their locks.
    boost::asio::io_context ctx(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO);
    int status = 1;
    bool done = false;
    boost::asio::co_spawn(ctx, command(), [&](std::exception_ptr e, int s) {
        done = true;
        ctx.stop();  // what is left runs below, bounded
        if (e) {
            core::log_exception(e, "switchboard");
            status = 70;
            return;
        }
        status = s;
    });
    ctx.run();
    if (!done) return status;  // stopped from inside (serve's stop watchdog): nothing more runs
    ctx.restart();
    ctx.run_for(leftover_grace);
    if (!ctx.stopped())
        spdlog::warn("background work still running {} s after the command ended; exiting anyway",
                     leftover_grace.count());
    return status;
}

// The config file, or nullopt (reported). With `required` false, no file at all is an empty config.
std::optional<host::Config> load_config(const cli::GlobalOptions& g, bool required = true) {
    auto env = host::process_env();
    std::optional<std::filesystem::path> explicit_file;
    if (g.config_file) explicit_file = *g.config_file;
    auto file = host::find_config_file(explicit_file, std::filesystem::current_path(), env);
    if (!file && !required) {
        fmt::print(stderr, "switchboard: note: no configuration found (--config FILE, ./.mcp.json or "
                           "$XDG_CONFIG_HOME/switchboard/settings.json); every declared server counts as missing\n");
        return host::Config{};
    }
    if (!file) {
        fmt::print(stderr,
                   "switchboard: no configuration found. Pass --config FILE, or create ./.mcp.json or "
                   "$XDG_CONFIG_HOME/switchboard/settings.json (see examples/switchboard.json).\n");
        return std::nullopt;
    }
    try {
        auto config = host::load_config_file(*file, env);
        for (const auto& w : config.warnings) fmt::print(stderr, "switchboard: warning: {}\n", w);
        return config;
    } catch (const host::ConfigError& e) {
        fmt::print(stderr, "switchboard: {}\n", e.what());
        return std::nullopt;
    }
}

// The arguments of `call`, parsed once here: a JSON object, or nullopt (reported).
std::optional<boost::json::object> parse_call_arguments(const std::string& text) {
    boost::json::error_code ec;
    auto parsed = boost::json::parse(text, ec);
    if (ec || !parsed.is_object()) {
        fmt::print(stderr, "switchboard: the arguments must be a JSON object, e.g. '{{\"message\": \"hi\"}}'{}\n",
                   ec ? " (" + ec.message() + ")" : "");
        return std::nullopt;
    }
    return std::move(parsed.get_object());
}

// `key=value` words as a map, or nullopt (reported).
std::optional<std::map<std::string, std::string>> parse_key_values(const std::vector<std::string>& words) {
    std::map<std::string, std::string> out;
    for (const auto& kv : words) {
        auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
            fmt::print(stderr, "switchboard: prompt arguments are key=value, got \"{}\"\n", kv);
            return std::nullopt;
        }
        out[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Switchboard: an MCP host. Connects to MCP servers and lists and calls what they offer."};
    app.set_version_flag("--version", std::string("switchboard ") + SWITCHBOARD_VERSION);
    app.require_subcommand(1);
    // The global options may also follow the command (`switchboard call echo --log-level info`).
    app.fallthrough();
    cli::GlobalOptions g;
    std::string config_file;
    bool verbose = false;
    app.add_option("-c,--config", config_file,
                   "Config file (default: ./.mcp.json, then "
                   "$XDG_CONFIG_HOME/switchboard/settings.json)");
    app.add_flag("-v,--verbose", verbose, "Log protocol details and server stderr");
    std::string pinning;
    app.add_option("--pins", pinning,
                   "How what servers offer is pinned: trust-on-first-use (default), strict (a server never pinned is "
                   "held too) or off")
        ->check([](const std::string& mode) {
            return host::parse_pinning(mode) ? std::string() : "must be trust-on-first-use, strict or off";
        });
    bool sandbox_on = false, sandbox_off = false;
    std::string sandbox_layer;
    auto* sandbox_flag =
        app.add_flag("--sandbox", sandbox_on, "Confine every stdio server for this run, whatever the config says");
    app.add_flag("--no-sandbox", sandbox_off, "Confine no server for this run (status shows each as unconfined)")
        ->excludes(sandbox_flag);
    app.add_option("--sandbox-layer", sandbox_layer,
                   "Confine with this layer only: bwrap (namespaces) or landlock (where namespaces are refused); "
                   "also SWITCHBOARD_SANDBOX_LAYER")
        ->check([](const std::string& layer) {
            return host::parse_layer(layer) ? std::string() : "must be bwrap or landlock";
        });
    std::string otlp_endpoint;
    app.add_option("--otlp-endpoint", otlp_endpoint,
                   "Export traces over OTLP/HTTP to this collector (e.g. http://127.0.0.1:4318); over the config's "
                   "tracing.endpoint and OTEL_EXPORTER_OTLP_ENDPOINT");
    std::string server_log_level;
    app.add_option("--log-level", server_log_level,
                   "Print the servers' log messages from this level up on stderr (debug, info, notice, warning, "
                   "error, critical, alert, emergency)")
        ->check([](const std::string& level) {
            return mcp::is_log_level(level) ? std::string()
                                            : "must be debug, info, notice, warning, error, critical, alert or "
                                              "emergency";
        });

    auto json_flag = [&](CLI::App* sub) { sub->add_flag("--json", g.json, "Machine-readable output"); };
    auto* status_cmd = app.add_subcommand("status", "Connect to every server and show its state");
    json_flag(status_cmd);
    status_cmd->add_flag("-w,--watch", g.watch, "Keep the servers running and redraw as their phases change (Ctrl-C)");
    status_cmd->add_flag("--context", g.context,
                         "Estimated tokens of the main context's tool definitions, and with every server eager");
    auto* tools_cmd = app.add_subcommand("tools", "List the tools of every server");
    json_flag(tools_cmd);
    std::string tool_name, tool_arguments = "{}";
    auto* call_cmd = app.add_subcommand("call", "Call a tool: switchboard call NAME '{\"arg\": 1}'");
    call_cmd->add_option("name", tool_name, "Tool name as listed by `tools` (or server__tool)")->required();
    call_cmd->add_option("arguments", tool_arguments, "Arguments as a JSON object");
    json_flag(call_cmd);
    auto* resources_cmd = app.add_subcommand("resources", "List resources and resource templates");
    json_flag(resources_cmd);
    std::string server, uri, prompt_name;
    std::vector<std::string> key_values;
    auto* read_cmd = app.add_subcommand("read", "Read a resource: switchboard read SERVER URI");
    read_cmd->add_option("server", server, "Server name")->required();
    read_cmd->add_option("uri", uri, "Resource URI")->required();
    read_cmd->add_flag("-w,--watch", g.watch,
                       "Subscribe and print the contents again whenever the server says they changed (Ctrl-C)");
    json_flag(read_cmd);
    auto* prompts_cmd = app.add_subcommand("prompts", "List prompts");
    json_flag(prompts_cmd);
    auto* prompt_cmd = app.add_subcommand("prompt", "Get a prompt: switchboard prompt SERVER NAME key=value ...");
    prompt_cmd->add_option("server", server, "Server name")->required();
    prompt_cmd->add_option("name", prompt_name, "Prompt name")->required();
    prompt_cmd->add_option("arguments", key_values, "Arguments as key=value");
    json_flag(prompt_cmd);

    auto* agents_cmd = app.add_subcommand("agents", "List the agents and skills found here, and the servers they need");
    json_flag(agents_cmd);
    bool agents_connect = false;
    agents_cmd->add_flag("--connect", agents_connect,
                         "Start the eager servers and list the skills they serve too (as run and chat offer them)");

    cli::ConversationsCommand conv;
    const std::string db_help = "Conversations database (default: " + store::ConversationStore::default_path().string() + ")";
    app.add_option("--db", conv.db, db_help);
    auto* conv_cmd = app.add_subcommand("conversations", "List stored conversations (show, delete, rename them)");
    conv_cmd->require_subcommand(0, 1);
    conv_cmd->add_option("--db", conv.db, db_help);
    conv_cmd->add_flag("--json", conv.json, "Machine-readable output");
    conv_cmd->add_option("--search", conv.search, "Only titles containing TEXT (case-insensitive)");
    auto* conv_show = conv_cmd->add_subcommand("show", "Show a conversation: a transcript, --markdown or --json");
    conv_show->add_option("id", conv.id, "Conversation id")->required();
    auto* show_json = conv_show->add_flag("--json", conv.json, "Everything: settings, each message's record and meta");
    conv_show->add_flag("--markdown", conv.markdown, "A Markdown transcript (the default)")->excludes(show_json);
    conv_show->add_option("--db", conv.db, db_help);
    auto* conv_delete = conv_cmd->add_subcommand("delete", "Delete a conversation and its messages");
    conv_delete->add_option("id", conv.id, "Conversation id")->required();
    conv_delete->add_option("--db", conv.db, db_help);
    auto* conv_rename = conv_cmd->add_subcommand("rename", "Rename a conversation: rename ID TITLE");
    conv_rename->add_option("id", conv.id, "Conversation id")->required();
    conv_rename->add_option("title", conv.title, "New title")->required();
    conv_rename->add_option("--db", conv.db, db_help);
    auto* tasks_cmd =
        app.add_subcommand("tasks", "List the running tasks of stored conversations (`chat --resume ID` follows them)");
    tasks_cmd->add_flag("--json", conv.json, "Machine-readable output");
    tasks_cmd->add_option("--db", conv.db, db_help);
    // The commands that talk to a model.
    cli::AgentOptions agent;
    std::string task, db;
    std::int64_t resume = 0;
    const auto model_options = [&](CLI::App* sub) {
        sub->add_option("--llm", agent.llm_url, "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1");
        sub->add_option("--model", agent.model, "Model name");
    };
    const auto agent_options = [&](CLI::App* sub) {
        model_options(sub);
        sub->add_option("--allow-tools", agent.allow_tools,
                        "Run tools matching this glob without asking (repeatable; e.g. 'github__*')");
        sub->add_flag("-y,--yes", agent.yes, "Run every tool without asking");
        sub->add_option("--max-turns", agent.max_turns, "Model requests per message (default 100)")
            ->check(CLI::PositiveNumber);
        sub->add_option("--db", db, "Conversation database (default $XDG_DATA_HOME/switchboard/conversations.db)");
        sub->add_flag("--no-store", agent.no_store, "Keep no conversation on disk");
        sub->add_option("--resume", resume, "Go on with a stored conversation (see `conversations`)");
        sub->add_option("--root", agent.roots, "A directory offered to servers as a root (repeatable; default: .)");
    };
    auto* run_cmd = app.add_subcommand("run", "Do one task with the model and the servers' tools: switchboard run \"TASK\"");
    run_cmd->add_option("task", task, "What to do (none with --resume: finish the conversation's running tasks)");
    agent_options(run_cmd);
    run_cmd->add_flag("--allow-sampling", agent.allow_sampling, "Let servers use the model (sampling)");
    run_cmd->add_option("--agent", agent.agent, "Run this agent (or skill) on the task, in a fork (see `agents`)");
    json_flag(run_cmd);
    auto* chat_cmd = app.add_subcommand("chat", "Talk with the model, which uses the servers' tools");
    agent_options(chat_cmd);
    auto* models_cmd = app.add_subcommand("models", "List the models of the configured endpoint");
    model_options(models_cmd);
    json_flag(models_cmd);

    auto* catalog_cmd = app.add_subcommand("catalog", "The lazy servers' tools as recorded for tool search");
    catalog_cmd->require_subcommand(0, 1);
    json_flag(catalog_cmd);
    std::vector<std::string> catalog_servers;
    auto* catalog_refresh_cmd =
        catalog_cmd->add_subcommand("refresh", "Start each lazy server once and record its tools");
    catalog_refresh_cmd->add_option("servers", catalog_servers, "Only these lazy servers");
    json_flag(catalog_refresh_cmd);

    cli::PinsCommand pins_command;
    auto* pins_cmd = app.add_subcommand(
        "pins", "The servers' definitions as approved (the lockfile beside the config), and what is held");
    pins_cmd->require_subcommand(0, 1);
    pins_cmd->add_option("server", pins_command.target, "Only this server");
    json_flag(pins_cmd);
    auto* pins_diff_cmd = pins_cmd->add_subcommand("diff", "What changed in each held definition, as a line diff");
    pins_diff_cmd->add_option("target", pins_command.target, "SERVER or SERVER/NAME")->required();
    auto* pins_approve_cmd =
        pins_cmd->add_subcommand("approve", "Approve what a server serves now: all it holds, or SERVER/NAME");
    pins_approve_cmd->add_option("target", pins_command.target, "SERVER or SERVER/NAME")->required();
    auto* pins_reset_cmd = pins_cmd->add_subcommand("reset", "Forget a server's pins and pin what it serves now");
    pins_reset_cmd->add_option("server", pins_command.target, "The server")->required();

    std::string sandbox_server;
    double sandbox_linger = 1.0;
    auto* sandbox_cmd = app.add_subcommand("sandbox", "Confined stdio servers");
    sandbox_cmd->require_subcommand(1);
    auto* sandbox_check_cmd = sandbox_cmd->add_subcommand(
        "check", "Start a stdio server confined, list it, call nothing; report what was refused and how to allow it");
    sandbox_check_cmd->add_option("server", sandbox_server, "The server")->required();
    sandbox_check_cmd
        ->add_option("--wait", sandbox_linger,
                     "Seconds to keep it running after it started, for what it tries then (default 1)")
        ->check(CLI::Range(0.0, 600.0));
    json_flag(sandbox_check_cmd);

    std::string trace_id;
    auto* trace_cmd = app.add_subcommand(
        "trace", "Show a recent trace's span tree from the local trace file (no ID: list the recent traces)");
    trace_cmd->add_option("id", trace_id, "Trace id (or its first 8+ hex digits), as `run --json` and `call --json` name it");
    json_flag(trace_cmd);

    // Adding servers: Claude Code's `claude mcp add` lines as typed, and the MCP Registry.
    cli::AddCommand add;
    std::string edit_name;
    const auto scope_option = [&](CLI::App* sub, std::string& scope) {
        sub->add_option("-s,--scope", scope,
                        "Which file: project or local (./.mcp.json), user (the user settings file); default: the "
                        "config the other commands read");
    };
    auto* add_cmd = app.add_subcommand(
        "add", "Add a server: add NAME -- COMMAND [ARGS...], or add --transport http|sse|ws NAME URL");
    add_cmd->add_option("-t,--transport", add.transport, "stdio (the default), http, sse or ws");
    add_cmd->add_option("words", add.words, "NAME, then the command and its arguments (after --), or the URL");
    add_cmd->add_option("-e,--env", add.env, "KEY=VALUE in a stdio server's environment (repeatable)")
        ->allow_extra_args(false);
    add_cmd->add_option("-H,--header", add.headers, "\"Name: value\" sent to a remote server (repeatable)")
        ->allow_extra_args(false);
    add_cmd->add_option("--client-id", add.client_id, "OAuth client id for a remote server");
    add_cmd->add_flag("--client-secret", add.client_secret,
                      "Ask for the OAuth client secret ($MCP_CLIENT_SECRET, else without echo); kept in the env "
                      "file beside the config");
    add_cmd->add_option("--callback-port", add.callback_port, "Port of the OAuth redirect listener")
        ->check(CLI::Range(1, 65535));
    add_cmd->add_flag("--lazy", add.lazy, "Started only when an agent or skill needs it (see docs/config.md)");
    add_cmd->add_flag("--disabled", add.disabled, "Written with \"enabled\": false");
    scope_option(add_cmd, add.scope);
    auto* add_json_cmd = app.add_subcommand("add-json", "Add a server from its JSON entry: add-json NAME '{...}'");
    add_json_cmd->add_option("name", edit_name, "The server's name")->required();
    add_json_cmd->add_option("json", add.json, "The entry, as in mcpServers (or a one-server .mcp.json)")->required();
    add_json_cmd->add_flag("--client-secret", add.client_secret,
                           "Ask for the OAuth client secret ($MCP_CLIENT_SECRET, else without echo)");
    add_json_cmd->add_flag("--lazy", add.lazy, "Started only when an agent or skill needs it");
    add_json_cmd->add_flag("--disabled", add.disabled, "Written with \"enabled\": false");
    scope_option(add_json_cmd, add.scope);
    auto* remove_cmd = app.add_subcommand("remove", "Remove a server from the config: remove NAME");
    remove_cmd->add_option("name", edit_name, "The server's name")->required();
    scope_option(remove_cmd, add.scope);
    auto* get_cmd = app.add_subcommand("get", "Show a server's entry as the config has it (secrets masked)");
    get_cmd->add_option("name", edit_name, "The server's name")->required();
    scope_option(get_cmd, add.scope);
    json_flag(get_cmd);

    cli::RegistryCommand reg;
    auto* registry_cmd = app.add_subcommand("registry", "The MCP Registry: search it, show a server, add one");
    registry_cmd->require_subcommand(1);
    const auto registry_options = [&](CLI::App* sub) {
        sub->add_option("--registry", reg.registry,
                        "The registry's URL (default: $SWITCHBOARD_REGISTRY, then the config's \"registry\", then "
                        "https://registry.modelcontextprotocol.io)");
        sub->add_option("--timeout", reg.timeout_s, "Seconds to wait for the registry")
            ->capture_default_str()
            ->check(CLI::Range(1, 600));
    };
    registry_options(registry_cmd);
    auto* registry_search_cmd = registry_cmd->add_subcommand("search", "Servers whose name matches TERM");
    registry_search_cmd->add_option("term", reg.term, "What to look for (empty: every server)");
    registry_search_cmd->add_option("--limit", reg.limit, "At most this many (1 to 100)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    registry_options(registry_search_cmd);
    json_flag(registry_search_cmd);
    auto* registry_show_cmd =
        registry_cmd->add_subcommand("show", "A server's packages and remotes, and the values each needs");
    registry_show_cmd->add_option("name", reg.name, "NAME or NAME@VERSION, as `registry search` lists it")->required();
    registry_show_cmd->add_option("--version", reg.version, "This version (default: the latest)");
    registry_options(registry_show_cmd);
    json_flag(registry_show_cmd);
    auto* registry_add_cmd = registry_cmd->add_subcommand(
        "add", "Add a server from the registry, its version pinned; shows the command and asks before writing");
    registry_add_cmd->add_option("name", reg.name, "NAME or NAME@VERSION")->required();
    registry_add_cmd->add_option("--as", reg.as, "The name in the config (default: the last part of NAME)");
    registry_add_cmd->add_option("--use", reg.use, "Which way to run it: npm, pypi, oci, nuget or remote");
    registry_add_cmd
        ->add_option("-e,--env", reg.values,
                     "A value it needs, NAME=VALUE: an environment variable, a {variable} or an argument (repeatable)")
        ->allow_extra_args(false);
    registry_add_cmd->add_option("-H,--header", reg.headers, "A header it needs, \"Name: value\" (repeatable)")
        ->allow_extra_args(false);
    registry_add_cmd->add_flag("-y,--yes", reg.yes, "Add without asking (for scripts); what is not given is left out");
    registry_add_cmd->add_flag("--lazy", reg.lazy, "Started only when an agent or skill needs it");
    registry_add_cmd->add_flag("--disabled", reg.disabled, "Written with \"enabled\": false");
    scope_option(registry_add_cmd, reg.scope);
    registry_options(registry_add_cmd);

    cli::ServeOptions serve_options;
    auto* auth_cmd = app.add_subcommand("auth", "OAuth logins for remote servers: login, status, logout");
    auth_cmd->require_subcommand(1);
    std::string auth_server;
    cli::AuthLoginOptions auth_login;
    auto* auth_login_cmd = auth_cmd->add_subcommand("login", "Log in to a server in the browser: auth login SERVER");
    auth_login_cmd->add_option("server", auth_server, "The server's name in the config")->required();
    auth_login_cmd->add_option("--port", auth_login.port, "Port of the loopback redirect listener (default: any)");
    auth_login_cmd->add_flag("--no-browser", auth_login.no_browser, "Only print the URL to open");
    auth_login_cmd->add_option("--timeout", auth_login.timeout_s, "Seconds to wait for the login")->capture_default_str();
    json_flag(auth_login_cmd);
    auto* auth_status_cmd = auth_cmd->add_subcommand("status", "Show which servers are logged in (no tokens shown)");
    json_flag(auth_status_cmd);
    auto* auth_logout_cmd = auth_cmd->add_subcommand("logout", "Forget a server's tokens: auth logout SERVER");
    auth_logout_cmd->add_option("server", auth_server, "The server's name in the config")->required();

    auto* serve_cmd = app.add_subcommand("serve", "Serve every configured server as one MCP server (the gateway)");
    serve_cmd->add_option("--port", serve_options.port, "Port for Streamable HTTP at /mcp (0: any free port)")
        ->capture_default_str();
    serve_cmd->add_option("--bind", serve_options.bind, "Address to listen on (not loopback: --token required)")
        ->capture_default_str();
    serve_cmd->add_flag("--stdio", serve_options.stdio, "Serve one client on stdin/stdout instead of HTTP");
    serve_cmd->add_option("--allow-origin", serve_options.allow_origins,
                          "Origin accepted besides loopback ones (repeatable; * for any)");
    serve_cmd->add_option("--token", serve_options.token,
                          "Require Authorization: Bearer TOKEN (default: $SWITCHBOARD_TOKEN)");
    serve_cmd->add_option("--tools", serve_options.tools, "Expose only tools matching this glob (repeatable)");
    serve_cmd
        ->add_option("--instance-id", serve_options.instance_id,
                     "Start every legacy session id with NAME. (behind a load balancer: route on the prefix)")
        ->check([](const std::string& v) -> std::string {
            if (v.empty() || v.size() > 64) return "1 to 64 characters";
            for (char c : v)
                if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
                    return "only letters, digits, - and _";
            return {};
        });
    serve_cmd->add_option("--db", db, db_help);
    serve_cmd->add_option("--auth", serve_options.auth,
                          "oauth: accept only bearer JWTs of --issuer for --audience (an OAuth resource server)");
    serve_cmd->add_option("--issuer", serve_options.issuer, "--auth oauth: the authorization server's issuer URL");
    serve_cmd->add_option("--audience", serve_options.audience,
                          "--auth oauth: this gateway's resource URL (tokens' aud), e.g. http://127.0.0.1:3333/mcp");
    serve_cmd->add_option("--jwks-url", serve_options.jwks_url,
                          "--auth oauth: the issuer's JWKS (default: jwks_uri of its metadata)");
    serve_cmd->add_option("--clock-skew", serve_options.clock_skew, "--auth oauth: seconds of leeway on exp and nbf")
        ->capture_default_str()
        ->check(CLI::Range(0, 600));
    serve_cmd
        ->add_option("--header-timeout", serve_options.header_timeout,
                     "Seconds a client has to send a complete request head (slow clients are closed)")
        ->capture_default_str()
        ->check(CLI::Range(1, 3600));
    serve_cmd
        ->add_option("--idle-timeout", serve_options.idle_timeout,
                     "Seconds a kept-alive connection may stay silent before it is closed")
        ->capture_default_str()
        ->check(CLI::Range(1, 86400));
    serve_cmd
        ->add_option("--metrics-port", serve_options.metrics_port,
                     "With --stdio: serve /healthz, /readyz and /metrics on this port (0: any free port)")
        ->check(CLI::Range(0, 65535));
    serve_cmd
        ->add_option("--page-size", serve_options.page_size,
                     "Lists (tools, resources, templates, prompts) longer than this come in pages (0: never)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1000000));
    serve_cmd->add_flag("--skills", serve_options.skills,
                        "Serve the local skills (.switchboard/skills, .claude/skills, ...) beside the servers' skills");
    serve_cmd->add_flag("--quiet", serve_options.quiet, "No access log (one line per HTTP request on stderr)");
    serve_cmd->add_flag("--cors-proxy", serve_options.cors_proxy,
                        "Serve /cors-proxy?url=URL for browser pages (the llama.cpp web UI); private addresses refused");
    serve_cmd->add_option("--cors-proxy-allow", serve_options.cors_proxy_allow,
                          "A CIDR block the CORS proxy may reach although special (loopback, private, ...); repeatable");

    // Every --help ends with the guide that says more (a command's subcommands share its guide).
    const auto guide = [](CLI::App* cmd, std::string_view doc) {
        const auto footer = fmt::format("More: {} in the Switchboard sources (README.md lists every guide).", doc);
        cmd->footer(footer);
        for (auto* sub : cmd->get_subcommands({})) sub->footer(footer);
    };
    guide(&app, "docs/cli.md");
    for (auto* cmd : {status_cmd, tools_cmd, call_cmd, resources_cmd, read_cmd, prompts_cmd, prompt_cmd})
        guide(cmd, "docs/cli.md");
    for (auto* cmd : {agents_cmd, conv_cmd, tasks_cmd, run_cmd, chat_cmd, models_cmd}) guide(cmd, "docs/chat.md");
    guide(catalog_cmd, "docs/config.md");
    guide(pins_cmd, "docs/config.md");
    guide(sandbox_cmd, "docs/config.md");
    for (auto* cmd : {add_cmd, add_json_cmd, remove_cmd, get_cmd, registry_cmd}) guide(cmd, "docs/config.md");
    guide(auth_cmd, "docs/auth.md");
    guide(serve_cmd, "docs/gateway.md");

    // `add NAME -- COMMAND ARGS...`: what follows `--` is the server's command line, taken as it is (its own -y
    // and --flags included) before CLI11 sees the rest.
    // Only when the command is `add`: its first word that is neither an option nor a global option's value.
    std::vector<std::string> server_command;
    {
        static constexpr std::string_view takes_value[] = {
            "-c", "--config", "--pins", "--sandbox-layer", "--otlp-endpoint", "--log-level", "--db"};
        int i = 1;
        while (i < argc && argv[i][0] == '-' && std::string_view(argv[i]) != "--")
            i += std::find(std::begin(takes_value), std::end(takes_value), argv[i]) != std::end(takes_value) ? 2 : 1;
        if (i < argc && std::string_view(argv[i]) == "add")
            for (int j = i + 1; j < argc; ++j)
                if (std::string_view(argv[j]) == "--") {
                    server_command.assign(argv + j + 1, argv + argc);
                    argc = j;
                    break;
                }
    }
    CLI11_PARSE(app, argc, argv);
    add.words.insert(add.words.end(), server_command.begin(), server_command.end());
    if (db.empty()) db = conv.db;  // `--db` before the command, or after it
    if (!db.empty()) agent.db = db;
    serve_options.db = db;
    if (resume) agent.resume = resume;
    if (run_cmd->parsed() && task.empty() && (!resume || !agent.agent.empty())) {
        fmt::print(stderr, "switchboard run: {}\n",
                   resume ? "--agent needs a task" : "what to do? `switchboard run \"TASK\"` (or `run --resume ID` to "
                                                     "finish a stored conversation's running tasks)");
        return 2;
    }

    auto logger = spdlog::stderr_color_mt("switchboard");
    logger->set_pattern("%^[%l]%$ %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
    if (!config_file.empty()) g.config_file = config_file;
    cli::print_server_logs(server_log_level);
    cli::use_pinning(pinning.empty() ? std::nullopt : host::parse_pinning(pinning));
    cli::SandboxFlags sandbox;
    if (sandbox_on || sandbox_off) sandbox.confine_all = sandbox_on;
    if (!sandbox_layer.empty()) sandbox.layer = host::parse_layer(sandbox_layer);
    sandbox.db = db;
    cli::use_sandbox(std::move(sandbox));

    if (tasks_cmd->parsed()) {
        conv.action = cli::ConversationsCommand::Action::tasks;
        return cli::conversations(conv);  // no config, no servers
    }
    if (conv_cmd->parsed()) {
        using Action = cli::ConversationsCommand::Action;
        if (conv_show->parsed()) conv.action = Action::show;
        if (conv_delete->parsed()) conv.action = Action::remove;
        if (conv_rename->parsed()) conv.action = Action::rename;
        return cli::conversations(conv);  // no config, no servers
    }

    if (trace_cmd->parsed()) return cli::trace_command(trace_id, g.json);  // no config, no servers

    // Edits of the config file: no servers started.
    add.confine = reg.confine = !sandbox_off;
    if (add_cmd->parsed()) return cli::add_server(g, add);
    if (add_json_cmd->parsed()) {
        add.words = {edit_name};
        return cli::add_server_json(g, add);
    }
    if (remove_cmd->parsed()) return cli::remove_server(g, edit_name, add.scope);
    if (get_cmd->parsed()) return cli::get_server(g, edit_name, add.scope);
    if (registry_search_cmd->parsed()) return cli::registry_search(g, reg);
    if (registry_show_cmd->parsed()) return cli::registry_show(g, reg);
    if (registry_add_cmd->parsed()) return cli::registry_add(g, reg);

    if (agents_cmd->parsed()) {
        // No server is started; without a config every declared server is reported missing.
        auto config = load_config(g, false);
        if (!config) return 2;
        if (agents_connect) return run([&] { return cli::agents_connected(*config, g); });
        return cli::agents(*config, g);
    }

    std::optional<boost::json::object> call_arguments;
    std::optional<std::map<std::string, std::string>> prompt_arguments;
    if (call_cmd->parsed() && !(call_arguments = parse_call_arguments(tool_arguments))) return 2;
    if (prompt_cmd->parsed() && !(prompt_arguments = parse_key_values(key_values))) return 2;

    if (serve_cmd->parsed()) {
        if (auto problem = cli::check_serve_options(serve_options)) {
            fmt::print(stderr, "switchboard serve: {}\n", *problem);
            return 2;
        }
    }

    auto config = load_config(g);
    if (!config) return 2;
    const auto& c = *config;
    if (auth_login_cmd->parsed()) return run([&] { return cli::auth_login(c, g, auth_server, auth_login); });
    if (auth_status_cmd->parsed()) return cli::auth_status(c, g);
    if (auth_logout_cmd->parsed()) return run([&] { return cli::auth_logout(c, auth_server); });
    if (status_cmd->parsed() && g.context) return run([&] { return cli::context_cost(c, g); });
    if (status_cmd->parsed()) return run([&] { return cli::status(c, g); });
    if (tools_cmd->parsed()) return run([&] { return cli::tools(c, g); });
    // What does work for a person is traced: the run's trace id is in --json, `switchboard trace ID` shows it.
    using cli::Traced;
    auto traced = [&](Traced kind, std::function<boost::asio::awaitable<int>()> command) {
        return run([&] { return cli::traced(c, otlp_endpoint, kind, command); });
    };
    if (call_cmd->parsed())
        return traced(Traced::once, [&] { return cli::call(c, g, tool_name, std::move(*call_arguments)); });
    if (resources_cmd->parsed()) return run([&] { return cli::resources(c, g); });
    if (read_cmd->parsed()) return traced(Traced::once, [&] { return cli::read(c, g, server, uri); });
    if (prompts_cmd->parsed()) return run([&] { return cli::prompts(c, g); });
    if (prompt_cmd->parsed())
        return traced(Traced::once, [&] { return cli::prompt(c, g, server, prompt_name, std::move(*prompt_arguments)); });
    if (run_cmd->parsed()) return traced(Traced::once, [&] { return cli::run_task(c, g, agent, task); });
    if (chat_cmd->parsed()) return traced(Traced::interactive, [&] { return cli::chat(c, g, agent); });
    if (models_cmd->parsed()) return run([&] { return cli::models(c, g, agent); });
    if (serve_cmd->parsed()) return traced(Traced::serving, [&] { return cli::serve(c, g, serve_options); });
    if (catalog_refresh_cmd->parsed()) return run([&] { return cli::catalog_refresh(c, g, catalog_servers); });
    if (catalog_cmd->parsed()) return run([&] { return cli::catalog(c, g); });
    if (sandbox_check_cmd->parsed())
        return run([&] {
            return cli::sandbox_check(c, g, sandbox_server,
                                      std::chrono::milliseconds(static_cast<long>(sandbox_linger * 1000)));
        });
    if (pins_cmd->parsed()) {
        using Action = cli::PinsCommand::Action;
        if (pins_diff_cmd->parsed()) pins_command.action = Action::diff;
        if (pins_approve_cmd->parsed()) pins_command.action = Action::approve;
        if (pins_reset_cmd->parsed()) pins_command.action = Action::reset;
        return run([&] { return cli::pins(c, g, pins_command); });
    }
    return 2;
}
