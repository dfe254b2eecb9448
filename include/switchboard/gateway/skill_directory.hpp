// The skills the gateway serves (the Skills extension, SEP-2640, `io.modelcontextprotocol/skills`): the entries of
// every connected, non-lazy upstream that declares the extension, merged into one listing, and the routes that send
// skills/get, resources/read and resources/directory/read of a skill's files to the server that owns it.
//
// Names follow the tools' rule: a skill name two servers share is renamed for both, `<server>-<name>` (Agent Skills
// names allow only lowercase letters, digits and single hyphens, so not `server__name`). A skill's name must be the
// last segment of its directory, so a renamed skill's URIs get that segment renamed too (`skill://pdf-forms/x.md`
// becomes `skill://docs-pdf-forms/x.md`), and its SKILL.md is served with the new name in its frontmatter, the
// entry's size and digest made for those bytes: a client's checks pass. Skills whose names do not clash keep their
// entries as the server sent them, digests and `_meta` untouched. Local skill folders (`serve --skills`) take part
// like one more server, named "local".
//
// The listing is built on first use and again after an upstream's phase or resource list changed (servers signal a
// change of their skills with notifications/resources/list_changed), or after its ttlMs when a client lists skills.
//
// Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/core/task_group.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/jsonrpc/error.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::gateway {

/// Where the files of one exposed skill come from.
struct SkillRoute {
    std::string server;                   ///< the upstream's name, or "local"
    std::string exposed_root;             ///< the skill's directory as clients see it: "skill://docs-pdf-forms"
    std::string upstream_root;            ///< the same directory as its server names it: "skill://pdf-forms"
    std::optional<std::string> skill_md;  ///< a renamed skill's SKILL.md as served (its frontmatter's name rewritten)
    /// A local skill's files by URI (its upstream URI: as its entry lists them); empty for an upstream's skill.
    std::map<std::string, std::filesystem::path> local_files;

    /// `uri` (under exposed_root) as the server names it.
    std::string upstream_uri(std::string_view uri) const;
    /// `uri` (under upstream_root) as clients name it.
    std::string exposed_uri(std::string_view uri) const;
    bool renamed() const { return exposed_root != upstream_root; }
    bool local() const { return !local_files.empty(); }
};

struct SkillListing {
    std::vector<boost::json::object> entries;  ///< skills/list's entries, as clients get them
    std::vector<SkillRoute> routes;
    std::int64_t ttl_ms = 0;  ///< the least of the upstreams'
    std::string cache_scope = "public";
    bool declared = false;        ///< some upstream declares the extension (or local skills are served)
    bool directory_read = false;  ///< some upstream serves resources/directory/read

    /// The route of the skill whose directory holds `uri` (the longest exposed root it is under), or nullptr.
    const SkillRoute* route(std::string_view uri) const;
};

/// A local skill folder served by the gateway (a SKILL.md and the files beside it).
struct LocalSkill {
    std::string name;
    std::string description;
    std::filesystem::path dir;
};

/// A renamed skill's SKILL.md: `text` with its frontmatter's `name:` line saying `name`; nullopt when the text has no
/// frontmatter with a `name:` line.
std::optional<std::string> rename_skill_md(std::string_view text, std::string_view name);

/// `<server>-<name>` in the Agent Skills alphabet (the server's name lowercased, other characters as hyphens), or
/// empty when that is no valid skill name (over 64 characters).
std::string prefixed_skill_name(std::string_view server, std::string_view name);

/// An answer about skills: the result, or the error with the upstream it came from (empty: the gateway's own).
struct SkillAnswer {
    std::string server;
    jsonrpc::Outcome<boost::json::object> result;
};

class SkillDirectory : public std::enable_shared_from_this<SkillDirectory> {
public:
    static std::shared_ptr<SkillDirectory> create(std::shared_ptr<host::ServerPool> pool,
                                                  std::vector<LocalSkill> local = {});
    ~SkillDirectory();
    SkillDirectory(const SkillDirectory&) = delete;
    SkillDirectory& operator=(const SkillDirectory&) = delete;

    /// The listing for routing: the one kept, built again only when an upstream changed since.
    boost::asio::awaitable<std::shared_ptr<const SkillListing>> listing();
    /// The listing for a client's skills/list: also built again once the upstreams' ttlMs is over.
    boost::asio::awaitable<std::shared_ptr<const SkillListing>> fresh_listing();
    /// What the last listing said: whether to declare the extension (capabilities are answered without waiting).
    bool declared() const { return kept_ && kept_->declared; }
    bool directory_read() const { return kept_ && kept_->directory_read; }

    /// skills/list (every skill in one page), skills/get and resources/directory/read, answered or forwarded to the
    /// skill's server; another method is "method not found".
    boost::asio::awaitable<SkillAnswer> answer(std::string method, boost::json::object params);
    /// resources/read of a file under a served skill's directory (a renamed SKILL.md as served, a local file from
    /// disk, anything else from its server with its URIs as clients name them); nullopt when `uri` is under none.
    boost::asio::awaitable<std::optional<SkillAnswer>> read(std::string uri);

private:
    SkillDirectory(std::shared_ptr<host::ServerPool> pool, std::vector<LocalSkill> local);
    boost::asio::awaitable<std::shared_ptr<const SkillListing>> build();
    void on_change();

    std::shared_ptr<host::ServerPool> pool_;
    std::vector<LocalSkill> local_;
    std::shared_ptr<const SkillListing> kept_;
    std::chrono::steady_clock::time_point built_at_{};
    bool stale_ = true;
    bool refreshing_ = false;
    host::EventBus::Id subscription_ = 0;
    core::TaskGroup tasks_;
};

}  // namespace switchboard::gateway
