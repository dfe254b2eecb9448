#include <switchboard/telemetry/trace_ring.hpp>

#include <switchboard/core/atomic_file.hpp>
#include <switchboard/core/text.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace switchboard::telemetry {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// A file far larger than max_spans lines could ever be is read from its tail only.
constexpr std::uintmax_t max_read = 64u * 1024 * 1024;

template <std::size_t N>
bool zero_id(const std::array<std::uint8_t, N>& a) {
    for (auto b : a)
        if (b != 0) return false;
    return true;
}

// Span text comes from servers and models; one invalid byte would make the line unreadable for the parser.
json::string text(std::string_view s) {
    if (core::is_valid_utf8(s)) return json::string(s);
    return json::string(core::to_valid_utf8(s));
}

json::value attribute_json(const trace::AttributeValue& v) {
    return std::visit(
        [](const auto& x) -> json::value {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>)
                return text(x);
            else if constexpr (std::is_same_v<T, double>)
                return std::isfinite(x) ? json::value(x) : json::value(nullptr);  // JSON has no NaN or infinity
            else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                json::array a;
                for (const auto& s : x) a.push_back(text(s));
                return a;
            } else
                return json::value(x);
        },
        v);
}

json::object attributes_object(const std::vector<trace::Attribute>& attributes) {
    json::object o;
    o.reserve(attributes.size());
    for (const auto& a : attributes) o[text(a.key)] = attribute_json(a.value);
    return o;
}

std::optional<trace::AttributeValue> attribute_from_json(const json::value& v) {
    switch (v.kind()) {
    case json::kind::string: return std::string(v.get_string());
    case json::kind::int64: return v.get_int64();
    case json::kind::uint64:
        if (v.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return static_cast<std::int64_t>(v.get_uint64());
        return static_cast<double>(v.get_uint64());
    case json::kind::double_: return v.get_double();
    case json::kind::bool_: return v.get_bool();
    case json::kind::array: {
        std::vector<std::string> items;
        for (const auto& e : v.get_array())
            if (e.is_string()) items.emplace_back(e.get_string());
        return items;
    }
    default: return std::nullopt;
    }
}

std::vector<trace::Attribute> attributes_from_json(const json::value* v) {
    std::vector<trace::Attribute> out;
    if (!v || !v->is_object()) return out;
    out.reserve(v->get_object().size());
    for (const auto& [key, value] : v->get_object())
        if (auto a = attribute_from_json(value)) out.push_back({std::string(key), std::move(*a)});
    return out;
}

std::string_view string_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

std::uint64_t time_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v) return 0;
    if (v->is_uint64()) return v->get_uint64();
    if (v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
    return 0;
}

std::int64_t int_at(const json::object& o, std::string_view key, std::int64_t otherwise) {
    const auto* v = o.if_contains(key);
    if (v && v->is_int64()) return v->get_int64();
    if (v && v->is_uint64() && v->get_uint64() < 1000) return static_cast<std::int64_t>(v->get_uint64());
    return otherwise;
}

// The newest part of the file, as lines; the first is dropped when reading started in the middle of one.
std::vector<std::string> read_lines(const fs::path& file, std::string* error) {
    std::vector<std::string> lines;
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        if (errno != ENOENT && error) *error = fmt::format("cannot read {}: {}", file.string(), std::strerror(errno));
        return lines;
    }
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    const bool partial = !ec && size > max_read;
    if (partial) in.seekg(static_cast<std::streamoff>(size - max_read));
    std::string line;
    if (partial) std::getline(in, line);
    while (std::getline(in, line))
        if (!line.empty()) lines.push_back(std::move(line));
    return lines;
}

// Missing directories made private (0700) as the XDG spec asks of $XDG_STATE_HOME; existing ones are left as they
// are.
std::string make_private_directories(const fs::path& dir) {
    fs::path sofar;
    for (const auto& part : dir) {
        sofar /= part;
        if (sofar.empty() || sofar == sofar.root_path()) continue;
        if (::mkdir(sofar.c_str(), 0700) != 0 && errno != EEXIST)
            return fmt::format("cannot create {}: {}", sofar.string(), std::strerror(errno));
    }
    return {};
}

// Holds an exclusive lock on the file beside the ring, for one read-modify-write.
class FileLock {
public:
    explicit FileLock(const fs::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
        if (fd_ < 0) return;
        while (::flock(fd_, LOCK_EX) != 0)
            if (errno != EINTR) break;
    }
    ~FileLock() {
        if (fd_ >= 0) ::close(fd_);  // releases the lock
    }
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

private:
    int fd_;
};

std::string kind_name(trace::SpanKind kind) {
    switch (kind) {
    case trace::SpanKind::server: return "server";
    case trace::SpanKind::client: return "client";
    case trace::SpanKind::internal: break;
    }
    return "internal";
}

