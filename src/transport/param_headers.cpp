#include <switchboard/transport/param_headers.hpp>

#include <switchboard/core/text.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace switchboard::transport {

namespace json = boost::json;

namespace {

std::string base64(std::string_view in) {
    static constexpr char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    auto byte = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(in[k])); };
    for (; i + 2 < in.size(); i += 3) {
        const unsigned v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
        out += {table[v >> 18], table[(v >> 12) & 63], table[(v >> 6) & 63], table[v & 63]};
    }
    if (i + 1 == in.size()) {
        const unsigned v = byte(i) << 16;
        out += {table[v >> 18], table[(v >> 12) & 63], '=', '='};
    } else if (i + 2 == in.size()) {
        const unsigned v = byte(i) << 16 | byte(i + 1) << 8;
        out += {table[v >> 18], table[(v >> 12) & 63], table[(v >> 6) & 63], '='};
    }
    return out;
}

// RFC 9110 tchar.
bool is_token(std::string_view s) {
    if (s.empty()) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

struct Walker {
    ParamHeaderSpec spec;
    std::set<std::string> seen;  // lower-cased names

    void fail(std::string why) {
        if (spec.error.empty()) spec.error = std::move(why);
    }

    // Any annotation below a keyword other than `properties` is not statically reachable.
    void forbid(const json::value& v) {
        if (const auto* o = v.if_object()) {
            if (o->contains("x-mcp-header"))
                fail("x-mcp-header on a property that is not reachable through `properties` alone");
            for (const auto& [k, child] : *o) forbid(child);
        } else if (const auto* a = v.if_array()) {
            for (const auto& child : *a) forbid(child);
        }
    }

    void schema(const json::value& v, std::vector<std::string>& path) {
        const auto* o = v.if_object();
        if (!o) return;
        if (const auto* h = o->if_contains("x-mcp-header")) annotation(*o, *h, path);
        for (const auto& [key, child] : *o) {
            if (key == "x-mcp-header") continue;
            if (key == "properties" && child.is_object()) {
                for (const auto& [name, sub] : child.get_object()) {
                    path.emplace_back(name);
                    schema(sub, path);
                    path.pop_back();
                }
            } else if (key != "default" && key != "examples" && key != "const" && key != "enum") {
                forbid(child);
            }
        }
    }

    void annotation(const json::object& prop, const json::value& h, const std::vector<std::string>& path) {
        const std::string where = fmt::format("property \"{}\"", fmt::join(path, "."));
        if (path.empty()) return fail("x-mcp-header on the schema root");
        if (!h.is_string() || h.get_string().empty()) return fail(fmt::format("{}: empty x-mcp-header", where));
        const std::string_view name = h.get_string();
        if (!is_token(name))
            return fail(fmt::format("{}: x-mcp-header \"{}\" is not an HTTP field-name token", where, name));
        if (!seen.insert(core::ascii_lower(name)).second)
            return fail(fmt::format("{}: x-mcp-header \"{}\" is used twice (names are case-insensitive)", where, name));
        const auto* type = prop.if_contains("type");
        const std::string_view t = type && type->is_string() ? std::string_view(type->get_string()) : "";
        if (t != "string" && t != "integer" && t != "boolean")
            return fail(fmt::format("{}: x-mcp-header on a property of type {} (only string, integer, boolean)", where,
                                    type ? json::serialize(*type) : "(none)"));
        spec.headers.push_back(ParamHeader{path, std::string(name)});
    }
};

}  // namespace

ParamHeaderSpec parse_param_headers(const json::value& input_schema) {
    Walker w;
    std::vector<std::string> path;
    w.schema(input_schema, path);
    if (!w.spec.error.empty()) w.spec.headers.clear();
    return std::move(w.spec);
}

std::vector<std::pair<std::string, std::string>> param_header_fields(const std::vector<ParamHeader>& headers,
                                                                     const json::value& arguments) {
    std::vector<std::pair<std::string, std::string>> fields;
    for (const auto& h : headers) {
        const json::value* v = &arguments;
        for (const auto& key : h.path) {
            const auto* o = v->if_object();
            v = o ? o->if_contains(key) : nullptr;
            if (!v) break;
        }
        if (!v || v->is_null()) continue;
        std::string text;
        if (v->is_string())
            text = std::string(v->get_string());
        else if (v->is_bool())
            text = v->get_bool() ? "true" : "false";
        else if (v->is_int64())
            text = std::to_string(v->get_int64());
        else if (v->is_uint64())
            text = std::to_string(v->get_uint64());
        else if (v->is_double())
            text = json::serialize(*v);
        else
            continue;  // objects and arrays cannot be mirrored
        fields.emplace_back("Mcp-Param-" + h.name, encode_header_value(text));
    }
    return fields;
}

std::string encode_header_value(std::string_view v) {
    // A tab is allowed by RFC 9110 but is a control character; encoding it too is always safe (servers decode).
    bool safe = v.empty() || (v.front() != ' ' && v.back() != ' ');
    for (char c : v)
        if (c < 0x20 || c > 0x7e) safe = false;
    if (v.starts_with("=?base64?") && v.ends_with("?=")) safe = false;
    return safe ? std::string(v) : "=?base64?" + base64(v) + "?=";
}

}  // namespace switchboard::transport
