// The HTTP server's handling of one connection's bytes, in process: the request parser with the server's limits,
// the refusals of a failed read (413, 431, 400), and the checks every route shares (route, Host, Origin, CORS
// preflight, token, method) for each request read whole, pipelined requests included. The first byte picks one of
// three server setups and how the bytes arrive (in pieces of 1 to 256 bytes).
//
// Besides "no crash", a request reaches a handler only when its route, Host, Origin and token are right, and every
// refusal carries the header its status needs. And whenever the server's own reader of plain requests
// (detail::read_plain_request) reads one from the bytes left, Beast's parser reads the same message from them.
#include "fuzz_input.hpp"

#include "../../src/http/plain_request.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/http/origin.hpp>
#include <switchboard/http/request_gate.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

namespace http = switchboard::http;
namespace bhttp = boost::beast::http;

// Its verify() is never reached here: the gate only says that it must be asked.
class NeverCalledVerifier : public http::TokenVerifier {
public:
    boost::asio::awaitable<http::TokenVerdict> verify(const bhttp::request<bhttp::string_body>&) override {
        throw std::logic_error("not called by the gate");
    }
};

struct Setup {
    http::Router routes;
    http::ServerOptions options;
};

Setup make_setup(int which) {
    Setup s;
    s.routes.add(bhttp::verb::post, "/mcp", {});
    s.routes.add(bhttp::verb::get, "/mcp", {});
    s.routes.add(bhttp::verb::delete_, "/mcp", {});
    s.routes.add(bhttp::verb::get, "/health", {}, http::RouteOptions{false});
    s.routes.add(bhttp::verb::post, "/api/chats", {});
    switch (which) {
    case 0:  // the loopback gateway: Host checked, no token
        s.options.allowed_hosts = {"127.0.0.1", "localhost", "[::1]"};
        s.options.max_body_size = 512;
        s.options.max_header_size = 1024;
        break;
    case 1:  // bound elsewhere: a static token, CORS for one listed origin
        s.options.bearer_token = "s3cret-token";
        s.options.cors = true;
        s.options.allowed_origins = {"https://app.example"};
        s.options.cors_expose_headers = "Mcp-Session-Id";
        break;
    default:  // an OAuth resource server besides the web UI's static token
        s.options.bearer_token = "ui-token";
        s.options.token_verifier = std::make_shared<NeverCalledVerifier>();
        s.options.allowed_origins = {"*"};
        s.options.cors = true;
        break;
    }
    return s;
}

const Setup& setup(int which) {
    static const Setup setups[] = {make_setup(0), make_setup(1), make_setup(2)};
    return setups[which];
}

void check(bool ok) {
    if (!ok) std::abort();
}

// A listed name, alone or with a port of digits.
bool host_is_listed(std::string_view host, const std::vector<std::string>& allowed) {
    if (allowed.empty()) return true;
    for (const auto& a : allowed) {
        if (host.size() < a.size() || !switchboard::core::iequals(host.substr(0, a.size()), a)) continue;
        const auto port = host.substr(a.size());
        if (port.empty()) return true;
        if (port[0] != ':') continue;
        if (port.substr(1).find_first_not_of("0123456789") == std::string_view::npos) return true;
    }
    return false;
}

void check_verdict(const http::ServerRequest& req, const Setup& s, const http::RequestVerdict& v) {
    using Action = http::RequestVerdict::Action;
    const auto& o = s.options;
    const auto origin = http::header_value(req, "Origin");
    if (v.action == Action::refuse) {
        const auto status = static_cast<unsigned>(v.status);
        check(status == 401 || status == 403 || status == 404 || status == 405);
        check(!v.message.empty());
        bool has_allow = false, has_challenge = false;
        for (const auto& [name, value] : v.headers) {
            has_allow = has_allow || (name == "Allow" && !value.empty());
            has_challenge = has_challenge || name == "WWW-Authenticate";
        }
        check(status != 405 || has_allow);
        check(status != 401 || has_challenge);
        return;
    }
    // Past the gate (a preflight or a handler): the Host and the Origin were acceptable.
    check(host_is_listed(http::header_value(req, "Host"), o.allowed_hosts));
    check(origin.empty() || http::origin_allowed(origin, o.allowed_origins));
    if (v.action == Action::preflight) {
        check(o.cors && req.method() == bhttp::verb::options && !origin.empty());
        return;
    }
    check(v.route && v.route->method == req.method() && v.route->path == v.path);
    check(v.path == http::path_of(std::string_view(req.target().data(), req.target().size())));
    // A route that needs the token: the static one was given exactly, or the OAuth verifier is asked.
    if (!v.route->options.requires_token || v.verify_token) return;
    if (o.token_verifier || !o.bearer_token.empty()) {
        const auto given = http::header_value(req, "Authorization");
        check(given.size() == 7 + o.bearer_token.size() && switchboard::core::iequals(given.substr(0, 7), "Bearer ") &&
              given.substr(7) == o.bearer_token);
    }
}

