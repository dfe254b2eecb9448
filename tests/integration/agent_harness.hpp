// Helpers for tests of the agent loop and the commands that talk to a model: switchboard-fake-llm (a scripted
// OpenAI-compatible server) started as a real process, and what it received.
#pragma once

#include "host_harness.hpp"
#include "net_harness.hpp"

#include <switchboard/llm/settings.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace switchboard::test {

class FakeLlm {
public:
    /// Starts the fake on `script` (JSON text: an array of scripted responses), written into `dir`.
    FakeLlm(const std::filesystem::path& dir, const std::string& script);
    bool running() const { return server_ != nullptr; }
    std::string url() const { return server_ ? server_->url : std::string(); }
    llm::Settings settings() const;
    /// Every request body it received, in order (GET /_requests).
    boost::asio::awaitable<boost::json::array> request_bodies();
    /// Its event log (GET /_events): "request 1", "closed 1", ...
    boost::asio::awaitable<boost::json::array> events();

private:
    std::unique_ptr<ListeningServer> server_;
};

/// One scripted tool call for the fake model's script: {"name": ..., "arguments": "<JSON text>"}.
std::string tool_call(const std::string& name, const std::string& arguments);
/// The tool names offered in a request body.
std::vector<std::string> offered_tools(const boost::json::object& body);
/// A string's text, or any other value serialized (comparisons with literals inside coroutines: GCC 12 cannot
/// convert a string literal to a json::value there).
std::string text_of(const boost::json::value& v);
/// Whether `names` has `name`.
bool has(const std::vector<std::string>& names, std::string_view name);
/// The text of a request message (string content, or its text parts joined).
std::string message_text(const boost::json::value& message);

}  // namespace switchboard::test
