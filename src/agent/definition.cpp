// Agents and skills from markdown files with YAML frontmatter (Switchboard's folders and Claude Code's).
#include <switchboard/agent/definition.hpp>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace switchboard::agent {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

/// A problem in the frontmatter, at a line of the file.
struct FrontmatterError {
    int line;
    std::string what;
};

// ---- frontmatter ---------------------------------------------------------------------------------------------------

struct Split {
    std::string_view yaml;  ///< between the `---` lines (empty when the file has none)
    std::string_view body;
    bool has_frontmatter = false;
};

// One line without its terminator ("\n" or "\r\n"); `pos` moves past it.
std::string_view next_line(std::string_view text, std::size_t& pos) {
    const auto end = text.find('\n', pos);
    auto line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    return line;
}

bool is_fence(std::string_view line) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    return line == "---";
}

// The frontmatter starts with `---` on the first line (after a UTF-8 BOM) and ends with the next `---` line.
std::optional<Split> split_frontmatter(std::string_view text) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    std::size_t pos = 0;
    if (!is_fence(next_line(text, pos))) return Split{{}, text, false};
    const auto start = pos;
    while (pos < text.size()) {
        const auto line_start = pos;
        if (is_fence(next_line(text, pos)))
            return Split{text.substr(start, line_start - start), text.substr(pos), true};
    }
    return std::nullopt;
}

// ---- YAML values ---------------------------------------------------------------------------------------------------

// File line of a node: the frontmatter's first line is the file's second (after `---`).
int line_of(const YAML::Node& node) {
    const auto mark = node.Mark();
    return mark.is_null() ? 1 : mark.line + 2;
}

[[noreturn]] void fail(const YAML::Node& node, std::string what) {
    throw FrontmatterError{line_of(node), std::move(what)};
}

// A key written without a value (`model:`) counts as absent.
bool present(const YAML::Node& node) { return node && !node.IsNull(); }

std::string scalar(const YAML::Node& node, std::string_view key) {
    if (!node.IsScalar()) fail(node, fmt::format("\"{}\" must be a string", key));
    return node.Scalar();
}

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

// Splits at commas (and, with `at_spaces`, at blanks) outside parentheses: "Read, Bash(git diff *)" is two items.
std::vector<std::string> split_list(std::string_view text, bool at_spaces) {
    std::vector<std::string> out;
    std::string item;
    int depth = 0;
    const auto flush = [&] {
        auto t = trim(item);
        if (!t.empty()) out.push_back(std::move(t));
        item.clear();
    };
    for (const char c : text) {
        if (c == '(') ++depth;
        if (c == ')' && depth > 0) --depth;
        if (depth == 0 && (c == ',' || (at_spaces && (c == ' ' || c == '\t')))) {
            flush();
        } else {
            item += c;
        }
    }
    flush();
    return out;
}

// A list of strings: a YAML sequence of scalars, or (Claude Code) one string with separators.
std::vector<std::string> string_list(const YAML::Node& node, std::string_view key, bool at_spaces) {
    if (node.IsScalar()) return split_list(node.Scalar(), at_spaces);
    if (!node.IsSequence()) fail(node, fmt::format("\"{}\" must be a list of strings", key));
    std::vector<std::string> out;
    for (const auto& item : node) {
        if (!item.IsScalar()) fail(item, fmt::format("\"{}\" must be a list of strings", key));
        auto t = trim(item.Scalar());
        if (!t.empty()) out.push_back(std::move(t));
    }
    return out;
}

