// The client side of the stdio transport: spawns the server process and talks to it over its stdin/stdout.
// stderr is kept in a ring buffer (the last 64 KiB by default) and logged line by line under the server's name.
// The child's exit is noticed at once: reads end, and the close reason names the exit status and the stderr tail.
//
// Thread-safety: single owner; see jsonrpc::Channel for the concurrency contract.
#pragma once

#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/error.hpp>
#include <switchboard/jsonrpc/framing.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::transport {

struct StdioProcessOptions {
    std::string name;  ///< server name, for logs
    std::string command;
    std::vector<std::string> args;
    std::map<std::string, std::string> env;  ///< added to (or replacing in) the inherited environment
    bool inherit_env = true;                 ///< false: `env` is all the process gets (a confined server)
    std::string cwd;                         ///< empty: inherit
    std::size_t max_message_size = jsonrpc::default_max_message_size;
    std::size_t stderr_tail_bytes = 64 * 1024;
    std::chrono::milliseconds exit_grace{2000};                 ///< after closing stdin, before SIGTERM
    std::chrono::milliseconds term_grace{2000};                 ///< after SIGTERM, before SIGKILL
    std::function<void(std::string_view line)> on_stderr_line;  ///< besides the debug log
};

class StdioProcessChannel : public jsonrpc::Channel {
public:
    /// Starts the process. Fails with a clear error when the command is not found, not executable, or the working
    /// directory does not exist.
    static jsonrpc::Outcome<std::shared_ptr<StdioProcessChannel>> spawn(boost::asio::any_io_executor ex,
                                                                        StdioProcessOptions options);
    ~StdioProcessChannel() override;

    boost::asio::awaitable<jsonrpc::Received> read() override;
    boost::asio::awaitable<boost::system::error_code> write(std::string message) override;
    boost::asio::awaitable<boost::system::error_code> write_batch(std::vector<std::string> messages) override;
    bool try_write(std::string& message) override;
    void set_blob_policy(jsonrpc::BlobPolicy policy) override;
    boost::asio::awaitable<boost::system::error_code> write_stream(std::shared_ptr<jsonrpc::ResultStream> s) override;
    /// The spec's shutdown: close stdin, wait, SIGTERM, wait, SIGKILL. A server that never sent a message (it never
    /// finished starting) gets SIGTERM right after its stdin closes.
    boost::asio::awaitable<void> close() override;
    void terminate() override;  ///< SIGKILL to the server's process group
    std::size_t max_message_size() const override;
    bool can_stall() const override { return true; }
    bool resumes_callers_inline() const override { return true; }  // a pipe: nothing left to finish after a line
    /// The server's process, or one it started, is stopped (SIGSTOP): its callers need not wait out their timeouts.
    std::optional<std::string> stalled() const override;

    int pid() const;
    bool exited() const;
    /// "exited with status 1", "was killed by signal 9 (SIGKILL)", or "is still running".
    std::string exit_description() const;
    /// The last `max_bytes` of stderr, cut at a line start when possible.
    std::string stderr_tail(std::size_t max_bytes = 2048) const;

    struct State;

private:
    explicit StdioProcessChannel(std::shared_ptr<State> state) : state_(std::move(state)) {}
    std::shared_ptr<State> state_;
};

}  // namespace switchboard::transport
