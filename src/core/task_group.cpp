#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/task_group.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>

#include <list>

namespace switchboard::core {

namespace asio = boost::asio;

struct TaskGroup::State {
    asio::any_io_executor ex;
    // A list: each task's cancellation signal stays at one address while the task runs.
    std::list<asio::cancellation_signal> running;
    std::shared_ptr<OneShotEvent> idle = std::make_shared<OneShotEvent>();
    bool closed = false;
};

TaskGroup::TaskGroup(asio::any_io_executor ex) : state_(std::make_shared<State>()) { state_->ex = std::move(ex); }

TaskGroup::~TaskGroup() {
    // Tasks that still run are told to stop; they keep the state alive until they finish.
    if (state_) cancel();
}

bool TaskGroup::spawn(asio::awaitable<void> task, std::string name) {
    if (state_->closed) return false;
    auto it = state_->running.emplace(state_->running.end());
    asio::co_spawn(
        state_->ex, std::move(task),
        asio::bind_cancellation_slot(it->slot(), [state = state_, it, name = std::move(name)](std::exception_ptr e) {
            log_exception(e, name);
            // The signal is erased after this handler has returned: the slot is still in use now.
            asio::post(state->ex, [state, it] {
                state->running.erase(it);
                if (state->running.empty()) {
                    auto idle = std::move(state->idle);
                    state->idle = std::make_shared<OneShotEvent>();
                    idle->set();
                }
            });
        }));
    return true;
}

void TaskGroup::cancel() {
    state_->closed = true;
    for (auto& signal : state_->running) signal.emit(asio::cancellation_type::terminal);
}

asio::awaitable<void> TaskGroup::join() {
    auto state = state_;
    while (!state->running.empty()) {
        auto idle = state->idle;
        co_await idle->wait();
    }
}

asio::awaitable<void> TaskGroup::shutdown() {
    cancel();
    co_await join();
}

std::size_t TaskGroup::size() const { return state_->running.size(); }
bool TaskGroup::closed() const { return state_->closed; }

}  // namespace switchboard::core
