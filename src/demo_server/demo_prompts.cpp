#include "demo_server.hpp"

#include <switchboard/core/text.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace switchboard::demo {

namespace json = boost::json;
using boost::asio::awaitable;
using jsonrpc::Error;
using jsonrpc::Outcome;

namespace {

json::object argument(std::string_view name, std::string_view description, bool required) {
    return json::object{{"name", name}, {"description", description}, {"required", required}};
}

json::object prompt_result(std::string description, std::string text) {
    json::array messages;
    messages.push_back(
        json::object{{"role", "user"}, {"content", json::object{{"type", "text"}, {"text", std::move(text)}}}});
    return json::object{{"description", std::move(description)}, {"messages", std::move(messages)}};
}

std::string arg_or(const mcp::StaticHandler::Args& args, const std::string& key, std::string fallback) {
    auto it = args.find(key);
    return it != args.end() ? it->second : fallback;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    return prefix.size() <= s.size() && core::iequals(s.substr(0, prefix.size()), prefix);
}

template <std::size_t N>
std::vector<std::string> matching(const std::string_view (&candidates)[N], std::string_view prefix) {
    std::vector<std::string> out;
    for (auto c : candidates)
        if (starts_with_ci(c, prefix)) out.emplace_back(c);
    return out;
}

}  // namespace

void add_demo_prompts(mcp::StaticHandler& server, DemoState&) {
    {
        json::array args;
        args.push_back(argument("name", "Who to greet", true));
        args.push_back(argument("style", "formal, casual or pirate (default casual)", false));
        json::object def{{"name", "greet"},
                         {"title", "Greeting"},
                         {"description", "Asks for a greeting in a given style"},
                         {"arguments", std::move(args)}};
        server.add_prompt(
            std::move(def),
            [](const mcp::StaticHandler::Args& args, mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                auto name = arg_or(args, "name", "");
                auto style = arg_or(args, "style", "casual");
                std::string text;
                if (style == "formal")
                    text = fmt::format("Please write a formal greeting addressed to {}.", name);
                else if (style == "casual")
                    text = fmt::format("Say hi to {} in a casual, friendly way.", name);
                else if (style == "pirate")
                    text = fmt::format("Greet {} the way a pirate would, arr!", name);
                else
                    co_return Error{jsonrpc::code::invalid_params,
                                    fmt::format("Invalid style \"{}\": expected formal, casual or pirate", style),
                                    {},
                                    false};
                co_return prompt_result(fmt::format("A {} greeting for {}", style, name), std::move(text));
            });
    }
    {
        json::array args;
        args.push_back(argument("text", "The text to summarize", true));
        json::object def{{"name", "summarize"},
                         {"title", "Summarize"},
                         {"description", "Asks for a summary of a text"},
                         {"arguments", std::move(args)}};
        server.add_prompt(
            std::move(def),
            [](const mcp::StaticHandler::Args& args, mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                co_return prompt_result("Summarize a text", "Please summarize:\n" + arg_or(args, "text", ""));
            });
    }
    {
        json::object def{{"name", "plain"},
                         {"title", "Plain"},
                         {"description", "A prompt without arguments"},
                         {"arguments", json::array{}}};
        server.add_prompt(std::move(def),
                          [](const mcp::StaticHandler::Args&, mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                              co_return prompt_result("A fixed prompt",
                                                      "Tell me something interesting about telephone switchboards.");
                          });
    }
}

void set_demo_completer(mcp::StaticHandler& server) {
    server.set_completer([](const json::object& ref, const std::string& argument, const std::string& value,
                            const mcp::StaticHandler::Args&) -> std::vector<std::string> {
        const auto type = mcp::string_field(ref, "type");
        if (type == "ref/prompt" && mcp::string_field(ref, "name") == "greet") {
            if (argument == "style") return matching(greet_styles, value);
            if (argument == "name") return matching(demo_names, value);
        } else if (type == "ref/resource" && mcp::string_field(ref, "uri") == "demo://greeting/{name}") {
            if (argument == "name") return matching(demo_names, value);
        }
        return {};
    });
}

}  // namespace switchboard::demo
