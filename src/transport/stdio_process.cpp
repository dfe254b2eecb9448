#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/transport/fd_channel.hpp>
#include <switchboard/transport/stdio_process.hpp>

#include "stopped_process.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <utility>

#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace switchboard::transport {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using asio::awaitable;
using jsonrpc::Received;

namespace {

using core::as_tuple_awaitable;

// An owned descriptor.
struct Fd {
    int fd = -1;
    Fd() = default;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
    int release() { return std::exchange(fd, -1); }
};

// A close-on-exec pipe whose ends are both above stderr: the child's dup2 onto 0/1/2 then always makes a fresh,
// inheritable descriptor (dup2 onto itself would keep close-on-exec), even when our own stdin/stdout is closed.
bool make_pipe(Fd& r, Fd& w) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return false;
    r.fd = p[0];
    w.fd = p[1];
    for (Fd* f : {&r, &w}) {
        if (f->fd > STDERR_FILENO) continue;
        const int moved = ::fcntl(f->fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
        if (moved < 0) return false;
        f->reset();
        f->fd = moved;
    }
    return true;
}

std::string signal_name(int sig) {
    switch (sig) {
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGPIPE: return "SIGPIPE";
    case SIGHUP: return "SIGHUP";
    case SIGBUS: return "SIGBUS";
    default: return ::strsignal(sig);
    }
}

std::optional<std::string> find_in_path(const std::string& name, const std::string& path_var) {
    std::size_t start = 0;
    while (start <= path_var.size()) {
        auto end = path_var.find(':', start);
        if (end == std::string::npos) end = path_var.size();
        // (A view, not substr: g++ 12 at -O3 warns falsely about the substr copy once this is inlined.)
        std::string_view dir(path_var.data() + start, end - start);
        fs::path candidate = fs::path(dir.empty() ? std::string_view(".") : dir) / name;
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
        start = end + 1;
    }
    return std::nullopt;
}

}  // namespace

