// Writing a file so that a reader (or a crash) never sees half of it: a temporary file in the same directory, flushed
// to disk, then renamed over the target. Used for every file Switchboard writes that someone else reads or edits:
// config edits from the web UI, the tool catalog, the published forks.
//
// Thread-safety: free function; two writers of one target in one process must not race (the last rename wins).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace switchboard::core {

struct AtomicWriteOptions {
    /// fsync the data (and the directory after the rename): for files a user would hate to lose (their config).
    bool durable = true;
    /// Keep the permission bits of the file being replaced (a config with secrets may be 0600); new files get
    /// 0644 less the umask.
    bool keep_mode = true;
    /// When set, the file gets exactly these permission bits from its creation on (0600 for a file of secrets),
    /// whatever the umask and the replaced file had.
    int mode = -1;
};

/// Writes `text` to `target` atomically. Returns an empty string on success, else the reason, naming the file.
std::string write_file_atomically(const std::filesystem::path& target, std::string_view text,
                                  AtomicWriteOptions options = {});

}  // namespace switchboard::core
