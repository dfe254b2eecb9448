#include <switchboard/host/config_edit.hpp>

#include <switchboard/core/atomic_file.hpp>
#include <switchboard/host/env_file.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace switchboard::host {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t npos = std::string_view::npos;

// One member of a JSON(C) object, as positions in the text.
struct Member {
    std::string key;              // decoded
    std::size_t key_begin = 0;    // the opening quote of the key
    std::size_t value_begin = 0;  // first byte of the value
    std::size_t value_end = 0;    // one past its last byte
    std::size_t comma = npos;     // the comma after the value, if any
};

struct ObjectSpan {
    std::size_t open = 0, close = 0;  // the braces
    std::vector<Member> members;
};

// Walks JSONC text without building values: strings, comments and nesting are skipped iteratively (no recursion:
// an 8 MiB file can nest deeply). The text was parsed successfully before, so errors here are only guards.
class Scanner {
public:
    Scanner(std::string_view text, std::string_view source) : t_(text), source_(source) {}

    std::size_t skip_blank(std::size_t p) const {
        while (p < t_.size()) {
            const char c = t_[p];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                ++p;
            } else if (c == '/' && p + 1 < t_.size() && t_[p + 1] == '/') {
                p = t_.find('\n', p);
                if (p == npos) return t_.size();
            } else if (c == '/' && p + 1 < t_.size() && t_[p + 1] == '*') {
                p = t_.find("*/", p + 2);
                if (p == npos) fail("unterminated comment");
                p += 2;
            } else {
                break;
            }
        }
        return p;
    }

    std::size_t skip_string(std::size_t p) const {  // p at the opening quote; returns one past the closing one
        for (++p; p < t_.size(); ++p) {
            if (t_[p] == '\\')
                ++p;
            else if (t_[p] == '"')
                return p + 1;
        }
        fail("unterminated string");
    }

    std::size_t skip_value(std::size_t p) const {
        if (p >= t_.size()) fail("value expected");
        if (t_[p] == '"') return skip_string(p);
        if (t_[p] != '{' && t_[p] != '[') {
            while (p < t_.size() && std::string_view(",}] \t\r\n/").find(t_[p]) == npos) ++p;
            return p;
        }
        std::size_t depth = 0;
        while (p < t_.size()) {
            const char c = t_[p];
            if (c == '"') {
                p = skip_string(p);
                continue;
            }
            if (c == '/' && p + 1 < t_.size() && (t_[p + 1] == '/' || t_[p + 1] == '*')) {
                p = skip_blank(p);
                continue;
            }
            if (c == '{' || c == '[') ++depth;
            if (c == '}' || c == ']') {
                if (--depth == 0) return p + 1;
            }
            ++p;
        }
        fail("unbalanced brackets");
    }

    // The object starting at `p` (which must be '{').
    ObjectSpan object_at(std::size_t p) const {
        p = skip_blank(p);
        if (p >= t_.size() || t_[p] != '{') fail("an object was expected");
        ObjectSpan o;
        o.open = p;
        p = skip_blank(p + 1);
        while (p < t_.size() && t_[p] != '}') {
            if (t_[p] != '"') fail("a key was expected");
            Member m;
            m.key_begin = p;
            const auto key_end = skip_string(p);
            m.key = std::string(json::parse(t_.substr(p, key_end - p)).as_string());
            p = skip_blank(key_end);
            if (p >= t_.size() || t_[p] != ':') fail("':' was expected");
            m.value_begin = skip_blank(p + 1);
            m.value_end = skip_value(m.value_begin);
            p = skip_blank(m.value_end);
            if (p < t_.size() && t_[p] == ',') {
                m.comma = p;
                p = skip_blank(p + 1);
            }
            o.members.push_back(std::move(m));
        }
        if (p >= t_.size()) fail("unterminated object");
        o.close = p;
        return o;
    }

    // Leading whitespace of the line holding `p`, when only whitespace precedes `p` on it.
    std::size_t indent_of(std::size_t p) const {
        const auto line = line_start(p);
        return t_.find_first_not_of(" \t", line) == p ? p - line : 2;
    }
    std::size_t line_start(std::size_t p) const {
        const auto nl = t_.rfind('\n', p == 0 ? 0 : p - 1);
        return nl == npos || p == 0 ? 0 : nl + 1;
    }
    bool only_blank_before(std::size_t p) const { return t_.find_first_not_of(" \t", line_start(p)) == p; }

    [[noreturn]] void fail(std::string_view what) const {
        throw ConfigError(fmt::format("{}: cannot edit the file: {}", source_, what));
    }

