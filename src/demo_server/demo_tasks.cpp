// The demo server's long-running tools (the Tasks extension, mcp::TaskStore): `report` for people to try, and with
// --conformance the fixtures the conformance suite's tasks-* scenarios name (greet, slow_compute, failing_job,
// protocol_error_job, confirm_delete, multi_input, test_tool_with_task).
#include "demo_server.hpp"

#include <switchboard/core/spawn.hpp>
#include <switchboard/mcp/task_store.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace switchboard::demo {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using jsonrpc::Outcome;
using mcp::TaskSupport;

namespace {

json::object task_tool_def(std::string_view name, std::string_view description, json::object properties) {
    return json::object{{"name", name},
                        {"description", description},
                        {"inputSchema", json::object{{"type", "object"}, {"properties", std::move(properties)}}}};
}

double number_arg(const json::object& args, std::string_view key, double fallback) {
    const auto* v = args.if_contains(key);
    return v && v->is_number() ? v->to_number<double>() : fallback;
}

awaitable<void> task_sleep(std::chrono::milliseconds d) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_after(d);
    co_await timer.async_wait(asio::use_awaitable);  // throws when the task is cancelled: the work ends there
}

// An elicitation/create form asking for one field.
json::object task_elicit(std::string message, std::string_view field, std::string_view type) {
    json::object props;
    props[field] = json::object{{"type", type}};
    return json::object{
        {"mode", "form"},
        {"message", std::move(message)},
        {"requestedSchema", json::object{{"type", "object"}, {"properties", std::move(props)}}}};
}

// The accepted content's `field` as text ("" when declined or absent).
std::string accepted(const json::value& answer, std::string_view field) {
    const auto* o = answer.if_object();
    const auto* action = o ? o->if_contains("action") : nullptr;
    if (!action || !action->is_string() || action->get_string() != "accept") return {};
    const auto* content = o->if_contains("content");
    const auto* v = content && content->is_object() ? content->get_object().if_contains(field) : nullptr;
    if (!v) return {};
    return v->is_string() ? std::string(v->get_string()) : json::serialize(*v);
}

using TaskAnswers = std::map<std::string, Outcome<json::value>>;

awaitable<void> task_ask_into(mcp::RequestContext ctx, std::shared_ptr<TaskAnswers> answers, std::string key,
                              json::object params) {
    auto r = co_await ctx.ask_as(key, "elicitation/create", std::move(params));
    answers->insert_or_assign(std::move(key), std::move(r));
}

awaitable<Outcome<json::object>> slow_compute(json::object args, mcp::RequestContext ctx) {
    const double seconds = std::clamp(number_arg(args, "seconds", 1), 0.0, 3600.0);
    const auto label = mcp::string_field(args, "label");
    ctx.progress(0, seconds, "computing");
    co_await task_sleep(std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000)));
    co_return text_result(fmt::format("computed {} after {} s", label.empty() ? "result" : label, seconds));
}

awaitable<Outcome<json::object>> confirm_delete(json::object args, mcp::RequestContext ctx) {
    const auto file = mcp::string_field(args, "filename");
    auto r = co_await ctx.ask_as("confirm", "elicitation/create",
                                 task_elicit(fmt::format("Delete {}?", file), "confirm", "boolean"));
    if (!r) co_return r.error();
    co_return text_result(accepted(*r, "confirm") == "true" ? "deleted " + file : "kept " + file);
}

awaitable<Outcome<json::object>> multi_input(json::object, mcp::RequestContext ctx) {
    auto answers = std::make_shared<TaskAnswers>();
    std::vector<awaitable<void>> asks;
    asks.push_back(task_ask_into(ctx, answers, "first", task_elicit("First name?", "name", "string")));
    asks.push_back(task_ask_into(ctx, answers, "second", task_elicit("Second name?", "name", "string")));
    co_await core::run_all(std::move(asks));
    std::string names;
    for (auto& [key, r] : *answers) {
        if (!r) co_return r.error();
        names += (names.empty() ? "" : ", ") + accepted(*r, "name");
    }
    co_return text_result("got " + names);
}

}  // namespace

