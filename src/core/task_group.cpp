#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/task_group.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>

#include <list>
#include <vector>

namespace switchboard::core {

namespace asio = boost::asio;

struct TaskGroup::State {
    struct Entry {
        asio::cancellation_signal signal;
        bool ended = false;
    };
    asio::any_io_executor ex;
    // A list: each task's cancellation signal stays at one address while the task runs.
    std::list<Entry> running;
    // Tasks that ended while the group was open: their entries go at the next spawn, not from inside their
    // completion handler, where co_spawn still uses the slot (a post to erase them cost a scheduler pass per task).
    // Nothing was emitted on them, so nothing queued refers to them.
    std::vector<std::list<Entry>::iterator> ended;
    std::size_t active = 0;
    std::shared_ptr<OneShotEvent> idle = std::make_shared<OneShotEvent>();
    bool closed = false;

    void erase_ended() {
        for (auto it : ended) running.erase(it);
        ended.clear();
    }
};

TaskGroup::TaskGroup(asio::any_io_executor ex) : state_(std::make_shared<State>()) { state_->ex = std::move(ex); }

TaskGroup::~TaskGroup() {
    // Tasks that still run are told to stop; they keep the state alive until they finish.
    if (state_) cancel();
}

bool TaskGroup::spawn(asio::awaitable<void> task, std::string name) {
    if (state_->closed) return false;
    state_->erase_ended();
    auto it = state_->running.emplace(state_->running.end());
    ++state_->active;
    asio::co_spawn(state_->ex, std::move(task),
                   asio::bind_cancellation_slot(
                       it->signal.slot(), [state = state_, it, name = std::move(name)](std::exception_ptr e) {
                           log_exception(e, name);
                           it->ended = true;
                           if (state->closed) {
                               // cancel() emitted on it: co_spawn queued the delivery, which refers to the entry.
                               // Erased after that has run (and the state kept alive until then).
                               asio::post(state->ex, [state, it] { state->running.erase(it); });
                           } else {
                               state->ended.push_back(it);
                           }
                           if (--state->active == 0) {
                               auto idle = std::move(state->idle);
                               state->idle = std::make_shared<OneShotEvent>();
                               idle->set();
                           }
                       }));
    return true;
}

void TaskGroup::cancel() {
    state_->closed = true;
    // Not on an ended task: its co_spawn is gone, and what the emission queued would reach it.
    for (auto& e : state_->running)
        if (!e.ended) e.signal.emit(asio::cancellation_type::terminal);
}

asio::awaitable<void> TaskGroup::join() {
    auto state = state_;
    while (state->active > 0) {
        auto idle = state->idle;
        co_await idle->wait();
    }
}

asio::awaitable<void> TaskGroup::shutdown() {
    cancel();
    co_await join();
}

std::size_t TaskGroup::size() const { return state_->active; }
bool TaskGroup::closed() const { return state_->closed; }

}  // namespace switchboard::core
