#include <switchboard/http/client.hpp>
#include <switchboard/http/secrets.hpp>

#include "connection.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/text.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace switchboard::http {

namespace asio = boost::asio;
namespace beast = boost::beast;

using asio::awaitable;
using boost::system::error_code;

namespace {

using core::as_tuple_awaitable;
constexpr std::size_t chunk_size = 64 * 1024;

bool is_redirect(unsigned status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

Failure fail(Failure::Kind k, std::string message) { return Failure{k, std::move(message)}; }

}  // namespace

void throw_exception_from_error(const Failure& f, const boost::source_location&) {
    throw std::runtime_error(f.message);
}

std::string duration_text(std::chrono::milliseconds ms) {
    if (ms.count() % 1000 == 0) return fmt::format("{} s", ms.count() / 1000);
    return fmt::format("{} ms", ms.count());
}

void Abort::fire() {
    requested = true;
    if (conn) conn->close();
}

std::string_view Response::header(std::string_view name) const {
    for (const auto& [k, v] : headers)
        if (core::iequals(k, name)) return v;
    return {};
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
    return core::ascii_lower(ct);
}

Fields Exchange::headers() const {
    Fields out;
    for (const auto& f : parser_->get()) out.emplace_back(std::string(f.name_string()), std::string(f.value()));
    return out;
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
                                                   duration_text(client_->options().read_timeout), redact_url(url_)));
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