struct StdioProcessChannel::State : std::enable_shared_from_this<State> {
    State(asio::any_io_executor e, StdioProcessOptions o) : ex(std::move(e)), opts(std::move(o)), err(ex) {}
    // A process whose exit nobody waited for (its watch never ran, or was cancelled) is not left running: killed and
    // reaped, as Boost.Process's handle did when it went.
    ~State() {
        if (pid <= 0 || exit_event.is_set()) return;
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
        }
    }

    asio::any_io_executor ex;
    StdioProcessOptions opts;
    // The process's pidfd, readable once it exited (see watch_exit). Not Boost.Process's async_wait: that calls a
    // blocking waitpid as soon as the pidfd reads as ready, and a readiness that was no exit (seen once: a gateway
    // reloading its config hung in waitpid, its event loop with it) must only mean "look again".
    std::optional<asio::posix::stream_descriptor> pidfd;
    std::unique_ptr<FdChannel> lines;  // reads the child's stdout, writes its stdin
    asio::readable_pipe err;
    int pid = -1;
    std::string stderr_ring;
    core::OneShotEvent exit_event, stderr_event;
    int native_status = 0;
    bool close_started = false;

    void append_stderr(std::string_view bytes) {
        stderr_ring.append(bytes);
        if (stderr_ring.size() > opts.stderr_tail_bytes)
            stderr_ring.erase(0, stderr_ring.size() - opts.stderr_tail_bytes);
    }

    void signal_group(int sig) {
        if (pid <= 0 || exit_event.is_set()) return;
        ::kill(-pid, sig);
        // A stopped process would act on SIGTERM only once resumed.
        if (sig == SIGTERM) ::kill(-pid, SIGCONT);
    }

    // Whether anything is left in the server's process group (its children, once the server itself exited).
    bool group_alive() const { return pid > 0 && ::kill(-pid, 0) == 0; }

    // After the server exited: what it left behind in its group (a child holding its pipes) is ended too, TERM
    // first, then KILL. The group id stays reserved while any member lives, so this reaches only the server's own.
    awaitable<void> end_leftovers() {
        if (!group_alive()) co_return;
        spdlog::debug("[{}] ending what process {} left in its process group", opts.name, pid);
        ::kill(-pid, SIGTERM);
        ::kill(-pid, SIGCONT);  // a stopped one acts on SIGTERM only once resumed
        asio::steady_timer t(ex);
        for (int i = 0; i < 20 && group_alive(); ++i) {
            t.expires_after(std::chrono::milliseconds(25));
            co_await t.async_wait(as_tuple_awaitable);
        }
        if (group_alive()) ::kill(-pid, SIGKILL);
    }

    // stdout and stderr can outlive the server when a child of it holds them: stop reading them.
    void stop_reading() {
        if (!lines->read_closed()) lines->close_read();
        boost::system::error_code ignored;
        err.close(ignored);
    }

    awaitable<void> watch_exit() {
        auto self = shared_from_this();
        // Without a pidfd (a kernel before 5.3, or valgrind, which does not know pidfd_open) the child is polled.
        std::optional<asio::steady_timer> poll;
        if (!pidfd) poll.emplace(ex);
        for (;;) {
            int status = 0;
            const pid_t r = ::waitpid(pid, &status, WNOHANG);
            if (r == pid || (r < 0 && errno != EINTR)) {
                native_status = r == pid ? status : 0;
                break;
            }
            if (pidfd) {
                co_await pidfd->async_wait(asio::posix::stream_descriptor::wait_read, as_tuple_awaitable);
            } else {
                poll->expires_after(std::chrono::milliseconds(50));
                co_await poll->async_wait(as_tuple_awaitable);
            }
        }
        exit_event.set();
        spdlog::debug("[{}] process {} {}", opts.name, pid, describe_exit());
        // stdout and stderr can outlive the server when a child of it holds them open: stop reading shortly after
        // the exit (what is already in the pipes is still read), so pending calls fail and nothing waits on them.
        // When the host is closing the channel, close() does this without the wait (a command exits at once).
        if (!close_started) {
            asio::steady_timer t(ex, std::chrono::milliseconds(200));
            co_await t.async_wait(as_tuple_awaitable);
        }
        stop_reading();
    }

    awaitable<void> pump_stderr() {
        auto self = shared_from_this();
        std::array<char, 1024>
            buf;  // in the coroutine frame of every server: stderr is rare, 4 KiB each was 80 KiB for 20
        std::string line;
        for (;;) {
            auto [ec, n] = co_await err.async_read_some(asio::buffer(buf), as_tuple_awaitable);
            std::string_view chunk(buf.data(), n);
            append_stderr(chunk);
            for (char c : chunk) {
                if (c == '\n' || line.size() >= 4096) {
                    emit_stderr_line(line);
                    line.clear();
                    if (c == '\n') continue;
                }
                line.push_back(c);
            }
            if (ec) break;
        }
        if (!line.empty()) emit_stderr_line(line);
        stderr_event.set();
    }

    void emit_stderr_line(std::string_view line) {
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        spdlog::debug("[{}] stderr: {}", opts.name, line);
        if (opts.on_stderr_line) opts.on_stderr_line(line);
    }

    std::string describe_exit() const {
        if (!exit_event.is_set()) return "is still running";
        if (WIFEXITED(native_status)) return fmt::format("exited with status {}", WEXITSTATUS(native_status));
        if (WIFSIGNALED(native_status)) {
            int sig = WTERMSIG(native_status);
            return fmt::format("was killed by signal {} ({})", sig, signal_name(sig));
        }
        return fmt::format("ended (wait status {})", native_status);
    }

    std::string tail(std::size_t max_bytes) const {
        std::string_view s = stderr_ring;
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
        if (s.size() > max_bytes) {
            s = s.substr(s.size() - max_bytes);
            if (auto nl = s.find('\n'); nl != std::string_view::npos && nl + 1 < s.size()) s = s.substr(nl + 1);
            return "…" + std::string(s);
        }
        return std::string(s);
    }
};