// What read_plain_request reads from the front of `left`, Beast reads the same way: the same method, target, version,
// fields (names, values, order), body and keep-alive, using as many bytes.
void check_plain(std::string_view left, const http::ServerOptions& o) {
    http::ServerRequest plain;
    const auto used = http::detail::read_plain_request(left, o.max_header_size, o.max_body_size, plain);
    if (used == 0) return;
    bhttp::request_parser<bhttp::string_body> parser;
    parser.eager(true);
    http::limit_request_parser(parser, o);
    boost::system::error_code ec;
    std::size_t n = 0;
    while (!ec && !parser.is_done()) {
        const auto k = parser.put(boost::asio::buffer(left.data() + n, left.size() - n), ec);
        n += k;
        if (k == 0) break;
    }
    check(!ec && parser.is_done() && n == used);
    const auto& b = parser.get();
    check(b.method() == plain.method() && b.method_string() == plain.method_string() && b.target() == plain.target() &&
          b.version() == plain.version() && b.body() == plain.body() && b.keep_alive() == plain.keep_alive());
    auto i = b.begin();
    auto j = plain.begin();
    for (; i != b.end() && j != plain.end(); ++i, ++j)
        check(i->name() == j->name() && i->name_string() == j->name_string() && i->value() == j->value());
    check(i == b.end() && j == plain.end());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    switchboard::fuzz::Input in(data, size);
    const auto mode = in.byte();
    const Setup& s = setup(mode % 3);
    const std::size_t piece = 1 + (mode / 3) % 256;
    const std::string_view bytes = in.rest();
    std::size_t offset = 0;
    std::string buffer;
    auto more = [&] {
        const auto n = std::min(piece, bytes.size() - offset);
        buffer.append(bytes.substr(offset, n));
        offset += n;
    };
    // One connection: requests one after the other, as the server reads them, until one cannot be answered.
    for (int request = 0; request < 64; ++request) {
        if (buffer.empty() && offset == bytes.size()) break;  // the client is done
        check_plain(buffer + std::string(bytes.substr(offset)), s.options);
        bhttp::request_parser<bhttp::string_body> parser;
        http::limit_request_parser(parser, s.options);
        boost::system::error_code ec;
        for (;;) {
            if (buffer.empty()) {
                if (offset == bytes.size()) {
                    parser.put_eof(ec);
                    break;
                }
                more();
            }
            ec = {};
            const auto used = parser.put(boost::asio::buffer(buffer.data(), buffer.size()), ec);
            buffer.erase(0, used);
            if (ec == bhttp::error::need_more) {
                if (offset == bytes.size()) {
                    ec = {};
                    parser.put_eof(ec);
                    break;
                }
                more();
                continue;
            }
            if (ec || parser.is_done()) break;
        }
        if (ec || !parser.is_done()) {
            if (!ec) ec = bhttp::error::partial_message;
            if (auto refusal = http::read_refusal(ec, s.options)) {
                const auto status = static_cast<unsigned>(refusal->status);
                check(status == 400 || status == 413 || status == 431);
                check(!refusal->message.empty());
                check(status != 413 || ec == bhttp::error::body_limit);
            }
            break;  // the server answers (or not) and closes the connection
        }
        http::ServerRequest req = parser.release();
        check(req.body().size() <= s.options.max_body_size);
        check_verdict(req, s, http::gate_request(req, s.routes, s.options));
        if (!req.keep_alive()) break;
    }
    return 0;
}
