// The client's connections: opening them (resolve, connect, TLS with SNI and host-name verification, within the
// connect timeout) and keeping idle ones per origin for reuse.
#include <switchboard/http/client.hpp>

#include "connection.hpp"

#include <switchboard/http/address_policy.hpp>

#include <switchboard/core/as_tuple.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <vector>
#include <spdlog/spdlog.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace switchboard::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::awaitable;
using boost::system::error_code;
using core::as_tuple_awaitable;

namespace {
constexpr std::size_t max_idle_per_origin = 8;
Failure pool_failure(Failure::Kind k, std::string message) { return Failure{k, std::move(message)}; }
}  // namespace

asio::ssl::context* Client::tls_context(std::string& error) {
    if (!tls_ && tls_error_.empty()) {
        auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
        error_code ec;
        ctx->set_default_verify_paths(ec);
        if (ec) spdlog::warn("[{}] cannot load the system CA store: {}", options_.server_name, ec.message());
        if (!options_.ca_file.empty()) {
            ctx->load_verify_file(options_.ca_file, ec);
            if (ec) tls_error_ = fmt::format("cannot load caFile \"{}\": {}", options_.ca_file, ec.message());
        }
        ctx->set_verify_mode(asio::ssl::verify_peer);
        if (tls_error_.empty()) tls_ = std::move(ctx);
    }
    error = tls_error_;
    return tls_.get();
}

std::unique_ptr<Connection> Client::take_idle(const std::string& origin) {
    auto it = idle_.find(origin);
    if (it == idle_.end()) return nullptr;
    while (!it->second.empty()) {
        auto c = std::move(it->second.back());
        it->second.pop_back();
        if (c->is_open()) {
            c->reused = true;
            return c;
        }
    }
    return nullptr;
}

void Client::give_back(std::unique_ptr<Connection> conn) {
    auto& list = idle_[conn->origin];
    if (list.size() >= max_idle_per_origin) {
        conn->close();
        return;
    }
    list.push_back(std::move(conn));
}

std::string redirect_refusal(const asio::ip::address& origin, const asio::ip::address& target) {
    const auto to = special_purpose(target);
    if (to.empty()) return {};
    const auto from = special_purpose(origin);
    // Never to link-local or metadata (or unspecified, multicast, reserved) addresses; to loopback or private ones
    // only from an origin of the same kind (a loopback server may redirect to loopback, a LAN one within the LAN).
    if ((to == "loopback" || to == "private" || to == "CGNAT") && from == to) return {};
    return fmt::format("a redirect may not lead from {} origin to {} ({} is {})",
                       from.empty() ? "a public" : fmt::format("a {}", from), to, target.to_string(),
                       fmt::format("a {} address", to));
}

