// Confined stdio servers: what a server may touch, decided from its entry, and the launch that enforces it.
//
// A confined server starts through bubblewrap (layer "bwrap": its own mount, pid, network, IPC and UTS namespaces;
// / read-only; the secrets hidden under empty directories or /dev/null; a private /tmp; its state directory and the
// `allowWrite` paths writable) and then switchboard-confine (src/confine/main.cpp: no capabilities, no new
// privileges, the seccomp filter). Where namespaces are refused (AppArmor's userns restriction, containers), the
// same rules come from Landlock and the filter alone (layer "landlock"). Where neither can be had, the server is not
// started: the error names the cause and the fix. Its only way out is the egress proxy (egress_proxy.hpp) in this
// process, one per server, which knows the server by the socket it is reached on.
//
// `docker` and `podman` commands are not wrapped (layer "container"): the container is their sandbox, and the
// client needs the daemon's socket, which the filter refuses.
//
// Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/host/config.hpp>
#include <switchboard/host/egress_proxy.hpp>
#include <switchboard/jsonrpc/error.hpp>
#include <switchboard/transport/stdio_process.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::host {

enum class SandboxLayer { unconfined, bwrap, landlock, container };
std::string_view layer_name(SandboxLayer layer);
/// "bwrap", "landlock"; nullopt for anything else.
std::optional<SandboxLayer> parse_layer(std::string_view text);

/// What the host knows that is the same for every server.
struct SandboxHost {
    std::string home;                      ///< $HOME
    std::filesystem::path state_root;      ///< servers' state directories ($XDG_STATE_HOME/switchboard/servers)
    std::filesystem::path runtime_dir;     ///< the proxies' sockets (private to this user)
    std::vector<std::string> own_secrets;  ///< Switchboard's config, token store, conversations database
    std::string confine_exe;               ///< switchboard-confine: next to this program unless given
    std::string bwrap_exe = "bwrap";
    /// --sandbox / --no-sandbox for one run: every stdio server confined, or none (status says "unconfined").
    std::optional<bool> confine_all;
    /// SWITCHBOARD_SANDBOX_LAYER / --sandbox-layer: take this layer even where another is available (tests of the
    /// Landlock path on a machine that has namespaces).
    std::optional<SandboxLayer> forced_layer;
    /// The egress proxies' address policy: loopback and private targets refused unless a CIDR allows them.
    http::AddressPolicy addresses;

    /// From the environment: $HOME, XDG directories, SWITCHBOARD_SANDBOX_LAYER, the launcher next to /proc/self/exe
    /// (or SWITCHBOARD_CONFINE).
    static SandboxHost from_environment();
};

/// The policy of one server as it will be enforced, for status and `sandbox check`.
struct SandboxPlan {
    SandboxLayer layer = SandboxLayer::unconfined;
    std::string profile;    ///< the launcher profile applied ("npx", "uvx", ...), or ""
    std::string state_dir;  ///< private and persisted; also ${SWITCHBOARD_STATE_DIR} in the entry
    std::vector<std::string> writable;
    std::vector<std::string> hidden;
    std::vector<std::string> readable;  ///< `allowRead`: readable again inside a hidden path
    std::vector<std::string> allowed_domains, denied_domains;
    std::string fallback;  ///< why a preferred layer was not used ("bwrap: ..."), or ""
    bool operator==(const SandboxPlan&) const = default;
};

/// A refusal seen: a domain from the proxy, or a path from the server's stderr.
struct SandboxRefusal {
    std::string kind;  ///< "domain" or "path"
    std::string target;
    std::string detail;
    std::chrono::system_clock::time_point at;
};

/// The paths in a line of a server's stderr that look refused ("EACCES: permission denied, open '/x'",
/// "Read-only file system: '/y'", "PermissionError: [Errno 13] Permission denied: '/z'").
std::vector<std::string> refused_paths_in(std::string_view line);

/// What a launcher command (npx, uvx, ...) needs: writable caches and the domains of its registry.
struct LauncherProfile {
    std::string name;
    std::vector<std::string> writable;  ///< "~/.npm" style
    std::vector<std::string> domains;
};
std::optional<LauncherProfile> launcher_profile(std::string_view command);

class Sandboxer {
public:
    Sandboxer(boost::asio::any_io_executor ex, SandboxHost host);
    ~Sandboxer();

    /// Whether `config` is to be confined: a stdio entry's `sandboxEnabled` (the file's folded in when it does not
    /// say), overridden for every server by --sandbox / --no-sandbox.
    bool wants(const ServerConfig& config) const;

    /// The plan for `config` (no side effects but the probe, once).
    jsonrpc::Outcome<SandboxPlan> plan(const ServerConfig& config) const;

    /// Turns `options` (the server's own command) into the confined launch: the plan's layer, its proxy opened (or
    /// reused), the environment reduced to what the server is given. Fails with the cause and the fix when no layer
    /// can be had: a server that asked to be confined never runs unconfined.
    jsonrpc::Outcome<SandboxPlan> wrap(const ServerConfig& config, transport::StdioProcessOptions& options);

    /// Each server's state directory (created when first needed), confined or not: ${SWITCHBOARD_STATE_DIR}.
    std::string state_dir(std::string_view server) const;

    /// The plan in force for a running server, and what was refused lately (newest last, at most 20).
    std::optional<SandboxPlan> plan_in_force(std::string_view server) const;
    std::vector<SandboxRefusal> refusals(std::string_view server) const;
    /// A line of the server's stderr: paths it shows refused are kept as refusals.
    void note_stderr(std::string_view server, std::string_view line);

    /// Called with each refusal as it is recorded (the pool turns it into Event::sandbox_refused).
    std::function<void(const std::string& server, const SandboxRefusal&)> on_refused;

    /// The server is gone from the config: its proxy closed.
    void release(std::string_view server);
    void close();

    const SandboxHost& host() const { return host_; }

private:
    struct Entry;
    SandboxLayer available_layer(std::string& fallback) const;
    boost::asio::any_io_executor ex_;
    SandboxHost host_;
    std::map<std::string, std::unique_ptr<Entry>, std::less<>> entries_;
    mutable std::optional<std::pair<SandboxLayer, std::string>> probed_;
};

}  // namespace switchboard::host
