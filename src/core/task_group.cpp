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
    // A list: each task's entry stays at one address while the task runs (its signal is shared: see start()).
    std::list<std::shared_ptr<asio::cancellation_signal>> running;
    std::shared_ptr<OneShotEvent> idle = std::make_shared<OneShotEvent>();
    bool closed = false;
};

TaskGroup::TaskGroup(asio::any_io_executor ex) : state_(std::make_shared<State>()) { state_->ex = std::move(ex); }

TaskGroup::~TaskGroup() {
    // Tasks that still run are told to stop; they keep the state alive until they finish.
    if (state_) cancel();
}

namespace {

using Running = std::list<std::shared_ptr<asio::cancellation_signal>>;

// What runs when a task ends: logs what escaped it and takes it off the list.
auto on_end(std::shared_ptr<TaskGroup::State> state, Running::iterator it, std::string name) {
    return [state = std::move(state), it, name = std::move(name)](std::exception_ptr e) {
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
    };
}

}  // namespace

bool TaskGroup::spawn(asio::awaitable<void> task, std::string name) {
    if (state_->closed) return false;
    auto it = state_->running.emplace(state_->running.end(), std::make_shared<asio::cancellation_signal>());
    asio::co_spawn(state_->ex, std::move(task),
                   asio::bind_cancellation_slot((*it)->slot(), on_end(state_, it, std::move(name))));
    return true;
}

std::weak_ptr<asio::cancellation_signal> TaskGroup::start(asio::awaitable<void> task, std::string name) {
    if (state_->closed) return {};
    auto it = state_->running.emplace(state_->running.end(), std::make_shared<asio::cancellation_signal>());
    std::weak_ptr<asio::cancellation_signal> handle = *it;
    start_inline(state_->ex, std::move(task), (*it)->slot(), on_end(state_, it, std::move(name)));
    return handle;
}

void TaskGroup::cancel() {
    state_->closed = true;
    for (auto& signal : state_->running) signal->emit(asio::cancellation_type::terminal);
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
