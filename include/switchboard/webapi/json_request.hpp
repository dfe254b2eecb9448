// What every /api/ handler does with its request and its answer: the checks a state-changing request must pass
// (JSON only, the page's own Origin), reading the body's fields with errors that name them, and JSON replies that are
// always valid UTF-8.
//
// Thread-safety: free functions.
#pragma once

#include <switchboard/http/server.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::webapi {

/// The body of a POST as a JSON object. Throws http::HttpError: 415 unless Content-Type is application/json (a
/// cross-site form cannot send that without a CORS preflight), 403 when an Origin is present and is neither the
/// listener's own (`http://<Host>`) nor listed in `allowed_origins` ("*" lists every one), 400 when the body is not a
/// JSON object.
boost::json::object post_body(const http::ServerRequest& req, const std::vector<std::string>& allowed_origins);

/// A string field that must be there and not be empty (else 400 naming it).
std::string required_string(const boost::json::object& body, std::string_view key);
/// An object field, empty when absent (400 when present but not an object).
boost::json::object optional_object(const boost::json::object& body, std::string_view key);

/// Sends `body` as JSON (strings made valid UTF-8 first), with Cache-Control: no-store. Not a coroutine itself (it
/// returns Responder::send's), so the default argument is safe with GCC 12.
boost::asio::awaitable<bool> send_json(http::Responder& res, boost::json::object body,
                                       http::bhttp::status status = http::bhttp::status::ok);

/// One server-sent event (`event: NAME`, `data: JSON`) on a stream begun with Responder::begin_stream (strings made
/// valid UTF-8 first). False once the client is gone. `event` is a view (a literal, or a string the caller keeps):
/// a std::string converted from a literal inside co_await is a temporary GCC 12 may destroy twice.
boost::asio::awaitable<bool> write_event(http::Responder& res, std::string_view event, boost::json::object data);

/// How often an idle event stream sends a keep-alive comment (also how a client that went away is noticed).
inline constexpr std::chrono::seconds event_keep_alive_every{15};

/// The value of query parameter `name` in the request's target ("" when absent), percent-decoded.
std::string query_parameter(const http::ServerRequest& req, std::string_view name);

}  // namespace switchboard::webapi
