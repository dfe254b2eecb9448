#include <switchboard/core/wakeup.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>

namespace switchboard::core {

namespace asio = boost::asio;

// The Wakeups of one io_context that hold a waiter.
class detail::WakeupService : public asio::execution_context::service {
public:
    static inline asio::execution_context::id id;
    explicit WakeupService(asio::execution_context& ctx) : service(ctx) {}

    void link(Wakeup* w) {
        w->prev_ = nullptr;
        w->next_ = head_;
        if (head_) head_->prev_ = w;
        head_ = w;
    }
    void unlink(Wakeup* w) {
        if (w->prev_)
            w->prev_->next_ = w->next_;
        else if (head_ == w)
            head_ = w->next_;
        if (w->next_) w->next_->prev_ = w->prev_;
        w->prev_ = w->next_ = nullptr;
    }

private:
    // The waiters' handlers go (their coroutines unwind as the scheduler drops what is queued), as Asio's services
    // drop their pending operations.
    void shutdown() override {
        while (head_) {
            Wakeup* w = head_;
            Wakeup::Waiter dropped = w->take(true);
        }
    }

    Wakeup* head_ = nullptr;
};

Wakeup::Registry& Wakeup::registry(const asio::any_io_executor& ex) {
    return asio::use_service<detail::WakeupService>(asio::query(ex, asio::execution::context));
}

Wakeup::Wakeup(asio::any_io_executor ex) : ex_(std::move(ex)), service_(registry(ex_)) {}

Wakeup::~Wakeup() { abort(); }

void Wakeup::link() { service_.link(this); }
void Wakeup::unlink() { service_.unlink(this); }

Wakeup::Waiter Wakeup::take(bool clear_slot) {
    Waiter w;
    w.swap(waiter_);
    if (clear_slot && slot_.is_connected()) slot_.clear();
    slot_ = asio::cancellation_slot();
    unlink();
    return w;
}

// Called directly, as Asio's own operations call a handler whose executor is the one they run on: going through
// dispatch() wrapped it for its type-erased executor, about 800 instructions per reply.
void Wakeup::wake_now() {
    if (!waiter_) return;
    if (!same_executor_) {
        wake();
        return;
    }
    take(true)(boost::system::error_code());
}

namespace {

// A waiter resumed from the queue of the executor it runs on. Posted as a plain function: post() of the handler
// itself asked it for its type-erased executor and tracked work through it, about 1.5k instructions a wake-up (more
// than a timer's cancel()).
struct Resume {
    asio::any_completion_handler<void(boost::system::error_code)> waiter;
    void operator()() { std::move(waiter)(boost::system::error_code()); }
};

}  // namespace

void Wakeup::wake() {
    if (!waiter_) return;
    if (same_executor_)
        asio::post(ex_, Resume{take(true)});
    else
        asio::post(ex_, asio::append(take(true), boost::system::error_code()));
}

void Wakeup::cancelled() {
    if (!waiter_) return;
    asio::post(ex_, asio::append(take(false), boost::system::error_code(asio::error::operation_aborted)));
}

void Wakeup::abort() {
    if (!waiter_) return;
    asio::post(ex_, asio::append(take(true), boost::system::error_code(asio::error::operation_aborted)));
}

}  // namespace switchboard::core
