#include <switchboard/http/request_gate.hpp>

#include <switchboard/core/text.hpp>
#include <switchboard/http/origin.hpp>

#include <boost/beast/http/error.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace switchboard::http {

namespace {

// The host part of a Host header value ("127.0.0.1:3333" -> "127.0.0.1", "[::1]:80" -> "[::1]"), lower-cased;
// empty (matching nothing) when what follows the host is not a port ("[::1]~:80", "localhost:80:81"); an empty
// port ("localhost:") is allowed, as RFC 3986 allows it.
std::string host_name(std::string_view host) {
    std::size_t end = host.size();
    if (!host.empty() && host.front() == '[') {
        const auto close = host.find(']');
        if (close == std::string_view::npos) return {};
        end = close + 1;
    } else if (const auto colon = host.find(':'); colon != std::string_view::npos) {
        end = colon;
    }
    if (end < host.size()) {
        const auto port = host.substr(end);
        if (port.size() > 6 || port[0] != ':') return {};
        for (char c : port.substr(1))
            if (c < '0' || c > '9') return {};
    }
    std::string out(host.substr(0, end));
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool host_allowed(std::string_view host, const std::vector<std::string>& allowed) {
    if (allowed.empty()) return true;
    const auto name = host_name(host);
    for (const auto& a : allowed)
        if (core::iequals(a, name)) return true;
    return false;
}

// Compares without an early exit, so that the time taken says nothing about how much of the token matched.
// `expected` is never empty.
bool same_secret(std::string_view given, std::string_view expected) {
    unsigned diff = given.size() != expected.size() ? 1u : 0u;
    for (std::size_t i = 0; i < given.size(); ++i)
        diff |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(expected[i % expected.size()]);
    return diff == 0;
}

RequestVerdict refuse(RequestVerdict v, bhttp::status status, std::string message, Fields headers) {
    v.action = RequestVerdict::Action::refuse;
    v.status = status;
    v.message = std::move(message);
    v.headers = std::move(headers);
    return v;
}

}  // namespace

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

void limit_request_parser(bhttp::request_parser<bhttp::string_body>& parser, const ServerOptions& options) {
    parser.header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(options.max_header_size, UINT32_MAX)));
    parser.body_limit(options.max_body_size);
}

std::optional<ReadRefusal> read_refusal(const boost::system::error_code& ec, const ServerOptions& options) {
    if (ec == bhttp::error::body_limit)
        return ReadRefusal{
            bhttp::status::payload_too_large,
            fmt::format("Payload Too Large: the message size limit is {}", core::size_text(options.max_body_size))};
    if (ec == bhttp::error::header_limit)
        return ReadRefusal{bhttp::status::request_header_fields_too_large, "Request Header Fields Too Large"};
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message)
        return ReadRefusal{bhttp::status::bad_request, "Bad Request: malformed HTTP (" + ec.message() + ")"};
    return std::nullopt;
}

RequestVerdict gate_request(const ServerRequest& req, const Router& routes, const ServerOptions& opt) {
    RequestVerdict v;
    v.path = path_of(std::string_view(req.target().data(), req.target().size()));
    const std::string_view path = v.path;
    bool path_known = false;
    v.route = routes.find(req.method(), path, path_known);
    if (!path_known) {
        auto message = fmt::format("Not Found: no route for {}", path);  // before v (and `path` with it) moves
        return refuse(std::move(v), bhttp::status::not_found, std::move(message), {});
    }
    if (const auto host = header_view(req, "Host"); !host_allowed(host, opt.allowed_hosts))
        return refuse(std::move(v), bhttp::status::forbidden,
                      fmt::format("Forbidden: Host \"{}\" is not allowed (this server answers only requests "
                                  "addressed to {})",
                                  host, fmt::join(opt.allowed_hosts, ", ")),
                      {});
    const auto origin = header_value(req, "Origin");
    if (!origin.empty() && !origin_allowed(origin, opt.allowed_origins))
        return refuse(std::move(v), bhttp::status::forbidden,
                      fmt::format("Forbidden: origin {} is not allowed", origin), {});
    if (opt.cors && req.method() == bhttp::verb::options && !origin.empty() &&
        req.find("Access-Control-Request-Method") != req.end()) {
        v.action = RequestVerdict::Action::preflight;
        v.route = nullptr;
        v.headers = cors_preflight_headers(origin, routes.allowed_methods(path), opt.cors_allow_headers);
        return v;
    }
    if (opt.cors && !origin.empty()) {
        v.response_headers.emplace_back("Access-Control-Allow-Origin", origin);
        v.response_headers.emplace_back("Vary", "Origin");
        if (!opt.cors_expose_headers.empty())
            v.response_headers.emplace_back("Access-Control-Expose-Headers", opt.cors_expose_headers);
    }
    // An unknown method on a path gets the token check of the path (405 only for who may know the path).
    const bool needs_token = v.route ? v.route->options.requires_token : routes.requires_token(path);
    // The static token (--token) and the OAuth verifier: one Authorization header read, one scheme check.
    const bool checks_token = needs_token && (opt.token_verifier || !opt.bearer_token.empty());
    const auto given = checks_token ? header_value(req, "Authorization") : std::string();
    const std::string_view scheme = "Bearer ";
    const bool has_scheme = given.size() >= scheme.size() && core::iequals(given.substr(0, scheme.size()), scheme);
    const bool static_token_ok = !opt.bearer_token.empty() && has_scheme &&
                                 same_secret(std::string_view(given).substr(scheme.size()), opt.bearer_token);
    if (checks_token && !static_token_ok) {
        if (opt.token_verifier) {
            v.verify_token = true;
        } else {
            Fields challenge;
            challenge.emplace_back("WWW-Authenticate", has_scheme ? "Bearer error=\"invalid_token\"" : "Bearer");
            return refuse(std::move(v), bhttp::status::unauthorized,
                          has_scheme ? "Unauthorized: wrong bearer token"
                                     : "Unauthorized: Authorization: Bearer <token> is required",
                          std::move(challenge));
        }
    }
    if (!v.route) {
        Fields allow;
        allow.emplace_back("Allow", routes.allowed_methods(path));
        return refuse(std::move(v), bhttp::status::method_not_allowed, "Method Not Allowed", std::move(allow));
    }
    v.action = RequestVerdict::Action::handle;
    return v;
}

}  // namespace switchboard::http
