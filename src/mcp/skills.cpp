#include <switchboard/mcp/skills.hpp>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <memory>

namespace switchboard::mcp {

namespace asio = boost::asio;
namespace json = boost::json;

std::string Skill::name() const { return string_field(frontmatter, "name"); }
std::string Skill::description() const { return string_field(frontmatter, "description"); }

const SkillFile* Skill::file(std::string_view uri) const {
    if (!files) return nullptr;
    for (const auto& f : *files)
        if (f.uri == uri) return &f;
    return nullptr;
}

namespace {

bool is_digest(std::string_view d) {
    if (d.size() != 7 + 64 || d.substr(0, 7) != "sha256:") return false;
    for (char c : d.substr(7))
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

}  // namespace

std::optional<Skill> parse_skill(const json::value& v, std::string& error) {
    const auto* o = v.if_object();
    if (!o) {
        error = "a skill entry is not an object";
        return std::nullopt;
    }
    Skill s;
    s.uri = string_field(*o, "uri");
    if (s.uri.empty()) {
        error = "a skill entry has no \"uri\"";
        return std::nullopt;
    }
    const auto* fm = o->if_contains("frontmatter");
    if (!fm || !fm->is_object() || string_field(fm->get_object(), "name").empty()) {
        error = fmt::format("skill {}: \"frontmatter\" with a \"name\" is required", s.uri);
        return std::nullopt;
    }
    s.frontmatter = fm->get_object();
    s.entry = *o;
    const auto* res = o->if_contains("resources");
    if (res && res->is_string() && res->get_string() == "dynamic") return s;
    if (!res || !res->is_array()) {
        error = fmt::format("skill {}: \"resources\" must be a list of files or \"dynamic\"", s.uri);
        return std::nullopt;
    }
    if (res->get_array().size() > max_skill_files) {
        error = fmt::format("skill {}: {} files, more than the extension's limit of {}", s.uri,
                            res->get_array().size(), max_skill_files);
        return std::nullopt;
    }
    s.files.emplace();
    std::uint64_t total = 0;
    for (const auto& f : res->get_array()) {
        const auto* fo = f.if_object();
        SkillFile file;
        if (fo) {
            file.uri = string_field(*fo, "uri");
            file.digest = string_field(*fo, "digest");
            if (const auto* size = fo->if_contains("size"); size && size->is_int64() && size->get_int64() >= 0)
                file.size = static_cast<std::uint64_t>(size->get_int64());
            else if (size && size->is_uint64())
                file.size = size->get_uint64();
            else
                fo = nullptr;
        }
        if (!fo || file.uri.empty() || !is_digest(file.digest)) {
            error = fmt::format("skill {}: a file entry needs \"uri\", \"size\" and a \"sha256:<hex>\" \"digest\"",
                                s.uri);
            return std::nullopt;
        }
        total += file.size;
        s.files->push_back(std::move(file));
    }
    if (total > max_skill_bytes) {
        error = fmt::format("skill {}: {} bytes, more than the extension's limit of {}", s.uri, total, max_skill_bytes);
        return std::nullopt;
    }
    if (!s.file(s.uri)) {
        error = fmt::format("skill {}: its SKILL.md is not among its files", s.uri);
        return std::nullopt;
    }
    return s;
}

asio::awaitable<Outcome<std::vector<Skill>>> list_skills(std::shared_ptr<ClientSession> session,
                                                        std::vector<std::string>& warnings, SkillCacheHint* hint) {
    std::vector<Skill> skills;
    std::string cursor;
    for (int page = 0; page < 1000; ++page) {
        json::object params;
        if (!cursor.empty()) params["cursor"] = cursor;
        CallOptions options;
        options.timeout = skills_request_timeout;  // a host waits on this before offering anything
        auto r = co_await session->request("skills/list", std::move(params), std::move(options));
        if (!r) co_return r.error();
        const auto* o = r->if_object();
        const auto* list = o ? o->if_contains("skills") : nullptr;
        if (!list || !list->is_array())
            co_return Error::make_local(code::internal_error, "skills/list: the result has no \"skills\" list");
        for (const auto& entry : list->get_array()) {
            std::string error;
            if (auto s = parse_skill(entry, error))
                skills.push_back(std::move(*s));
            else
                warnings.push_back(std::move(error));
        }
        if (hint) {
            const auto* ttl = o->if_contains("ttlMs");
            const std::int64_t page_ttl = ttl && ttl->is_int64() ? std::max<std::int64_t>(ttl->get_int64(), 0) : 0;
            hint->ttl_ms = page == 0 ? page_ttl : std::min(hint->ttl_ms, page_ttl);
            if (string_field(*o, "cacheScope") == "private") hint->cache_scope = "private";
        }
        cursor = string_field(*o, "nextCursor");
        if (cursor.empty()) break;
    }
    co_return skills;
}

asio::awaitable<Outcome<std::vector<Skill>>> list_skills(std::shared_ptr<ClientSession> session,
                                                        std::vector<std::string>& warnings) {
    return list_skills(std::move(session), warnings, nullptr);
}

asio::awaitable<Outcome<Skill>> get_skill(std::shared_ptr<ClientSession> session, std::string uri) {
    json::object params;
    params["uri"] = uri;
    CallOptions options;
    options.timeout = skills_request_timeout;
    auto r = co_await session->request("skills/get", std::move(params), std::move(options));
    if (!r) co_return r.error();
    const auto* o = r->if_object();
    const auto* entry = o ? o->if_contains("skill") : nullptr;
    if (!entry) co_return Error::make_local(code::internal_error, "skills/get: the result has no \"skill\"");
    std::string error;
    auto s = parse_skill(*entry, error);
    if (!s) co_return Error::make_local(code::internal_error, "skills/get: " + error);
    co_return std::move(*s);
}

std::string sha256_digest(std::string_view bytes) {
    // The algorithm fetched once and a context per thread: SHA256() fetches it (under a lock) at every call, which
    // costs as much as hashing a tool definition (every listing hashes each one, host/tool_pins.hpp).
    static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    unsigned char md[SHA256_DIGEST_LENGTH];
    unsigned int length = 0;
    if (!sha256 || !ctx || !EVP_DigestInit_ex2(ctx.get(), sha256, nullptr) ||
        !EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) || !EVP_DigestFinal_ex(ctx.get(), md, &length))
        ::SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), md);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out = "sha256:";
    out.reserve(out.size() + 2 * sizeof md);
    for (unsigned char c : md) {
        out += hex[c >> 4];
        out += hex[c & 0xF];
    }
    return out;
}

std::optional<std::string> resource_bytes(const ReadResourceResult& r) {
    if (r.contents.empty()) return std::nullopt;
    const auto& c = r.contents.front();
    if (c.text) return *c.text;
    return c.decoded_blob();
}

std::string verify_skill_file(const Skill& skill, std::string_view uri, std::string_view bytes) {
    if (!skill.files) return {};
    const auto* f = skill.file(uri);
    if (!f) return fmt::format("{} is not one of the skill's listed files", uri);
    if (bytes.size() != f->size) return fmt::format("{}: {} bytes, the skill lists {}", uri, bytes.size(), f->size);
    if (auto d = sha256_digest(bytes); d != f->digest)
        return fmt::format("{}: digest {} differs from the listed {}", uri, d, f->digest);
    return {};
}

}  // namespace switchboard::mcp