awaitable<Result<std::unique_ptr<Connection>>> Client::connect(const Url& url,
                                                               std::optional<asio::ip::address> redirected_from) {
    const auto& name = options_.server_name;
    const auto timeout = options_.connect_timeout;
    const std::string where = fmt::format("{}:{}", url.host, url.port);

    // Shared with the timer's handler, which may run after this frame is gone.
    auto resolver = std::make_shared<asio::ip::tcp::resolver>(ex_);
    asio::steady_timer timer(ex_, timeout);
    auto timed_out = std::make_shared<bool>(false);
    timer.async_wait([resolver, timed_out](error_code ec) {
        if (ec) return;
        *timed_out = true;
        resolver->cancel();
    });
    auto [rec, endpoints] = co_await resolver->async_resolve(url.host, url.port, as_tuple_awaitable);
    timer.cancel();
    if (closed_) co_return pool_failure(Failure::Kind::aborted, "the client was closed");
    if (rec)
        co_return pool_failure(
            Failure::Kind::connect,
            *timed_out
                ? fmt::format("server \"{}\": resolving {} timed out after {}", name, url.host, duration_text(timeout))
                : fmt::format("server \"{}\": cannot resolve {}: {}", name, url.host, rec.message()));

    // Only the addresses the filter allows are connected to: the very addresses checked.
    std::vector<asio::ip::tcp::endpoint> allowed;
    std::vector<std::string> refused;
    for (const auto& e : endpoints) {
        auto why = options_.address_filter ? options_.address_filter(e.endpoint().address()) : std::string();
        if (why.empty() && redirected_from) why = redirect_refusal(*redirected_from, e.endpoint().address());
        if (why.empty())
            allowed.push_back(e.endpoint());
        else if (std::find(refused.begin(), refused.end(), why) == refused.end())
            refused.push_back(std::move(why));
    }
    if (allowed.empty())
        co_return pool_failure(Failure::Kind::refused, fmt::format("server \"{}\": refused to connect to {}: {}", name,
                                                                   url.host, fmt::join(refused, "; ")));

    auto conn = std::make_unique<Connection>();
    conn->origin = url.origin();
    beast::tcp_stream stream(ex_);
    stream.expires_after(timeout);
    auto [cec, ep] = co_await stream.async_connect(allowed, as_tuple_awaitable);
    if (closed_) co_return pool_failure(Failure::Kind::aborted, "the client was closed");
    if (cec)
        co_return pool_failure(
            Failure::Kind::connect,
            cec == beast::error::timeout
                ? fmt::format("server \"{}\": connecting to {} timed out after {}", name, where, duration_text(timeout))
                : fmt::format("server \"{}\": cannot connect to {}: {}", name, where, cec.message()));
    conn->peer = ep.address();
    error_code ignored;
    stream.socket().set_option(asio::ip::tcp::no_delay(true), ignored);

    if (!url.tls) {
        conn->plain.emplace(std::move(stream));
        conn->plain->expires_never();
        co_return conn;
    }
    std::string ctx_error;
    auto* ctx = tls_context(ctx_error);
    if (!ctx) co_return pool_failure(Failure::Kind::tls, fmt::format("server \"{}\": {}", name, ctx_error));
    conn->tls.emplace(std::move(stream), *ctx);
    auto& tls = *conn->tls;
    error_code addr_ec;
    const bool is_ip = (asio::ip::make_address(url.host, addr_ec), !addr_ec);
    if (!is_ip) SSL_set_tlsext_host_name(tls.native_handle(), url.host.c_str());
    auto name_mismatch = std::make_shared<bool>(false);
    tls.set_verify_mode(asio::ssl::verify_peer);
    tls.set_verify_callback([check = asio::ssl::host_name_verification(url.host), name_mismatch](
                                bool preverified, asio::ssl::verify_context& vctx) mutable {
        const bool ok = check(preverified, vctx);
        if (preverified && !ok) *name_mismatch = true;
        return ok;
    });
    beast::get_lowest_layer(tls).expires_after(timeout);
    auto [hec] = co_await tls.async_handshake(asio::ssl::stream_base::client, as_tuple_awaitable);
    if (closed_) co_return pool_failure(Failure::Kind::aborted, "the client was closed");
    if (hec) {
        std::string why;
        const long verify = SSL_get_verify_result(tls.native_handle());
        if (*name_mismatch)
            why = fmt::format("the TLS certificate is not valid for host \"{}\" (certificate verify failed)", url.host);
        else if (verify != X509_V_OK)
            why = fmt::format(
                "the TLS certificate was rejected: {} (certificate verify failed; a private CA can be "
                "trusted with \"caFile\")",
                X509_verify_cert_error_string(verify));
        else if (hec == beast::error::timeout)
            why = fmt::format("the TLS handshake timed out after {}", duration_text(timeout));
        else
            why = "the TLS handshake failed: " + hec.message();
        co_return pool_failure(Failure::Kind::tls, fmt::format("server \"{}\": {} ({})", name, why, where));
    }
    beast::get_lowest_layer(tls).expires_never();
    co_return conn;
}

}  // namespace switchboard::http
