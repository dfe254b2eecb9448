// What the server decides about a request before any handler runs, in the order of server.hpp's picture: the
// read's refusals (413, 431, 400), then route lookup (404), Host (403), Origin (403), CORS preflight, the token (401)
// and the method (405). Plain code without I/O: the server awaits only the OAuth verifier and the handler around
// it, and a fuzzer (fuzz/targets/http_request.cpp) runs it one request at a time.
//
// Thread-safety: pure functions.
#pragma once

#include <switchboard/http/fields.hpp>
#include <switchboard/http/router.hpp>
#include <switchboard/http/server.hpp>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/system/error_code.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace switchboard::http {

/// The target without its query.
std::string_view path_of(std::string_view target);

/// Sets the parser's header and body limits from the options.
void limit_request_parser(bhttp::request_parser<bhttp::string_body>& parser, const ServerOptions& options);

struct ReadRefusal {
    bhttp::status status;
    std::string message;
};

/// The answer to a request whose read failed (413 over the body limit, 431 over the header limit, 400 malformed),
/// or nullopt when the connection just ended (closed, timed out between requests, cut mid-message).
std::optional<ReadRefusal> read_refusal(const boost::system::error_code& ec, const ServerOptions& options);

struct RequestVerdict {
    enum class Action {
        refuse,     ///< answer `status` with `message` and `headers` (the server's error body)
        preflight,  ///< answer 204 with `headers` (a CORS preflight from an allowed origin)
        handle,     ///< run `route`'s handler
    };
    Action action = Action::refuse;
    bhttp::status status = bhttp::status::ok;
    std::string message;
    Fields headers;
    /// Headers every response to this request carries: the CORS ones, for an allowed origin when cors is on.
    Fields response_headers;
    /// The static token did not match and an OAuth verifier is set: the verifier decides first, and its refusal
    /// wins over `action`.
    bool verify_token = false;
    const Router::Route* route = nullptr;  ///< with handle
    std::string path;                      ///< the target without its query
};

/// The checks every route shares, for a request that was read whole.
RequestVerdict gate_request(const ServerRequest& req, const Router& routes, const ServerOptions& options);

}  // namespace switchboard::http