private:
    std::string_view t_;
    std::string_view source_;
};

void format_into(const json::value& v, std::size_t indent, std::string& out) {
    const std::string pad(indent + 2, ' ');
    if (const auto* o = v.if_object()) {
        if (o->empty()) {
            out += "{}";
            return;
        }
        out += "{\n";
        bool first = true;
        for (const auto& item : *o) {
            if (!first) out += ",\n";
            first = false;
            out += pad;
            out += json::serialize(json::string(item.key()));
            out += ": ";
            format_into(item.value(), indent + 2, out);
        }
        out += '\n';
        out.append(indent, ' ');
        out += '}';
        return;
    }
    if (const auto* a = v.if_array()) {
        // Short lists of scalars (args, tool names) stay on one line, as people write them.
        std::string line = "[";
        bool scalars = true;
        for (const auto& x : *a) {
            if (x.is_object() || x.is_array()) scalars = false;
            if (line.size() > 1) line += ", ";
            line += json::serialize(x);
        }
        line += ']';
        if (scalars && line.size() + indent < 100) {
            out += line;
            return;
        }
        out += "[\n";
        for (std::size_t i = 0; i < a->size(); ++i) {
            out += pad;
            format_into((*a)[i], indent + 2, out);
            out += i + 1 < a->size() ? ",\n" : "\n";
        }
        out.append(indent, ' ');
        out += ']';
        return;
    }
    out += json::serialize(v);
}

std::string member_text(std::string_view name, const json::object& entry, std::size_t indent) {
    return json::serialize(json::string(name)) + ": " + format_entry(entry, indent);
}

}  // namespace

std::string format_entry(const json::value& entry, std::size_t indent) {
    std::string out;
    format_into(entry, indent, out);
    return out;
}

std::map<std::string, json::object, std::less<>> raw_server_entries(std::string_view text, std::string_view source) {
    std::map<std::string, json::object, std::less<>> out;
    const auto root = parse_jsonc(text, source);
    const auto* object = root.if_object();
    if (!object) return out;
    for (const auto* key : {"mcpServers", "servers"}) {
        const auto* map = object->if_contains(key);
        if (!map || !map->is_object()) continue;
        for (const auto& item : map->get_object())
            if (item.value().is_object() && !out.count(item.key())) out.emplace(item.key(), item.value().get_object());
    }
    return out;
}

