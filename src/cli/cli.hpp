// The command-line front end: one file per command, each a coroutine returning the process exit status. Every
// one-shot command runs inside with_host(): start the pool and its main context, wait for the servers, print, shut
// down.
#pragma once

#include <switchboard/host/config.hpp>
#include <switchboard/host/context.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/store/conversation_store.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::cli {

struct GlobalOptions {
    std::optional<std::string> config_file;
    bool json = false;
    bool watch = false;  ///< status --watch
    bool context = false;  ///< status --context
};

/// The pool and its main context, as a command sees them.
struct Host {
    std::shared_ptr<host::ServerPool> pool;
    std::shared_ptr<host::Context> main;
};

/// Whether with_host waits for every server before running the command (listings), or not (a call, which waits
/// only for what it needs).
enum class Settle { all, none };

/// Starts a pool on `config` (its main context sees every server the pool starts), waits until each has connected
/// or failed (Settle::all, the default), runs `body`, shuts the pool down and returns what `body` returned.
boost::asio::awaitable<int> with_host(host::Config config, std::function<boost::asio::awaitable<int>(Host&)> body);
boost::asio::awaitable<int> with_host(host::Config config, Settle settle,
                                      std::function<boost::asio::awaitable<int>(Host&)> body);
boost::asio::awaitable<int> with_host(host::Config config, Settle settle, host::PoolOptions options,
                                      std::function<boost::asio::awaitable<int>(Host&)> body);

/// What a traced command is: one that ends (`call`, `run`), one a person keeps open (`chat`), or `serve`.
enum class Traced { once, interactive, serving };
/// Runs `command` with this process's tracing (the config's `tracing`, `--otlp-endpoint`, the OTEL_* variables):
/// spans exported while it runs and flushed after it (at most 5 s), the local trace file saved (every 5 s too unless
/// `once`; `serving` also records the duration histograms of /metrics). A bad setting is reported and returns 2
/// without running the command.
boost::asio::awaitable<int> traced(const host::Config& config, std::string otlp_endpoint, Traced kind,
                                   std::function<boost::asio::awaitable<int>()> command);
/// `switchboard trace [ID] [--json]`: the recent traces of the local trace file, or one's span tree.
int trace_command(const std::string& id, bool json_output);

/// Every host this process runs asks its servers for log messages from `level` up ("debug" ... "emergency") and
/// prints them on stderr (`--log-level`). Empty: none are asked for (the servers' defaults) nor printed.
void print_server_logs(std::string level);

/// How every host this process runs pins what servers offer (`--pins`; nullopt: as the config says).
void use_pinning(std::optional<host::Config::Pinning> mode);

/// What main read of confinement: --sandbox / --no-sandbox (every stdio server, or none, for this run),
/// --sandbox-layer, and the conversations database this run uses (hidden from confined servers).
struct SandboxFlags {
    std::optional<bool> confine_all;
    std::optional<host::SandboxLayer> layer;
    std::string db;
};
void use_sandbox(SandboxFlags flags);
/// The sandbox for a host on `config`: the environment's, with the flags and Switchboard's own files.
std::shared_ptr<host::Sandboxer> make_sandboxer(boost::asio::any_io_executor ex, const host::Config& config);

/// The config reduced to the one named server, or nullopt (reported on stderr) when there is no such server.
std::optional<host::Config> only_server(const host::Config& config, const std::string& name);

/// Servers that failed, reported on stderr (listings on stdout stay clean); whether any did.
void report_failures(const host::ServerPool& pool);
bool any_failed(const host::ServerPool& pool);

