// Where OAuth credentials live between runs: one JSON file, readable by the user only (0600, in a 0700 directory),
// always replaced whole (core::write_file_atomically), so that `switchboard auth login` in one process and a running
// `serve` in another see each other's writes. Entries are per server name and only count for the resource (the MCP
// server's URL) they were issued for: a server whose URL changes needs a new login.
//
// The file: ${SWITCHBOARD_TOKEN_FILE}, else ${XDG_STATE_HOME:-~/.local/state}/switchboard/oauth-tokens.json.
// Nothing here logs a token.
//
// Thread-safety: none; one owner per process (each call reads or rewrites the file, so processes may share it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace switchboard::auth {

/// The client identity an authorization server knows us by (pre-registered, a metadata document URL, or
/// registered dynamically).
struct ClientIdentity {
    std::string issuer;  ///< the authorization server it belongs to
    std::string client_id;
    std::string client_secret;
    std::int64_t client_secret_expires_at = 0;  ///< unix seconds, 0: never
    std::string redirect_uri;                   ///< the one it was registered with
    std::string auth_method;                    ///< token endpoint auth: client_secret_basic, client_secret_post, none
    bool dynamic = false;                       ///< from Dynamic Client Registration (may be registered again)
};

struct Tokens {
    std::string access_token;
    std::string token_type = "Bearer";
    std::string refresh_token;
    std::string scope;            ///< granted (or requested, when the server did not say)
    std::int64_t expires_at = 0;  ///< unix seconds, 0: unknown
    std::string dpop_key;         ///< token_type DPoP: the private key (PEM) the tokens are bound to
};

struct ServerCredentials {
    std::string resource;  ///< the MCP server URL these are for
    std::string issuer;    ///< the authorization server that issued them
    ClientIdentity client;
    Tokens tokens;
    std::int64_t updated_at = 0;  ///< unix seconds
};

class TokenStore {
public:
    explicit TokenStore(std::filesystem::path file);
    /// ${SWITCHBOARD_TOKEN_FILE}, else ${XDG_STATE_HOME:-$HOME/.local/state}/switchboard/oauth-tokens.json.
    static std::filesystem::path default_path();

    const std::filesystem::path& path() const { return file_; }

    /// The entry of `server`, read from the file now. nullopt when there is none (or the file is unreadable:
    /// `error` says why).
    std::optional<ServerCredentials> load(const std::string& server, std::string* error = nullptr) const;
    /// Every entry.
    std::map<std::string, ServerCredentials> load_all(std::string* error = nullptr) const;
    /// Stores the entry of `server` (the file is read, changed and replaced). Empty on success, else the reason.
    std::string save(const std::string& server, const ServerCredentials& credentials);
    /// Forgets `server`. Empty on success (also when there was nothing), else the reason.
    std::string remove(const std::string& server);

    /// Changes with every write to the file, by any process (its mtime and size): for noticing a login made
    /// elsewhere.
    std::string stamp() const;

private:
    std::string write_all(const std::map<std::string, ServerCredentials>& entries);

    std::filesystem::path file_;
};

}  // namespace switchboard::auth