std::string edit_server_entry(std::string_view text, const ServerEntryEdit& edit, std::string_view source) {
    parse_jsonc(text, source);  // only valid JSON(C) is edited; its errors say line and column
    const Scanner scan(text, source);
    const auto root = scan.object_at(0);
    const std::string& old_name = edit.previous_name.empty() ? edit.name : edit.previous_name;

    // The server maps in file order; the entry is edited where it is, and a new one goes to the first map.
    std::vector<ObjectSpan> maps;
    for (const auto& m : root.members)
        if ((m.key == "mcpServers" || m.key == "servers") && text[m.value_begin] == '{')
            maps.push_back(scan.object_at(m.value_begin));
    if (maps.empty()) scan.fail("no \"mcpServers\" object");

    const ObjectSpan* map = nullptr;
    const Member* found = nullptr;
    bool name_taken = false;
    for (const auto& o : maps)
        for (const auto& m : o.members) {
            if (m.key == old_name && !found) {
                map = &o;
                found = &m;
            }
            if (m.key == edit.name && edit.name != old_name) name_taken = true;
        }
    if (name_taken) throw ConfigError(fmt::format("{}: a server named \"{}\" already exists", source, edit.name));

    std::string out(text);
    if (!edit.entry) {  // remove
        if (!found) throw ConfigError(fmt::format("{}: no server named \"{}\"", source, old_name));
        std::size_t begin = found->key_begin, end = found->value_end;
        if (found->comma != npos) {
            end = found->comma + 1;
        } else if (found != &map->members.front()) {
            begin = (found - 1)->value_end;  // the last member: the comma before it goes instead
            end = found->value_end;
        }
        // A member on its own line takes its line break with it.
        if (begin == found->key_begin && scan.only_blank_before(begin)) begin = scan.line_start(begin);
        if (begin == scan.line_start(found->key_begin) && end < out.size() && out[end] == '\n') ++end;
        out.erase(begin, end - begin);
        return out;
    }

    if (found) {  // replace the value (and the key, when renamed)
        const auto indent = scan.indent_of(found->key_begin);
        const auto begin = edit.name == old_name ? found->value_begin : found->key_begin;
        const auto replacement =
            edit.name == old_name ? format_entry(*edit.entry, indent) : member_text(edit.name, *edit.entry, indent);
        out.replace(begin, found->value_end - begin, replacement);
        return out;
    }

    // add, after the last member of the first map
    const auto& o = maps.front();
    if (o.members.empty()) {
        const auto indent = scan.indent_of(o.open) + 2;
        const auto closing_indent = scan.indent_of(o.open);
        out.replace(o.open, o.close + 1 - o.open,
                    "{\n" + std::string(indent, ' ') + member_text(edit.name, *edit.entry, indent) + "\n" +
                        std::string(closing_indent, ' ') + "}");
        return out;
    }
    const auto& last = o.members.back();
    const auto indent = scan.indent_of(last.key_begin);
    const auto member = member_text(edit.name, *edit.entry, indent);
    // Built by appending (not `"\n" + std::string(…)`, where GCC 12 -O3 warns, wrongly, of a memcpy's size).
    std::string piece = last.comma != npos ? "\n" : ",\n";
    piece.append(indent, ' ');
    piece += member;
    if (last.comma != npos) {  // JSONC with a trailing comma: keep that style
        piece += ',';
        out.insert(last.comma + 1, piece);
    } else {
        out.insert(last.value_end, piece);
    }
    return out;
}

std::string set_top_level_member(std::string_view text, std::string_view key, const json::value& value,
                                 std::string_view source) {
    parse_jsonc(text, source);
    const Scanner scan(text, source);
    const auto root = scan.object_at(0);
    std::string out(text);
    for (const auto& m : root.members)
        if (m.key == key) {
            out.replace(m.value_begin, m.value_end - m.value_begin, format_entry(value, scan.indent_of(m.key_begin)));
            return out;
        }
    // Added first, indented like the member it goes before.
    const auto indent = root.members.empty() ? std::size_t{2} : scan.indent_of(root.members.front().key_begin);
    const auto member = json::serialize(json::string(key)) + ": " + format_entry(value, indent);
    if (root.members.empty()) {
        out.replace(root.open, root.close + 1 - root.open, "{\n" + std::string(indent, ' ') + member + "\n}");
        return out;
    }
    const auto at = root.members.front().key_begin;
    const bool own_line = scan.only_blank_before(at);
    out.insert(own_line ? scan.line_start(at) : at,
               own_line ? std::string(indent, ' ') + member + ",\n" : member + ", ");
    return out;
}

json::value raw_top_level_member(std::string_view text, std::string_view key, std::string_view source) {
    const auto root = parse_jsonc(text, source);
    const auto* object = root.if_object();
    if (!object) return nullptr;
    const auto* v = object->if_contains(key);
    return v ? *v : json::value(nullptr);
}

