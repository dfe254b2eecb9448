// switchboard-confine: the last step before a confined stdio server's own program. The host starts it (inside
// bubblewrap, or alone where namespaces are refused) with what to apply, and it applies it to itself and execs the
// server, so that every rule holds from the server's first instruction:
//
//   switchboard-confine [--seccomp bwrap|landlock] [--bridge UNIX_PATH:PORT]
//                       [--landlock --read P... --write P... --hide P... --tcp PORT] -- COMMAND ARGS...
//
//   --seccomp   a filter (libseccomp): no sockets but IPv4/IPv6 (socketpair stays: Node's child stdio uses it), no
//               ptrace, keyctl, mount, bpf, perf_event_open, new namespaces, io_uring, module loading, TIOCSTI; on the
//               Landlock path also no UDP or raw IP sockets (nothing of the host network but TCP to the proxy).
//   --bridge    bubblewrap's empty network namespace has a loopback of its own and nothing else: this process stays
//               as the server's parent, listens on 127.0.0.1:PORT there and relays each connection to the host's
//               egress proxy at UNIX_PATH (bound into the sandbox). The server itself cannot open a Unix socket.
//   --landlock  filesystem rules: the --read trees readable and executable, the --write trees writable, a --hide
//               path unreadable even inside a --read tree (Landlock only allows, so the tree is granted around it,
//               sibling by sibling, as it is now); TCP connect only to --tcp PORT, bind refused (ABI >= 4); abstract
//               Unix sockets and signals scoped to the sandbox (ABI >= 6).
//
// Always: no new privileges, no capabilities (a root host has them all), and SIGKILL when the host dies. Any
// failure is fatal, printed on stderr (the host shows the server's stderr tail) and exits 126: never run
// unconfined by mistake. No Switchboard library is linked: this is a fork+exec away from every confined start.
#include <linux/landlock.h>
#include <seccomp.h>

#include <arpa/inet.h>
#include <sched.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

// Debian 12's kernel headers stop at Landlock ABI 2; the kernel's ABI is stable, so the later parts are spelled here.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define LANDLOCK_RULE_NET_PORT 2
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

namespace {

struct RulesetAttr {  // landlock_ruleset_attr as of ABI 6
    __u64 handled_access_fs;
    __u64 handled_access_net;
    __u64 scoped;
};

struct NetPortAttr {  // landlock_net_port_attr (ABI 4)
    __u64 allowed_access;
    __u64 port;
};

[[noreturn]] void die(const std::string& what, int err = 0) {
    if (err)
        std::fprintf(stderr, "switchboard-confine: %s: %s\n", what.c_str(), std::strerror(err));
    else
        std::fprintf(stderr, "switchboard-confine: %s\n", what.c_str());
    std::_Exit(126);
}

struct Options {
    std::string seccomp;  // "", "bwrap", "landlock"
    std::string bridge_path;
    int bridge_port = 0;
    bool landlock = false;
    std::vector<std::string> read, write, hide;
    int tcp_port = 0;
    char** command = nullptr;
};

Options parse(int argc, char** argv) {
    Options o;
    int i = 1;
    const auto value = [&](std::string_view flag) -> std::string {
        if (i + 1 >= argc) die(std::string(flag) + " needs a value");
        return argv[++i];
    };
    for (; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--seccomp") {
            o.seccomp = value(a);
            if (o.seccomp != "bwrap" && o.seccomp != "landlock") die("--seccomp is bwrap or landlock");
        } else if (a == "--bridge") {
            const auto v = value(a);
            const auto colon = v.rfind(':');
            if (colon == std::string::npos) die("--bridge is UNIX_PATH:PORT");
            o.bridge_path = v.substr(0, colon);
            o.bridge_port = std::atoi(v.c_str() + colon + 1);
            if (o.bridge_port <= 0 || o.bridge_port > 65535) die("--bridge port out of range");
        } else if (a == "--landlock") {
            o.landlock = true;
        } else if (a == "--read") {
            o.read.push_back(value(a));
        } else if (a == "--write") {
            o.write.push_back(value(a));
        } else if (a == "--hide") {
            o.hide.push_back(value(a));
        } else if (a == "--tcp") {
            o.tcp_port = std::atoi(value(a).c_str());
        } else {
            die("unknown option " + std::string(a));
        }
    }
    if (i >= argc) die("no command after --");
    o.command = argv + i;
    return o;
}

// ---- seccomp ------------------------------------------------------------------------------------------------------

