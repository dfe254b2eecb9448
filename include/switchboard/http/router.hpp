// The server's route table: exact paths (the query is ignored), one handler per method. Plain code, no I/O.
//
// Thread-safety: built before the server starts, read-only afterwards.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::http {

namespace bhttp = boost::beast::http;
using ServerRequest = bhttp::request<bhttp::string_body>;
class Responder;

/// The value of header `name` in `req`, empty when absent.
std::string header_value(const ServerRequest& req, std::string_view name);
/// The same, viewed where it is in `req` (no copy): valid while `req` is.
std::string_view header_view(const ServerRequest& req, std::string_view name);

using Handler = std::function<boost::asio::awaitable<void>(ServerRequest& req, Responder& res)>;

struct RouteOptions {
    /// false: served without the bearer token even when the server has one (health checks for load balancers).
    /// Host and Origin checks apply to every route.
    bool requires_token = true;
};

class Router {
public:
    struct Route {
        bhttp::verb method;
        std::string path;
        Handler handler;
        RouteOptions options;
    };
    void add(bhttp::verb method, std::string path, Handler handler);
    void add(bhttp::verb method, std::string path, Handler handler, RouteOptions options);
    /// Adds every route of `other` (a component's routes served beside this table's).
    void add_all(const Router& other);
    /// The route, or null; `path_known` tells a 405 from a 404.
    const Route* find(bhttp::verb method, std::string_view path, bool& path_known) const;
    /// Whether some route of `path` needs the token (a path whose routes all skip it: false).
    bool requires_token(std::string_view path) const;
    /// "GET, POST" for the Allow header.
    std::string allowed_methods(std::string_view path) const;
    bool empty() const { return routes_.empty(); }

private:
    std::vector<Route> routes_;
};

}  // namespace switchboard::http
