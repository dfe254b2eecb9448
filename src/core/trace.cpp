#include <switchboard/core/trace.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>

namespace switchboard::trace {

namespace json = boost::json;

namespace {

std::atomic<Tracer*> installed{nullptr};

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& a) {
    for (auto b : a)
        if (b != 0) return false;
    return true;
}

std::mt19937_64& rng() {
    thread_local std::mt19937_64 engine([] {
        std::random_device rd;
        return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    }());
    return engine;
}

template <std::size_t N>
std::array<std::uint8_t, N> random_bytes() {
    std::array<std::uint8_t, N> out{};
    do {
        for (std::size_t i = 0; i < N; i += 8) {
            auto v = rng()();
            std::memcpy(out.data() + i, &v, std::min<std::size_t>(8, N - i));
        }
    } while (all_zero(out));
    return out;
}

// The trace id's last 8 bytes as a number, compared with ratio·2^64: the same decision in every process (W3C
// trace ids' right half is random).
bool ratio_keeps(const TraceId& id, double ratio) {
    if (ratio >= 1.0) return true;
    if (ratio <= 0.0) return false;
    std::uint64_t v = 0;
    for (std::size_t i = 8; i < 16; ++i) v = (v << 8) | id[i];
    return static_cast<double>(v) < ratio * 18446744073709551616.0;
}

// At most `max` bytes of visible ASCII and spaces (W3C tracestate and baggage): nothing that could end a header.
bool printable(std::string_view s, std::size_t max) {
    if (s.size() > max) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

std::string make_name(std::string_view name, std::string_view target) {
    std::string s;
    s.reserve(name.size() + 1 + target.size());
    s.append(name);
    if (!target.empty()) {
        s.push_back(' ');
        s.append(target);
    }
    return s;
}

}  // namespace

std::string to_hex(const std::uint8_t* bytes, std::size_t n) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s(n * 2, '0');
    for (std::size_t i = 0; i < n; ++i) {
        s[2 * i] = digits[bytes[i] >> 4];
        s[2 * i + 1] = digits[bytes[i] & 15];
    }
    return s;
}