void add_once(std::vector<std::string>& list, const std::string& item) {
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// Server names: a sequence of non-empty strings.
std::vector<std::string> server_names(const YAML::Node& node, std::string_view key) {
    if (!node.IsSequence()) fail(node, fmt::format("\"{}\" must be a list of server names", key));
    std::vector<std::string> out;
    for (const auto& item : node) {
        if (!item.IsScalar() || trim(item.Scalar()).empty())
            fail(item, fmt::format("\"{}\" must be a list of server names", key));
        add_once(out, trim(item.Scalar()));
    }
    return out;
}

// A plain scalar as the JSON value it reads as (true, 12, 1.5, null); a quoted one stays a string.
json::value scalar_json(const YAML::Node& node) {
    const auto& text = node.Scalar();
    if (node.Tag() != "?") return json::value(text);  // "!" for quoted scalars
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(begin, &end, 10);
    if (errno == 0 && end != begin && *end == '\0') return static_cast<std::int64_t>(i);
    errno = 0;
    const double d = std::strtod(begin, &end);
    if (errno == 0 && end != begin && *end == '\0' && text.find_first_of("xXnN") == std::string::npos) return d;
    return json::value(text);
}

json::value to_json(const YAML::Node& node) {
    switch (node.Type()) {
    case YAML::NodeType::Map: {
        json::object o;
        for (const auto& kv : node) {
            if (!kv.first.IsScalar()) fail(kv.first, "keys of a server config must be strings");
            o[kv.first.Scalar()] = to_json(kv.second);
        }
        return o;
    }
    case YAML::NodeType::Sequence: {
        json::array a;
        for (const auto& item : node) a.push_back(to_json(item));
        return a;
    }
    case YAML::NodeType::Scalar: return scalar_json(node);
    default: return nullptr;
    }
}

// ---- the keys ------------------------------------------------------------------------------------------------------

class Reader {
public:
    Reader(Definition& d, const fs::path& path) : d_(d), source_(path.string()) {}

    void read(const YAML::Node& root) {
        if (!root.IsMap()) fail(root, "the frontmatter must be a mapping of keys to values");
        for (const auto& kv : root) {
            if (!kv.first.IsScalar()) continue;  // not a key of ours
            const auto& key = kv.first.Scalar();
            const auto& value = kv.second;
            if (!present(value)) continue;
            if (key == "name") {
                d_.name = trim(scalar(value, key));
                if (!is_valid_name(d_.name))
                    fail(value, fmt::format("invalid name \"{}\": use 1 to 64 of a-z, 0-9, '-' and '_'", d_.name));
                name_line_ = line_of(value);
            } else if (key == "description") {
                d_.description = trim(scalar(value, key));
            } else if (key == "model") {
                d_.model = trim(scalar(value, key));
                if (d_.model == "inherit") d_.model.clear();
            } else if (key == "tools") {
                d_.tools = string_list(value, key, false);
            } else if (key == "maxTurns") {
                read_max_turns(value);
            } else if (key == "mcp") {
                read_mcp(value);
            } else if (key == "mcpServers") {
                read_mcp_servers(value);
            } else if (d_.kind == Definition::Kind::skill && key == "context") {
                const auto context = trim(scalar(value, key));
                if (context == "fork") {
                    forked_ = true;
                } else if (context != "inherit" && context != "inline") {
                    fail(value, fmt::format("\"context\" must be \"fork\" (or \"inherit\"), not \"{}\"", context));
                }
            } else if (d_.kind == Definition::Kind::skill && key == "agent") {
                d_.run_as = trim(scalar(value, key));
            } else if (d_.kind == Definition::Kind::skill && key == "allowed-tools") {
                d_.allowed_tools = string_list(value, key, true);
            }
            // Anything else belongs to Claude Code (hooks, color, permissionMode, ...) or to nobody: ignored.
        }
    }

    bool forked() const { return forked_; }       ///< `context: fork`
    int name_line() const { return name_line_; }  ///< where `name` is (0: absent)

private:
    void read_max_turns(const YAML::Node& value) {
        const auto text = value.IsScalar() ? trim(value.Scalar()) : std::string();
        const bool digits = !text.empty() && text.size() <= 9 &&
                            std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
        const int n = digits ? std::atoi(text.c_str()) : 0;
        if (n <= 0) fail(value, "\"maxTurns\" must be a positive integer");
        d_.max_turns = n;
    }

    // `mcp: [a, b]` (all required) or `mcp: {required: [...], optional: [...]}`.
    void read_mcp(const YAML::Node& value) {
        if (value.IsSequence()) {
            for (const auto& name : server_names(value, "mcp")) add_once(d_.required, name);
            return;
        }
        if (!value.IsMap()) fail(value, "\"mcp\" must be a list of server names or {required: [...], optional: [...]}");
        for (const auto& kv : value) {
            const auto key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
            if (key != "required" && key != "optional")
                fail(kv.first, fmt::format("\"mcp\" has only \"required\" and \"optional\", not \"{}\"", key));
            if (!present(kv.second)) continue;
            for (const auto& name : server_names(kv.second, "mcp." + key))
                add_once(key == "required" ? d_.required : d_.optional, name);
        }
    }

    // Claude Code: a list of names and/or {name: config} maps; also accepted: a map of name → config (or nothing, to
    // name a configured server).
    void read_mcp_servers(const YAML::Node& value) {
        if (value.IsSequence()) {
            for (const auto& item : value) {
                if (item.IsScalar() && !trim(item.Scalar()).empty()) {
                    add_once(d_.required, trim(item.Scalar()));
                } else if (item.IsMap()) {
                    for (const auto& kv : item) read_server(kv.first, kv.second);
                } else {
                    fail(item, "\"mcpServers\" items must be server names or {name: config}");
                }
            }
        } else if (value.IsMap()) {
            for (const auto& kv : value) read_server(kv.first, kv.second);
        } else {
            fail(value, "\"mcpServers\" must be a list of server names and {name: config} maps");
        }
    }

    void read_server(const YAML::Node& key, const YAML::Node& config) {
        const auto name = key.IsScalar() ? trim(key.Scalar()) : std::string();
        if (name.empty()) fail(key, "\"mcpServers\": a server name must be a non-empty string");
        if (!present(config)) {
            add_once(d_.required, name);
            return;
        }
        if (!config.IsMap()) fail(config, fmt::format("\"mcpServers\": server \"{}\" must be a config mapping", name));
        const auto line = line_of(config);
        std::vector<std::string> warnings;
        auto server = host::parse_server_entry(name, to_json(config).as_object(), fmt::format("{}:{}", source_, line),
                                               host::process_env(), warnings);
        server.lazy = true;  // exists only for this agent: started when it runs
        for (auto& w : warnings) d_.warnings.push_back(std::move(w));
        if (!server.invalid.empty())
            d_.warnings.push_back(fmt::format("{}:{}: server \"{}\": {}", source_, line, name, server.invalid));
        const auto same = [&](const host::ServerConfig& s) { return s.name == name; };
        if (std::find_if(d_.inline_servers.begin(), d_.inline_servers.end(), same) != d_.inline_servers.end())
            fail(key, fmt::format("\"mcpServers\": server \"{}\" is defined twice", name));
        d_.inline_servers.push_back(std::move(server));
        add_once(d_.required, name);
    }

    Definition& d_;
    std::string source_;
    bool forked_ = false;
    int name_line_ = 0;
};

// Claude Code's default for a skill without a description: the body's first paragraph.
std::string first_paragraph(std::string_view body) {
    std::string out;
    std::size_t pos = 0;
    while (pos < body.size()) {
        const auto line = trim(next_line(body, pos));
        if (line.empty()) {
            if (!out.empty()) break;
            continue;
        }
        if (!out.empty()) out += ' ';
        out += line;
    }
    return out;
}

std::string body_text(std::string_view body) {
    while (body.starts_with('\n') || body.starts_with("\r\n")) body.remove_prefix(body[0] == '\r' ? 2 : 1);
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r' || body.back() == ' ')) body.remove_suffix(1);
    return std::string(body);
}

std::string default_name(Definition::Kind kind, const fs::path& path) {
    return kind == Definition::Kind::skill ? path.parent_path().filename().string() : path.stem().string();
}

std::string origin_of(const fs::path& path) {
    for (const auto& part : path)
        if (part == ".claude") return "claude";
    return "switchboard";
}

// ---- discovery -----------------------------------------------------------------------------------------------------

std::optional<std::string> read_file(const fs::path& path, std::string& error) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (!ec && size > max_definition_size) {
        error = fmt::format("{}: larger than {} bytes (not a definition)", path.string(), max_definition_size);
        return std::nullopt;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno));
        return std::nullopt;
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        error = fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno));
        return std::nullopt;
    }
    return std::move(text).str();
}

