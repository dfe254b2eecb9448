// Tool definitions pinned: what each server offers (its tools, prompts and resource templates) as a person approved
// it, kept in a lockfile beside the config, so that a server that changes a definition later (a "rug pull": new
// instructions hidden in a description, a widened schema) is held until a person approves the change.
//
// What is pinned, per server and name: a tool's whole definition as served (name, title, description, inputSchema,
// outputSchema, annotations, execution, and the parts of _meta a host acts on: ui), a prompt's (with its arguments), a
// resource template's; each with the SHA-256 of its RFC 8785 canonical JSON, so key order and number spelling do not
// count and any other byte does.
//
// The lockfile: `<config>.lock.json` beside the config (`switchboard.json` -> `switchboard.lock.json`, `.mcp.json` ->
// `.mcp.lock.json`): JSON, as the config is, keys sorted and one member a line, so that a change shows as a readable
// diff and a team can commit it with the config. It holds the definitions themselves, not only their digests (a held
// change is shown as a diff of the two). Written atomically.
//
// Thread-safety: a plain value; the pool that holds it keeps it on its executor.
#pragma once

#include <switchboard/mcp/types.hpp>

#include <boost/json/object.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::host {

enum class PinKind { tool, prompt, resource_template };
/// "tool", "prompt", "resourceTemplate" (the lockfile's keys, without their plural).
std::string_view to_string(PinKind kind);
/// The kind named as to_string names it ("tool", "prompt", "resourceTemplate"), or nullopt.
std::optional<PinKind> pin_kind_named(std::string_view name);

/// A definition as pinned or as served now, with its digest ("sha256:<hex>" of its canonical JSON).
struct Pin {
    std::string digest;
    boost::json::object definition;
    bool operator==(const Pin& other) const { return digest == other.digest; }
};

/// The pinned part of a definition, and its Pin.
Pin pin_of(const mcp::Tool& tool);
Pin pin_of(const mcp::Prompt& prompt);
Pin pin_of(const mcp::ResourceTemplate& resource_template);
/// pin_of(tool).digest without building the definition: written straight from the tool (what every listing pays for
/// each tool it lists; the definition is built only for what is held or pinned).
std::string digest_of(const mcp::Tool& tool);
/// "sha256:<hex>" of the canonical JSON of `definition`.
std::string definition_digest(const boost::json::object& definition);

/// A definition the server offers that is not the one approved: changed since, or new since the server was pinned
/// (or never pinned, in strict mode). Not offered to anyone until approved.
struct HeldDefinition {
    PinKind kind = PinKind::tool;
    std::string server;
    std::string name;
    std::optional<Pin> pinned;  ///< nullopt: no pin (new)
    Pin now;
    /// The fields that differ ("description", "inputSchema", ...), or "new".
    std::vector<std::string> changed;
    /// "tool \"add\" of server \"demo\" changed since it was approved (description, inputSchema)".
    std::string describe() const;
};

/// A line diff of the pinned definition and the one served now, each written as core::pretty_json: lines only in the
/// pin start with "- ", lines only in the new one with "+ ", the rest with "  " (a new definition: all "+ ").
std::string definition_diff(const HeldDefinition& held);

/// {"kind", "name", "changed", "digest", "pinnedDigest"?, "description", "diff"} (the CLI's --json, the web API).
boost::json::object to_json(const HeldDefinition& held);

/// describe() and what to do about it: the `switchboard pins` commands that show and approve it.
std::string held_message(const HeldDefinition& held);

class PinStore {
public:
    /// `file`: the lockfile (empty: nothing is pinned nor written). `strict`: a server never pinned is not pinned by
    /// trust on first use; all it offers is held.
    PinStore(std::filesystem::path file, bool strict) : file_(std::move(file)), strict_(strict) {}
    /// The lockfile of a config file: `<stem>.lock.json` beside it (empty for a config that is no file).
    static std::filesystem::path file_for(const std::string& config_source);

    const std::filesystem::path& file() const { return file_; }
    bool strict() const { return strict_; }
    /// Reads the lockfile (a missing one is empty); false with `error` set when it cannot be read or parsed (the
    /// pins held before stay).
    bool load(std::string* error);
    /// Writes it atomically; false with `error` set when it cannot be written.
    bool save(std::string* error) const;

    /// Whether `server` was ever pinned.
    bool knows(std::string_view server) const { return servers_.count(server) > 0; }
    /// The pinned definition, if any.
    const Pin* pinned(std::string_view server, PinKind kind, std::string_view name) const;
    /// Pins `pin` for (server, kind, name): an approval.
    void set(const std::string& server, PinKind kind, const std::string& name, Pin pin);
    /// Forgets `server`'s pins (the next listing pins it again, as first seen).
    void reset(std::string_view server);
    /// Marks `server` as pinned, with nothing yet (its definitions are set one by one).
    void add_server(const std::string& server);
    /// The number of definitions pinned for `server`.
    std::size_t count(std::string_view server) const;

    /// What a listing of `server` offers that is not its pin (compared by digest). Every definition is given as its
    /// kind, name and Pin.
    std::vector<HeldDefinition> check(const std::string& server, PinKind kind,
                                      const std::vector<std::pair<std::string, Pin>>& listed) const;

private:
    struct ServerPins {
        std::map<std::string, Pin, std::less<>> tools, prompts, templates;
        std::map<std::string, Pin, std::less<>>& of(PinKind kind);
        const std::map<std::string, Pin, std::less<>>& of(PinKind kind) const;
    };
    std::filesystem::path file_;
    bool strict_ = false;
    std::map<std::string, ServerPins, std::less<>> servers_;
};

}  // namespace switchboard::host
