// What a ServerHandler call can do besides returning its result: report progress, send log messages, and ask the
// client that sent the request for a sampling, an elicitation or its roots. In a legacy session those asks are
// JSON-RPC requests to the client; in a 2026-07-28 one the request is answered with `input_required` and the handler
// resumes when the client retries with the answers (see server.hpp). The handler's code is the same in both eras.
//
// Thread-safety: a handle (copy freely); use it on the session's executor while the handler call runs.
#pragma once

#include <switchboard/core/trace.hpp>
#include <switchboard/jsonrpc/connection.hpp>
#include <switchboard/mcp/version.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::mcp {

// The names of jsonrpc that every file of mcp uses, short.
using jsonrpc::Error;
using jsonrpc::Outcome;
namespace code = jsonrpc::code;

class RequestContext {
public:
    struct State;  ///< built by the session (src/mcp/request_state.hpp)
    explicit RequestContext(std::shared_ptr<State> state) : state_(std::move(state)) {}

    Era era() const;
    /// The MCP method being answered ("tools/call", ...).
    const std::string& method() const;
    /// The client's capabilities: from `initialize` (legacy) or the request's `_meta` (modern).
    const boost::json::object& client_capabilities() const;
    /// The client's Implementation (name, version) as it said: from `initialize` (legacy) or the request's `_meta`
    /// (modern); empty when it said nothing.
    const boost::json::object& client_info() const;
    /// Who sent the request as its transport authenticated it ("<issuer> <subject>"); empty when unauthenticated.
    const std::string& principal() const;
    /// Whether the client declared `capability` ("sampling", "elicitation", "roots").
    bool client_supports(std::string_view capability) const;

    /// Whether answer_with_members() reaches the response (a request of a session or a stateless one; not a context
    /// made without one, as in tests that call a handler directly).
    bool takes_result_members() const;
    /// Members of the result written ahead of the ones the handler returns, as JSON text kept serialized (`"k":v,…`
    /// without braces; jsonrpc::serialize_result): a list answered the same way to many clients is not rebuilt into
    /// values for each. The handler then returns an object without those keys. Only when takes_result_members().
    void answer_with_members(std::shared_ptr<const std::string> members) const;

    /// notifications/progress for this request, when the client asked for progress; otherwise nothing.
    void progress(double progress, std::optional<double> total = {}, std::string message = {}) const;
    /// notifications/message at `level` ("debug" ... "emergency"), when the client's log level lets it through
    /// (legacy: logging/setLevel, everything when unset; modern: the request's `_meta` logLevel, nothing when unset).
    void log(std::string_view level, boost::json::value data, std::string_view logger = {}) const;
    /// Any other notification about this request (e.g. notifications/elicitation/complete).
    void notify(std::string_view method, boost::json::object params) const;

    /// sampling/createMessage: returns the CreateMessageResult.
    boost::asio::awaitable<Outcome<boost::json::value>> create_message(boost::json::object params) const;
    /// elicitation/create: returns the ElicitResult.
    boost::asio::awaitable<Outcome<boost::json::value>> elicit(boost::json::object params) const;
    /// roots/list: returns the ListRootsResult.
    boost::asio::awaitable<Outcome<boost::json::value>> list_roots() const;
    /// Any of the three by method name. An Error with missing_required_client_capability when the client did not
    /// declare the capability (the spec forbids asking then).
    boost::asio::awaitable<Outcome<boost::json::value>> ask(std::string method, boost::json::object params) const;
    /// ask() with the key the request gets in a modern input round's `inputRequests` (a gateway keeps its upstream's
    /// keys; a server may name its asks). Ignored in the legacy era; a key already in use gets a made-up one.
    boost::asio::awaitable<Outcome<boost::json::value>> ask_as(std::string key, std::string method,
                                                               boost::json::object params) const;

    /// The JSON-RPC request being answered (in a modern multi-round request: the current round's), for code written
    /// against the JSON-RPC layer.
    const jsonrpc::IncomingRequest& request() const;
    /// The request's SERVER span (or the client's context as it came, when this process records nothing): what the
    /// work done for it, such as a gateway's forwarded call, continues.
    const trace::SpanContext& trace() const;
    operator const jsonrpc::IncomingRequest&() const { return request(); }

private:
    std::shared_ptr<State> state_;
};

}  // namespace switchboard::mcp