struct Folder {
    fs::path dir;
    std::string origin;
};

// The files of one folder, sorted: `*.md` (agents) or `*/SKILL.md` (skills).
std::vector<fs::path> files_in(const fs::path& dir, Definition::Kind kind, std::vector<std::string>& errors) {
    std::vector<fs::path> out;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return out;
    fs::directory_iterator it(dir, ec);
    if (ec) {
        errors.push_back(fmt::format("{}: cannot list: {}", dir.string(), ec.message()));
        return out;
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        const auto& entry = *it;
        std::error_code e;
        if (kind == Definition::Kind::agent) {
            if (entry.path().extension() == ".md" && entry.is_regular_file(e)) out.push_back(entry.path());
        } else if (entry.is_directory(e)) {
            const auto skill = entry.path() / "SKILL.md";
            if (fs::exists(skill, e)) out.push_back(skill);
        }
    }
    if (ec) errors.push_back(fmt::format("{}: cannot list: {}", dir.string(), ec.message()));
    std::sort(out.begin(), out.end());
    return out;
}

void discover_kind(const std::vector<Folder>& folders, Definition::Kind kind, Discovery& out) {
    const auto* what = kind == Definition::Kind::agent ? "agent" : "skill";
    std::set<fs::path> seen_dirs;
    const auto first = out.definitions.size();
    for (const auto& folder : folders) {
        // The project may be the home folder: the same folder is read once.
        std::error_code ec;
        const auto canonical = fs::weakly_canonical(folder.dir, ec);
        if (!seen_dirs.insert(ec ? folder.dir : canonical).second) continue;
        for (const auto& file : files_in(folder.dir, kind, out.errors)) {
            std::string error;
            const auto text = read_file(file, error);
            if (!text) {
                out.errors.push_back(std::move(error));
                continue;
            }
            auto d = parse_definition(*text, kind, file, error);
            if (!d) {
                out.errors.push_back(std::move(error));
                continue;
            }
            d->origin = folder.origin;
            const auto winner =
                std::find_if(out.definitions.begin() + static_cast<std::ptrdiff_t>(first), out.definitions.end(),
                             [&](const Definition& other) { return other.name == d->name; });
            if (winner != out.definitions.end()) {
                out.notes.push_back(
                    fmt::format("{}: {} \"{}\" shadowed by {}", file.string(), what, d->name, winner->path.string()));
                continue;
            }
            for (const auto& w : d->warnings) out.notes.push_back(w);
            out.definitions.push_back(std::move(*d));
        }
    }
}

}  // namespace