jsonrpc::Outcome<std::shared_ptr<StdioProcessChannel>> StdioProcessChannel::spawn(asio::any_io_executor ex,
                                                                                  StdioProcessOptions options) {
    static std::once_flag ignore_sigpipe;
    std::call_once(ignore_sigpipe, [] { std::signal(SIGPIPE, SIG_IGN); });  // a dead child must not kill us

    auto fail = [&](std::string why) {
        return jsonrpc::Error::make_local(jsonrpc::code::transport_error, std::move(why));
    };
    if (options.command.empty()) return fail("no command given");

    // Environment: inherited, with the configured overrides.
    std::vector<std::string> env;
    for (char** e = options.inherit_env ? environ : nullptr; e && *e; ++e) {
        std::string_view kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string_view::npos && options.env.count(std::string(kv.substr(0, eq)))) continue;
        env.emplace_back(kv);
    }
    for (const auto& [k, v] : options.env) env.push_back(k + "=" + v);

    if (!options.cwd.empty()) {
        std::error_code ec;
        if (!fs::is_directory(options.cwd, ec))
            return fail(fmt::format("working directory \"{}\" does not exist", options.cwd));
    }

    std::string exe;
    if (options.command.find('/') != std::string::npos) {
        fs::path p(options.command);
        if (p.is_relative() && !options.cwd.empty()) p = fs::path(options.cwd) / p;
        std::error_code ec;
        if (!fs::exists(p, ec)) return fail(fmt::format("command \"{}\" not found", p.string()));
        if (::access(p.c_str(), X_OK) != 0) return fail(fmt::format("command \"{}\" is not executable", p.string()));
        exe = fs::absolute(p, ec).string();  // the child changes directory before exec
    } else {
        std::string path_var;
        if (auto it = options.env.find("PATH"); it != options.env.end())
            path_var = it->second;
        else if (const char* p = std::getenv("PATH"))
            path_var = p;
        auto found = find_in_path(options.command, path_var);
        if (!found) return fail(fmt::format("command \"{}\" not found in PATH", options.command));
        std::error_code ec;
        exe = fs::absolute(*found, ec).string();
    }

    auto state = std::make_shared<State>(ex, std::move(options));
    // Parent ends: stdin's write end, stdout's and stderr's read ends; the rest go to the child.
    Fd in_r, in_w, out_r, out_w, err_r, err_w;
    if (!make_pipe(in_r, in_w) || !make_pipe(out_r, out_w) || !make_pipe(err_r, err_w))
        return fail(fmt::format("cannot start \"{}\": pipe: {}", state->opts.command, std::strerror(errno)));
    // The server's stdout pipe holds 256 KiB instead of 64: a big message (a 64 MiB blob) then crosses in a quarter of
    // the wake-ups, 1.5x faster. Its memory is taken only while bytes wait in it. Where the system refuses (a user over
    // fs.pipe-user-pages-soft, 64 MiB of pipes by default), the pipe stays as it was.
    ::fcntl(out_r.fd, F_SETPIPE_SZ, 256 * 1024);

    // posix_spawn rather than Process v2's fork + exec: glibc's clone(CLONE_VM | CLONE_VFORK) copies none of our page
    // tables and needs no error pipe, so the loop is held only until the child's exec (a fraction of a millisecond
    // when a core is free). The child gets its own process group (shutdown reaches the whole tree, npx -> node, and a
    // terminal's Ctrl-C reaches only us), the three pipes, the working directory, and no other descriptor of ours
    // (closefrom), as the default launcher gave it.
    std::vector<char*> argv;
    argv.push_back(exe.data());
    for (auto& a : state->opts.args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attr);
    ::posix_spawn_file_actions_adddup2(&actions, in_r.fd, STDIN_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, out_w.fd, STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, err_w.fd, STDERR_FILENO);
    if (!state->opts.cwd.empty()) ::posix_spawn_file_actions_addchdir_np(&actions, state->opts.cwd.c_str());
    ::posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    ::posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attr);
    if (rc != 0) return fail(fmt::format("cannot start \"{}\": {}", state->opts.command, std::strerror(rc)));

    in_r.reset();  // the child's ends: only the child holds them now
    out_w.reset();
    err_w.reset();
    state->pid = pid;
    if (const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); fd >= 0) {
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        state->pidfd.emplace(ex, fd);
    } else {
        spdlog::debug("[{}] no pidfd for process {} ({}): polling for its exit", state->opts.name, pid,
                      std::strerror(errno));
    }
    state->err.assign(err_r.release());
    state->lines = std::make_unique<FdChannel>(ex, out_r.release(), in_w.release(), state->opts.max_message_size);
    // stdout ended: wait briefly for the exit status and the rest of stderr so that the reason is complete. The state
    // owns `lines`, so the hook never outlives it.
    state->lines->on_closed([s = state.get()](Received& r) -> awaitable<void> {
        co_await s->exit_event.wait_for(std::chrono::milliseconds(500));
        co_await s->stderr_event.wait_for(std::chrono::milliseconds(100));
        std::string reason =
            s->exit_event.is_set() ? "process " + s->describe_exit() : "process closed its stdout (" + r.reason + ")";
        if (auto t = s->tail(1024); !t.empty()) reason += "; stderr: " + t;
        r.reason = std::move(reason);
    });
    spdlog::debug("[{}] started {} (pid {})", state->opts.name, exe, state->pid);

    auto log_failure = [name = state->opts.name](std::exception_ptr e) {
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            spdlog::error("[{}] process watcher failed: {}", name, x.what());
        }
    };
    asio::co_spawn(ex, state->watch_exit(), log_failure);
    asio::co_spawn(ex, state->pump_stderr(), log_failure);
    return std::shared_ptr<StdioProcessChannel>(new StdioProcessChannel(state));
}

