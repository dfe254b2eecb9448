#include <switchboard/registry/server_json.hpp>

#include <switchboard/core/text.hpp>
#include <switchboard/host/env_file.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace switchboard::registry {

namespace json = boost::json;

namespace {

// ---- reading ----------------------------------------------------------------------------------------------------

class Reader {
public:
    explicit Reader(std::string where) : where_(std::move(where)) {}

    [[noreturn]] void fail(std::string_view field, std::string_view what) const {
        throw RegistryError(fmt::format("{}: \"{}\" {}", where_, field, what));
    }
    std::string text(const json::object& o, std::string_view key, bool required = false) const {
        const auto* v = o.if_contains(key);
        if (!v || v->is_null()) {
            if (required) fail(key, "is missing");
            return {};
        }
        if (!v->is_string()) fail(key, "must be a string");
        return std::string(v->get_string());
    }
    bool flag(const json::object& o, std::string_view key) const {
        const auto* v = o.if_contains(key);
        if (!v || v->is_null()) return false;
        if (!v->is_bool()) fail(key, "must be true or false");
        return v->get_bool();
    }
    const json::array* array(const json::object& o, std::string_view key) const {
        const auto* v = o.if_contains(key);
        if (!v || v->is_null()) return nullptr;
        if (!v->is_array()) fail(key, "must be an array");
        return &v->get_array();
    }
    const json::object& object(const json::value& v, std::string_view key) const {
        if (!v.is_object()) fail(key, "must be an object");
        return v.get_object();
    }

