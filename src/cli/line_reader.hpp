// Lines from the user without blocking the event loop: libedit's callback interface, fed when stdin is readable, so
// servers keep being served (pings, notifications, reconnects) while the user types. History is kept in a file.
// When stdin is not a terminal (a pipe, a test) it reads plain lines the same way, without editing.
//
// Thread-safety: one reader per process (libedit's callback state is global), on the loop's thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/streambuf.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace switchboard::cli {

class LineReader {
public:
    LineReader(boost::asio::any_io_executor ex, std::filesystem::path history_file);
    ~LineReader();
    LineReader(const LineReader&) = delete;
    LineReader& operator=(const LineReader&) = delete;

    bool interactive() const { return tty_; }
    /// The next line, without its newline; nullopt at the end of input (Ctrl-D on an empty line, end of a pipe)
    /// and when the awaiting coroutine is cancelled.
    boost::asio::awaitable<std::optional<std::string>> read_line(std::string prompt);
    /// Ctrl-C at the prompt: the line typed so far is dropped and the prompt shown again.
    void discard_line();
    void add_history(const std::string& line);

private:
    boost::asio::posix::stream_descriptor in_;
    boost::asio::streambuf buffer_;  // pipes
    std::filesystem::path history_file_;
    std::string prompt_;
    bool tty_ = false;
    bool reading_ = false;
    bool eof_ = false;
};

}  // namespace switchboard::cli