void add(scmp_filter_ctx ctx, int err, int syscall, std::vector<scmp_arg_cmp> args = {}) {
    if (syscall == __NR_SCMP_ERROR) return;  // not on this architecture
    const int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(err), syscall, static_cast<unsigned>(args.size()),
                                          args.empty() ? nullptr : args.data());
    if (rc < 0) die("seccomp rule", -rc);
}

void load_seccomp(bool landlock_path) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) die("seccomp_init failed");
    // Sockets: IPv4 and IPv6 only. AF_UNIX would reach the host's daemons (D-Bus, docker, the gateway's own socket
    // files), AF_NETLINK its routing and audit. The kernel reads an int, so a family with bits above the low 32 is
    // the same family to it: any such value is refused first, and the rest compared whole (a few ranges, not a rule
    // per family: the filter is compiled at every confined start).
    const auto low32 = [](int v) { return SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<scmp_datum_t>(v)); };
    add(ctx, EPERM, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_GT, 0xffffffffu)});
    add(ctx, EPERM, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_LT, AF_INET)});
    for (int family = AF_INET + 1; family < AF_INET6; ++family)
        add(ctx, EPERM, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family))});
    add(ctx, EPERM, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_GT, AF_INET6)});
    if (landlock_path) {
        // Sharing the host's network: Landlock restricts plain TCP connect only. Datagrams, raw packets, other
        // protocols over a stream (MPTCP), TCP Fast Open's connect-by-sendto and listening are refused here.
        for (int family : {AF_INET, AF_INET6}) {
            for (int type : {SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET})
                add(ctx, EPERM, SCMP_SYS(socket),
                    {low32(family), SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, static_cast<scmp_datum_t>(type))});
            add(ctx, EPERM, SCMP_SYS(socket), {low32(family), SCMP_A2(SCMP_CMP_GT, IPPROTO_TCP)});
            for (int protocol = 1; protocol < IPPROTO_TCP; ++protocol)
                add(ctx, EPERM, SCMP_SYS(socket),
                    {low32(family), SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<scmp_datum_t>(protocol))});
        }
        add(ctx, EPERM, SCMP_SYS(sendto), {SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN)});
        add(ctx, EPERM, SCMP_SYS(sendmsg), {SCMP_A2(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN)});
        add(ctx, EPERM, SCMP_SYS(sendmmsg), {SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN)});
        add(ctx, EPERM, SCMP_SYS(listen));
    }
    for (int sc : {SCMP_SYS(ptrace),
                   SCMP_SYS(process_vm_readv),
                   SCMP_SYS(process_vm_writev),
                   SCMP_SYS(keyctl),
                   SCMP_SYS(add_key),
                   SCMP_SYS(request_key),
                   SCMP_SYS(mount),
                   SCMP_SYS(umount2),
                   SCMP_SYS(pivot_root),
                   SCMP_SYS(move_mount),
                   SCMP_SYS(open_tree),
                   SCMP_SYS(fsopen),
                   SCMP_SYS(fsmount),
                   SCMP_SYS(fsconfig),
                   SCMP_SYS(fspick),
                   SCMP_SYS(mount_setattr),
                   SCMP_SYS(bpf),
                   SCMP_SYS(perf_event_open),
                   SCMP_SYS(unshare),
                   SCMP_SYS(setns),
                   SCMP_SYS(kexec_load),
                   SCMP_SYS(kexec_file_load),
                   SCMP_SYS(init_module),
                   SCMP_SYS(finit_module),
                   SCMP_SYS(delete_module),
                   SCMP_SYS(swapon),
                   SCMP_SYS(swapoff),
                   SCMP_SYS(reboot),
                   SCMP_SYS(acct),
                   SCMP_SYS(open_by_handle_at),
                   SCMP_SYS(name_to_handle_at),
                   SCMP_SYS(userfaultfd),
                   SCMP_SYS(iopl),
                   SCMP_SYS(ioperm),
                   SCMP_SYS(io_uring_setup),
                   SCMP_SYS(io_uring_enter),
                   SCMP_SYS(io_uring_register),
                   SCMP_SYS(quotactl),
                   SCMP_SYS(lookup_dcookie),
                   SCMP_SYS(kcmp)})
        add(ctx, EPERM, sc);
    // New namespaces through clone's flags; clone3 passes them in memory a filter cannot read, so it is "not
    // implemented" and the C library falls back to clone.
    for (scmp_datum_t flag :
         {CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP})
        add(ctx, EPERM, SCMP_SYS(clone), {SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)});
    add(ctx, ENOSYS, SCMP_SYS(clone3));
    // Typing into the host's terminal.
    add(ctx, EPERM, SCMP_SYS(ioctl), {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI)});
    add(ctx, EPERM, SCMP_SYS(ioctl), {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX)});
    const int rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc < 0) die("seccomp_load", -rc);
}