void add_task_tools(mcp::StaticHandler& server, std::shared_ptr<mcp::TaskStore> store) {
    server.set_task_store(store);
    json::object props;
    props["seconds"] = json::object{{"type", "number"}, {"description", "How long the report takes (default 5)"}};
    props["topic"] = json::object{{"type", "string"}, {"description", "What the report is about"}};
    server.add_tool(
        task_tool_def("report",
                      "Writes a report in N seconds, asking once which format it should have; a long-running tool "
                      "(a task, when the client supports the Tasks extension)",
                      std::move(props)),
        mcp::task_tool(store, TaskSupport::optional,
                       [](json::object args, mcp::RequestContext ctx) -> awaitable<Outcome<json::object>> {
                           const int seconds = static_cast<int>(std::clamp(number_arg(args, "seconds", 5), 0.0, 3600.0));
                           auto topic = mcp::string_field(args, "topic");
                           if (topic.empty()) topic = "the weather";
                           std::string format = "text";
                           for (int s = 0; s < seconds; ++s) {
                               ctx.progress(s, seconds, fmt::format("writing: {} of {} s", s, seconds));
                               if (s == seconds / 2 && ctx.client_supports("elicitation")) {
                                   auto r = co_await ctx.ask_as(
                                       "format", "elicitation/create",
                                       task_elicit("Which format should the report have?", "format", "string"));
                                   if (!r) co_return r.error();
                                   if (auto f = accepted(*r, "format"); !f.empty()) format = f;
                               }
                               co_await task_sleep(std::chrono::seconds(1));
                           }
                           co_return text_result(
                               fmt::format("Report on {} ({}, {} s): all quiet.", topic, format, seconds));
                       }));
}

void add_task_fixtures(mcp::StaticHandler& server, std::shared_ptr<mcp::TaskStore> store) {
    server.set_task_store(store);
    auto name_prop = json::object{{"name", json::object{{"type", "string"}}}};
    server.add_tool(task_tool_def("greet", "Says hello (never a task)", name_prop),
                    [](json::object args, mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                        co_return text_result(fmt::format("Hello, {}!", mcp::string_field(args, "name")));
                    });
    json::object slow_props;
    slow_props["seconds"] = json::object{{"type", "number"}};
    slow_props["label"] = json::object{{"type", "string"}};
    server.add_tool(task_tool_def("slow_compute", "Sleeps `seconds`, then answers (a task when the client can)",
                                  std::move(slow_props)),
                    mcp::task_tool(store, TaskSupport::optional, slow_compute));
    server.add_tool(task_tool_def("failing_job", "A task whose tool fails after a second", json::object{}),
                    mcp::task_tool(store, TaskSupport::required,
                                   [](json::object, mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                                       co_await task_sleep(std::chrono::seconds(1));
                                       co_return text_result("the job failed", true);
                                   }));
    server.add_tool(task_tool_def("protocol_error_job", "A task that ends in a protocol error", json::object{}),
                    mcp::task_tool(store, TaskSupport::optional,
                                   [](json::object, mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                                       co_await task_sleep(std::chrono::milliseconds(200));
                                       co_return jsonrpc::Error{jsonrpc::code::internal_error,
                                                                "protocol_error_job: internal failure"};
                                   }));
    server.add_tool(task_tool_def("confirm_delete", "Asks for a confirmation, then deletes (a task)",
                                  json::object{{"filename", json::object{{"type", "string"}}}}),
                    mcp::task_tool(store, TaskSupport::optional, confirm_delete));
    server.add_tool(task_tool_def("multi_input", "Asks two questions at once (a task)", json::object{}),
                    mcp::task_tool(store, TaskSupport::optional, multi_input));
    // Input first (an input_required round of the request), then a task that uses it.
    server.add_tool(
        task_tool_def("test_tool_with_task", "Asks for a name, then greets it in a task", json::object{}),
        [store](json::object, mcp::RequestContext ctx) -> awaitable<Outcome<json::object>> {
            if (!mcp::declares_tasks(ctx.client_capabilities()))
                co_return mcp::tasks_capability_required("test_tool_with_task runs only as a task; it");
            auto r = co_await ctx.ask_as("user_name", "elicitation/create",
                                         task_elicit("What is your name?", "name", "string"));
            if (!r) co_return r.error();
            auto work = [name = accepted(*r, "name")](mcp::RequestContext) -> awaitable<Outcome<json::object>> {
                co_await task_sleep(std::chrono::milliseconds(300));
                co_return text_result(fmt::format("Hello, {}! (from a task)", name));
            };
            co_return store->start(std::move(work), ctx);
        });
}

}  // namespace switchboard::demo
