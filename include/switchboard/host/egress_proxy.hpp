// The egress allow-list proxy of one confined stdio server. A sandboxed server has no network of its own; its only
// way out is this HTTP proxy (HTTP_PROXY/HTTPS_PROXY point at it), which lets it reach the domains its config allows
// and nothing else. One proxy per server, so the listener alone says whose request it is.
//
//   CONNECT host:port HTTP/1.1          a tunnel: "200 Connection Established", then bytes both ways until both
//                                       sides are done (a half-close is passed on)
//   GET http://host[:port]/path HTTP/1.1  forwarded in origin-form with Proxy-* and hop-by-hop headers dropped and
//                                       `Connection: close` both ways: one request per client connection
//
// Listens on a Unix socket (bound into a bwrap sandbox) and/or on 127.0.0.1:<ephemeral> (Landlock: the server
// shares the host's network). The name is judged before any lookup (denied, or not allowed: refused, unresolved);
// an IP literal must be allowed literally. Every resolved address is then checked with the address policy and only
// those that pass are connected to. A refusal is a 403 naming the reason, recorded (the last 20) and logged with
// host:port only (never a URL, query or header). Garbage, a head over 16 KiB or no host: 400. The head must arrive
// within 30 s, the upstream connect within 10 s.
//
// Thread-safety: single owner; all calls on the executor given to open(). Every coroutine belongs to the proxy's
// task group; close() (or destruction) cancels them all.
#pragma once

#include <switchboard/http/address_policy.hpp>
#include <switchboard/jsonrpc/error.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::host {

/// Domain patterns: "example.com" exactly, "*.example.com" any subdomain (not the apex), "*" everything. Matched
/// case-insensitively, a trailing dot ignored; an IP literal matches only itself (or "*").
struct EgressPolicy {
    std::vector<std::string> allowed_domains;
    std::vector<std::string> denied_domains;  ///< wins over allowed_domains
    http::AddressPolicy addresses;            ///< every resolved address is checked with it
};

struct EgressRefusal {
    std::string target;  ///< "host:port"
    std::string reason;  ///< the 403's text, e.g. `"evil.test" is not in server "fs"'s allowedDomains`
    std::chrono::system_clock::time_point at;
};

/// Whether `host` (lower-case, no trailing dot) matches `pattern`.
bool egress_domain_matches(std::string_view pattern, std::string_view host);

/// Why `server`'s policy refuses the name `host` before any lookup; empty when the name may be resolved.
std::string egress_name_refusal(const EgressPolicy& policy, std::string_view server, std::string_view host);

class EgressProxy {
public:
    /// Listens on `unix_path` (empty: no Unix socket; a stale socket file there is replaced) and, when
    /// `tcp_loopback`, on 127.0.0.1 with a port of the kernel's choosing. Fails naming the path or the cause.
    static jsonrpc::Outcome<std::shared_ptr<EgressProxy>> open(boost::asio::any_io_executor ex, std::string server_name,
                                                               EgressPolicy policy, std::string unix_path,
                                                               bool tcp_loopback);
    ~EgressProxy();  ///< close()
    EgressProxy(const EgressProxy&) = delete;
    EgressProxy& operator=(const EgressProxy&) = delete;

    unsigned short tcp_port() const;  ///< 0 when not listening on TCP
    const std::string& unix_path() const;
    const std::string& server_name() const;
    /// The last 20 refusals, newest last.
    std::vector<EgressRefusal> refusals() const;
    /// Called on each refusal (after it is logged and recorded).
    void set_on_refused(std::function<void(const EgressRefusal&)> f);
    /// Stops listening, ends every open tunnel and exchange, and removes the Unix socket file. Idempotent.
    void close();

    struct State;  // egress_proxy.cpp

private:
    explicit EgressProxy(std::shared_ptr<State> s) : state_(std::move(s)) {}
    std::shared_ptr<State> state_;
};

}  // namespace switchboard::host