// Commands.
boost::asio::awaitable<int> status(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> tools(const host::Config& config, const GlobalOptions& g);
/// `status --context`: tool-definition tokens of the main context vs every server eager.
boost::asio::awaitable<int> context_cost(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> call(const host::Config& config, const GlobalOptions& g, std::string name,
                                 boost::json::object arguments);
boost::asio::awaitable<int> resources(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> read(const host::Config& config, const GlobalOptions& g, std::string server,
                                 std::string uri);
boost::asio::awaitable<int> prompts(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> prompt(const host::Config& config, const GlobalOptions& g, std::string server,
                                   std::string name, std::map<std::string, std::string> arguments);

/// `catalog`: the tool catalog of the lazy servers (tool search); `catalog refresh`: starts each lazy server (or
/// those named) once and records its tools.
boost::asio::awaitable<int> catalog(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> catalog_refresh(const host::Config& config, const GlobalOptions& g,
                                            std::vector<std::string> servers);

/// `pins [SERVER]`, `pins diff SERVER[/NAME]`, `pins approve SERVER[/NAME]`, `pins reset SERVER`.
struct PinsCommand {
    enum class Action { list, diff, approve, reset } action = Action::list;
    std::string target;  ///< SERVER or SERVER/NAME; empty: every server (list)
};
boost::asio::awaitable<int> pins(const host::Config& config, const GlobalOptions& g, PinsCommand command);

/// `sandbox check NAME`: starts the stdio server NAME confined, lists it, calls nothing, and reports what was refused
/// with the `sandbox` block that would allow it. 0: started and nothing refused.
boost::asio::awaitable<int> sandbox_check(const host::Config& config, const GlobalOptions& g, std::string name,
                                          std::chrono::milliseconds linger);

/// `auth login SERVER`: the OAuth login of a remote server, in the browser (a loopback redirect listener; the URL is
/// printed for a machine without a browser). `auth status`: what the token file holds per server (never a token).
/// `auth logout SERVER`: forgets the server's tokens and client registration.
struct AuthLoginOptions {
    int port = 0;  ///< the redirect listener's port; 0: the config's oauth.redirectPort, else any free port
    bool no_browser = false;
    int timeout_s = 300;
};
boost::asio::awaitable<int> auth_login(const host::Config& config, const GlobalOptions& g, std::string server,
                                       AuthLoginOptions options);
int auth_status(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> auth_logout(const host::Config& config, std::string server);

/// `serve`: the gateway.
struct ServeOptions {
    std::uint16_t port = 3333;
    std::string bind = "127.0.0.1";
    bool stdio = false;
    std::vector<std::string> allow_origins;
    std::string token;                          ///< --token, else $SWITCHBOARD_TOKEN
    std::vector<std::string> tools;             ///< allow globs for every client's context
    bool quiet = false;                         ///< --quiet: no access log
    bool cors_proxy = false;                    ///< --cors-proxy: GET/POST /cors-proxy?url=...
    std::vector<std::string> cors_proxy_allow;  ///< --cors-proxy-allow CIDR: special addresses the proxy may reach
    std::string instance_id;  ///< --instance-id: prefix of legacy session ids (load balancers route on it)
    std::string db;           ///< --db: the web UI's conversations (default: the store's default path)
    std::string auth;         ///< --auth oauth: an OAuth resource server (JWTs of --issuer for --audience)
    std::string issuer, audience, jwks_url;
    int clock_skew = 60;  ///< --clock-skew: seconds of leeway on a token's exp and nbf
    bool skills = false;  ///< --skills: serve the local skills too (the Skills extension)
    int header_timeout = 10;  ///< --header-timeout: seconds a client has to send a complete request head
    int idle_timeout = 60;    ///< --idle-timeout: seconds a kept-alive connection may stay silent
    int metrics_port = -1;    ///< --metrics-port (with --stdio): /healthz, /readyz, /metrics there; -1: none
    int page_size = 1000;     ///< --page-size: longer lists come in pages (0: never)
};
/// Fills the token from the environment and checks the options: an error message (exit 2) or nullopt.
std::optional<std::string> check_serve_options(ServeOptions& options);
boost::asio::awaitable<int> serve(const host::Config& config, const GlobalOptions& g, ServeOptions options);

/// Options of the commands that talk to a model (`run`, `chat`, `models`).
struct AgentOptions {
    std::optional<std::string> llm_url;  ///< --llm
    std::optional<std::string> model;    ///< --model
    std::vector<std::string> allow_tools;
    bool yes = false;
    int max_turns = 100;
    std::optional<std::string> db;
    std::optional<std::int64_t> resume;
    bool allow_sampling = false;
    std::vector<std::string> roots;  ///< --root; the working directory when none is given
    bool no_store = false;           ///< --no-store: keep nothing on disk
    std::string agent;               ///< run --agent NAME: run that agent (or skill) on the task directly
};

boost::asio::awaitable<int> run_task(const host::Config& config, const GlobalOptions& g, AgentOptions options,
                                     std::string task);
boost::asio::awaitable<int> chat(const host::Config& config, const GlobalOptions& g, AgentOptions options);
boost::asio::awaitable<int> models(const host::Config& config, const GlobalOptions& g, AgentOptions options);

/// `agents`: the agents and skills found from the working directory (agent::discover) and their servers, checked
/// against `config` (lazy ones, missing ones). Synchronous, no host. 1 when a definition could not be read.
int agents(const host::Config& config, const GlobalOptions& g);
/// `agents --connect`: the same, with the eager servers started and the skills they serve added (marked by server),
/// as `run` and `chat` offer them.
boost::asio::awaitable<int> agents_connected(const host::Config& config, const GlobalOptions& g);

/// `conversations` and its subcommands: synchronous, on the store alone (no config, no host).
struct ConversationsCommand {
    enum class Action { list, show, remove, rename, tasks } action = Action::list;  ///< tasks: `switchboard tasks`
    std::string db;  ///< empty: ConversationStore::default_path()
    bool json = false;
    bool markdown = false;
    std::string search;  ///< list
    std::int64_t id = 0;
    std::string title;  ///< rename
};
int conversations(const ConversationsCommand& command);

/// `add`, `add-json`, `remove`, `get` (Claude Code's `mcp add` syntax): edits of the config file, through the code
/// the web UI's server form uses. Synchronous, no host; a running `serve` picks the edit up as it does a hand edit.
struct AddCommand {
    std::string transport;             ///< stdio (default), http, sse, ws
    std::vector<std::string> words;    ///< NAME, then the command and its arguments, or the URL
    std::vector<std::string> env;      ///< -e KEY=VALUE
    std::vector<std::string> headers;  ///< -H "Name: value"
    std::string json;                  ///< add-json
    std::string scope;                 ///< local, project, user ("" : the config the other commands read)
    std::string client_id;             ///< --client-id (OAuth)
    bool client_secret = false;        ///< --client-secret: asked for, kept in the env file
    int callback_port = 0;             ///< --callback-port (OAuth redirect port)
    bool lazy = false;
    bool disabled = false;
    bool confine = true;  ///< a new stdio entry gets "sandboxEnabled": true (--no-sandbox: false)
};
int add_server(const GlobalOptions& g, const AddCommand& command);
int add_server_json(const GlobalOptions& g, const AddCommand& command);
int remove_server(const GlobalOptions& g, const std::string& name, const std::string& scope);
int get_server(const GlobalOptions& g, const std::string& name, const std::string& scope);

/// The file `add` writes: --config, else --scope's (project/local: ./.mcp.json, user: the user settings file), else
/// the file the other commands read, else the user settings file (created). nullopt with a message on a bad scope.
std::optional<std::filesystem::path> file_to_edit(const GlobalOptions& g, const std::string& scope);
/// Reads a line from the terminal without echo (a secret); nullopt at end of input.
std::optional<std::string> read_secret(const std::string& prompt);

/// `registry search|show|add`: the MCP Registry (registry/registry_client.hpp).
struct RegistryCommand {
    std::string registry;              ///< --registry URL
    std::string term;                  ///< search
    std::string name;                  ///< show, add: NAME[@VERSION]
    std::string version;               ///< show --version
    std::string as;                    ///< add --as LOCAL
    std::string use;                   ///< add --use npm|pypi|oci|nuget|remote
    std::vector<std::string> values;   ///< -e KEY=VALUE: answers (environment variables, {variables}, arguments)
    std::vector<std::string> headers;  ///< -H "Name: value": answers for headers
    std::string scope;
    std::size_t limit = 20;
    int timeout_s = 15;  ///< --timeout: connect, and silence while reading
    bool yes = false;
    bool lazy = false;
    bool disabled = false;
    bool confine = true;
};
int registry_search(const GlobalOptions& g, const RegistryCommand& command);
int registry_show(const GlobalOptions& g, const RegistryCommand& command);
int registry_add(const GlobalOptions& g, const RegistryCommand& command);

// Rendering (render.cpp).
/// Human-readable rendering of a tool result or resource contents; binary parts as "[image/png, N bytes]".
std::string render_content(const std::vector<mcp::Content>& content);
std::string render_contents(const std::vector<mcp::ResourceContents>& contents);
/// The status table (also what `status --watch` redraws).
std::string render_status(const std::vector<host::ServerStatus>& servers);
boost::json::value status_json(const std::vector<host::ServerStatus>& servers);
/// Prints `v` on one line, every string made valid UTF-8.
void print_json(boost::json::value v);

}  // namespace switchboard::cli
