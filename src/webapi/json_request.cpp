#include <switchboard/webapi/json_request.hpp>

#include <switchboard/core/text.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>
#include <fmt/format.h>

#include <algorithm>

namespace switchboard::webapi {

namespace json = boost::json;
namespace bhttp = http::bhttp;

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

}  // namespace

json::object post_body(const http::ServerRequest& req, const std::vector<std::string>& allowed_origins) {
    const auto type = lower(http::header_value(req, "Content-Type"));
    const auto media = std::string_view(type).substr(0, type.find(';'));
    if (media.find_first_not_of(' ') == std::string_view::npos ||
        media.substr(media.find_first_not_of(' ')).substr(0, 16) != "application/json")
        throw http::HttpError(bhttp::status::unsupported_media_type,
                              "this request must have Content-Type: application/json");
    if (const auto origin = http::header_value(req, "Origin"); !origin.empty()) {
        const auto host = lower(http::header_value(req, "Host"));
        const auto o = lower(origin);
        const bool own = o == "http://" + host || o == "https://" + host;
        const bool listed = std::any_of(allowed_origins.begin(), allowed_origins.end(),
                                        [&](const std::string& a) { return a == "*" || lower(a) == o; });
        if (!own && !listed)
            throw http::HttpError(bhttp::status::forbidden,
                                  fmt::format("Origin {} may not change anything here (only this page's own origin "
                                              "and those given with --allow-origin may)",
                                              core::shorten(origin, 200)));
    }
    boost::system::error_code ec;
    auto v = json::parse(req.body(), ec);
    if (ec) throw http::HttpError(bhttp::status::bad_request, fmt::format("the body is not JSON: {}", ec.message()));
    if (!v.is_object()) throw http::HttpError(bhttp::status::bad_request, "the body must be a JSON object");
    return std::move(v.as_object());
}

std::string required_string(const json::object& body, std::string_view key) {
    const auto* v = body.if_contains(key);
    if (!v || !v->is_string() || v->get_string().empty())
        throw http::HttpError(bhttp::status::bad_request, fmt::format("\"{}\" must be a non-empty string", key));
    return std::string(v->get_string());
}

json::object optional_object(const json::object& body, std::string_view key) {
    const auto* v = body.if_contains(key);
    if (!v || v->is_null()) return {};
    if (!v->is_object())
        throw http::HttpError(bhttp::status::bad_request, fmt::format("\"{}\" must be an object", key));
    return v->get_object();
}

boost::asio::awaitable<bool> send_json(http::Responder& res, json::object body, bhttp::status status) {
    json::value v(std::move(body));
    core::make_valid_utf8(v);
    http::Reply r;
    r.status = status;
    r.body = json::serialize(v);
    r.headers.emplace_back("Cache-Control", "no-store");
    return res.send(std::move(r));
}

boost::asio::awaitable<bool> write_event(http::Responder& res, std::string_view event, json::object data) {
    json::value v(std::move(data));
    core::make_valid_utf8(v);
    const auto head = "event: " + std::string(event) + "\ndata: ";
    const auto text = json::serialize(v);
    const bool ok = co_await res.write_chunk(head, text, "\n\n");
    co_return ok;
}

std::string query_parameter(const http::ServerRequest& req, std::string_view name) {
    auto url = boost::urls::parse_origin_form(std::string_view(req.target()));
    if (!url) return {};
    auto params = url->params();
    auto it = params.find(name);
    return it == params.end() ? std::string() : std::string((*it).value);
}

}  // namespace switchboard::webapi