    Input input(const json::object& o) const {
        Input in;
        in.description = text(o, "description");
        if (const auto* d = o.if_contains("default"); d && !d->is_null()) {
            if (!d->is_string()) fail("default", "must be a string");
            in.default_value = std::string(d->get_string());
        }
        if (const auto* list = array(o, "choices"))
            for (const auto& c : *list) {
                if (!c.is_string()) fail("choices", "must be strings");
                in.choices.emplace_back(c.get_string());
            }
        if (auto f = text(o, "format"); !f.empty()) in.format = f;
        in.required = flag(o, "isRequired");
        in.secret = flag(o, "isSecret");
        return in;
    }
    std::map<std::string, Input> variables(const json::object& o) const {
        std::map<std::string, Input> out;
        const auto* v = o.if_contains("variables");
        if (!v || v->is_null()) return out;
        for (const auto& [name, spec] : object(*v, "variables"))
            out[std::string(name)] = input(object(spec, "variables." + std::string(name)));
        return out;
    }
    Value value(const json::value& item, std::string_view field, Value::Kind kind) const {
        const auto& o = object(item, field);
        Value v;
        v.kind = kind;
        if (kind == Value::Kind::positional || kind == Value::Kind::named) {
            const auto type = text(o, "type");
            if (type == "named")
                v.kind = Value::Kind::named;
            else if (type == "positional" || type.empty())
                v.kind = Value::Kind::positional;
            else
                fail(field, fmt::format("has an argument of unknown type \"{}\"", type));
        }
        if (v.kind == Value::Kind::positional) {
            v.name = text(o, "valueHint");
            if (v.name.empty()) v.name = text(o, "name");
        } else {
            v.name = text(o, "name", true);
        }
        if (const auto* val = o.if_contains("value"); val && !val->is_null()) {
            if (!val->is_string()) fail("value", "must be a string");
            v.value = std::string(val->get_string());
        }
        v.input = input(o);
        v.variables = variables(o);
        v.repeated = flag(o, "isRepeated");
        return v;
    }
    std::vector<Value> values(const json::object& o, std::string_view key, Value::Kind kind) const {
        std::vector<Value> out;
        if (const auto* list = array(o, key))
            for (const auto& item : *list) out.push_back(value(item, key, kind));
        return out;
    }

private:
    std::string where_;
};

// ---- building -----------------------------------------------------------------------------------------------------

// What a shell would act on, or the config expand: refused in what the document fixes.
constexpr std::string_view shell_specials = "`$;|&<>\\\"'\n\r";

bool has_control(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

std::string trimmed_url(std::string url) {
    while (!url.empty() && url.back() == '/') url.pop_back();
    return core::ascii_lower(url);
}

class Builder {
public:
    Builder(const ServerDocument& doc, const std::map<std::string, std::string>* answers, std::string local)
        : doc_(doc), answers_(answers), local_(std::move(local)) {}

    std::vector<Question> questions;
    Plan plan;

    // A fixed piece of the document, checked.
    std::string fixed(std::string_view text, std::string_view field, std::string_view specials = shell_specials) const {
        if (text.find_first_of(specials) != std::string_view::npos || has_control(text))
            throw RegistryError(
                fmt::format("server \"{}\": {} \"{}\" has characters a shell or the config would act on ({}); refused",
                            doc_.name, field, core::shorten(text, 80), "` $ ; | & < > \\ quotes or a line break"));
        return std::string(text);
    }

    // The value given for `key` (or its default); nullopt when there is none. Asked about when collecting.
    std::optional<std::string> answer(const std::string& key, const Input& in, std::string_view label) {
        if (!asked_.count(key)) {
            asked_.insert(key);
            questions.push_back({key, std::string(label), in});
        }
        std::optional<std::string> v;
        if (answers_) {
            if (auto it = answers_->find(key); it != answers_->end() && !it->second.empty()) v = it->second;
        }
        if (!v && in.default_value) v = *in.default_value;
        if (!v) {
            if (in.required && answers_)
                throw RegistryError(fmt::format("server \"{}\": {} is required (its key: {})", doc_.name, label, key));
            return std::nullopt;
        }
        if (v->find_first_of("\r\n") != std::string::npos)
            throw RegistryError(fmt::format("server \"{}\": the value of {} spans lines", doc_.name, label));
        if (!in.choices.empty() && std::find(in.choices.begin(), in.choices.end(), *v) == in.choices.end())
            throw RegistryError(fmt::format("server \"{}\": {} must be one of {}, not \"{}\"", doc_.name, label,
                                            fmt::join(in.choices, ", "), *v));
        if (in.secret) {
            auto var = host::secret_variable(local_, key);
            plan.secrets[var] = *v;
            return "${" + var + "}";
        }
        if (v->find("${") != std::string::npos && (!answers_ || !answers_->count(key)))
            throw RegistryError(
                fmt::format("server \"{}\": the default of {} has \"${{\", which the config would "
                            "expand; refused",
                            doc_.name, label));
        return v;
    }

    // `text` with each `{var}` replaced; nullopt when an optional variable is not given.
    // An undeclared `{x}` is an error in an argument; in an environment variable or header (`"Bearer {key}"` with
    // no `variables`, as real documents have) it is asked for as the value itself would be (`owner`).
    std::optional<std::string> fill(std::string_view text, const std::map<std::string, Input>& vars,
                                    std::string_view field, const Input* owner = nullptr,
                                    std::string_view specials = shell_specials, std::string_view label = {}) {
        fixed(text, field, specials);  // whole, so that the refusal shows what was written
        std::string out;
        std::size_t i = 0;
        bool missing = false;
        while (i < text.size()) {
            const auto open = text.find('{', i);
            out += text.substr(i, open == std::string_view::npos ? open : open - i);
            if (open == std::string_view::npos) break;
            const auto close = text.find('}', open);
            if (close == std::string_view::npos)
                throw RegistryError(fmt::format("server \"{}\": {} has an unclosed '{{'", doc_.name, field));
            const std::string var(text.substr(open + 1, close - open - 1));
            const auto it = vars.find(var);
            if (it == vars.end() && !owner)
                throw RegistryError(fmt::format("server \"{}\": {} uses {{{}}}, which no variable of it defines",
                                                doc_.name, field, var));
            const auto& in = it == vars.end() ? *owner : it->second;
            if (auto v = answer(var, in, fmt::format("{{{}}} in {}", var, label.empty() ? field : label)))
                out += *v;
            else
                missing = true;
            i = close + 1;
        }
        if (missing) return std::nullopt;
        return out;
    }

    std::optional<std::string> resolve(const Value& v, std::string_view field) {
        const bool key_value = v.kind == Value::Kind::env || v.kind == Value::Kind::header;
        std::string label;
        switch (v.kind) {
        case Value::Kind::env: label = "environment variable " + v.name; break;
        case Value::Kind::header: label = "header " + v.name; break;
        case Value::Kind::named: label = "argument " + v.name; break;
        case Value::Kind::positional: label = "argument <" + v.name + ">"; break;
        }
        if (v.value) return fill(*v.value, v.variables, field, key_value ? &v.input : nullptr, shell_specials, label);
        const auto key = v.name.empty() ? std::string("value") : v.name;
        auto a = answer(key, v.input, label);
        if (a && v.input.format == "number" && a->find_first_not_of("0123456789.-") != std::string::npos &&
            !v.input.secret)
            throw RegistryError(fmt::format("server \"{}\": {} must be a number, not \"{}\"", doc_.name, label, *a));
        return a;
    }

    void arguments(const std::vector<Value>& list, std::vector<std::string>& argv, std::string_view field) {
        for (const auto& a : list) {
            if (a.kind == Value::Kind::named) fixed(a.name, field);
            auto text = resolve(a, fmt::format("{} {}", field, a.name.empty() ? "argument" : a.name));
            if (!text) continue;
            if (a.kind == Value::Kind::named && a.input.format == "boolean") {  // `-i` with value "true": a flag
                if (*text == "true") argv.push_back(a.name);
                continue;
            }
            if (a.kind == Value::Kind::named) argv.push_back(a.name);
            argv.push_back(*text);
        }
    }

    void package(const Package& p) {
        const auto field = fmt::format("package {} \"{}\"", p.registry_type, p.identifier);
        if (p.transport != "stdio")
            throw RegistryError(
                fmt::format("server \"{}\": {} runs as an HTTP server ({}) that you start yourself; "
                            "start it, then `switchboard add --transport http NAME URL`",
                            doc_.name, field, p.transport));
        const auto& type = p.registry_type;
        if (!is_runnable(type))
            throw RegistryError(
                fmt::format("server \"{}\": {} is a package type Switchboard cannot run (it runs npm, "
                            "pypi, oci and nuget packages)",
                            doc_.name, field));
        fixed(p.identifier, field);
        const bool oci = type == "oci";
        if (!oci &&
            (p.version.empty() || p.version == "latest" || p.version.find_first_of("^~*<>=| x") != std::string::npos))
            throw RegistryError(fmt::format("server \"{}\": {} has no exact version (\"{}\"): it cannot be pinned",
                                            doc_.name, field, p.version));
        fixed(p.version, field + " version");
        // The launcher comes from the type; `runtimeHint` is advisory (real documents say "python" for uvx).
        const std::string command = default_runtime(type);
        std::vector<std::string> argv{command};
        std::vector<std::string> runtime;
        arguments(p.runtime_arguments, runtime, field + " runtimeArguments");
        std::string base = p.base_url;
        const bool custom = !base.empty() && trimmed_url(base) != trimmed_url(standard_base_url(type));
        if (custom) {
            fixed(base, field + " registryBaseUrl");
            plan.notes.push_back(fmt::format("{} comes from {}, not the standard {} index ({})", p.identifier, base,
                                             type, standard_base_url(type)));
        }
        json::object env;
        for (const auto& e : p.environment) {
            fixed(e.name, field + " environment variable name");
            if (auto v = resolve(e, field + " environment variable " + e.name)) env[e.name] = *v;
        }
        if (type == "npm") {
            if (command == "npx" &&
                std::none_of(runtime.begin(), runtime.end(), [](auto& a) { return a == "-y" || a == "--yes"; }))
                argv.push_back("-y");
            argv.insert(argv.end(), runtime.begin(), runtime.end());
            if (custom) argv.push_back("--registry=" + base);
            argv.push_back(p.identifier + "@" + p.version);
        } else if (type == "pypi") {
            argv.insert(argv.end(), runtime.begin(), runtime.end());
            if (custom) argv.insert(argv.end(), {"--index-url", base.ends_with("/simple") ? base : base + "/simple"});
            argv.push_back(p.identifier + "@" + p.version);
        } else if (type == "nuget") {
            argv.insert(argv.end(), runtime.begin(), runtime.end());
            if (custom) argv.insert(argv.end(), {"--source", base});
            argv.push_back(p.identifier + "@" + p.version);
            argv.push_back("--yes");
        } else {  // oci
            const auto img = image(p, field);
            // Some documents spell the whole `run -i --rm ... IMAGE` in runtimeArguments: taken as the run line
            // (with -i, which stdio needs), the image named once, at the end.
            const bool spelled = !runtime.empty() && runtime.front() == "run";
            if (!spelled) argv.insert(argv.end(), {"run", "-i", "--rm"});
            const auto bare =
                img.substr(0, img.find_first_of("@:", img.rfind('/') == std::string::npos ? 0 : img.rfind('/')));
            for (const auto& a : runtime)
                if (!(spelled && (a == bare || a == img))) argv.push_back(a);
            if (spelled && std::find(argv.begin(), argv.end(), "-i") == argv.end()) argv.insert(argv.begin() + 2, "-i");
            for (const auto& [k, _] : env) argv.insert(argv.end(), {"-e", std::string(k)});
            argv.push_back(img);
        }
        if (type == "nuget" && !p.package_arguments.empty()) argv.push_back("--");
        arguments(p.package_arguments, argv, field + " packageArguments");
        plan.argv = argv;
        plan.entry["command"] = argv.front();
        json::array args;
        for (std::size_t i = 1; i < argv.size(); ++i) args.emplace_back(argv[i]);
        if (!args.empty()) plan.entry["args"] = std::move(args);
        if (!env.empty()) plan.entry["env"] = env;
        std::string shown;
        for (const auto& [k, v] : env)
            shown += fmt::format("{}={} ", std::string_view(k), shell_words({std::string(v.get_string())}));
        plan.display = shown + shell_words(argv);
    }

    void remote(const Remote& r) {
        const auto field = fmt::format("remote {}", r.url);
        std::string type;
        if (r.type == "streamable-http" || r.type == "http")
            type = "http";
        else if (r.type == "sse")
            type = "sse";
        else
            throw RegistryError(
                fmt::format("server \"{}\": remote of unknown type \"{}\" (Switchboard connects to "
                            "streamable-http and sse)",
                            doc_.name, r.type));
        auto url = fill(r.url, r.variables, field, nullptr, "`$\\\"'<> \n\r");
        if (!url) throw RegistryError(fmt::format("server \"{}\": {} needs its variables", doc_.name, field));
        if (!url->starts_with("https://") && !url->starts_with("http://"))
            throw RegistryError(fmt::format("server \"{}\": remote URL \"{}\" is not http(s)", doc_.name, *url));
        plan.entry["type"] = type;
        plan.entry["url"] = *url;
        json::object headers;
        for (const auto& h : r.headers) {
            fixed(h.name, field + " header name");
            if (auto v = resolve(h, field + " header " + h.name)) headers[h.name] = *v;
        }
        std::string shown;
        for (const auto& [k, v] : headers)
            shown += fmt::format(
                " -H {}", shell_words({fmt::format("{}: {}", std::string_view(k), std::string_view(v.get_string()))}));
        if (!headers.empty()) plan.entry["headers"] = std::move(headers);
        plan.display = fmt::format("{} {}{}", type, *url, shown);
    }

    static bool is_runnable(std::string_view type) {
        return type == "npm" || type == "pypi" || type == "oci" || type == "nuget";
    }

private:
    static std::string default_runtime(std::string_view type) {
        if (type == "npm") return "npx";
        if (type == "pypi") return "uvx";
        if (type == "nuget") return "dnx";
        return "docker";
    }
    // The image, pinned: 2025-12-11 documents name it with its tag (or digest) in `identifier`; older ones put the
    // tag in `version`. No tag, or `latest`, is not a pin.
    std::string image(const Package& p, const std::string& field) const {
        std::string ref = p.identifier;
        const auto last = ref.substr(ref.rfind('/') == std::string::npos ? 0 : ref.rfind('/') + 1);
        const bool digest = ref.find('@') != std::string::npos;
        const bool tagged = last.find(':') != std::string::npos;
        if (!digest && !tagged && !p.version.empty()) ref += ":" + p.version;
        const auto tail = ref.substr(ref.rfind('/') == std::string::npos ? 0 : ref.rfind('/') + 1);
        if (!digest && (tail.find(':') == std::string::npos || tail.ends_with(":latest")))
            throw RegistryError(
                fmt::format("server \"{}\": {} has no exact tag: it cannot be pinned", doc_.name, field));
        return ref;
    }

    const ServerDocument& doc_;
    const std::map<std::string, std::string>* answers_;
    std::string local_;
    std::set<std::string> asked_;
};

Builder build(const ServerDocument& doc, Choice choice, const std::map<std::string, std::string>* answers,
              std::string_view local_name) {
    Builder b(doc, answers, std::string(local_name));
    if (choice.kind == Choice::Kind::package) {
        if (choice.index >= doc.packages.size())
            throw RegistryError(fmt::format("server \"{}\" has no package {}", doc.name, choice.index + 1));
        b.package(doc.packages[choice.index]);
    } else {
        if (choice.index >= doc.remotes.size())
            throw RegistryError(fmt::format("server \"{}\" has no remote {}", doc.name, choice.index + 1));
        b.remote(doc.remotes[choice.index]);
    }
    return b;
}

}  // namespace

ServerDocument parse_server_json(const json::value& document, std::string_view source) {
    if (!document.is_object()) throw RegistryError(fmt::format("{}: a server.json must be an object", source));
    const auto& o = document.get_object();
    ServerDocument doc;
    doc.name = Reader(std::string(source)).text(o, "name", true);
    const Reader r(fmt::format("{}: server \"{}\"", source, doc.name));
    doc.title = r.text(o, "title");
    doc.description = r.text(o, "description");
    doc.version = r.text(o, "version");
    doc.website = r.text(o, "websiteUrl");
    if (const auto* repo = o.if_contains("repository"); repo && repo->is_object())
        doc.repository = r.text(repo->get_object(), "url");
    if (const auto* list = r.array(o, "packages"))
        for (const auto& item : *list) {
            const auto& p = r.object(item, "packages");
            Package pkg;
            pkg.registry_type = r.text(p, "registryType", true);
            pkg.base_url = r.text(p, "registryBaseUrl");
            pkg.identifier = r.text(p, "identifier", true);
            pkg.version = r.text(p, "version");
            pkg.file_sha256 = r.text(p, "fileSha256");
            pkg.runtime_hint = r.text(p, "runtimeHint");
            if (const auto* t = p.if_contains("transport"); t && !t->is_null()) {
                const auto& to = r.object(*t, "transport");
                pkg.transport = r.text(to, "type", true);
                pkg.transport_url = r.text(to, "url");
            }
            pkg.runtime_arguments = r.values(p, "runtimeArguments", Value::Kind::positional);
            pkg.package_arguments = r.values(p, "packageArguments", Value::Kind::positional);
            pkg.environment = r.values(p, "environmentVariables", Value::Kind::env);
            doc.packages.push_back(std::move(pkg));
        }
    if (const auto* list = r.array(o, "remotes"))
        for (const auto& item : *list) {
            const auto& ro = r.object(item, "remotes");
            Remote rem;
            rem.type = r.text(ro, "type", true);
            rem.url = r.text(ro, "url", true);
            rem.headers = r.values(ro, "headers", Value::Kind::header);
            rem.variables = r.variables(ro);
            doc.remotes.push_back(std::move(rem));
        }
    return doc;
}

Choice choose(const ServerDocument& doc, std::string_view use) {
    std::vector<std::string> offered;
    for (std::size_t i = 0; i < doc.packages.size(); ++i) {
        const auto& p = doc.packages[i];
        offered.push_back(p.registry_type);
        const bool fits =
            use.empty() ? Builder::is_runnable(p.registry_type) && p.transport == "stdio" : p.registry_type == use;
        if (fits) return {Choice::Kind::package, i};
    }
    if (!doc.remotes.empty() && (use.empty() || use == "remote")) return {Choice::Kind::remote, 0};
    if (!doc.remotes.empty()) offered.push_back("remote");
    if (!use.empty())
        throw RegistryError(fmt::format("server \"{}\" has no {} package (it offers: {})", doc.name, use,
                                        offered.empty() ? "nothing" : fmt::format("{}", fmt::join(offered, ", "))));
    throw RegistryError(fmt::format(
        "server \"{}\" offers nothing Switchboard can run ({})", doc.name,
        offered.empty() ? "no packages, no remotes" : fmt::format("it offers: {}", fmt::join(offered, ", "))));
}

std::vector<Question> questions(const ServerDocument& doc, Choice choice) {
    return build(doc, choice, nullptr, "x").questions;
}

Plan plan(const ServerDocument& doc, Choice choice, const std::map<std::string, std::string>& answers,
          std::string_view local_name) {
    return build(doc, choice, &answers, local_name).plan;
}

void apply_flags(Plan& plan, const EntryFlags& flags) {
    if (!plan.argv.empty()) {
        const auto launcher = plan.argv.front();
        if (launcher != "docker" && launcher != "podman") plan.entry["sandboxEnabled"] = flags.confine;
    }
    if (flags.lazy) plan.entry["lazy"] = true;
    if (flags.disabled) plan.entry["enabled"] = false;
}

std::string default_local_name(std::string_view name) {
    if (auto slash = name.rfind('/'); slash != std::string_view::npos) name = name.substr(slash + 1);
    std::string out;
    for (char c : name) {
        const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        out += ok ? c : '-';
    }
    while (out.find("__") != std::string::npos) out.replace(out.find("__"), 2, "_");
    return out.substr(0, 64);
}

std::pair<std::string, std::string> split_name_version(const std::string& text) {
    const auto at = text.rfind('@');
    if (at == std::string::npos || at == 0) return {text, {}};
    return {text.substr(0, at), text.substr(at + 1)};
}

json::object to_json(const Question& q) {
    json::object o{{"key", q.key},
                   {"label", q.label},
                   {"description", q.input.description},
                   {"required", q.input.required},
                   {"secret", q.input.secret},
                   {"format", q.input.format}};
    o["default"] = q.input.default_value ? json::value(*q.input.default_value) : json::value(nullptr);
    json::array choices;
    for (const auto& c : q.input.choices) choices.emplace_back(c);
    o["choices"] = std::move(choices);
    return o;
}

std::string standard_base_url(std::string_view registry_type) {
    if (registry_type == "npm") return "https://registry.npmjs.org";
    if (registry_type == "pypi") return "https://pypi.org";
    if (registry_type == "nuget") return "https://api.nuget.org/v3/index.json";
    if (registry_type == "oci") return "https://docker.io";
    return {};
}

std::string shell_words(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& word : argv) {
        if (!out.empty()) out += ' ';
        const bool plain = !word.empty() && word.find_first_not_of(
                                                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                "0123456789@%+=:,./-_") == std::string::npos;
        if (plain) {
            out += word;
            continue;
        }
        out += '\'';
        for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

}  // namespace switchboard::registry