std::string value_text(const trace::AttributeValue& v, std::size_t max) {
    return std::visit(
        [&](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>)
                return core::first_line(x, max);
            else if constexpr (std::is_same_v<T, bool>)
                return x ? "true" : "false";
            else if constexpr (std::is_same_v<T, double>)
                return fmt::format("{:g}", x);
            else if constexpr (std::is_same_v<T, std::vector<std::string>>)
                return core::first_line(fmt::format("{}", fmt::join(x, ",")), max);
            else
                return std::to_string(x);
        },
        v);
}

std::string ms(std::uint64_t from, std::uint64_t to) {
    return fmt::format("{:.1f} ms", to > from ? static_cast<double>(to - from) / 1e6 : 0.0);
}

// Whether `name` has `word` as one of its space-separated words ("tools/call search" and the tool "search").
bool has_word(std::string_view name, std::string_view word) {
    for (std::size_t at = name.find(word); at != std::string_view::npos; at = name.find(word, at + 1)) {
        const bool starts = at == 0 || name[at - 1] == ' ';
        const bool ends = at + word.size() == name.size() || name[at + word.size()] == ' ';
        if (starts && ends) return true;
    }
    return false;
}

// The attributes worth a glance on the span's own line; the rest (session ids, server names) is noise in a tree.
std::string highlights(const trace::SpanData& s) {
    static constexpr std::pair<std::string_view, std::string_view> shown[] = {
        {"gen_ai.tool.name", "tool"},
        {"gen_ai.request.model", "model"},
        {"gen_ai.usage.input_tokens", "in_tokens"},
        {"gen_ai.usage.output_tokens", "out_tokens"},
        {"gen_ai.response.finish_reasons", "finish"},
    };
    std::string out;
    for (const auto& [key, label] : shown) {
        const auto* v = s.attribute(key);
        if (!v) continue;
        auto value = value_text(*v, 40);
        // Already in the name ("chat qwen3", "tools/call search"): said once is enough.
        if ((label == "tool" || label == "model") && has_word(s.name, value)) continue;
        out += fmt::format("  {}={}", label, value);
    }
    return out;
}

std::string span_line(const trace::SpanData& s, std::uint64_t trace_start) {
    auto line = fmt::format("{}  {}  {}  +{}", core::shorten(s.name, 60), kind_name(s.kind), ms(s.start_ns, s.end_ns),
                            ms(trace_start, s.start_ns));
    if (s.status == trace::SpanStatus::error) {
        const auto* type = s.attribute("error.type");
        std::string what = type ? value_text(*type, 30) : std::string("error");
        if (!s.status_message.empty()) what += ": " + core::first_line(s.status_message, 60);
        line += fmt::format("  [{}]", what);
    }
    return line + highlights(s);
}

std::string event_line(const trace::SpanEvent& e, std::uint64_t trace_start) {
    auto line = fmt::format("· {}  +{}", core::shorten(e.name, 40), ms(trace_start, e.time_ns));
    for (const auto& a : e.attributes) line += fmt::format("  {}={}", a.key, value_text(a.value, 40));
    return line;
}

}  // namespace

json::object span_to_json(const trace::SpanData& s) {
    json::object o;
    o.reserve(13);
    o["traceId"] = trace::to_hex(s.trace_id);
    o["spanId"] = trace::to_hex(s.span_id);
    if (!zero_id(s.parent_span_id)) o["parentSpanId"] = trace::to_hex(s.parent_span_id);
    if (!s.tracestate.empty()) o["traceState"] = text(s.tracestate);
    o["name"] = text(s.name);
    o["kind"] = static_cast<int>(s.kind);
    o["start"] = s.start_ns;
    o["end"] = s.end_ns;
    if (!s.attributes.empty()) o["attributes"] = attributes_object(s.attributes);
    if (!s.events.empty()) {
        json::array events;
        events.reserve(s.events.size());
        for (const auto& e : s.events) {
            json::object event{{"name", text(e.name)}, {"time", e.time_ns}};
            if (!e.attributes.empty()) event["attributes"] = attributes_object(e.attributes);
            events.push_back(std::move(event));
        }
        o["events"] = std::move(events);
    }
    if (s.status != trace::SpanStatus::unset || !s.status_message.empty()) {
        json::object status{{"code", static_cast<int>(s.status)}};
        if (!s.status_message.empty()) status["message"] = text(s.status_message);
        o["status"] = std::move(status);
    }
    o["sampled"] = s.sampled;
    return o;
}

