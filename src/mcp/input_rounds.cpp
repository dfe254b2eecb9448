#include "input_rounds.hpp"
#include "pending_asks.hpp"

#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/task_group.hpp>
#include <switchboard/jsonrpc/signal.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include <optional>
#include <random>

namespace switchboard::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using clock = std::chrono::steady_clock;

struct InputRounds::Run {
    explicit Run(asio::any_io_executor ex) : task(std::move(ex)) {}
    std::string token;  // the requestState
    std::shared_ptr<RequestContext::State> ctx;
    core::TaskGroup task;                        // the handler: cancelled alone when its client cancels
    detail::PendingAsks asks;                    // what the handler asked, and the client's answers
    std::optional<Outcome<json::value>> result;
    bool in_round = false;                                  // a request of the client waits for this run
    clock::time_point deadline = clock::time_point::max();  // for the client's retry
    jsonrpc::Signal changed;                                // an ask, an answer, the result, a deadline
};

namespace {

std::string new_token() {
    static thread_local std::mt19937_64 random{std::random_device{}()};
    return fmt::format("{:016x}{:016x}", random(), random());
}

// inputResponses is an object of results, each an object (ElicitResult, CreateMessageResult, ListRootsResult).
std::optional<Error> check_responses(const json::value& responses) {
    if (!responses.is_object()) return Error{code::invalid_params, "inputResponses is not an object"};
    for (const auto& [key, answer] : responses.get_object())
        if (!answer.is_object())
            return Error{code::invalid_params,
                         fmt::format("inputResponses[\"{}\"] is not an object (a result of the request it answers)",
                                     std::string_view(key))};
    return std::nullopt;
}

bool cancelled(const asio::cancellation_state& state) { return state.cancelled() != asio::cancellation_type::none; }

}  // namespace

InputRounds::InputRounds(asio::any_io_executor ex, std::chrono::milliseconds timeout)
    : executor_(std::move(ex)), timeout_(timeout) {}

InputRounds::~InputRounds() {
    for (auto& [token, run] : runs_) run->task.cancel();
}

awaitable<Outcome<json::value>> InputRounds::round(json::object params, std::shared_ptr<RequestContext::State> ctx,
                                                   Call call) {
    const auto* state = params.if_contains("requestState");
    if (const auto* responses = params.if_contains("inputResponses"))
        if (auto e = check_responses(*responses)) co_return std::move(*e);
    if (!state) {
        auto run = std::make_shared<Run>(executor_);
        run->ctx = std::move(ctx);
        // Answers sent with the first request (a client that knows what will be asked) are used when asked for.
        if (const auto* responses = params.if_contains("inputResponses"); responses && responses->is_object())
            run->asks.answer_ahead(responses->get_object());
        // Not owning: the context lives in the run.
        run->ctx->ask = [this, weak = std::weak_ptr<Run>(run)](std::string key, std::string method, json::object p) {
            return ask(weak, std::move(key), std::move(method), std::move(p));
        };
        // A handler that never asks (the common case) is never registered: no token, no map entry. Until it asks it
        // is cancelled through the request that waits for it. Started inline: one that answers at once has its
        // result before the wait below, which then never suspends (no scheduler pass for it). The request waits for
        // it from the start: an ask made inline finds the run in its round, as one made later does.
        run->in_round = true;
        run->task.start(run_handler(run, std::move(call), std::move(params)), run->ctx->method);
        co_return co_await await_round(std::move(run));
    }
    auto it = state->is_string() ? runs_.find(std::string(state->get_string())) : runs_.end();
    if (it == runs_.end())
        co_return Error{code::invalid_params, "Unknown or expired requestState (start the request again)"};
    auto run = it->second;
    if (run->ctx->method != ctx->method)
        co_return Error{code::invalid_params, "This requestState belongs to a " + run->ctx->method + " request"};
    if (run->in_round) co_return Error{code::invalid_params, "This requestState is already being retried"};
    if (const auto* responses = params.if_contains("inputResponses")) run->asks.answer(responses->get_object());
    run->ctx->request = std::move(ctx->request);  // progress and logs of this round go with this round
    run->ctx->log_level = std::move(ctx->log_level);
    run->changed.fire();
    co_return co_await await_round(std::move(run));
}

