#include <switchboard/http/router.hpp>

#include <fmt/format.h>

#include <switchboard/core/text.hpp>

namespace switchboard::http {

// A scan of the request's few fields, not Beast's find(): that maps the name to a known field and walks a tree of
// case-insensitive compares, about 400 instructions a lookup, and a request is asked ten times.
std::string_view header_view(const ServerRequest& req, std::string_view name) {
    for (const auto& f : req) {
        const auto n = f.name_string();
        if (n.size() == name.size() && core::iequals(std::string_view(n.data(), n.size()), name)) {
            const auto v = f.value();
            return {v.data(), v.size()};
        }
    }
    return {};
}

std::string header_value(const ServerRequest& req, std::string_view name) {
    return std::string(header_view(req, name));
}

void Router::add(bhttp::verb method, std::string path, Handler handler) {
    add(method, std::move(path), std::move(handler), RouteOptions{});
}

void Router::add(bhttp::verb method, std::string path, Handler handler, RouteOptions options) {
    routes_.push_back(Route{method, std::move(path), std::move(handler), options});
}

void Router::add_all(const Router& other) { routes_.insert(routes_.end(), other.routes_.begin(), other.routes_.end()); }

const Router::Route* Router::find(bhttp::verb method, std::string_view path, bool& path_known) const {
    path_known = false;
    for (const auto& r : routes_) {
        if (r.path != path) continue;
        path_known = true;
        if (r.method == method) return &r;
    }
    return nullptr;
}

bool Router::requires_token(std::string_view path) const {
    for (const auto& r : routes_)
        if (r.path == path && r.options.requires_token) return true;
    return false;
}

std::string Router::allowed_methods(std::string_view path) const {
    std::string out;
    for (const auto& r : routes_)
        if (r.path == path)
            out += fmt::format("{}{}", out.empty() ? "" : ", ", std::string_view(bhttp::to_string(r.method)));
    return out;
}

}  // namespace switchboard::http
