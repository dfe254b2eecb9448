// A server process for the duration of a section (section_http.cpp, section_agent.cpp).
//
// Thread-safety: single owner.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace switchboard::bench {

// A server process for the duration of a section: stdout to /dev/null (server-everything logs every request there),
// stderr to a file that is polled for the "listening on" line, SIGTERM at the end.
class ServerProcess {
public:
    ServerProcess(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env) {
        log_ = (std::filesystem::temp_directory_path() /
                fmt::format("switchboard-bench-server-{}-{}.log", ::getpid(), next_log_id()))
                   .string();
        const int err = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (err < 0) throw std::runtime_error("cannot create " + log_);
        pid_ = ::fork();
        if (pid_ == 0) {
            const int null = ::open("/dev/null", O_RDWR);
            ::dup2(null, 0);
            ::dup2(null, 1);
            ::dup2(err, 2);
            for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
            std::vector<char*> args;
            for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            ::execvp(args[0], args.data());
            ::_exit(127);
        }
        ::close(err);
        if (pid_ < 0) throw std::runtime_error("fork");
    }
    ~ServerProcess() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            int status = 0;
            for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (::waitpid(pid_, &status, WNOHANG) == 0) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
            }
        }
        std::error_code ec;
        std::filesystem::remove(log_, ec);
    }
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;

    /// The process started (the gateway section reads its CPU time and finds its children through /proc).
    pid_t pid() const { return pid_; }

    /// The text after "listening on " in the server's stderr, within 30 s; throws otherwise.
    std::string wait_listening() const {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (std::chrono::steady_clock::now() < deadline) {
            std::ifstream in(log_);
            std::string line;
            while (std::getline(in, line))
                if (auto p = line.find("listening on "); p != std::string::npos) return line.substr(p + 13);
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                throw std::runtime_error("server exited before listening");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        throw std::runtime_error("server did not report listening within 30 s");
    }

private:
    static int next_log_id() {
        static std::atomic<int> n{0};
        return ++n;
    }
    mutable pid_t pid_ = -1;
    std::string log_;
};

}  // namespace switchboard::bench
