// One coroutine's wake-up call: it waits for one thing (a reply), and whoever has it wakes the waiter. wake_now()
// resumes the waiter right there, inside the caller: a reply is read, its caller resumed and the next request
// written before the event loop runs again. A timer's cancel(), which this replaces, queued the wake-up behind the
// reactor, and that cost an epoll_wait per request. wake() queues it instead, for callers that loop over waiters
// and must not be re-entered by them.
//
// Waking when nobody waits does nothing (the waiter checks its condition before it waits). A waiter cancelled
// through its cancellation slot completes, queued, with operation_aborted. The waiting coroutine usually owns the
// Wakeup, which holds the coroutine's handler: a service of the io_context drops the handlers still held when the
// io_context shuts down (as Asio's own services drop their operations), so that this cycle is not leaked.
//
// Thread-safety: single owner; all calls on the executor's thread.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/system/error_code.hpp>

namespace switchboard::core {

namespace detail {
class WakeupService;
}

class Wakeup {
public:
    explicit Wakeup(boost::asio::any_io_executor ex);
    /// The io_context's record of the Wakeups that hold a waiter. Finding it locks the context's service registry and
    /// walks it: an owner that makes a Wakeup per request (a connection) finds it once and passes it in.
    using Registry = detail::WakeupService;
    static Registry& registry(const boost::asio::any_io_executor& ex);
    Wakeup(boost::asio::any_io_executor ex, Registry& registry) : ex_(std::move(ex)), service_(registry) {}
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;
    /// A waiter still there is completed (queued) with operation_aborted.
    ~Wakeup();

    /// Completes with no error when woken, operation_aborted when cancelled.
    template <class Token>
    auto async_wait(Token&& token) {
        return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
            [this](auto handler) { start(std::move(handler)); }, token);
    }

    bool waiting() const { return static_cast<bool>(waiter_); }
    /// Resumes the waiter inside this call; called on the thread running the io_context. A waiter whose executor is
    /// not the Wakeup's is queued to its own instead.
    void wake_now();
    /// Queues the waiter's resumption.
    void wake();

private:
    using Waiter = boost::asio::any_completion_handler<void(boost::system::error_code)>;

    struct Canceller {
        Wakeup* self;
        void operator()(boost::asio::cancellation_type_t type) const {
            if ((type & (boost::asio::cancellation_type::terminal | boost::asio::cancellation_type::partial |
                         boost::asio::cancellation_type::total)) != boost::asio::cancellation_type::none)
                self->cancelled();
        }
    };

    template <class Handler>
    void start(Handler handler) {
        if (waiter_) abort();  // one waiter at a time
        slot_ = boost::asio::get_associated_cancellation_slot(handler);
        // A waiter on another executor (a strand, another io_context) is never resumed inline, on the wrong thread.
        same_executor_ = boost::asio::get_associated_executor(handler, ex_) == ex_;
        Waiter(std::move(handler)).swap(waiter_);  // not operator=: Asio 1.81's move assignment wraps the handler again
        if (slot_.is_connected()) slot_.template emplace<Canceller>(Canceller{this});
        link();
    }
    friend class detail::WakeupService;
    void link();
    void unlink();
    Waiter take(bool clear_slot);
    void cancelled();  // from the slot's handler, which must not clear its own slot
    void abort();

    boost::asio::any_io_executor ex_;
    detail::WakeupService& service_;
    Waiter waiter_;
    boost::asio::cancellation_slot slot_;
    bool same_executor_ = true;
    Wakeup* prev_ = nullptr;  // in the service's list while a waiter is held
    Wakeup* next_ = nullptr;
};

}  // namespace switchboard::core
