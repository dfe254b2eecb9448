// The plan of a confined server and its launch (sandbox.hpp): bwrap's arguments, or the launcher's Landlock rules,
// the environment the server is given, and its egress proxy.
#include <switchboard/host/sandbox.hpp>

#include <switchboard/core/atomic_file.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <linux/landlock.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <poll.h>

extern char** environ;

namespace switchboard::host {

namespace fs = std::filesystem;

namespace {

// What a confined server's environment keeps of the host's: enough to find programs and speak the user's language,
// nothing that could be another server's secret (API keys live in the environment).
constexpr std::string_view passed_env[] = {"PATH",          "HOME",        "USER", "LOGNAME", "LANG",
                                           "LANGUAGE",      "TERM",        "TZ",   "SHELL",   "NODE_EXTRA_CA_CERTS",
                                           "SSL_CERT_FILE", "SSL_CERT_DIR"};

// Never readable once confined: keys, cloud and registry credentials, browsers' profiles, password stores, and
// Switchboard's own files (config, tokens, conversations, every server's state).
constexpr std::string_view home_secrets[] = {".ssh",
                                             ".gnupg",
                                             ".aws",
                                             ".azure",
                                             ".config/gcloud",
                                             ".kube",
                                             ".docker",
                                             ".netrc",
                                             ".git-credentials",
                                             ".config/gh",
                                             ".npmrc",
                                             ".pypirc",
                                             ".password-store",
                                             ".vault-token",
                                             ".terraform.d",
                                             ".mozilla",
                                             ".config/google-chrome",
                                             ".config/chromium",
                                             ".config/BraveSoftware",
                                             ".config/microsoft-edge",
                                             ".local/share/keyrings",
                                             ".config/switchboard",
                                             ".local/share/switchboard",
                                             ".local/state/switchboard",
                                             ".cache/switchboard",
                                             ".bash_history",
                                             ".zsh_history",
                                             ".python_history",
                                             ".local/share/fish/fish_history",
                                             ".pgpass",
                                             ".cargo/credentials.toml",
                                             ".cargo/credentials",
                                             ".config/rclone",
                                             ".claude.json",
                                             ".claude",
                                             ".cursor",
                                             ".codex",
                                             ".config/Code/User/globalStorage",
                                             "snap/firefox/common/.mozilla",
                                             "snap/chromium/common/chromium",
                                             ".var/app"};

constexpr int bridge_port = 3128;  // inside the sandbox's own network namespace: any port would do
constexpr std::string_view sandbox_socket = "/run/switchboard/proxy.sock";

std::string basename_of(std::string_view command) {
    const auto slash = command.rfind('/');
    return std::string(slash == std::string_view::npos ? command : command.substr(slash + 1));
}

std::string expand_path(std::string_view p, const std::string& home) {
    std::string out(p);
    if (out == "~")
        out = home;
    else if (out.starts_with("~/"))
        out = home + out.substr(1);
    std::error_code ec;
    fs::path path(out);
    if (path.is_relative()) path = fs::absolute(path, ec);
    return path.lexically_normal().string();
}

// The path itself when it exists (symlinks followed: bwrap mounts on the target), else nullopt.
std::optional<std::string> existing(const std::string& p) {
    std::error_code ec;
    auto canonical = fs::canonical(p, ec);
    if (ec) return std::nullopt;
    return canonical.string();
}

void add_unique(std::vector<std::string>& v, std::string s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(std::move(s));
}

bool is_under(std::string_view path, std::string_view root) {
    return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
           (path.size() == root.size() || path[root.size()] == '/' || root == "/");
}

int landlock_abi() {
    const long v = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v < 0 ? 0 : static_cast<int>(v);
}

// Runs `argv` with no input and waits at most `limit` for it; the first line of its stderr when it fails.
std::optional<std::string> run_probe(const std::vector<std::string>& args, std::chrono::milliseconds limit) {
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    ::posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(err[1]);
    if (rc != 0) {
        ::close(err[0]);
        return fmt::format("{}: {}", args[0], std::strerror(rc));
    }
    std::string text;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buf[512];
    while (true) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{err[0], POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
        const ssize_t n = ::read(err[0], buf, sizeof buf);
        if (n <= 0) break;
        if (text.size() < 4096) text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(err[0]);
    // Its stderr closed (or the time is up): it is exiting, or it hangs.
    int status = 0;
    pid_t reaped = 0;
    while ((reaped = ::waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
        ::usleep(200);
    if (reaped == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        return args[0] + " did not finish";
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
    if (const auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
    return text.empty() ? args[0] + " failed" : text;
}

std::optional<std::string> private_dir(const fs::path& dir);

// Whether bwrap can make its namespaces here: "yes" is remembered for this boot and this bwrap binary (a file in the
// runtime directory), so that a process confining a server pays for the probe (one bwrap run, ~5 ms) once per boot;
// a refusal is probed again by the next process.
std::optional<std::string> cached_probe(const fs::path& runtime_dir, const std::string& bwrap) {
    std::string exe = bwrap;
    if (exe.find('/') == std::string::npos)
        if (const char* path = std::getenv("PATH"))
            for (std::string_view rest = path; !rest.empty();) {
                const auto colon = rest.find(':');
                const auto dir = rest.substr(0, colon);
                if (!dir.empty() && ::access((std::string(dir) + "/" + bwrap).c_str(), X_OK) == 0) {
                    exe = std::string(dir) + "/" + bwrap;
                    break;
                }
                rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
            }
    std::error_code ec;
    const auto mtime = fs::last_write_time(exe, ec);
    std::string boot;
    std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
    const auto key = fmt::format("{} {} {} {}", boot, exe, ec ? 0 : mtime.time_since_epoch().count(), ::getuid());
    const auto file = runtime_dir / "bwrap-probe";
    if (!ec && !boot.empty()) {
        std::ifstream in(file);
        std::string line, verdict;
        if (std::getline(in, line) && line == key && std::getline(in, verdict) && verdict == "ok") return std::nullopt;
    }
    auto failed = run_probe({exe, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--ro-bind", "/", "/", "--dev",
                             "/dev", "--proc", "/proc", "--", "true"},
                            std::chrono::seconds(5));
    if (!failed && !ec && !boot.empty() && !private_dir(runtime_dir)) {  // a refusal is asked again later
        core::write_file_atomically(file, key + "\nok\n");  // best effort: a cache
    }
    return failed;
}

// The proxy's refusal of "host:port" ("[v6]:port") as the domain a person would allow.
SandboxRefusal domain_refusal(const EgressRefusal& r) {
    auto domain = r.target;
    if (const auto colon = domain.rfind(':'); colon != std::string::npos) domain.resize(colon);
    if (domain.size() > 2 && domain.front() == '[') domain = domain.substr(1, domain.size() - 2);
    return {"domain", std::move(domain), r.reason, r.at};
}

// Made if missing, 0700; an error when it is a symlink or another user's (a directory under /tmp with a name anyone
// could have taken first: whoever owns it could swap the proxies' sockets).
std::optional<std::string> private_dir(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) return fmt::format("{}: {}", dir.string(), std::strerror(errno));
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
        return fmt::format("{} is not a directory of this user's (remove it, or set XDG_RUNTIME_DIR)", dir.string());
    if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0)
        return fmt::format("{}: {}", dir.string(), std::strerror(errno));
    return std::nullopt;
}

// The paths under /tmp or /run (private in the sandbox) that the server needs: its working directory, a script it
// runs. Never /tmp or /run themselves: that would give it the host's.
std::vector<std::string> private_dir_paths(const transport::StdioProcessOptions& options, const std::string& cwd) {
    std::vector<std::string> candidates = options.args, out;
    candidates.push_back(cwd);
    candidates.push_back(options.command);
    for (const auto& c : candidates) {
        const auto e = existing(c);
        if (!e) continue;
        // Where it really is, and the path it is named by when that goes through a symlink (both may be covered).
        std::error_code ec;
        const auto named = fs::absolute(c, ec).lexically_normal().string();
        for (const auto& path : {*e, named})
            for (const char* root : {"/tmp", "/run", "/var/tmp", "/dev/shm"})
                if (is_under(path, root) && path != root) add_unique(out, path);
    }
    return out;
}

}  // namespace

std::string_view layer_name(SandboxLayer layer) {
    switch (layer) {
    case SandboxLayer::bwrap: return "bwrap";
    case SandboxLayer::landlock: return "landlock";
    case SandboxLayer::container: return "container";
    case SandboxLayer::unconfined: break;
    }
    return "unconfined";
}

std::optional<SandboxLayer> parse_layer(std::string_view text) {
    if (text == "bwrap") return SandboxLayer::bwrap;
    if (text == "landlock") return SandboxLayer::landlock;
    return std::nullopt;
}

SandboxHost SandboxHost::from_environment() {
    SandboxHost h;
    const char* home = std::getenv("HOME");
    h.home = home && *home ? home : "/";
    const char* state = std::getenv("XDG_STATE_HOME");
    h.state_root = fs::path(state && *state ? state : h.home + "/.local/state") / "switchboard" / "servers";
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    h.runtime_dir = runtime && *runtime ? fs::path(runtime) / "switchboard"
                                        : fs::path(fmt::format("/tmp/switchboard-{}", ::getuid()));
    if (const char* c = std::getenv("SWITCHBOARD_CONFINE"); c && *c) {
        h.confine_exe = c;
    } else {
        std::error_code ec;
        const auto self = fs::read_symlink("/proc/self/exe", ec);
        const auto next = self.parent_path() / "switchboard-confine";
        h.confine_exe = !ec && fs::exists(next, ec) ? next.string() : "switchboard-confine";
    }
    if (const char* l = std::getenv("SWITCHBOARD_SANDBOX_LAYER"); l && *l) h.forced_layer = parse_layer(l);
    if (const char* b = std::getenv("SWITCHBOARD_BWRAP"); b && *b) h.bwrap_exe = b;
    // Switchboard's own directories wherever the XDG variables put them (the defaults are in home_secrets).
    for (const char* var : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"})
        if (const char* v = std::getenv(var); v && *v) h.own_secrets.push_back((fs::path(v) / "switchboard").string());
    return h;
}

std::optional<LauncherProfile> launcher_profile(std::string_view command) {
    const auto name = basename_of(command);
    if (name == "npx" || name == "npm") return LauncherProfile{"npx", {"~/.npm"}, {"registry.npmjs.org"}};
    if (name == "uvx" || name == "uv")
        return LauncherProfile{"uvx", {"~/.cache/uv", "~/.local/share/uv"}, {"pypi.org", "files.pythonhosted.org"}};
    if (name == "bunx" || name == "bun")
        return LauncherProfile{"bunx", {"~/.bun/install/cache"}, {"registry.npmjs.org"}};
    if (name == "deno")
        return LauncherProfile{"deno", {"~/.cache/deno"}, {"deno.land", "jsr.io", "registry.npmjs.org"}};
    if (name == "node" || name.starts_with("python") || name == "pipx")
        return LauncherProfile{name.starts_with("python") ? "python" : name, {}, {}};
    return std::nullopt;
}

std::vector<std::string> refused_paths_in(std::string_view line) {
    static constexpr std::string_view markers[] = {
        "EACCES", "EPERM", "EROFS", "ermission denied", "ead-only file system", "peration not permitted"};
    std::vector<std::string> out;
    if (std::none_of(std::begin(markers), std::end(markers),
                     [&](std::string_view m) { return line.find(m) != std::string_view::npos; }))
        return out;
    // Quoted paths first ('/x' or "/x"), the way Node and Python print them; else bare ones.
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char q = line[i];
        if ((q != '\'' && q != '"') || i + 1 >= line.size() || (line[i + 1] != '/' && line[i + 1] != '~')) continue;
        const auto end = line.find(q, i + 1);
        if (end == std::string_view::npos) break;
        add_unique(out, std::string(line.substr(i + 1, end - i - 1)));
        i = end;
    }
    if (!out.empty()) return out;
    std::size_t pos = 0;
    while ((pos = line.find('/', pos)) != std::string_view::npos) {
        if (pos > 0 && line[pos - 1] != ' ' && line[pos - 1] != '(' && line[pos - 1] != '`') {
            ++pos;
            continue;
        }
        auto end = line.find_first_of(" \t'\"`),", pos);
        if (end == std::string_view::npos) end = line.size();
        auto token = line.substr(pos, end - pos);
        while (!token.empty() && (token.back() == ':' || token.back() == '.')) token.remove_suffix(1);
        if (token.size() > 1) add_unique(out, std::string(token));
        pos = end;
    }
    return out;
}

// ---- Sandboxer ----------------------------------------------------------------------------------------------------

struct Sandboxer::Entry {
    SandboxPlan plan;
    std::shared_ptr<EgressProxy> proxy;
    EgressPolicy policy;  // the proxy's, to reopen it only when it changes
    std::deque<SandboxRefusal> path_refusals;
};

Sandboxer::Sandboxer(boost::asio::any_io_executor ex, SandboxHost host) : ex_(std::move(ex)), host_(std::move(host)) {}

Sandboxer::~Sandboxer() { close(); }

bool Sandboxer::wants(const ServerConfig& config) const {
    if (config.type != TransportKind::stdio) return false;
    if (host_.confine_all) return *host_.confine_all;
    return config.sandbox.enabled.value_or(false);
}

std::string Sandboxer::state_dir(std::string_view server) const {
    const auto dir = host_.state_root / std::string(server);
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::permissions(host_.state_root.parent_path(), fs::perms::owner_all, fs::perm_options::replace, ec);
    return dir.string();
}

// bwrap when it can make its namespaces here (one run of it, the first time), else Landlock, else none.
SandboxLayer Sandboxer::available_layer(std::string& fallback) const {
    if (!probed_) {
        std::string why;
        auto layer = SandboxLayer::unconfined;
        if (host_.forced_layer != SandboxLayer::landlock) {
            const auto failed = cached_probe(host_.runtime_dir, host_.bwrap_exe);
            if (!failed)
                layer = SandboxLayer::bwrap;
            else
                why = "bwrap: " + *failed;
        } else {
            why = "bwrap: not tried (SWITCHBOARD_SANDBOX_LAYER=landlock)";
        }
        if (layer == SandboxLayer::unconfined && host_.forced_layer != SandboxLayer::bwrap) {
            if (const int abi = landlock_abi(); abi >= 4) {
                layer = SandboxLayer::landlock;
            } else if (abi >= 1) {
                why += fmt::format("; Landlock ABI {} cannot restrict TCP (4 is needed: Linux 6.7)", abi);
            } else {
                why += "; Landlock: not available in this kernel";
            }
        }
        probed_.emplace(layer, why);
        if (layer != SandboxLayer::bwrap && !why.empty()) spdlog::info("sandbox: {}", why);
    }
    fallback = probed_->second;
    return probed_->first;
}

jsonrpc::Outcome<SandboxPlan> Sandboxer::plan(const ServerConfig& config) const {
    const auto fail = [&](std::string why) {
        return jsonrpc::Error::make_local(jsonrpc::code::transport_error, std::move(why));
    };
    SandboxPlan p;
    const auto command = basename_of(config.command);
    if (command == "docker" || command == "podman") {
        p.layer = SandboxLayer::container;
        return p;
    }
    p.layer = available_layer(p.fallback);
    if (p.layer == SandboxLayer::unconfined)
        return fail(fmt::format(
            "server \"{}\" asks to be confined, and no sandbox can be had here ({}). Install bubblewrap and allow user "
            "namespaces (Ubuntu: sysctl kernel.apparmor_restrict_unprivileged_userns=0), or use a kernel with "
            "Landlock; or set \"sandboxEnabled\": false for it to run unconfined",
            config.name, p.fallback));
    if (::access(host_.confine_exe.c_str(), X_OK) != 0 && host_.confine_exe.find('/') != std::string::npos)
        return fail(
            fmt::format("server \"{}\" asks to be confined, and the launcher {} is missing: reinstall Switchboard",
                        config.name, host_.confine_exe));
    const auto& home = host_.home;
    const auto profile = launcher_profile(config.command);
    if (profile) p.profile = profile->name;
    p.state_dir = state_dir(config.name);
    p.writable.push_back(p.state_dir);
    if (profile)
        for (const auto& w : profile->writable) {
            const auto path = expand_path(w, home);
            std::error_code ec;
            fs::create_directories(path, ec);  // a cache the launcher would make on first use
            if (auto e = existing(path)) add_unique(p.writable, *e);
        }
    for (const auto& w : config.sandbox.allow_write) {
        if (auto e = existing(expand_path(w, home)))
            add_unique(p.writable, *e);
        else
            spdlog::warn("server \"{}\": sandbox.filesystem.allowWrite \"{}\" does not exist; not writable",
                         config.name, w);
    }
    std::vector<std::string> hide;
    for (auto s : home_secrets) hide.push_back(home + "/" + std::string(s));
    for (const auto& s : host_.own_secrets) {
        hide.push_back(s);
        hide.push_back(s + "-wal");
        hide.push_back(s + "-shm");
    }
    for (const auto& d : config.sandbox.deny_read) hide.push_back(expand_path(d, home));
    hide.push_back(host_.state_root.string());  // every server's state; this one's is bound again, writable
    hide.push_back(host_.runtime_dir.string());
    for (const auto& h : hide)
        if (auto e = existing(h)) add_unique(p.hidden, *e);
    for (const auto& r : config.sandbox.allow_read)
        if (auto e = existing(expand_path(r, home))) add_unique(p.readable, *e);
    if (profile) p.allowed_domains = profile->domains;
    for (const auto& d : config.sandbox.allowed_domains) add_unique(p.allowed_domains, d);
    p.denied_domains = config.sandbox.denied_domains;
    return p;
}

jsonrpc::Outcome<SandboxPlan> Sandboxer::wrap(const ServerConfig& config, transport::StdioProcessOptions& options) {
    auto planned = plan(config);
    if (!planned) return planned.error();
    auto& p = *planned;
    auto& entry = entries_[config.name];
    if (!entry) entry = std::make_unique<Entry>();
    entry->plan = p;
    if (p.layer == SandboxLayer::container) return p;

    // The proxy: reopened only when what it allows changed (a reconnect keeps it, and its refusals).
    EgressPolicy policy{p.allowed_domains, p.denied_domains, host_.addresses};
    for (const auto& text : config.sandbox.allowed_addresses) {
        std::string error;
        if (auto cidr = http::parse_cidr(text, error)) policy.addresses.allow.push_back(*cidr);
    }
    const auto texts = [](const http::AddressPolicy& a) {
        std::vector<std::string> out;
        for (const auto& c : a.allow) out.push_back(c.text());
        return out;
    };
    const bool same = entry->proxy && entry->policy.allowed_domains == policy.allowed_domains &&
                      entry->policy.denied_domains == policy.denied_domains &&
                      texts(entry->policy.addresses) == texts(policy.addresses) &&
                      ((p.layer == SandboxLayer::bwrap) == !entry->proxy->unix_path().empty());
    if (!same) {
        if (entry->proxy) entry->proxy->close();
        if (auto why = private_dir(host_.runtime_dir))
            return jsonrpc::Error::make_local(jsonrpc::code::transport_error,
                                              fmt::format("server \"{}\" cannot be confined: {}", config.name, *why));
        static unsigned counter = 0;
        std::string socket;
        if (p.layer == SandboxLayer::bwrap)
            socket = (host_.runtime_dir / fmt::format("proxy-{}-{}.sock", ::getpid(), ++counter)).string();
        auto proxy = EgressProxy::open(ex_, config.name, policy, socket, p.layer == SandboxLayer::landlock);
        if (!proxy) return proxy.error();
        entry->proxy = *proxy;
        entry->proxy->set_on_refused([this, name = config.name](const EgressRefusal& r) {
            if (on_refused) on_refused(name, domain_refusal(r));
        });
        entry->policy = policy;
    }

    // The environment: a few of the host's variables, then the entry's own, then the proxy's.
    std::map<std::string, std::string> env;
    for (auto name : passed_env)
        if (const char* v = std::getenv(std::string(name).c_str())) env[std::string(name)] = v;
    for (char** e = environ; e && *e; ++e)
        if (std::string_view kv(*e); kv.starts_with("LC_"))
            if (const auto eq = kv.find('='); eq != std::string_view::npos)
                env[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    for (const auto& [k, v] : options.env) env[k] = v;
    const auto proxy_url = p.layer == SandboxLayer::bwrap
                               ? fmt::format("http://127.0.0.1:{}", bridge_port)
                               : fmt::format("http://127.0.0.1:{}", entry->proxy->tcp_port());
    for (const char* k : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy",
                          "npm_config_proxy", "npm_config_https_proxy", "GLOBAL_AGENT_HTTP_PROXY"})
        env[k] = proxy_url;
    env["NO_PROXY"] = env["no_proxy"] = "";
    env["NODE_USE_ENV_PROXY"] = "1";  // Node >= 24's fetch and http(s) honour the variables with it
    env["SWITCHBOARD_STATE_DIR"] = p.state_dir;
    env["SWITCHBOARD_SANDBOX"] = std::string(layer_name(p.layer));

    std::error_code ec;
    const std::string cwd = options.cwd.empty() ? fs::current_path(ec).string() : expand_path(options.cwd, host_.home);
    std::vector<std::string> args;
    const auto original = [&] {
        args.push_back("--");
        args.push_back(options.command);
        args.insert(args.end(), options.args.begin(), options.args.end());
    };
    if (p.layer == SandboxLayer::bwrap) {
        env["TMPDIR"] = "/tmp";
        args = {"--die-with-parent",
                "--new-session",
                "--unshare-pid",
                "--unshare-net",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--cap-drop",
                "ALL",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--tmpfs",
                "/tmp",
                "--tmpfs",
                "/run"};
        // Mounts by depth, shallow first, so that the deeper rule wins: a hidden ~/.ssh inside a writable ~, this
        // server's state directory inside the hidden state of all of them, a secret inside a directory under /tmp.
        struct Mount {
            enum Kind { hide, read, write } kind;
            std::string path;
        };
        std::vector<Mount> mounts;
        for (const auto& h : p.hidden) mounts.push_back({Mount::hide, h});
        for (const auto& c : private_dir_paths(options, cwd)) mounts.push_back({Mount::read, c});
        // The launcher itself, wherever it is installed (a build under /tmp, say, which the private /tmp covers).
        if (auto e = existing(host_.confine_exe)) mounts.push_back({Mount::read, *e});
        for (const auto& r : p.readable) mounts.push_back({Mount::read, r});
        for (const auto& w : p.writable) mounts.push_back({Mount::write, w});
        const auto depth = [](const std::string& path) { return std::count(path.begin(), path.end(), '/'); };
        std::stable_sort(mounts.begin(), mounts.end(),
                         [&](const Mount& a, const Mount& b) { return depth(a.path) < depth(b.path); });
        for (const auto& m : mounts) {
            if (m.kind == Mount::read)
                args.insert(args.end(), {"--ro-bind", m.path, m.path});
            else if (m.kind == Mount::write)
                args.insert(args.end(), {"--bind", m.path, m.path});
            else if (fs::is_directory(m.path, ec))
                args.insert(args.end(), {"--tmpfs", m.path});
            else
                args.insert(args.end(), {"--ro-bind", "/dev/null", m.path});
        }
        // The proxy's socket last, and /run read-only after it: nothing above covers it, and the server cannot put
        // another socket where the bridge looks (the bridge also holds the socket itself, opened before the server).
        args.insert(args.end(), {"--dir", "/run/switchboard", "--bind", entry->proxy->unix_path(),
                                 std::string(sandbox_socket), "--remount-ro", "/run"});
        args.insert(args.end(), {"--chdir", cwd, "--", host_.confine_exe, "--seccomp", "bwrap", "--bridge",
                                 fmt::format("{}:{}", sandbox_socket, bridge_port)});
        original();
        options.command = host_.bwrap_exe;
    } else {
        const auto tmp = p.state_dir + "/tmp";
        fs::create_directories(tmp, ec);
        env["TMPDIR"] = tmp;
        args = {"--seccomp", "landlock", "--landlock", "--read", "/"};
        for (const auto& h : p.hidden) args.insert(args.end(), {"--hide", h});
        // No private /tmp here: the host's temporary and runtime directories are hidden instead (Kerberos tickets,
        // registry credentials, X cookies, other programs' sockets), but what the server is started from.
        const char* runtime = std::getenv("XDG_RUNTIME_DIR");
        for (std::string dir : {std::string("/tmp"), std::string("/var/tmp"), std::string("/dev/shm"),
                                std::string(runtime ? runtime : "")})
            if (!dir.empty())
                if (auto e = existing(dir)) args.insert(args.end(), {"--hide", *e});
        for (const auto& c : private_dir_paths(options, cwd)) args.insert(args.end(), {"--read", c});
        for (const auto& r : p.readable) args.insert(args.end(), {"--read", r});
        for (const auto& w : p.writable) args.insert(args.end(), {"--write", w});
        args.insert(args.end(), {"--tcp", std::to_string(entry->proxy->tcp_port())});
        original();
        options.command = host_.confine_exe;
    }
    options.args = std::move(args);
    options.env = std::move(env);
    options.inherit_env = false;
    options.cwd = cwd;
    return p;
}

std::optional<SandboxPlan> Sandboxer::plan_in_force(std::string_view server) const {
    const auto it = entries_.find(server);
    if (it == entries_.end()) return std::nullopt;
    return it->second->plan;
}

std::vector<SandboxRefusal> Sandboxer::refusals(std::string_view server) const {
    std::vector<SandboxRefusal> out;
    const auto it = entries_.find(server);
    if (it == entries_.end()) return out;
    out.assign(it->second->path_refusals.begin(), it->second->path_refusals.end());
    if (it->second->proxy)
        for (const auto& r : it->second->proxy->refusals()) out.push_back(domain_refusal(r));
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.at < b.at; });
    if (out.size() > 20) out.erase(out.begin(), out.end() - 20);
    return out;
}

void Sandboxer::note_stderr(std::string_view server, std::string_view line) {
    const auto it = entries_.find(server);
    if (it == entries_.end() || it->second->plan.layer == SandboxLayer::container) return;
    auto& e = *it->second;
    for (auto path : refused_paths_in(line)) {
        // A file it could not create: what can be allowed is the directory it was to be made in.
        std::error_code ec;
        for (fs::path p(path); !p.empty() && p != p.root_path() && !fs::exists(p, ec); p = p.parent_path())
            path = p.parent_path().string();
        // What a server prints is its own word: never offer home, or above it, for writing.
        if (path == "/" || is_under(host_.home, path)) continue;
        const bool again = std::any_of(e.path_refusals.begin(), e.path_refusals.end(),
                                       [&](const SandboxRefusal& r) { return r.target == path; });
        if (again) continue;
        e.path_refusals.push_back(
            {"path", std::move(path), std::string(line.substr(0, 300)), std::chrono::system_clock::now()});
        if (e.path_refusals.size() > 20) e.path_refusals.pop_front();
        if (on_refused) on_refused(std::string(server), e.path_refusals.back());
    }
}

void Sandboxer::release(std::string_view server) {
    const auto it = entries_.find(server);
    if (it == entries_.end()) return;
    if (it->second->proxy) it->second->proxy->close();
    entries_.erase(it);
}

void Sandboxer::close() {
    for (auto& [name, e] : entries_)
        if (e->proxy) e->proxy->close();
    entries_.clear();
}

}  // namespace switchboard::host