std::optional<trace::SpanData> span_from_json(const json::value& v) {
    const auto* o = v.if_object();
    if (!o) return std::nullopt;
    trace::SpanData s;
    if (!trace::from_hex(string_at(*o, "traceId"), s.trace_id.data(), s.trace_id.size()) ||
        !trace::from_hex(string_at(*o, "spanId"), s.span_id.data(), s.span_id.size()) || zero_id(s.trace_id) ||
        zero_id(s.span_id))
        return std::nullopt;
    if (!trace::from_hex(string_at(*o, "parentSpanId"), s.parent_span_id.data(), s.parent_span_id.size()))
        s.parent_span_id = {};
    s.tracestate = std::string(string_at(*o, "traceState"));
    s.name = std::string(string_at(*o, "name"));
    const auto kind = int_at(*o, "kind", 1);
    s.kind = kind == 2 ? trace::SpanKind::server : kind == 3 ? trace::SpanKind::client : trace::SpanKind::internal;
    s.start_ns = time_at(*o, "start");
    s.end_ns = time_at(*o, "end");
    s.attributes = attributes_from_json(o->if_contains("attributes"));
    if (const auto* events = o->if_contains("events"); events && events->is_array()) {
        for (const auto& e : events->get_array()) {
            const auto* eo = e.if_object();
            if (!eo) continue;
            s.events.push_back({std::string(string_at(*eo, "name")), time_at(*eo, "time"),
                                attributes_from_json(eo->if_contains("attributes"))});
        }
    }
    if (const auto* status = o->if_contains("status"); status && status->is_object()) {
        const auto code = int_at(status->get_object(), "code", 0);
        s.status = code == 1 ? trace::SpanStatus::ok : code == 2 ? trace::SpanStatus::error : trace::SpanStatus::unset;
        s.status_message = std::string(string_at(status->get_object(), "message"));
    }
    if (const auto* sampled = o->if_contains("sampled"); sampled && sampled->is_bool()) s.sampled = sampled->get_bool();
    return s;
}

fs::path default_ring_path() {
    if (const char* f = std::getenv("SWITCHBOARD_TRACE_FILE"); f && *f) return fs::path(f);
    if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) return fs::path(x) / "switchboard" / "traces.jsonl";
    if (const char* h = std::getenv("HOME"); h && *h)
        return fs::path(h) / ".local" / "state" / "switchboard" / "traces.jsonl";
    return {};
}

std::string save_spans(const fs::path& file, const std::vector<std::shared_ptr<const trace::SpanData>>& spans,
                       std::size_t max_spans) {
    if (file.empty()) return "no trace file: set SWITCHBOARD_TRACE_FILE, XDG_STATE_HOME or HOME";
    const auto dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
    if (auto e = make_private_directories(dir); !e.empty()) return e;

    std::vector<std::string> added;
    added.reserve(spans.size());
    for (const auto& s : spans)
        if (s) added.push_back(json::serialize(span_to_json(*s)));
    if (added.size() > max_spans) added.erase(added.begin(), added.end() - static_cast<std::ptrdiff_t>(max_spans));

    // Another process's save between our read and our rename would be lost: one writer at a time.
    const FileLock lock(dir / ("." + file.filename().string() + ".lock"));
    std::string error;
    auto lines = read_lines(file, &error);
    if (!error.empty()) return error;

    // The newest lines that still parse, as many as fit beside the new ones; older ones are not even parsed.
    const std::size_t room = max_spans - added.size();
    std::vector<std::string*> kept;
    for (auto it = lines.rbegin(); it != lines.rend() && kept.size() < room; ++it) {
        json::error_code ec;
        const auto v = json::parse(*it, ec);
        if (!ec && span_from_json(v)) kept.push_back(&*it);
    }
    std::string out;
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
        out += **it;
        out += '\n';
    }
    for (const auto& line : added) {
        out += line;
        out += '\n';
    }
    // Not fsynced: a trace file lost to a power cut is no loss worth a disk flush per save.
    core::AtomicWriteOptions options;
    options.durable = false;
    options.keep_mode = false;
    options.mode = 0600;
    return core::write_file_atomically(file, out, options);
}

std::vector<trace::SpanData> load_spans(const fs::path& file) {
    std::vector<trace::SpanData> out;
    if (file.empty()) return out;
    auto lines = read_lines(file, nullptr);
    out.reserve(lines.size());
    for (const auto& line : lines) {
        json::error_code ec;
        const auto v = json::parse(line, ec);
        if (ec) continue;
        if (auto s = span_from_json(v)) out.push_back(std::move(*s));
    }
    return out;
}

