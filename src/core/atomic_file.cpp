#include <switchboard/core/atomic_file.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace switchboard::core {

namespace fs = std::filesystem;

namespace {

std::string errno_text(std::string_view what, const fs::path& file) {
    return fmt::format("cannot {} {}: {}", what, file.string(), std::strerror(errno));
}

// Closes a descriptor on every path out.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

std::string write_file_atomically(const fs::path& target, std::string_view text, AtomicWriteOptions options) {
    static std::atomic<unsigned> counter{0};
    const auto dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    // Same directory (rename is atomic only within one file system), unique per process and per write.
    const auto temp = dir / fmt::format(".{}.{}.{}.tmp", target.filename().string(), ::getpid(), counter++);

    mode_t mode = 0644;
    struct ::stat st {};
    bool replacing = options.keep_mode && ::stat(target.c_str(), &st) == 0;
    if (replacing) mode = st.st_mode & 07777;
    if (options.mode >= 0) {
        mode = static_cast<mode_t>(options.mode) & 07777;
        replacing = true;  // restore the bits after the umask
    }

    Fd out{::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)};
    if (out.fd < 0) return errno_text("create", temp);
    const auto fail = [&](std::string_view what) {
        auto why = errno_text(what, temp);
        ::unlink(temp.c_str());
        return why;
    };
    // open() applied the umask; a replaced file's bits are restored as they were.
    if (replacing && ::fchmod(out.fd, mode) != 0) return fail("set the mode of");
    for (std::size_t done = 0; done < text.size();) {
        const auto n = ::write(out.fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail("write");
        done += static_cast<std::size_t>(n);
    }
    if (options.durable && ::fsync(out.fd) != 0) return fail("flush");
    if (::close(out.fd) != 0) {
        out.fd = -1;
        return fail("close");
    }
    out.fd = -1;
    if (::rename(temp.c_str(), target.c_str()) != 0) {
        auto why = errno_text("replace", target);
        ::unlink(temp.c_str());
        return why;
    }
    if (options.durable) {
        Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
        if (d.fd >= 0) ::fsync(d.fd);  // the rename itself reaches the disk
    }
    return {};
}

}  // namespace switchboard::core