awaitable<void> InputRounds::run_handler(std::shared_ptr<Run> run, Call call, json::object params) {
    // A handler that throws is answered as the direct path answers it (mcp::Server: an internal error); otherwise
    // the request would wait until its client gave up.
    std::optional<Outcome<json::value>> r;  // assigned in the try or the catch, no co_await in either branch's result
    try {
        r.emplace(co_await call(std::move(params), RequestContext(run->ctx)));
    } catch (const std::exception& e) {
        r.emplace(Error::from_exception(e));
    }
    run->result = std::move(*r);
    run->changed.fire();  // collected by the round that waits, or by the client's next retry
}

awaitable<Outcome<json::value>> InputRounds::await_round(std::shared_ptr<Run> run) {
    run->in_round = true;
    run->deadline = clock::time_point::max();
    core::ScopeExit leave([&run] { run->in_round = false; });
    for (;;) {
        if (run->result) {
            forget(*run);
            co_return std::move(*run->result);
        }
        if (run->asks.waiting()) {
            // Let asks made together (e.g. through run_all) go out in one round.
            co_await asio::post(executor_, asio::use_awaitable);
            if (run->result) continue;
            // A new requestState each round: the one the client just used is spent (a replay finds nothing).
            forget(*run);
            run->token = new_token();
            runs_.emplace(run->token, run);
            json::object r;
            r["resultType"] = "input_required";
            r["inputRequests"] = run->asks.requests();
            r["requestState"] = run->token;
            run->deadline = clock::now() + timeout_;
            run->changed.fire();  // the handler's wait now has a deadline
            co_return json::value(std::move(r));
        }
        co_await run->changed.wait();
        auto state = co_await asio::this_coro::cancellation_state;
        if (cancelled(state)) {  // the client cancelled this request: the handler ends too
            run->task.cancel();
            forget(*run);
            co_return Error::make_local(code::cancelled, "cancelled by the client");
        }
    }
}

awaitable<Outcome<json::value>> InputRounds::ask(std::weak_ptr<Run> weak, std::string wanted, std::string method,
                                                 json::object params) {
    auto run = weak.lock();
    if (!run) co_return Error::make_local(code::cancelled, "the request ended");
    // An answer already there under its key (sent before it was asked) is the answer.
    const auto key = run->asks.ask(std::move(wanted), std::move(method), std::move(params));
    if (auto answer = run->asks.take(key)) co_return std::move(*answer);
    run->changed.fire();
    for (;;) {
        if (auto answer = run->asks.take(key)) co_return std::move(*answer);
        const auto now = clock::now();
        if (!run->in_round && now >= run->deadline) {
            forget(*run);
            co_return Error::make_local(
                code::timeout, fmt::format("the client did not answer {} within {} s", key,
                                           std::chrono::duration_cast<std::chrono::seconds>(timeout_).count()));
        }
        if (run->in_round)
            co_await run->changed.wait();
        else
            co_await run->changed.wait_for(run->deadline - now);
        auto state = co_await asio::this_coro::cancellation_state;
        if (cancelled(state)) co_return Error::make_local(code::cancelled, "cancelled");
    }
}

void InputRounds::forget(const Run& run) {
    if (run.token.empty()) return;
    if (auto it = runs_.find(run.token); it != runs_.end() && it->second.get() == &run) runs_.erase(it);
}

awaitable<void> InputRounds::shutdown() {
    auto runs = std::move(runs_);
    runs_.clear();
    for (auto& [token, run] : runs) run->task.cancel();
    for (auto& [token, run] : runs) co_await run->task.join();
}

}  // namespace switchboard::mcp
