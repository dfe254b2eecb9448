#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/spawn.hpp>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>

#include <memory>

namespace switchboard::core {

namespace asio = boost::asio;

void log_exception(std::exception_ptr e, std::string_view what) {
    if (!e) return;
    try {
        std::rethrow_exception(e);
    } catch (const boost::system::system_error& x) {
        // A task ended by cancellation is not an error.
        if (x.code() == asio::error::operation_aborted) return;
        spdlog::error("internal error in {}: {}", what, x.what());
    } catch (const std::exception& x) {
        spdlog::error("internal error in {}: {}", what, x.what());
    } catch (...) {
        spdlog::error("internal error in {}: unknown exception", what);
    }
}

void spawn_logged(const asio::any_io_executor& ex, asio::awaitable<void> task, std::string what) {
    asio::co_spawn(ex, std::move(task), [what = std::move(what)](std::exception_ptr e) { log_exception(e, what); });
}

asio::awaitable<void> run_all(std::vector<asio::awaitable<void>> tasks) {
    if (tasks.empty()) co_return;
    auto ex = co_await asio::this_coro::executor;
    struct Joint {
        std::size_t left;
        OneShotEvent done;
    };
    auto joint = std::make_shared<Joint>();
    joint->left = tasks.size();
    for (auto& t : tasks)
        asio::co_spawn(ex, std::move(t), [joint](std::exception_ptr e) {
            log_exception(e, "concurrent task");
            if (--joint->left == 0) joint->done.set();
        });
    co_await joint->done.wait();
}

}  // namespace switchboard::core
