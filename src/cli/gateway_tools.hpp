// What `switchboard serve` offers besides its servers' tools: each agent and skill as agent__<name> / skill__<name>
// (when a model is configured), and search_tools / call_tool when the config says "toolSearch": true. A client
// calling an agent tool is the approval: the fork runs with the tools its definition allows, without asking (the
// gateway has nobody to ask); its tool calls are sent to the client as progress messages.
#pragma once

#include "cli.hpp"

#include <switchboard/agent/fork.hpp>
#include <switchboard/gateway/aggregate_handler.hpp>

#include <memory>
#include <vector>

namespace switchboard::cli {

struct GatewayTools {
    std::shared_ptr<llm::Client> llm;  ///< null: no model configured, no agent tools
    std::vector<agent::Definition> definitions;  ///< filled once the servers settled (served skills need them)
    std::shared_ptr<agent::ForkRegistry> registry;
    bool tool_search = false;
};

/// The factory GatewayOptions::host_tools takes.
std::function<std::vector<gateway::HostTool>(std::shared_ptr<host::Context>)> gateway_host_tools(
    std::shared_ptr<host::ServerPool> pool, std::shared_ptr<GatewayTools> tools);

}  // namespace switchboard::cli
