// A server's `server.json` (the MCP Registry's document, schema 2025-12-11) and the config entry it becomes: which
// package or remote, the values it needs asked for, and the exact command shown before anything is written.
//
// The entry is built the way VS Code's gallery builds its launch line: npm → `npx -y id@version`, pypi →
// `uvx id@version`, oci → `docker run -i --rm image:tag`, nuget → `dnx id@version --yes`, remotes → an http or sse
// entry. The version is always pinned exactly. A package index other than the type's standard one is kept (npm's
// `--registry`, uv's `--index-url`, dnx's `--source`) and reported as a note that must be confirmed. Values the
// document fixes are refused when a shell or the config would read them as more than text (`;`, `|`, `` ` ``, `$`,
// ...): the command is shown to a person, and `${...}` in a config expands variables. A secret goes to the env file
// beside the config as a `${NAME}` reference (host/env_file.hpp).
//
// Thread-safety: plain values and free functions.
#pragma once

#include <boost/json/value.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace switchboard::registry {

/// A document or registry answer that cannot be used; the message names the server and the field.
class RegistryError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A value a person may give: an environment variable, a header, an argument, or a `{var}` inside one of them.
struct Input {
    std::string description;
    std::optional<std::string> default_value;
    std::vector<std::string> choices;
    std::string format = "string";  ///< string, number, boolean, filepath
    bool required = false;
    bool secret = false;
};

/// An argument, environment variable or header: a fixed `value` (with `{var}` placeholders filled from
/// `variables`) or, without one, an input of its own.
struct Value {
    enum class Kind { positional, named, env, header } kind = Kind::positional;
    std::string name;  ///< the flag (`--port`), variable or header name; a positional's `valueHint`
    std::optional<std::string> value;
    Input input;  ///< when there is no value (or its default)
    std::map<std::string, Input> variables;
    bool repeated = false;
};

struct Package {
    std::string registry_type;  ///< npm, pypi, oci, nuget, mcpb, ...
    std::string base_url;       ///< registryBaseUrl; empty: the type's standard one
    std::string identifier, version, file_sha256, runtime_hint;
    std::string transport = "stdio";  ///< stdio, streamable-http, sse
    std::string transport_url;
    std::vector<Value> runtime_arguments, package_arguments, environment;
};

struct Remote {
    std::string type;  ///< streamable-http or sse
    std::string url;
    std::vector<Value> headers;
    std::map<std::string, Input> variables;  ///< `{var}` in the URL
};

struct ServerDocument {
    std::string name, title, description, version, website, repository;
    std::vector<Package> packages;
    std::vector<Remote> remotes;
};

/// Parses a server.json object. Unknown members are ignored (the schema grows); a member of the wrong type, or no
/// name, throws RegistryError naming `source`.
ServerDocument parse_server_json(const boost::json::value& document, std::string_view source);

/// Which way to run the server: a package (by index) or a remote (by index).
struct Choice {
    enum class Kind { package, remote } kind = Kind::package;
    std::size_t index = 0;
};

/// The first package Switchboard can run (npm, pypi, oci, nuget over stdio), else the first remote; a `use` of a
/// registry type or "remote" picks that one. RegistryError when there is none (naming what the document offers).
Choice choose(const ServerDocument& doc, std::string_view use = {});

/// One value to ask a person for.
struct Question {
    std::string key;    ///< what `answers` are keyed by: the variable's, header's or argument's name
    std::string label;  ///< where it goes: "environment variable GITHUB_TOKEN", "header Authorization", ...
    Input input;
};

/// What the chosen package or remote needs asked, in document order, each key once.
std::vector<Question> questions(const ServerDocument& doc, Choice choice);

struct Plan {
    boost::json::object entry;                   ///< the `mcpServers` entry
    std::vector<std::string> argv;               ///< a stdio entry's command line; empty for a remote
    std::string display;                         ///< the command (or `http URL`), as shown before it is written
    std::map<std::string, std::string> secrets;  ///< env file variables: name → value
    std::vector<std::string> notes;              ///< what must be confirmed (a custom package index, ...)
};

/// The entry for `local_name` from the answers (key → value). Required values that are missing, a choice that is
/// not offered, a `{var}` nobody defines, a value with shell metacharacters: RegistryError, naming the field.
Plan plan(const ServerDocument& doc, Choice choice, const std::map<std::string, std::string>& answers,
          std::string_view local_name);

/// How an added entry starts: a stdio server confined unless asked not to (a container launcher is not wrapped: the
/// container is its sandbox), lazy or disabled when asked.
struct EntryFlags {
    bool confine = true;
    bool lazy = false;
    bool disabled = false;
};
void apply_flags(Plan& plan, const EntryFlags& flags);

/// The name a server gets in the config: the last part of its registry name ("io.github.x/airtable" → "airtable"),
/// with what a config name cannot hold replaced by '-'.
std::string default_local_name(std::string_view registry_name);

/// "NAME@VERSION" split ("" when no version is given).
std::pair<std::string, std::string> split_name_version(const std::string& text);

/// A question as the web UI renders it: key, label, description, required, secret, default, choices, format.
boost::json::object to_json(const Question& q);

/// The standard index of a registry type ("https://registry.npmjs.org" for npm), or empty.
std::string standard_base_url(std::string_view registry_type);

/// `argv` as a person would type it into a POSIX shell (words with spaces or quotes single-quoted).
std::string shell_words(const std::vector<std::string>& argv);

}  // namespace switchboard::registry