std::vector<TraceSummary> recent_traces(const std::vector<trace::SpanData>& spans, std::size_t limit) {
    std::map<trace::TraceId, std::vector<const trace::SpanData*>> traces;
    for (const auto& s : spans) traces[s.trace_id].push_back(&s);
    std::vector<TraceSummary> out;
    out.reserve(traces.size());
    for (const auto& [id, members] : traces) {
        std::set<trace::SpanId> ids;
        for (const auto* s : members) ids.insert(s->span_id);
        TraceSummary t;
        t.trace_id = trace::to_hex(id);
        t.spans = members.size();
        t.start_ns = std::numeric_limits<std::uint64_t>::max();
        const trace::SpanData* root = nullptr;
        for (const auto* s : members) {
            t.start_ns = std::min(t.start_ns, s->start_ns);
            t.end_ns = std::max(t.end_ns, s->end_ns);
            t.error = t.error || s->status == trace::SpanStatus::error;
            const bool is_root = zero_id(s->parent_span_id) || !ids.contains(s->parent_span_id);
            if (is_root && (!root || s->start_ns < root->start_ns)) root = s;
        }
        if (root) t.root_name = root->name;
        out.push_back(std::move(t));
    }
    std::sort(out.begin(), out.end(), [](const TraceSummary& a, const TraceSummary& b) {
        return a.start_ns != b.start_ns ? a.start_ns > b.start_ns : a.trace_id < b.trace_id;
    });
    if (out.size() > limit) out.resize(limit);
    return out;
}

std::vector<const trace::SpanData*> spans_of_trace(const std::vector<trace::SpanData>& spans,
                                                   std::string_view trace_id_prefix, std::string* error) {
    const auto set_error = [&](std::string why) {
        if (error) *error = std::move(why);
        return std::vector<const trace::SpanData*>();
    };
    const auto prefix = core::ascii_lower(trace_id_prefix);
    const bool hex = std::all_of(prefix.begin(), prefix.end(),
                                 [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    if (!hex || prefix.size() < 8 || prefix.size() > 32)
        return set_error(fmt::format("\"{}\" is not a trace id (32 hex digits, or the first 8 or more)",
                                     core::shorten(trace_id_prefix, 40)));

    std::vector<trace::TraceId> matches;
    for (const auto& s : spans)
        if (std::find(matches.begin(), matches.end(), s.trace_id) == matches.end() &&
            trace::to_hex(s.trace_id).starts_with(prefix))
            matches.push_back(s.trace_id);
    if (matches.empty()) return set_error(fmt::format("no trace {} in the trace file", prefix));
    if (matches.size() > 1) {
        std::string ids;
        for (std::size_t i = 0; i < matches.size() && i < 5; ++i) ids += (i ? ", " : "") + trace::to_hex(matches[i]);
        return set_error(
            fmt::format("{} matches {} traces: {}{}", prefix, matches.size(), ids, matches.size() > 5 ? ", ..." : ""));
    }
    std::vector<const trace::SpanData*> out;
    for (const auto& s : spans)
        if (s.trace_id == matches.front()) out.push_back(&s);
    return out;
}

std::string render_tree(std::vector<const trace::SpanData*> spans) {
    std::erase(spans, nullptr);
    if (spans.empty()) return {};
    std::stable_sort(spans.begin(), spans.end(),
                     [](const trace::SpanData* a, const trace::SpanData* b) { return a->start_ns < b->start_ns; });
    const auto trace_start = spans.front()->start_ns;

    std::map<trace::SpanId, std::size_t> index;
    for (std::size_t i = 0; i < spans.size(); ++i) index.emplace(spans[i]->span_id, i);
    std::vector<std::vector<std::size_t>> children(spans.size());
    std::vector<std::size_t> roots;
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const auto it = zero_id(spans[i]->parent_span_id) ? index.end() : index.find(spans[i]->parent_span_id);
        if (it != index.end() && it->second != i)
            children[it->second].push_back(i);  // in start order, as `spans` is
        else
            roots.push_back(i);
    }

    std::string out;
    std::vector<bool> shown(spans.size(), false);
    // `head` goes before the span's line, `rest` before every line under it.
    const auto render = [&](auto& self, std::size_t i, const std::string& head, const std::string& rest) -> void {
        if (shown[i]) return;
        shown[i] = true;
        const auto& s = *spans[i];
        out += head + span_line(s, trace_start);
        if (!zero_id(s.parent_span_id) && !index.contains(s.parent_span_id))
            out += fmt::format("  (parent {} not here)", trace::to_hex(s.parent_span_id));
        out += '\n';
        const auto& kids = children[i];
        for (const auto& e : s.events) out += rest + (kids.empty() ? "   " : "│  ") + event_line(e, trace_start) + '\n';
        for (std::size_t k = 0; k < kids.size(); ++k) {
            const bool last = k + 1 == kids.size();
            self(self, kids[k], rest + (last ? "└─ " : "├─ "), rest + (last ? "   " : "│  "));
        }
    };
    for (auto r : roots) render(render, r, "", "");
    // Spans in a parent loop (a corrupt file) are reachable from no root: shown rather than lost.
    for (std::size_t i = 0; i < spans.size(); ++i) render(render, i, "", "");
    return out;
}

}  // namespace switchboard::telemetry
