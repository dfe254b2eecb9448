#include <switchboard/gateway/pages.hpp>

#include <switchboard/core/base64.hpp>

#include <boost/json/string.hpp>

#include <algorithm>
#include <charconv>

namespace switchboard::gateway {

namespace json = boost::json;
using jsonrpc::Error;

namespace {

// "p1:<index>:<key>", base64: opaque to clients, and versioned for a later change of form.
std::string make_cursor(std::size_t index, std::string_view key) {
    return core::base64_encode("p1:" + std::to_string(index) + ":" + std::string(key));
}

std::string_view key_of(const json::value& item, std::string_view field) {
    const auto* o = item.if_object();
    const auto* k = o ? o->if_contains(field) : nullptr;
    return k && k->is_string() ? std::string_view(k->get_string()) : std::string_view();
}

}  // namespace

jsonrpc::Outcome<json::object> page_of(json::array items, std::string_view list_name, std::string_view key_field,
                                       const std::string& cursor, std::size_t page_size) {
    std::size_t start = 0;
    if (!cursor.empty()) {
        const auto text = core::base64_decode(cursor);
        const auto colon = text && text->starts_with("p1:") ? text->find(':', 3) : std::string::npos;
        std::size_t index = 0;
        const auto digits =
            colon == std::string::npos ? std::string_view() : std::string_view(*text).substr(3, colon - 3);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
        if (colon == std::string::npos || digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
            return Error{jsonrpc::code::invalid_params, "Invalid cursor: not one this gateway gave"};
        const std::string_view last = std::string_view(*text).substr(colon + 1);
        // Right after the last item given, wherever it is now; at its old place when it is gone.
        const auto it = std::find_if(items.begin(), items.end(),
                                     [&](const json::value& v) { return key_of(v, key_field) == last; });
        start = it != items.end() ? static_cast<std::size_t>(it - items.begin()) + 1 : std::min(index, items.size());
    }
    json::object result;
    const std::size_t end = page_size == 0 ? items.size() : std::min(items.size(), start + page_size);
    if (start == 0 && end == items.size()) {
        result[list_name] = std::move(items);
        return result;
    }
    json::array page;
    page.reserve(end - start);
    for (std::size_t i = start; i < end; ++i) page.push_back(std::move(items[i]));
    std::string next;
    if (end < items.size()) next = make_cursor(end - 1, key_of(page.back(), key_field));
    result[list_name] = std::move(page);
    if (!next.empty()) result["nextCursor"] = std::move(next);
    return result;
}

}  // namespace switchboard::gateway
