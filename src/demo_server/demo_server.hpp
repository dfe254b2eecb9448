// The demo MCP server's content: tools, resources, prompts and completions, registered on an mcp::StaticHandler.
// Used by switchboard-demo-server (tests and manual runs of the host against a known peer).
//
// Thread-safety: single-threaded; everything runs on the one io_context of main().
#pragma once

#include <switchboard/mcp/static_handler.hpp>
#include <switchboard/mcp/task_store.hpp>
#include <switchboard/mcp/types.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace switchboard::demo {

/// Mutable state shared by the demo handlers.
struct DemoState {
    std::int64_t counter = 0;
    int extra_tools = 0;         ///< --extra-tools N: N more echo-like tools (bench: large tool indexes)
    bool blob_template = false;  ///< --blob-template: demo://blob/{bytes} (bench: large payloads)
    std::string name = "demo";   ///< --name: serverInfo name, also in the apps' views (which server served one)
};

/// A valid 1x1 RGBA PNG, base64-encoded.
inline constexpr std::string_view png_base64 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMwTjvzHwAEmgJlc/kGHwAAAABJRU5ErkJggg==";
/// Decoded size of png_base64 in bytes.
inline constexpr std::uint64_t png_size = 70;

/// Names offered by completion for the `name` arguments.
inline constexpr std::string_view demo_names[] = {"Alice", "Bob", "Carol", "Dave"};
/// Styles of the `greet` prompt.
inline constexpr std::string_view greet_styles[] = {"formal", "casual", "pirate"};

/// A CallToolResult with one text block.
boost::json::object text_result(std::string text, bool is_error = false);

void add_demo_tools(mcp::StaticHandler& server, DemoState& state);
/// `--dynamic-tools`: a tool `toggle_extra` that adds or removes the tool `extra` and announces tools/list_changed.
void add_dynamic_tools(mcp::StaticHandler& server);
/// `--changing-tools`: change_tools, which changes echo's description or schema, or adds a tool (tools/list_changed).
void add_changing_tools(mcp::StaticHandler& server);
/// ask_model, ask_user, list_roots: tools that send sampling, elicitation and roots requests to the client.
void add_client_request_tools(mcp::StaticHandler& server);
void add_demo_resources(mcp::StaticHandler& server, DemoState& state);
/// `--apps`: MCP Apps (io.modelcontextprotocol/ui): counter (+ its app-only counter_bump) and csp_probe, with their
/// ui://demo/... views.
void add_app_tools(mcp::StaticHandler& server, DemoState& state);
void add_demo_prompts(mcp::StaticHandler& server, DemoState& state);
/// Sets the completer for the `greet` prompt and the greeting template.
void set_demo_completer(mcp::StaticHandler& server);
/// `--conformance`: the tools, resources, template, prompts and completions the official conformance server suite
/// expects (test_simple_text, test://static-text, test_prompt_with_arguments, ...), instead of the demo's own.
void add_conformance_fixtures(mcp::StaticHandler& server);
/// `report`: a long-running tool (N seconds, asks once for the format) that runs as a task of `store` for a client
/// that declared the Tasks extension.
void add_task_tools(mcp::StaticHandler& server, std::shared_ptr<mcp::TaskStore> store);
/// `--conformance`: the tasks-* scenarios' fixtures (greet, slow_compute, failing_job, protocol_error_job,
/// confirm_delete, multi_input, test_tool_with_task).
void add_task_fixtures(mcp::StaticHandler& server, std::shared_ptr<mcp::TaskStore> store);

}  // namespace switchboard::demo
