#include <switchboard/http/cors_proxy.hpp>

#include <switchboard/core/text.hpp>

#include <boost/url/parse.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>

namespace switchboard::http {

namespace {

using boost::asio::awaitable;

// Never forwarded, even with the prefix: the client sets them, or they would change the framing.
constexpr std::array<std::string_view, 11> not_forwarded{
    "host", "content-length", "transfer-encoding",   "connection",       "keep-alive", "upgrade",
    "te",   "trailer",        "proxy-authorization", "proxy-connection", "expect"};

// Response headers passed back to the page.
constexpr std::array<std::string_view, 9> passed_back{
    "cache-control", "mcp-session-id", "mcp-protocol-version", "www-authenticate", "etag",
    "last-modified", "retry-after",    "content-language",     "location"};

Reply text(bhttp::status status, std::string message) {
    Reply r;
    r.status = status;
    r.body = std::move(message) + "\n";
    r.content_type = "text/plain; charset=utf-8";
    return r;
}

// "server \"cors-proxy\": refused ..." -> "refused ..."
std::string without_name(std::string message) {
    const std::string_view prefix = "server \"cors-proxy\": ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    return message;
}

// The decoded `url` query parameter of the request target, or nullopt.
std::optional<std::string> url_parameter(std::string_view target) {
    auto parsed = boost::urls::parse_origin_form(target);
    if (!parsed) return std::nullopt;
    auto params = parsed->params();
    auto it = params.find("url");
    if (it == params.end() || !(*it).has_value) return std::nullopt;
    return std::string((*it).value);
}

awaitable<void> forward(std::shared_ptr<Client> client, ServerRequest& req, Responder& res) {
    const auto target = url_parameter(req.target());
    if (!target || target->empty()) {
        co_await res.send(text(bhttp::status::bad_request, "Bad Request: ?url=<percent-encoded URL> is required"));
        co_return;
    }
    auto syntax = boost::urls::parse_uri(*target);
    if (syntax && syntax->has_userinfo()) {
        co_await res.send(text(bhttp::status::bad_request,
                               "Bad Request: a URL with user info (user:password@) is "
                               "not proxied"));
        co_return;
    }
    std::string error;
    auto url = parse_url(*target, error);
    if (!url) {
        co_await res.send(text(bhttp::status::bad_request, "Bad Request: " + error));
        co_return;
    }

    Fields headers;
    bool has_content_type = false, has_accept = false;
    for (const auto& f : req) {
        const auto name = core::ascii_lower(std::string_view(f.name_string()));
        if (name.rfind(proxy_header_prefix, 0) != 0) continue;
        auto inner = name.substr(proxy_header_prefix.size());
        if (inner.empty() ||
            std::find(not_forwarded.begin(), not_forwarded.end(), std::string_view(inner)) != not_forwarded.end())
            continue;
        has_content_type = has_content_type || inner == "content-type";
        has_accept = has_accept || inner == "accept";
        headers.emplace_back(std::move(inner), std::string(f.value()));
    }
    if (auto ct = header_value(req, "Content-Type"); !has_content_type && !ct.empty())
        headers.emplace_back("Content-Type", std::move(ct));
    if (auto accept = header_value(req, "Accept"); !has_accept && !accept.empty())
        headers.emplace_back("Accept", std::move(accept));

    auto abort = std::make_shared<Abort>();
    auto sent = co_await client->send(*url, req.method(), req.body(), std::move(headers), abort);
    if (!sent) {
        const auto& f = sent.error();
        const auto message = without_name(f.message);
        if (f.kind == Failure::Kind::refused) {
            spdlog::warn("cors-proxy: {}", message);
            co_await res.send(text(bhttp::status::forbidden, "Forbidden: " + message));
        } else if (f.kind == Failure::Kind::url) {
            co_await res.send(text(bhttp::status::bad_request, "Bad Request: " + message));
        } else {
            co_await res.send(text(bhttp::status::bad_gateway, "Bad Gateway: " + message));
        }
        co_return;
    }
    auto& exchange = **sent;
    Fields back;
    for (auto name : passed_back)
        if (auto v = exchange.header(name); !v.empty()) back.emplace_back(std::string(name), std::string(v));
    const unsigned status = exchange.status();
    if (status == 204 || status == 304 || status < 200 || req.method() == bhttp::verb::head) {
        Reply r;
        r.status = static_cast<bhttp::status>(status);
        r.headers = std::move(back);
        co_await res.send(std::move(r));
        co_return;
    }
    auto content_type = std::string(exchange.header("Content-Type"));
    if (content_type.empty()) content_type = "application/octet-stream";
    const bool began =
        co_await res.begin_stream(static_cast<bhttp::status>(status), std::move(content_type), std::move(back));
    if (!began) {
        exchange.abort();
        co_return;
    }
    const std::string_view none;  // not a braced temporary inside the co_await (GCC 12)
    for (;;) {
        auto piece = co_await exchange.read_some();
        if (!piece) {
            // The target broke off: so does the answer (no last chunk: the page sees a cut response).
            res.set_keep_alive(false);
            co_return;
        }
        if (piece->empty()) break;
        const bool ok = co_await res.write_chunk(*piece, none, none);
        if (!ok) {
            exchange.abort();  // the page went away
            co_return;
        }
    }
    co_await res.end_stream();
}

awaitable<void> forget(Responder& res) {
    Reply r;
    r.status = bhttp::status::ok;
    co_await res.send(std::move(r));
}

}  // namespace

Router cors_proxy_routes(boost::asio::any_io_executor ex, CorsProxyOptions options) {
    ClientOptions co;
    co.server_name = "cors-proxy";
    co.connect_timeout = options.connect_timeout;
    co.max_redirects = options.max_redirects;
    co.address_filter = [policy = options.policy](const boost::asio::ip::address& a) { return policy.check(a); };
    auto client = std::make_shared<Client>(std::move(ex), std::move(co));
    // Plain lambdas returning the coroutine of a free function (arguments by value): no capturing coroutine.
    Handler handler = [client](ServerRequest& req, Responder& res) { return forward(client, req, res); };
    Router r;
    r.add(bhttp::verb::get, options.path, handler);
    r.add(bhttp::verb::post, options.path, handler);
    r.add(bhttp::verb::delete_, options.path, [](ServerRequest&, Responder& res) { return forget(res); });
    return r;
}

}  // namespace switchboard::http
