// Files written whole or not at all: the content replaced by a rename, a replaced file's mode kept, a new file's mode
// from the umask, nothing left behind, errors naming the file.
#include <switchboard/core/atomic_file.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using switchboard::core::write_file_atomically;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

mode_t mode_of(const fs::path& p) {
    struct ::stat st {};
    ::stat(p.c_str(), &st);
    return st.st_mode & 0777;
}

}  // namespace

TEST(AtomicFile, ReplacesTheContentKeepsTheModeAndLeavesNothingBehind) {
    const auto dir = fs::temp_directory_path() / ("sb-atomic-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto file = dir / "settings.json";

    const auto old_mask = ::umask(077);
    EXPECT_EQ(write_file_atomically(file, "first"), "");
    ::umask(old_mask);
    EXPECT_EQ(slurp(file), "first");
    EXPECT_EQ(mode_of(file), 0600u);  // a new file: 0644 less the umask

    ::chmod(file.c_str(), 0640);
    EXPECT_EQ(write_file_atomically(file, "second"), "");
    EXPECT_EQ(slurp(file), "second");
    EXPECT_EQ(mode_of(file), 0640u);  // a replaced file keeps its mode
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);

    const auto why = write_file_atomically(dir / "missing" / "x.json", "x");
    EXPECT_NE(why.find((dir / "missing").string()), std::string::npos) << why;
    fs::remove_all(dir);
}