bool is_valid_name(std::string_view name) {
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    });
}

std::optional<Definition> parse_definition(std::string_view text, Definition::Kind kind, const fs::path& path,
                                           std::string& error) {
    const auto report = [&](int line, std::string_view what) {
        error = fmt::format("{}:{}: {}", path.string(), line, what);
        return std::nullopt;
    };
    const auto split = split_frontmatter(text);
    if (!split) return report(1, "the frontmatter has no closing \"---\" line");
    Definition d;
    d.kind = kind;
    d.path = path;
    d.origin = origin_of(path);
    d.line = 1;
    d.fork = kind == Definition::Kind::agent;
    d.body = body_text(split->body);
    bool forked = false;
    int name_line = 1;
    if (split->has_frontmatter) {
        try {
            const auto root = YAML::Load(std::string(split->yaml));
            if (present(root)) {
                Reader reader(d, path);
                reader.read(root);
                forked = reader.forked();
                name_line = reader.name_line() ? reader.name_line() : 1;
            }
        } catch (const FrontmatterError& e) {
            return report(e.line, e.what);
        } catch (const YAML::Exception& e) {
            return report(e.mark.is_null() ? 1 : e.mark.line + 2, e.msg);
        }
    }
    if (d.name.empty()) {
        d.name = default_name(kind, path);
        if (!is_valid_name(d.name))
            return report(name_line,
                          fmt::format("no \"name\", and the {} \"{}\" is not a valid name (1 to 64 of a-z, "
                                      "0-9, '-' and '_')",
                                      kind == Definition::Kind::skill ? "folder name" : "file name", d.name));
    }
    if (d.description.empty()) {
        if (kind == Definition::Kind::agent) return report(1, "an agent needs a \"description\"");
        d.description = first_paragraph(d.body);
    }
    if (kind == Definition::Kind::skill)
        d.fork = forked || !d.required.empty() || !d.optional.empty() || !d.inline_servers.empty();
    return d;
}

DiscoveryOptions DiscoveryOptions::from_environment(fs::path project_dir) {
    DiscoveryOptions options;
    options.project_dir = std::move(project_dir);
    const char* home = std::getenv("HOME");
    if (home && *home) options.home = home;
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg) {
        options.config_home = xdg;
    } else if (!options.home.empty()) {
        options.config_home = options.home / ".config";
    }
    return options;
}

Discovery discover(const DiscoveryOptions& options) {
    Discovery out;
    for (const auto kind : {Definition::Kind::agent, Definition::Kind::skill}) {
        const auto* sub = kind == Definition::Kind::agent ? "agents" : "skills";
        std::vector<Folder> folders;
        if (!options.project_dir.empty())
            folders.push_back({options.project_dir / ".switchboard" / sub, "switchboard"});
        if (!options.config_home.empty()) folders.push_back({options.config_home / "switchboard" / sub, "switchboard"});
        if (!options.project_dir.empty()) folders.push_back({options.project_dir / ".claude" / sub, "claude"});
        if (!options.home.empty()) folders.push_back({options.home / ".claude" / sub, "claude"});
        discover_kind(folders, kind, out);
    }
    return out;
}

}  // namespace switchboard::agent