// ---- Landlock -----------------------------------------------------------------------------------------------------

int landlock_abi() {
    const long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v < 0 ? 0 : static_cast<int>(v);
}

constexpr __u64 read_rights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr __u64 file_rights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                              LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV;

__u64 fs_rights(int abi) {
    __u64 all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // ABI 1
    if (abi >= 2) all |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) all |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5) all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return all;
}

struct Ruleset {
    int fd = -1;
    __u64 handled = 0;

    void allow(const std::string& path, __u64 rights) {
        const int pfd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
        if (pfd < 0) return;  // gone or never there: nothing to allow
        struct stat st {};
        ::fstat(pfd, &st);
        if (!S_ISDIR(st.st_mode)) rights &= file_rights;
        landlock_path_beneath_attr attr{};
        attr.allowed_access = rights & handled;
        attr.parent_fd = pfd;
        const long rc = syscall(SYS_landlock_add_rule, fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
        const int err = errno;
        ::close(pfd);
        if (rc < 0) die("landlock rule for " + path, err);
    }
};

bool under(std::string_view path, std::string_view root) {
    if (root == "/") return !path.empty() && path[0] == '/';
    return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
           (path.size() == root.size() || path[root.size()] == '/');
}

// `path` readable except the hidden paths beneath it: granted whole when nothing hidden is inside, else each entry
// of it granted the same way. Entries made later inside such a directory are not readable (a documented gap).
void allow_around(Ruleset& rs, const std::string& path, __u64 rights, const std::vector<std::string>& hide) {
    bool inside = false;
    for (const auto& h : hide) {
        if (h == path) return;
        if (under(h, path)) inside = true;
    }
    if (!inside) {
        rs.allow(path, rights);
        return;
    }
    DIR* d = ::opendir(path.c_str());
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view n = e->d_name;
        if (n == "." || n == "..") continue;
        const auto entry = path == "/" ? "/" + std::string(n) : path + "/" + std::string(n);
        // A symlink is not followed: granting it would grant its target, which may be (or hold) a hidden path. What it
        // points to is granted, or not, where it really is.
        struct stat st {};
        if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) continue;
        allow_around(rs, entry, rights, hide);
    }
    ::closedir(d);
}

void apply_landlock(const Options& o) {
    const int abi = landlock_abi();
    if (abi < 1) die("Landlock is not available in this kernel (or disabled at boot: lsm=...,landlock)");
    RulesetAttr attr{};
    attr.handled_access_fs = fs_rights(abi);
    std::size_t size = offsetof(RulesetAttr, handled_access_net);
    if (abi >= 4) {
        attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
        size = offsetof(RulesetAttr, scoped);
    }
    if (abi >= 6) {
        attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    Ruleset rs;
    rs.handled = attr.handled_access_fs;
    rs.fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
    if (rs.fd < 0) die("landlock_create_ruleset", errno);
    for (const auto& r : o.read) allow_around(rs, r, read_rights, o.hide);
    for (const auto& w : o.write) allow_around(rs, w, rs.handled, o.hide);
    // What every program opens for writing, even a read-only one.
    for (const char* dev : {"/dev/null", "/dev/zero", "/dev/full"})  // not /dev/tty: the user's terminal
        rs.allow(dev, read_rights | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE);
    if (abi >= 4 && o.tcp_port > 0) {
        NetPortAttr net{};
        net.allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP;
        net.port = static_cast<__u64>(o.tcp_port);
        if (syscall(SYS_landlock_add_rule, rs.fd, LANDLOCK_RULE_NET_PORT, &net, 0) < 0) die("landlock port", errno);
    }
    if (syscall(SYS_landlock_restrict_self, rs.fd, 0) < 0) die("landlock_restrict_self", errno);
    ::close(rs.fd);
}

// ---- privileges ---------------------------------------------------------------------------------------------------

void drop_privileges() {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs", errno);
    if (::geteuid() != 0) return;  // an ordinary user has no capabilities to drop (bwrap dropped its own)
    for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capset, &header, data) != 0) die("dropping capabilities", errno);
}

