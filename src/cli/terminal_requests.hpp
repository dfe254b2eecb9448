// What servers ask (sampling, elicitation, roots) answered at the terminal. `chat` asks at its prompt; the one-shot
// commands (`tools`, `call`, `read`, `prompt`, ...) declare what they too could answer there, so that a server that
// adds tools for such clients once it knows their capabilities (server-everything's get-roots-list,
// trigger-elicitation-request, trigger-sampling-request) lists them to every command alike.
//
// Thread-safety: on the loop's thread (LineReader).
#pragma once

#include "cli.hpp"
#include "line_reader.hpp"

#include <switchboard/agent/server_requests.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <string>

namespace switchboard::cli {

/// Asks the user for what an elicitation/create wants: URL mode shows the URL and asks whether it was done; form mode
/// asks for each field (checked against the schema, asked again when wrong); "/decline" or the end of input declines.
boost::asio::awaitable<agent::ElicitationAnswer> elicit_at_terminal(LineReader& reader, const std::string& server,
                                                                    const boost::json::object& params);
/// Whether the user lets `server` use the model for this sampling request (y/n).
boost::asio::awaitable<bool> approve_sampling_at_terminal(LineReader& reader, const std::string& server,
                                                          const boost::json::object& params);
/// Whether the model's answer goes back to `server` (shown first; y/n).
boost::asio::awaitable<bool> approve_sampling_result_at_terminal(LineReader& reader, const std::string& server,
                                                                 const boost::json::object& result);

/// The answers of a one-shot command: roots (the working directory) always; when stdin and stdout are a terminal,
/// elicitation asked there and, with a model configured (the config's `llm`, the environment), sampling after the
/// user approves it. Nothing that could only be declined is declared.
host::ServerRequestHandlers one_shot_requests(const host::Config& config, boost::asio::any_io_executor ex);

}  // namespace switchboard::cli
