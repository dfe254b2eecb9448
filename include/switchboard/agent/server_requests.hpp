// The host's answers to servers' requests: sampling/createMessage goes to the configured model (the server's model
// preferences mapped where possible: a hinted name that the endpoint offers is used) after the front end approves it;
// elicitation/create (form mode) goes to the front end, which validates the answer against the requested schema; URL
// mode is shown and declined unless the front end accepts it; roots/list answers `file://` roots. In the 2026-07-28
// era the same requests arrive through input_required continuations; the session layer routes both here.
//
// Thread-safety: on the pool's executor.
#pragma once

#include <switchboard/host/server_requests.hpp>
#include <switchboard/llm/client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::agent {

struct ElicitationAnswer {
    enum class Action { accept, decline, cancel } action = Action::decline;
    boost::json::object content;  ///< accept: the values
};

struct ServerRequestOptions {
    std::shared_ptr<llm::Client> llm;  ///< unset: sampling is not offered
    /// Whether the user lets `server` use the model for this request; unset: every sampling request is declined.
    std::function<boost::asio::awaitable<bool>(const std::string& server, const boost::json::object& params)>
        approve_sampling;
    /// Whether the model's answer (a CreateMessageResult) may go back to `server` (the spec's human in the loop on the
    /// way back too); unset: it goes back.
    std::function<boost::asio::awaitable<bool>(const std::string& server, const boost::json::object& params,
                                               const boost::json::object& result)>
        approve_sampling_result;
    /// Asks the user; unset: every elicitation is declined.
    std::function<boost::asio::awaitable<ElicitationAnswer>(const std::string& server,
                                                            const boost::json::object& params)>
        elicit;
    std::vector<std::filesystem::path> roots;  ///< answered as file:// URIs; empty: roots are not offered
};

host::ServerRequestHandlers make_server_request_handlers(ServerRequestOptions options);

/// The sampling request as chat messages (system prompt first; text, image and audio content kept).
std::vector<llm::Message> sampling_messages(const boost::json::object& params);
/// A CreateMessageResult from the model's answer.
boost::json::object sampling_result(const llm::ChatResponse& response, const std::string& model);
/// "" when `value` satisfies the flat form schema of an elicitation; else what is wrong ("\"age\" must be a number").
std::string check_elicitation(const boost::json::object& requested_schema, const boost::json::object& value);
/// file:///abs/path (percent-encoded).
std::string file_uri(const std::filesystem::path& p);
/// A ListRootsResult of these directories (made absolute): {"roots": [{"uri": "file:///...", "name"}]}.
boost::json::object roots_result(const std::vector<std::filesystem::path>& dirs);

}  // namespace switchboard::agent