bool from_hex(std::string_view hex, std::uint8_t* out, std::size_t n) {
    if (hex.size() != 2 * n) return false;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    for (std::size_t i = 0; i < n; ++i) {
        int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    return true;
}

bool SpanContext::valid() const { return !all_zero(trace_id) && !all_zero(span_id); }

std::string SpanContext::traceparent() const {
    std::string s;
    s.reserve(55);
    s += "00-";
    s += to_hex(trace_id);
    s += '-';
    s += to_hex(span_id);
    s += sampled ? "-01" : "-00";
    return s;
}

std::string SpanContext::trace_id_hex() const { return to_hex(trace_id); }
std::string SpanContext::span_id_hex() const { return to_hex(span_id); }

std::optional<SpanContext> SpanContext::parse(std::string_view tp, std::string_view tracestate,
                                              std::string_view baggage) {
    // version "-" trace-id "-" parent-id "-" flags; a later version may add fields after a "-".
    if (tp.size() < 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-') return std::nullopt;
    std::uint8_t version = 0, flags = 0;
    if (!from_hex(tp.substr(0, 2), &version, 1) || version == 0xff) return std::nullopt;
    if (version == 0 && tp.size() != 55) return std::nullopt;
    if (version != 0 && tp.size() > 55 && tp[55] != '-') return std::nullopt;
    SpanContext c;
    if (!from_hex(tp.substr(3, 32), c.trace_id.data(), 16) || !from_hex(tp.substr(36, 16), c.span_id.data(), 8) ||
        !from_hex(tp.substr(53, 2), &flags, 1))
        return std::nullopt;
    // The spec's lowercase only (uppercase is invalid).
    for (char ch : tp.substr(0, 55))
        if (ch >= 'A' && ch <= 'F') return std::nullopt;
    if (!c.valid()) return std::nullopt;
    c.sampled = flags & 1;
    c.recorded = c.sampled;
    // Passed on as they came, so only when they are what the specs allow: they end up in HTTP headers.
    if (printable(tracestate, 512) && std::count(tracestate.begin(), tracestate.end(), ',') < 32)
        c.tracestate = std::string(tracestate);
    if (printable(baggage, 8192)) c.baggage = std::string(baggage);
    return c;
}

std::optional<SpanContext> SpanContext::from_meta(const json::object& meta) {
    const auto* tp = meta.if_contains("traceparent");
    if (!tp || !tp->is_string()) return std::nullopt;
    auto text = [&](const char* key) -> std::string_view {
        const auto* v = meta.if_contains(key);
        return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
    };
    return parse(tp->get_string(), text("tracestate"), text("baggage"));
}

void SpanContext::to_meta(json::object& meta) const {
    meta["traceparent"] = traceparent();
    if (!tracestate.empty())
        meta["tracestate"] = tracestate;
    else
        meta.erase("tracestate");
    if (!baggage.empty())
        meta["baggage"] = baggage;
    else
        meta.erase("baggage");
}

const AttributeValue* SpanData::attribute(std::string_view key) const {
    for (const auto& a : attributes)
        if (a.key == key) return &a.value;
    return nullptr;
}

Span::Span(Span&& other) noexcept : data_(std::move(other.data_)), ctx_(std::move(other.ctx_)) {}

Span& Span::operator=(Span&& other) noexcept {
    if (this != &other) {
        end();
        data_ = std::move(other.data_);
        ctx_ = std::move(other.ctx_);
    }
    return *this;
}

namespace {

// The three constructors share this: a recorded span under `parent` (invalid: a new trace).
void begin(std::shared_ptr<SpanData>& data, SpanContext& ctx, std::string_view name, std::string_view target,
                  SpanKind kind, const SpanContext* parent, bool sampled) {
    data = std::make_shared<SpanData>();
    data->attributes.reserve(8);  // what a request's span sets: one allocation, not four
    data->name = make_name(name, target);
    data->kind = kind;
    data->start_ns = now_ns();
    if (parent && parent->valid()) {
        ctx.trace_id = parent->trace_id;
        ctx.tracestate = parent->tracestate;
        ctx.baggage = parent->baggage;
        data->parent_span_id = parent->span_id;
    } else {
        ctx.trace_id = random_trace_id();
    }
    ctx.span_id = random_span_id();
    ctx.sampled = sampled;
    ctx.recorded = true;
    data->trace_id = ctx.trace_id;
    data->span_id = ctx.span_id;
    data->tracestate = ctx.tracestate;
    data->sampled = sampled;
}

}  // namespace

Span Span::unsampled(const TraceId& id) {
    // The sampler's "no" goes on to the next hop (flags 00) instead of every server deciding afresh.
    Span s;
    s.ctx_.trace_id = id;
    s.ctx_.span_id = random_span_id();
    return s;
}

Span Span::sampled_root(Tracer& t, std::string_view name, std::string_view target, SpanKind kind) {
    // A request from outside, or background work, with an exporter: a new trace if the sampler keeps it.
    Span s;
    auto id = random_trace_id();
    if (!t.sample_root(id)) return unsampled(id);
    begin(s.data_, s.ctx_, name, target, kind, nullptr, true);
    s.ctx_.trace_id = id;
    s.data_->trace_id = id;
    return s;
}

Span Span::start(std::string_view name, std::string_view target, SpanKind kind, const SpanContext& parent) {
    Span s;
    auto* t = tracer();
    if (!t) {
        if (parent.valid()) s.ctx_ = parent;
        return s;
    }
    if (parent.valid()) {
        if (!parent.recorded) {
            s.ctx_ = parent;
            return s;
        }
        begin(s.data_, s.ctx_, name, target, kind, &parent, parent.sampled);
        return s;
    }
    if (!t->options().exporting) return s;
    return sampled_root(*t, name, target, kind);
}

Span Span::start_remote(std::string_view name, std::string_view target, SpanKind kind,
                        const std::optional<SpanContext>& parent) {
    Span s;
    auto* t = tracer();
    if (!parent) {
        if (!t || !t->options().exporting) return s;
        return sampled_root(*t, name, target, kind);
    }
    // Without an exporter a client's trace is passed on, not recorded: nobody would see it but the trace file, and a
    // gateway would pay for it on every request.
    if (!t || !t->options().exporting || !t->sample_remote(*parent)) {
        s.ctx_ = *parent;
        s.ctx_.recorded = false;
        return s;
    }
    begin(s.data_, s.ctx_, name, target, kind, &*parent, true);
    return s;
}

Span Span::start_local_root(std::string_view name, std::string_view target, SpanKind kind) {
    Span s;
    auto* t = tracer();
    if (!t) return s;
    auto id = random_trace_id();
    // Sampled (for the next hop too) only when exported: a server downstream that exports its part of a trace whose
    // root no collector gets would make a trace with a hole.
    const bool sampled = t->options().exporting && t->sample_root(id);
    begin(s.data_, s.ctx_, name, target, kind, nullptr, sampled);
    s.ctx_.trace_id = id;
    s.data_->trace_id = id;
    return s;
}

namespace {

// OTLP wants each key once: a later value replaces an earlier one.
void put(SpanData& d, std::string_view key, AttributeValue value) {
    for (auto& a : d.attributes)
        if (a.key == key) {
            a.value = std::move(value);
            return;
        }
    d.attributes.push_back({std::string(key), std::move(value)});
}

}  // namespace

void Span::set(std::string_view key, std::string_view value) {
    if (data_) put(*data_, key, std::string(value));
}
void Span::set(std::string_view key, std::int64_t value) {
    if (data_) put(*data_, key, value);
}
void Span::set(std::string_view key, double value) {
    if (data_) put(*data_, key, value);
}
void Span::set(std::string_view key, bool value) {
    if (data_) put(*data_, key, value);
}
void Span::set(std::string_view key, std::vector<std::string> value) {
    if (data_) put(*data_, key, std::move(value));
}

void Span::add_event(std::string_view name, std::vector<Attribute> attributes) {
    if (data_) data_->events.push_back({std::string(name), now_ns(), std::move(attributes)});
}

void Span::set_error(std::string_view type, std::string_view message) {
    if (!data_) return;
    set("error.type", type);
    data_->status = SpanStatus::error;
    data_->status_message = std::string(message);
}

void Span::set_ok() {
    if (data_ && data_->status == SpanStatus::unset) data_->status = SpanStatus::ok;
}

void Span::end() {
    if (!data_) return;
    data_->end_ns = now_ns();
    if (auto* t = tracer())
        t->finish(std::move(data_));
    else
        data_.reset();
}

std::optional<Sampler> parse_sampler(std::string_view name) {
    if (name == "always_on") return Sampler::always_on;
    if (name == "always_off") return Sampler::always_off;
    if (name == "traceidratio") return Sampler::ratio;
    if (name == "parentbased_always_on") return Sampler::parent_always_on;
    if (name == "parentbased_always_off") return Sampler::parent_always_off;
    if (name == "parentbased_traceidratio") return Sampler::parent_ratio;
    return std::nullopt;
}

Tracer::Tracer(TracerOptions options) : options_(options) {}

bool Tracer::sample_root(const TraceId& id) const {
    switch (options_.sampler) {
    case Sampler::always_on:
    case Sampler::parent_always_on:
        return true;
    case Sampler::always_off:
    case Sampler::parent_always_off:
        return false;
    case Sampler::ratio:
    case Sampler::parent_ratio:
        return ratio_keeps(id, options_.ratio);
    }
    return false;
}

bool Tracer::sample_remote(const SpanContext& parent) const {
    switch (options_.sampler) {
    case Sampler::always_on:
        return true;
    case Sampler::always_off:
        return false;
    case Sampler::ratio:
        return ratio_keeps(parent.trace_id, options_.ratio);
    case Sampler::parent_always_on:
    case Sampler::parent_always_off:
    case Sampler::parent_ratio:
        return parent.sampled;
    }
    return false;
}

void Tracer::finish(std::shared_ptr<SpanData> span) {
    std::shared_ptr<const SpanData> s(std::move(span));
    std::function<void(std::shared_ptr<const SpanData>)> sink;
    {
        std::lock_guard lock(mutex_);
        ring_.push_back(s);
        if (ring_.size() > options_.ring_spans) ring_.pop_front();
        unsaved_ = std::min(unsaved_ + 1, ring_.size());
        if (s->sampled && options_.exporting) sink = sink_;
    }
    if (sink) sink(std::move(s));
}

void Tracer::set_sink(std::function<void(std::shared_ptr<const SpanData>)> sink) {
    std::lock_guard lock(mutex_);
    sink_ = std::move(sink);
}

std::vector<std::shared_ptr<const SpanData>> Tracer::take_unsaved() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<const SpanData>> out(ring_.end() - static_cast<std::ptrdiff_t>(unsaved_), ring_.end());
    unsaved_ = 0;
    return out;
}

std::vector<std::shared_ptr<const SpanData>> Tracer::spans_of(const TraceId& id) const {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<const SpanData>> out;
    for (const auto& s : ring_)
        if (s->trace_id == id) out.push_back(s);
    return out;
}

namespace {

// The methods MCP defines; anything else a client sends is one "_OTHER" (a client must not grow the table).
constexpr std::string_view known_methods[] = {
    "initialize", "ping", "server/discover", "tools/list", "tools/call", "resources/list", "resources/templates/list",
    "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
    "completion/complete", "logging/setLevel", "subscriptions/listen", "tasks/get", "tasks/result", "tasks/list",
    "tasks/cancel", "tasks/update", "sampling/createMessage", "elicitation/create", "roots/list"};
constexpr std::size_t max_operations = 256;

}  // namespace

void Tracer::record_operation(bool server, std::string_view method, std::string_view error_type, double seconds) {
    if (std::find(std::begin(known_methods), std::end(known_methods), method) == std::end(known_methods))
        method = "_OTHER";
    std::lock_guard lock(mutex_);
    auto find = [&] {
        return std::find_if(operations_.begin(), operations_.end(), [&](const OperationHistogram& h) {
            return h.server == server && h.method == method && h.error_type == error_type;
        });
    };
    auto it = find();
    if (it == operations_.end() && operations_.size() >= max_operations) {
        error_type = "_OTHER";  // error codes come from peers: their variety is bounded here
        it = find();
    }
    if (it == operations_.end()) {
        OperationHistogram h;
        h.server = server;
        h.method = std::string(method);
        h.error_type = std::string(error_type);
        operations_.push_back(std::move(h));
        it = operations_.end() - 1;
    }
    std::size_t i = 0;
    while (i < OperationHistogram::bounds.size() && seconds > OperationHistogram::bounds[i]) ++i;
    ++it->counts[i];
    ++it->count;
    it->sum += seconds;
}

std::vector<OperationHistogram> Tracer::operations() const {
    std::lock_guard lock(mutex_);
    return operations_;
}

OperationTimer::OperationTimer(bool server, std::string_view method) : server_(server) {
    auto* t = tracer();
    on_ = t && t->options().operation_metrics;
    if (!on_) return;
    method_ = method;
    start_ = std::chrono::steady_clock::now();
}

OperationTimer::~OperationTimer() {
    if (!on_) return;
    // Asked again: a request's frame may be destroyed after the front end's tracer is gone (at exit).
    auto* t = tracer();
    if (!t) return;
    const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    t->record_operation(server_, method_, error_type_, took);
}

Tracer* tracer() { return installed.load(std::memory_order_relaxed); }

bool exporting() {
    auto* t = tracer();
    return t && t->options().exporting;
}

InstallTracer::InstallTracer(Tracer* t) : previous_(installed.exchange(t)) {}
InstallTracer::~InstallTracer() { installed.store(previous_); }

std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

TraceId random_trace_id() { return random_bytes<16>(); }
SpanId random_span_id() { return random_bytes<8>(); }

}  // namespace switchboard::trace
