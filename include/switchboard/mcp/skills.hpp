// The MCP Skills extension (SEP-2640, `io.modelcontextprotocol/skills`), client side: a server that declares it in
// capabilities.extensions answers `skills/list` (paginated) and `skills/get` with skill entries; every file of a
// skill, its SKILL.md included, is an ordinary resource (`skill://<path>/<file>`) read with resources/read. An entry
// lists each file with its size and "sha256:<hex>" digest (or "dynamic": files not known ahead), so a host checks
// what it reads against what was listed.
//
// Thread-safety: plain values and free functions; the coroutines run on the session's executor.
#pragma once

#include <switchboard/mcp/client_session.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::mcp {

inline constexpr std::string_view skills_extension = "io.modelcontextprotocol/skills";
/// The extension's limits a host must accept (and may refuse beyond).
inline constexpr std::size_t max_skill_files = 512;
inline constexpr std::uint64_t max_skill_bytes = 16ull * 1024 * 1024;
/// skills/list (each page) and skills/get: a server that does not answer within this is left out, not waited for.
inline constexpr std::chrono::milliseconds skills_request_timeout{10'000};

struct SkillFile {
    std::string uri;
    std::string digest;  ///< "sha256:<64 lowercase hex>"
    std::uint64_t size = 0;
};

struct Skill {
    std::string uri;                  ///< of its SKILL.md
    boost::json::object frontmatter;  ///< name, description and the rest, verbatim
    /// Every file, SKILL.md included; nullopt when the server says "dynamic".
    std::optional<std::vector<SkillFile>> files;
    /// The entry as the server sent it (its `_meta` and any other member kept): what a gateway passes on.
    boost::json::object entry;

    std::string name() const;
    std::string description() const;
    /// The listed file `uri`, or nullptr.
    const SkillFile* file(std::string_view uri) const;
};

/// Parses one entry of skills/list or skills/get; nullopt and `error` set when it is malformed.
std::optional<Skill> parse_skill(const boost::json::value& v, std::string& error);

/// What a listing says of how long it may be kept (the least ttlMs of its pages; "private" when any page says so).
struct SkillCacheHint {
    std::int64_t ttl_ms = 0;
    std::string cache_scope = "public";
};

/// Every skill the server lists (all pages; a malformed entry is skipped and named in `warnings`); `hint`, when not
/// null, gets the listing's cache hint. (Two overloads, not a default argument: GCC 12, docs/design.md.)
boost::asio::awaitable<Outcome<std::vector<Skill>>> list_skills(std::shared_ptr<ClientSession> session,
                                                                std::vector<std::string>& warnings,
                                                                SkillCacheHint* hint);
boost::asio::awaitable<Outcome<std::vector<Skill>>> list_skills(std::shared_ptr<ClientSession> session,
                                                                std::vector<std::string>& warnings);
/// One skill by the URI of its SKILL.md.
boost::asio::awaitable<Outcome<Skill>> get_skill(std::shared_ptr<ClientSession> session, std::string uri);

/// "sha256:<64 lowercase hex>" of `bytes`.
std::string sha256_digest(std::string_view bytes);

/// The bytes of a resources/read result (its first content: text as is, a blob base64-decoded); nullopt when there is
/// no content or the blob is not base64.
std::optional<std::string> resource_bytes(const ReadResourceResult& r);

/// Checks `bytes`, read from `uri`, against the entry: listed, same size, same digest. Empty when it matches, else
/// what differs. A "dynamic" skill has nothing to check against: any file of it passes.
std::string verify_skill_file(const Skill& skill, std::string_view uri, std::string_view bytes);

}  // namespace switchboard::mcp