std::string read_config_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("cannot read {}", file.string()));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return std::move(buffer).str();
}

Config edit_config_member(const fs::path& file, std::string_view key, const json::value& value,
                          const EnvLookup& process) {
    const auto source = file.string();
    const auto env = with_env_file(process, file);
    auto edited = set_top_level_member(read_config_text(file), key, value, source);
    if (edited.size() > max_config_size)
        throw ConfigError(fmt::format("{}: the edited file would be over the limit for a config file", source));
    auto config = parse_config(edited, source, env);  // the whole file still loads (throws when it would not)
    if (auto why = core::write_file_atomically(file, edited); !why.empty()) throw std::runtime_error(why);
    return config;
}

ConfigFileEdit edit_config_file(const fs::path& file, const ServerEntryEdit& edit, const EnvLookup& process) {
    const auto source = file.string();
    const auto env = with_env_file(process, file);
    if (edit.name.empty()) throw ConfigError("a server needs a name");
    if (edit.name.find("__") != std::string::npos)
        throw ConfigError(
            fmt::format("server \"{}\": a name must not contain \"__\" (it separates a server from its "
                        "tools)",
                        edit.name));
    const auto text = read_config_text(file);
    ConfigFileEdit result;
    if (edit.entry) {
        // Checked as the loader will check it, before anything is written.
        const auto server = parse_server_entry(edit.name, *edit.entry, source, env, result.warnings);
        const bool unset_variable = server.invalid.starts_with("environment variable ${");
        if (!server.invalid.empty() && !unset_variable)
            throw ConfigError(fmt::format("server \"{}\": {}", edit.name, server.invalid));
        if (unset_variable)
            result.warnings.push_back(fmt::format("server \"{}\": {}: it stays in error until the variable is set",
                                                  edit.name, server.invalid));
    }
    auto edited = edit_server_entry(text, edit, source);
    if (edited.size() > max_config_size)
        throw ConfigError(fmt::format("{}: the edited file would be over the limit for a config file", source));
    result.config = parse_config(edited, source, env);  // the whole file still loads (throws when it would not)
    if (auto why = core::write_file_atomically(file, edited); !why.empty()) throw std::runtime_error(why);
    return result;
}

ConfigFileEdit add_server_to_file(const fs::path& file, const std::string& name, const json::object& entry,
                                  const std::map<std::string, std::string>& secrets, const EnvLookup& process) {
    const auto source = file.string();
    std::error_code ec;
    const bool exists = fs::exists(file, ec);
    if (exists && raw_server_entries(read_config_text(file), source).count(name))
        throw ConfigError(fmt::format(
            "{}: a server named \"{}\" already exists (remove it first: switchboard remove {})", source, name, name));
    // The secrets count as set while the entry is checked; they are written only once it passed.
    const EnvLookup env = [&secrets, &process](std::string_view var) -> std::optional<std::string> {
        if (auto it = secrets.find(std::string(var)); it != secrets.end()) return it->second;
        return process(var);
    };
    std::vector<std::string> warnings;
    const auto server = parse_server_entry(name, entry, source, with_env_file(env, file), warnings);
    if (!server.invalid.empty() && !server.invalid.starts_with("environment variable ${"))
        throw ConfigError(fmt::format("server \"{}\": {}", name, server.invalid));
    if (!exists) {
        if (!file.parent_path().empty()) fs::create_directories(file.parent_path(), ec);
        if (auto why = core::write_file_atomically(file, "{\n  \"mcpServers\": {}\n}\n"); !why.empty())
            throw std::runtime_error(why);
    }
    if (!secrets.empty()) set_env_file_values(env_file_for(file), secrets);
    return edit_config_file(file, ServerEntryEdit{name, std::string(), entry}, env);
}

}  // namespace switchboard::host
