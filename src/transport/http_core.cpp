#include "http_core.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>

namespace switchboard::transport::http {

using asio::awaitable;
using boost::system::error_code;

namespace {

constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t chunk_size = 64 * 1024;
constexpr std::size_t max_idle_per_origin = 8;

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool is_redirect(unsigned status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

std::string host_header(const Url& u) {
    std::string h = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
    if (u.port != (u.tls ? "443" : "80")) h += ":" + u.port;
    return h;
}

std::string seconds_text(std::chrono::milliseconds ms) {
    if (ms.count() % 1000 == 0) return fmt::format("{} s", ms.count() / 1000);
    return fmt::format("{} ms", ms.count());
}

Failure fail(Failure::Kind k, std::string message) { return Failure{k, std::move(message)}; }

}  // namespace

void throw_exception_from_error(const Failure& f, const boost::source_location&) {
    throw std::runtime_error(f.message);
}

std::string Url::origin() const { return fmt::format("{}://{}", tls ? "https" : "http", host_header(*this)); }
std::string Url::text() const { return origin() + target; }

std::optional<Url> parse_url(std::string_view text, std::string& error) {
    auto parsed = boost::urls::parse_uri(text);
    if (!parsed) {
        error = fmt::format("\"{}\" is not a valid URL ({})", text, parsed.error().message());
        return std::nullopt;
    }
    const auto& u = *parsed;
    Url out;
    const auto scheme = lower(u.scheme());
    if (scheme == "https")
        out.tls = true;
    else if (scheme != "http") {
        error = fmt::format("\"{}\" is not an http:// or https:// URL", text);
        return std::nullopt;
    }
    out.host = u.host_address();
    if (out.host.empty()) {
        error = fmt::format("\"{}\" has no host", text);
        return std::nullopt;
    }
    out.port = u.has_port() && !u.port().empty() ? std::string(u.port()) : (out.tls ? "443" : "80");
    out.target = std::string(u.encoded_path());
    if (out.target.empty()) out.target = "/";
    if (u.has_query()) out.target += "?" + std::string(u.encoded_query());
    return out;
}

std::optional<Url> resolve_reference(const Url& base, std::string_view ref, std::string& error) {
    const std::string base_text = base.text();  // the views below point into it
    auto base_view = boost::urls::parse_uri(base_text);
    auto ref_view = boost::urls::parse_uri_reference(ref);
    if (!base_view || !ref_view) {
        error = fmt::format("\"{}\" is not a valid URL reference", ref);
        return std::nullopt;
    }
    boost::urls::url dest;
    if (auto r = boost::urls::resolve(*base_view, *ref_view, dest); !r) {
        error = fmt::format("cannot resolve \"{}\" against {}", ref, base.text());
        return std::nullopt;
    }
    dest.remove_fragment();
    return parse_url(dest.buffer(), error);
}

std::string redact_url(const Url& url) {
    auto q = url.target.find('?');
    if (q == std::string::npos) return url.text();
    std::string out = url.origin() + url.target.substr(0, q + 1);
    std::string_view query = std::string_view(url.target).substr(q + 1);
    bool first = true;
    while (!query.empty()) {
        auto amp = query.find('&');
        auto pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        auto eq = pair.find('=');
        if (!first) out += '&';
        first = false;
        if (eq != std::string_view::npos && is_secret_header(pair.substr(0, eq)))
            out += std::string(pair.substr(0, eq)) + "=[redacted]";
        else
            out += pair;
    }
    return out;
}

std::string status_text(unsigned status, std::string_view reason) {
    if (reason.empty()) reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
    return fmt::format("HTTP {} {}", status, reason);
}

// --- Exchange ---------------------------------------------------------------------------------------------------

Exchange::~Exchange() {
    if (!conn_) return;
    if (abort_token_ && abort_token_->conn == conn_.get()) abort_token_->conn = nullptr;
    client_->active_.erase(conn_.get());
    if (!aborted_ && parser_ && parser_->is_done() && parser_->keep_alive() && !client_->closed_)
        client_->give_back(std::move(conn_));
    else
        conn_->close();
}

std::string_view Exchange::reason() const {
    auto r = parser_->get().reason();
    return std::string_view(r.data(), r.size());
}

std::string_view Exchange::header(std::string_view name) const {
    auto it = parser_->get().find(beast::string_view(name.data(), name.size()));
    if (it == parser_->get().end()) return {};
    auto v = it->value();
    return std::string_view(v.data(), v.size());
}

std::string Exchange::media_type() const {
    auto ct = header("Content-Type");
    ct = ct.substr(0, ct.find(';'));
    while (!ct.empty() && ct.back() == ' ') ct.remove_suffix(1);
    return lower(ct);
}

void Exchange::abort() {
    aborted_ = true;
    if (conn_) conn_->close();
}

Failure Exchange::read_failure(const error_code& ec) const {
    const auto& name = client_->options().server_name;
    if (aborted_ || ec == asio::error::operation_aborted || (abort_token_ && abort_token_->requested))
        return fail(Failure::Kind::aborted, "the request was abandoned");
    if (ec == beast::error::timeout)
        return fail(Failure::Kind::io, fmt::format("server \"{}\" sent nothing for {} ({})", name,
                                                   seconds_text(client_->options().read_timeout), redact_url(url_)));
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message || ec == asio::error::eof ||
        ec == asio::error::connection_reset)
        return fail(Failure::Kind::io,
                    fmt::format("server \"{}\" closed the connection in the middle of the response ({})", name,
                                redact_url(url_)));
    return fail(Failure::Kind::io, fmt::format("server \"{}\": reading the response failed: {} ({})", name,
                                               ec.message(), redact_url(url_)));
}

awaitable<Result<std::string_view>> Exchange::read_some() {
    if (abort_token_ && abort_token_->requested) aborted_ = true;
    if (aborted_) co_return read_failure(asio::error::operation_aborted);
    for (;;) {
        if (parser_->is_done()) co_return std::string_view{};
        auto& body = parser_->get().body();
        body.data = chunk_.get();
        body.size = chunk_size;
        body.more = true;
        const auto timeout = client_->options().read_timeout;
        if (timeout.count() > 0)
            conn_->tcp().expires_after(timeout);
        else
            conn_->tcp().expires_never();
        error_code ec;
        if (conn_->tls) {
            auto [e, n] = co_await bhttp::async_read_some(*conn_->tls, conn_->buffer, *parser_, as_tuple_awaitable);
            ec = e;
        } else {
            auto [e, n] = co_await bhttp::async_read_some(*conn_->plain, conn_->buffer, *parser_, as_tuple_awaitable);
            ec = e;
        }
        if (abort_token_ && abort_token_->requested) aborted_ = true;
        if (aborted_) co_return read_failure(asio::error::operation_aborted);
        const std::size_t got = chunk_size - parser_->get().body().size;
        if (ec == bhttp::error::need_buffer) ec = {};
        if (ec) co_return read_failure(ec);
        if (got > 0) co_return std::string_view(chunk_.get(), got);
    }
}

awaitable<Result<std::string>> Exchange::read_all(std::size_t limit) {
    std::string out;
    if (auto len = parser_->content_length(); len && *len > limit) {
        abort();
        co_return fail(Failure::Kind::oversize,
                       fmt::format("the response body is {} bytes, over the {} byte limit", *len, limit));
    }
    for (;;) {
        auto piece = co_await read_some();
        if (!piece) co_return piece.error();
        if (piece->empty()) co_return out;
        if (out.size() + piece->size() > limit) {
            abort();
            co_return fail(Failure::Kind::oversize, fmt::format("the response body is over the {} byte limit", limit));
        }
        out.append(*piece);
    }
}

// --- Client -----------------------------------------------------------------------------------------------------

Client::Client(asio::any_io_executor ex, HttpClientOptions options) : ex_(std::move(ex)), options_(std::move(options)) {
    for (const auto& [name, value] : options_.headers) {
        if (!is_secret_header(name)) continue;
        if (value.size() >= 4) secrets_.push_back(value);
        // "Bearer abc": the credential alone may be echoed back too.
        if (auto sp = value.find(' '); sp != std::string::npos && value.size() - sp - 1 >= 4)
            secrets_.push_back(value.substr(sp + 1));
    }
}

Client::~Client() { close(); }

void Client::close() {
    closed_ = true;
    for (auto* c : active_) c->close();
    for (auto& [origin, conns] : idle_)
        for (auto& c : conns) c->close();
    idle_.clear();
}

std::string Client::scrub(std::string text) const {
    for (const auto& s : secrets_)
        for (auto pos = text.find(s); pos != std::string::npos; pos = text.find(s, pos))
            text.replace(pos, s.size(), "[redacted]");
    return text;
}

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

std::unique_ptr<Conn> Client::take_idle(const std::string& origin) {
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

void Client::give_back(std::unique_ptr<Conn> conn) {
    auto& list = idle_[conn->origin];
    if (list.size() >= max_idle_per_origin) {
        conn->close();
        return;
    }
    list.push_back(std::move(conn));
}

awaitable<Result<std::unique_ptr<Conn>>> Client::connect(const Url& url) {
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
    if (closed_) co_return fail(Failure::Kind::aborted, "the client was closed");
    if (rec)
        co_return fail(Failure::Kind::connect,
                       *timed_out ? fmt::format("server \"{}\": resolving {} timed out after {}", name, url.host,
                                                seconds_text(timeout))
                                  : fmt::format("server \"{}\": cannot resolve {}: {}", name, url.host, rec.message()));

    auto conn = std::make_unique<Conn>();
    conn->origin = url.origin();
    beast::tcp_stream stream(ex_);
    stream.expires_after(timeout);
    auto [cec, ep] = co_await stream.async_connect(endpoints, as_tuple_awaitable);
    if (closed_) co_return fail(Failure::Kind::aborted, "the client was closed");
    if (cec)
        co_return fail(
            Failure::Kind::connect,
            cec == beast::error::timeout
                ? fmt::format("server \"{}\": connecting to {} timed out after {}", name, where, seconds_text(timeout))
                : fmt::format("server \"{}\": cannot connect to {}: {}", name, where, cec.message()));
    error_code ignored;
    stream.socket().set_option(asio::ip::tcp::no_delay(true), ignored);

    if (!url.tls) {
        conn->plain.emplace(std::move(stream));
        conn->plain->expires_never();
        co_return conn;
    }
    std::string ctx_error;
    auto* ctx = tls_context(ctx_error);
    if (!ctx) co_return fail(Failure::Kind::tls, fmt::format("server \"{}\": {}", name, ctx_error));
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
    if (closed_) co_return fail(Failure::Kind::aborted, "the client was closed");
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
            why = fmt::format("the TLS handshake timed out after {}", seconds_text(timeout));
        else
            why = "the TLS handshake failed: " + hec.message();
        co_return fail(Failure::Kind::tls, fmt::format("server \"{}\": {} ({})", name, why, where));
    }
    beast::get_lowest_layer(tls).expires_never();
    co_return conn;
}

awaitable<Result<std::unique_ptr<Exchange>>> Client::send_once(const Url& url, bhttp::verb method,
                                                               const std::string& body, const Fields& extra,
                                                               bool with_secrets, std::shared_ptr<Abort> abort) {
    const auto& name = options_.server_name;
    auto abandoned = [&] { return closed_ || (abort && abort->requested); };
    for (int attempt = 0;; ++attempt) {
        if (abandoned()) co_return fail(Failure::Kind::aborted, "the request was abandoned");
        auto conn = take_idle(url.origin());
        if (!conn) {
            auto fresh = co_await connect(url);
            if (abandoned()) co_return fail(Failure::Kind::aborted, "the request was abandoned");
            if (!fresh) co_return fresh.error();
            conn = std::move(*fresh);
        }
        bhttp::request<bhttp::string_body> req{method, url.target, 11};
        req.set(bhttp::field::host, host_header(url));
        req.set(bhttp::field::user_agent, "switchboard/" SWITCHBOARD_VERSION);
        for (const auto& [k, v] : options_.headers)
            if (with_secrets || !is_secret_header(k)) req.set(k, v);
        for (const auto& [k, v] : extra) req.set(k, v);
        req.body() = body;
        req.keep_alive(true);
        req.prepare_payload();
        if (spdlog::should_log(spdlog::level::debug)) {
            std::string fields;
            for (const auto& f : req) {
                if (f.name() == bhttp::field::host || f.name() == bhttp::field::user_agent) continue;
                std::string_view fn(f.name_string().data(), f.name_string().size());
                std::string_view fv(f.value().data(), f.value().size());
                fields += fmt::format("{}{}: {}", fields.empty() ? "" : ", ", fn, redact_header_value(fn, fv));
            }
            spdlog::debug("[{}] {} {} ({} bytes; {})", name, std::string_view(bhttp::to_string(method)),
                          redact_url(url), body.size(), fields);
        }

        Conn* raw = conn.get();
        active_.insert(raw);
        if (abort) abort->conn = raw;
        const bool reused = conn->reused;
        if (options_.read_timeout.count() > 0)
            conn->tcp().expires_after(options_.read_timeout);
        else
            conn->tcp().expires_never();
        error_code ec;
        if (conn->tls) {
            auto [e, n] = co_await bhttp::async_write(*conn->tls, req, as_tuple_awaitable);
            ec = e;
        } else {
            auto [e, n] = co_await bhttp::async_write(*conn->plain, req, as_tuple_awaitable);
            ec = e;
        }
        auto parser = std::make_unique<bhttp::response_parser<bhttp::buffer_body>>();
        parser->header_limit(64 * 1024);
        parser->body_limit(boost::none);
        if (method == bhttp::verb::head) parser->skip(true);
        if (!ec && !closed_) {
            if (conn->tls) {
                auto [e, n] = co_await bhttp::async_read_header(*conn->tls, conn->buffer, *parser, as_tuple_awaitable);
                ec = e;
            } else {
                auto [e, n] =
                    co_await bhttp::async_read_header(*conn->plain, conn->buffer, *parser, as_tuple_awaitable);
                ec = e;
            }
        }
        active_.erase(raw);
        if (abort) abort->conn = nullptr;
        if (abandoned()) {
            conn->close();
            co_return fail(Failure::Kind::aborted, "the request was abandoned");
        }
        if (ec) {
            conn->close();
            // A kept-alive connection the server closed meanwhile: one more try on a fresh one. Only when nothing of
            // a response arrived and it was no timeout: a request the server may have acted on is never sent twice.
            if (reused && attempt == 0 && ec != beast::error::timeout && !parser->got_some()) continue;
            if (ec == beast::error::timeout)
                co_return fail(Failure::Kind::io, fmt::format("server \"{}\" did not answer within {} ({})", name,
                                                              seconds_text(options_.read_timeout), redact_url(url)));
            if (ec == bhttp::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
                ec == bhttp::error::partial_message)
                co_return fail(Failure::Kind::io, fmt::format("server \"{}\" closed the connection without a response "
                                                              "({})",
                                                              name, redact_url(url)));
            co_return fail(Failure::Kind::io, fmt::format("server \"{}\": the request failed: {} ({})", name,
                                                          ec.message(), redact_url(url)));
        }
        std::unique_ptr<Exchange> ex(new Exchange());
        ex->client_ = shared_from_this();
        ex->conn_ = std::move(conn);
        ex->parser_ = std::move(parser);
        ex->chunk_ = std::make_unique<char[]>(chunk_size);
        ex->url_ = url;
        ex->abort_token_ = abort;
        if (abort) abort->conn = raw;
        active_.insert(raw);
        spdlog::debug("[{}] {} {}", name, status_text(ex->status(), ex->reason()), redact_url(url));
        co_return ex;
    }
}

awaitable<Result<std::unique_ptr<Exchange>>> Client::send(Url url, bhttp::verb method, std::string body, Fields extra,
                                                          std::shared_ptr<Abort> abort) {
    const std::string first_origin = url.origin();  // secrets go to the origin they were configured for only
    for (int redirects = 0;;) {
        const bool with_secrets = url.origin() == first_origin;
        auto r = co_await send_once(url, method, body, extra, with_secrets, abort);
        if (!r) co_return r;
        auto& ex = *r;
        if (!is_redirect(ex->status())) co_return r;
        const auto location = std::string(ex->header("Location"));
        if (location.empty()) co_return r;
        const auto& name = options_.server_name;
        if (redirects >= options_.max_redirects)
            co_return fail(Failure::Kind::redirect,
                           fmt::format("server \"{}\": too many redirects (more than {}) from {}", name,
                                       options_.max_redirects, redact_url(url)));
        std::string error;
        auto next = resolve_reference(url, location, error);
        if (!next) co_return fail(Failure::Kind::redirect, fmt::format("server \"{}\": bad redirect: {}", name, error));
        if (url.tls && !next->tls)
            co_return fail(Failure::Kind::redirect,
                           fmt::format("server \"{}\": refused a redirect from https to http ({} -> {})", name,
                                       redact_url(url), redact_url(*next)));
        spdlog::debug("[{}] redirected ({}) to {}", name, ex->status(), redact_url(*next));
        if (next->origin() != first_origin)
            spdlog::warn("[{}] redirected to another origin ({}); secret headers are not sent there", name,
                         next->origin());
        ex.reset();  // its body is not read: the connection is closed
        url = std::move(*next);
        ++redirects;
    }
}

}  // namespace switchboard::transport::http
