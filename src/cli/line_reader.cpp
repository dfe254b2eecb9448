#include "line_reader.hpp"

#include <switchboard/core/as_tuple.hpp>

#include <boost/asio/read_until.hpp>
#include <boost/asio/this_coro.hpp>
#include <editline/readline.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace switchboard::cli {

namespace asio = boost::asio;

namespace {

// libedit's callback interface hands the line to a plain function: it lands here.
std::optional<std::optional<std::string>> g_line;

void on_line(char* line) {
    if (line) {
        g_line.emplace(std::string(line));
        std::free(line);
    } else {
        g_line.emplace(std::nullopt);  // Ctrl-D on an empty line
    }
    rl_callback_handler_remove();
}

bool is_regular_file(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

LineReader::LineReader(asio::any_io_executor ex, std::filesystem::path history_file)
    : in_(ex), history_file_(std::move(history_file)), tty_(::isatty(0) && ::isatty(1)) {
    // A regular file cannot be polled (epoll refuses it): it is read with plain blocking reads, which never wait.
    if (!is_regular_file(0)) in_.assign(::dup(0));
    if (tty_) {
        rl_catch_signals = 0;  // Ctrl-C is the loop's (it cancels a turn)
        if (!history_file_.empty()) {
            std::error_code ec;
            std::filesystem::create_directories(history_file_.parent_path(), ec);
            ::read_history(history_file_.c_str());
        }
    }
}

LineReader::~LineReader() {
    if (reading_) rl_callback_handler_remove();
    if (tty_ && !history_file_.empty()) ::write_history(history_file_.c_str());
}

void LineReader::add_history(const std::string& line) {
    if (tty_ && !line.empty()) ::add_history(line.c_str());
}

void LineReader::discard_line() {
    if (!tty_ || !reading_) return;
    rl_callback_handler_remove();
    std::fputs("^C\n", stdout);
    std::fflush(stdout);
    rl_callback_handler_install(prompt_.c_str(), on_line);
}

asio::awaitable<std::optional<std::string>> LineReader::read_line(std::string prompt) {
    prompt_ = std::move(prompt);
    if (!tty_) {
        if (eof_) co_return std::nullopt;
        std::fputs(prompt_.c_str(), stdout);
        std::fflush(stdout);
        std::string line;
        if (!in_.is_open()) {
            if (!std::getline(std::cin, line)) co_return std::nullopt;
            co_return line;
        }
        auto [ec, n] = co_await asio::async_read_until(in_, buffer_, '\n', core::as_tuple_awaitable);
        if (ec && buffer_.size() == 0) {
            eof_ = true;
            co_return std::nullopt;
        }
        std::istream is(&buffer_);
        std::getline(is, line);
        if (ec) eof_ = true;  // a last line without a newline
        co_return line;
    }
    g_line.reset();
    reading_ = true;
    rl_callback_handler_install(prompt_.c_str(), on_line);
    while (!g_line) {
        auto [ec] = co_await in_.async_wait(asio::posix::stream_descriptor::wait_read, core::as_tuple_awaitable);
        if (ec) {  // cancelled
            rl_callback_handler_remove();
            std::fputs("\n", stdout);
            reading_ = false;
            co_return std::nullopt;
        }
        rl_callback_read_char();
    }
    reading_ = false;
    auto line = std::move(*g_line);
    g_line.reset();
    co_return line;
}

}  // namespace switchboard::cli