// ---- the bridge to the egress proxy -------------------------------------------------------------------------------

int bridge_listen(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("bridge socket", errno);
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die("bridge bind 127.0.0.1", errno);
    if (::listen(fd, 64) != 0) die("bridge listen", errno);
    return fd;
}

// One connection, in a process of its own: bytes both ways until either side is done.
// `path` is /proc/self/fd/N of the proxy socket opened before the server started: what the server does to the path
// the socket was bound at (it may write the sandbox's /run) changes nothing here.
[[noreturn]] void relay(int client, const std::string& path) {
    const int up = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    if (up < 0 || ::connect(up, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::_Exit(1);
    char buf[16384];
    pollfd p[2] = {{client, POLLIN, 0}, {up, POLLIN, 0}};
    bool open[2] = {true, true};
    while (open[0] || open[1]) {
        if (::poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (!open[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
            const int to = p[1 - i].fd;
            if (n <= 0) {
                open[i] = false;
                p[i].fd = -1;
                ::shutdown(to, SHUT_WR);
                continue;
            }
            for (ssize_t off = 0; off < n;) {
                const ssize_t w = ::write(to, buf + off, static_cast<std::size_t>(n - off));
                if (w <= 0) std::_Exit(0);
                off += w;
            }
        }
    }
    std::_Exit(0);
}

int wake_pipe[2] = {-1, -1};

void on_signal(int sig) {
    const int saved = errno;
    const char c = static_cast<char>(sig);
    (void)!::write(wake_pipe[1], &c, 1);
    errno = saved;
}

// This process stays as the server's parent: it relays, forwards SIGTERM/SIGINT/SIGHUP, and exits as the server did.
[[noreturn]] void run_bridge(int listener, const std::string& path, pid_t server) {
    ::close(STDIN_FILENO);
    ::open("/dev/null", O_RDONLY);  // fd 0 again, so the host's pipe has no other reader
    ::dup2(STDIN_FILENO, STDOUT_FILENO);
    while (true) {
        pollfd p[2] = {{listener, POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
        if (::poll(p, 2, -1) < 0 && errno != EINTR) die("bridge poll", errno);
        if (p[1].revents & POLLIN) {
            char sigs[64];
            const ssize_t n = ::read(wake_pipe[0], sigs, sizeof sigs);
            for (ssize_t i = 0; i < n; ++i)
                if (sigs[i] != SIGCHLD) ::kill(server, sigs[i]);
            int status = 0;
            pid_t pid;
            while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
                if (pid != server) continue;
                if (WIFEXITED(status)) std::_Exit(WEXITSTATUS(status));
                ::signal(WTERMSIG(status), SIG_DFL);
                ::kill(::getpid(), WTERMSIG(status));
                std::_Exit(128 + WTERMSIG(status));
            }
        }
        if (p[0].revents & POLLIN) {
            const int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) continue;
            if (::fork() == 0) relay(c, path);
            ::close(c);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    // Dies with the host even where no pid namespace ends it (the Landlock path).
    prctl(PR_SET_PDEATHSIG, SIGKILL);

    pid_t server = 0;
    int listener = -1;
    std::string proxy_path;
    if (!o.bridge_path.empty()) {
        listener = bridge_listen(o.bridge_port);
        const int proxy_fd = ::open(o.bridge_path.c_str(), O_PATH | O_CLOEXEC);
        if (proxy_fd < 0) die("the egress proxy's socket " + o.bridge_path, errno);
        proxy_path = "/proc/self/fd/" + std::to_string(proxy_fd);
        if (::pipe2(wake_pipe, O_CLOEXEC) != 0) die("pipe", errno);
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);
        server = ::fork();
        if (server < 0) die("fork", errno);
        if (server > 0) {
            // Not dumpable: the server (same user, no capabilities) cannot open this process's memory through /proc.
            prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
            run_bridge(listener, proxy_path, server);
        }
        for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_DFL);
        ::close(listener);
        ::close(wake_pipe[0]);
        ::close(wake_pipe[1]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // with the bridge: it is the parent now
    }
    drop_privileges();
    if (o.landlock) apply_landlock(o);
    if (!o.seccomp.empty()) load_seccomp(o.seccomp == "landlock");
    ::execvp(o.command[0], o.command);
    die(std::string("cannot run \"") + o.command[0] + "\"", errno);
}