StdioProcessChannel::~StdioProcessChannel() {
    // Never leave an orphan (the watchers hold the state until the process is gone), nor what it left in its group.
    terminate();
}

// The child's stdout as it is: the reason of its end is completed by the hook set in spawn().
awaitable<Received> StdioProcessChannel::read() { return state_->lines->read(); }

awaitable<boost::system::error_code> StdioProcessChannel::write(std::string message) {
    return state_->lines->write(std::move(message));
}

awaitable<boost::system::error_code> StdioProcessChannel::write_batch(std::vector<std::string> messages) {
    return state_->lines->write_batch(std::move(messages));
}

bool StdioProcessChannel::try_write(std::string& message) { return state_->lines->try_write(message); }

void StdioProcessChannel::set_blob_policy(jsonrpc::BlobPolicy policy) {
    state_->lines->set_blob_policy(std::move(policy));
}

awaitable<boost::system::error_code> StdioProcessChannel::write_stream(std::shared_ptr<jsonrpc::ResultStream> s) {
    return state_->lines->write_stream(std::move(s));
}

awaitable<void> StdioProcessChannel::close() {
    auto s = state_;
    const auto total = s->opts.exit_grace + s->opts.term_grace + std::chrono::seconds(2);
    if (s->close_started) {
        co_await s->exit_event.wait_for(total);
        co_return;
    }
    s->close_started = true;
    s->lines->close_write();  // EOF on the server's stdin: the graceful signal
    // A server that never sent a message never finished starting: it has no work to finish, and a hung start is
    // the usual reason it is closed. It gets SIGTERM at once instead of the stdin grace.
    // (GCC 12 miscompiles `if (!co_await ...)`: results are stored first.)
    // A stopped server cannot read the end of its stdin either: it gets SIGTERM (and SIGCONT) at once too.
    bool exited_on_eof = s->exit_event.is_set();
    const bool stopped = !exited_on_eof && stopped_process_in_tree(s->pid).has_value();
    if (s->lines->has_read_message() && !stopped) exited_on_eof = co_await s->exit_event.wait_for(s->opts.exit_grace);
    if (!exited_on_eof) {
        spdlog::debug("[{}] {}; sending SIGTERM", s->opts.name,
                      stopped                        ? "is stopped"
                      : s->lines->has_read_message() ? "did not exit after stdin closed"
                                                     : "never finished starting");
        s->signal_group(SIGTERM);
        const bool exited_on_term = co_await s->exit_event.wait_for(s->opts.term_grace);
        if (!exited_on_term) {
            spdlog::warn("[{}] did not exit after SIGTERM; sending SIGKILL", s->opts.name);
            s->signal_group(SIGKILL);
            co_await s->exit_event.wait_for(std::chrono::seconds(2));
        }
    }
    co_await s->end_leftovers();
    co_await s->stderr_event.wait_for(std::chrono::milliseconds(100));
    s->stop_reading();
}

void StdioProcessChannel::terminate() {
    state_->signal_group(SIGKILL);
    if (state_->group_alive()) ::kill(-state_->pid, SIGKILL);
}

std::size_t StdioProcessChannel::max_message_size() const { return state_->lines->max_message_size(); }
int StdioProcessChannel::pid() const { return state_->pid; }

std::optional<std::string> StdioProcessChannel::stalled() const {
    if (state_->exit_event.is_set()) return std::nullopt;
    return stopped_process_in_tree(state_->pid);
}
bool StdioProcessChannel::exited() const { return state_->exit_event.is_set(); }
std::string StdioProcessChannel::exit_description() const { return state_->describe_exit(); }
std::string StdioProcessChannel::stderr_tail(std::size_t max_bytes) const { return state_->tail(max_bytes); }

}  // namespace switchboard::transport
