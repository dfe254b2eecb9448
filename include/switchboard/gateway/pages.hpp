// The gateway's long lists in pages (tools, resources, templates, prompts merged from every upstream): a page of at
// most `page_size` items and an opaque cursor for the next. The cursor names the last item given (by its name or
// URI) and where it stood, so that a list that changes between two pages goes on right after that item, wherever it
// moved, or at its old place when it is gone: items that did not change are neither repeated nor skipped.
#pragma once

#include <switchboard/jsonrpc/error.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace switchboard::gateway {

/// The default page size of `serve` (--page-size): a host of a thousand tools answers in one page.
inline constexpr std::size_t default_page_size = 1000;

/// {"<list_name>": [the page], "nextCursor": "..." (when more follow)} from `items`, each identified by its `key_field`
/// ("name", "uri", "uriTemplate"). `page_size` 0: everything in one page. A cursor this did not make is -32602.
jsonrpc::Outcome<boost::json::object> page_of(boost::json::array items, std::string_view list_name,
                                              std::string_view key_field, const std::string& cursor,
                                              std::size_t page_size);

}  // namespace switchboard::gateway