Client::Client(asio::any_io_executor ex, ClientOptions options) : ex_(std::move(ex)), options_(std::move(options)) {
    for (const auto& [name, value] : options_.headers) {
        if (!options_.headers_secret && !is_secret_header(name)) continue;
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
    if (options_.authorizer) text = options_.authorizer->scrub(std::move(text));
    return text;
}

awaitable<Result<std::unique_ptr<Exchange>>> Client::send_once(const Url& url, bhttp::verb method,
                                                               const std::string& body, const Fields& extra,
                                                               bool with_secrets, std::shared_ptr<Abort> abort,
                                                               std::optional<asio::ip::address> from) {
    const auto& name = options_.server_name;
    auto abandoned = [&] { return closed_ || (abort && abort->requested); };
    for (int attempt = 0;; ++attempt) {
        if (abandoned()) co_return fail(Failure::Kind::aborted, "the request was abandoned");
        auto conn = take_idle(url.origin());
        // A kept connection is checked like a new one (it may lead where this redirect chain may not go).
        if (conn && from && !redirect_refusal(*from, conn->peer).empty()) conn.reset();
        if (!conn) {
            auto fresh = co_await connect(url, from);
            if (abandoned()) co_return fail(Failure::Kind::aborted, "the request was abandoned");
            if (!fresh) co_return fresh.error();
            conn = std::move(*fresh);
        }
        bhttp::request<bhttp::string_body> req{method, url.target, 11};
        req.set(bhttp::field::host, url.host_header());
        req.set(bhttp::field::user_agent, "switchboard/" SWITCHBOARD_VERSION);
        for (const auto& [k, v] : options_.headers)
            if (with_secrets || !(options_.headers_secret || is_secret_header(k))) req.set(k, v);
        for (const auto& [k, v] : extra) {
            // A value from elsewhere (a client's tracestate, a tool argument mapped to a header) never splits the
            // request: CR, LF and NUL would start a header of their own (Beast does not refuse them).
            if (v.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
                co_return fail(Failure::Kind::url, fmt::format("header \"{}\" has a line break in its value", k));
            if (with_secrets || !(core::iequals(k, "Authorization") || core::iequals(k, "DPoP"))) req.set(k, v);
        }
        req.body() = body;
        req.keep_alive(true);
        req.prepare_payload();
        if (spdlog::should_log(spdlog::level::debug)) {
            std::string fields;
            for (const auto& f : req) {
                if (f.name() == bhttp::field::host || f.name() == bhttp::field::user_agent) continue;
                std::string_view fn(f.name_string().data(), f.name_string().size());
                std::string_view fv(f.value().data(), f.value().size());
                const bool configured = options_.headers_secret && options_.headers.count(std::string(fn));
                fields += fmt::format("{}{}: {}", fields.empty() ? "" : ", ", fn,
                                      configured ? std::string("[redacted]") : redact_header_value(fn, fv));
            }
            spdlog::debug("[{}] {} {} ({} bytes; {})", name, std::string_view(bhttp::to_string(method)),
                          redact_url(url), body.size(), fields);
        }

        Connection* raw = conn.get();
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
                                                              duration_text(options_.read_timeout), redact_url(url)));
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
        ex->chunk_ = std::make_unique_for_overwrite<char[]>(chunk_size);  // not zero-filled: 64 KiB a request
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
    auto authorizer = options_.authorizer;
    if (!authorizer)
        co_return co_await send_following(std::move(url), method, body, extra, std::move(abort), nullptr);
    for (int attempt = 1;; ++attempt) {
        Fields credential;
        auto r = co_await send_following(url, method, body, extra, abort, &credential);
        if (!r || attempt >= 3) co_return r;
        const unsigned status = (*r)->status();
        if (status != 401 && status != 403) co_return r;
        if (status == 403 && (*r)->header("WWW-Authenticate").find("insufficient_scope") == std::string_view::npos)
            co_return r;
        if (closed_ || (abort && abort->requested)) co_return r;
        // The challenge is judged with the response still open: on "give up" it goes to the caller as it is.
        const bool again = co_await authorizer->challenged(url, status, (*r)->headers(), credential);
        if (!again) co_return r;
        if (closed_ || (abort && abort->requested)) co_return fail(Failure::Kind::aborted, "the request was abandoned");
    }
}

awaitable<Result<std::unique_ptr<Exchange>>> Client::send_following(Url url, bhttp::verb method,
                                                                    const std::string& body, const Fields& extra,
                                                                    std::shared_ptr<Abort> abort, Fields* credential) {
    const std::string first_origin = url.origin();    // secrets go to the origin they were configured for only
    std::optional<asio::ip::address> origin_address;  // set once redirected: where the chain started
    auto authorizer = credential ? options_.authorizer : nullptr;
    for (int redirects = 0;;) {
        const bool with_secrets = url.origin() == first_origin;
        Fields authorized;
        if (authorizer) {
            credential->clear();
            if (with_secrets) *credential = co_await authorizer->authorization(method, url);
            authorized = extra;
            authorized.insert(authorized.end(), credential->begin(), credential->end());
        }
        const Fields& fields = authorizer ? authorized : extra;
        auto r = co_await send_once(url, method, body, fields, with_secrets, abort, origin_address);
        if (!r) co_return r;
        auto& ex = *r;
        if (!is_redirect(ex->status()) || !options_.follow_redirects) co_return r;
        if (!origin_address && ex->conn_) origin_address = ex->conn_->peer;
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

awaitable<Result<std::unique_ptr<Exchange>>> Client::send(Url url, bhttp::verb method, std::string body, Fields extra) {
    return send(std::move(url), method, std::move(body), std::move(extra), nullptr);
}

awaitable<Result<Response>> Client::request(Request req) {
    std::string error;
    auto url = parse_url(req.url, error);
    if (!url) co_return fail(Failure::Kind::url, std::move(error));
    auto sent = co_await send(std::move(*url), req.method, std::move(req.body), std::move(req.headers));
    if (!sent) co_return sent.error();
    auto& x = **sent;
    auto body = co_await x.read_all(options_.max_body_size);
    if (!body) co_return body.error();
    Response out;
    out.status = x.status();
    out.reason = std::string(x.reason());
    out.headers = x.headers();
    out.body = std::move(*body);
    co_return out;
}

}  // namespace switchboard::http
