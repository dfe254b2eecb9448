// The MCP Registry's frozen `/v0.1` API: search, one server's versions, one version's `server.json` with its status.
// Answers are cached on disk for a while (a search typed twice, `show` then `add`), pages are bounded (at most 100
// servers a page, 4 MiB a body, 20 pages, a cursor seen twice is an error), and every failure names the registry and
// the cause. Package files are checked against a document's `fileSha256` where the package index says what to
// download (npm) or lists the digests (PyPI).
//
// The registry's URL is the user's choice, as a server's URL is; the URLs a document names (a package index) are
// not, and are refused on link-local and cloud-metadata addresses always, on loopback and private ones unless the
// registry itself is on one (a local mirror).
//
// Thread-safety: single owner, on the executor given at construction.
#pragma once

#include <switchboard/registry/server_json.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::http {
class Client;
}

namespace switchboard::registry {

inline constexpr std::string_view official_registry = "https://registry.modelcontextprotocol.io";

struct RegistryOptions {
    std::string url{official_registry};
    std::filesystem::path cache_dir;  ///< empty: nothing cached
    std::chrono::seconds cache_ttl{600};
    std::chrono::milliseconds timeout{15'000};  ///< connect, and silence while reading
};

/// The registry's URL: `flag`, then $SWITCHBOARD_REGISTRY, then the config's `registry`, then the official one.
std::string registry_url(std::string_view flag, std::string_view config_key);

/// `$XDG_CACHE_HOME/switchboard/registry` (or `~/.cache/...`).
std::filesystem::path default_cache_dir();

/// One version of a server as the registry lists it.
struct Listing {
    ServerDocument server;
    boost::json::value document;    ///< the server.json as served
    std::string status = "active";  ///< active, deprecated, deleted
    std::string published_at, updated_at;
    bool latest = false;
};

struct SearchResult {
    std::vector<Listing> servers;
    bool more = false;  ///< the registry had more than the limit
};

/// "npm, remote": what a listing offers, for one line of a table.
std::string kinds_of(const ServerDocument& doc);

/// A listing for a list: name, title, description, version, status, kinds, remote, local.
boost::json::object summary_json(const Listing& l);

class RegistryClient {
public:
    RegistryClient(boost::asio::any_io_executor ex, RegistryOptions options);
    ~RegistryClient();

    /// Servers whose name matches `term` (the registry's substring search), latest versions only, at most `limit`
    /// (1..100). Throws RegistryError.
    boost::asio::awaitable<SearchResult> search(std::string term, std::size_t limit);
    /// One version (empty: the latest). Throws RegistryError (a 404 says the server or version is unknown).
    boost::asio::awaitable<Listing> get(std::string name, std::string version);
    /// Every version the registry has of `name`, newest last as listed. Throws RegistryError.
    boost::asio::awaitable<std::vector<Listing>> versions(std::string name);
    /// Checks a package's file against its `fileSha256`: "" when there is none to check, else what was checked.
    /// Throws RegistryError on a mismatch or when the file cannot be fetched.
    boost::asio::awaitable<std::string> check_file(Package package);

    const RegistryOptions& options() const { return options_; }

private:
    boost::asio::awaitable<boost::json::value> get_json(std::string target, bool cached);
    boost::asio::awaitable<std::string> fetch(std::string url, std::size_t limit, bool document_named);

    RegistryOptions options_;
    std::shared_ptr<http::Client> http_;
    std::shared_ptr<http::Client> named_;  // for URLs the documents name
};

}  // namespace switchboard::registry
