// The gateway's tools/list answers kept as JSON text. A page of tools/list is the tool index turned into JSON: the
// same bytes for every client that sees the same index and asks for the same page, and with a thousand tools building
// them is most of the request. They are kept per index: a new index (a server came, went or changed its tools) starts
// the cache again, so an answer is never older than the index it came from.
//
// A cursor is the client's to send, and one the gateway never gave may still name a page (gateway/pages.hpp: it
// starts at the position it names). Only the first page and the pages of cursors given with a kept page are kept, so
// what is kept is bounded by the lists themselves; and by max_entries and max_bytes besides.
//
// Thread-safety: single-threaded (the gateway's io_context).
#pragma once

#include <switchboard/host/tool_index.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace switchboard::gateway {

class ToolListCache {
public:
    static constexpr std::size_t max_entries = 256;
    static constexpr std::size_t max_bytes = 32u << 20;

    /// The members kept for page `cursor` of the list `key` names (what else a page depends on) under `index`, or
    /// null.
    std::shared_ptr<const std::string> find(const std::shared_ptr<const host::ToolIndex>& index, const std::string& key,
                                            const std::string& cursor) const;
    /// Keeps `members` for that page, and `next_cursor` (the one the page gives, empty: none) as a page that may be
    /// kept too. Nothing is kept for a cursor this did not give, or past the bounds. A page of another index forgets
    /// everything kept for the one before.
    void keep(const std::shared_ptr<const host::ToolIndex>& index, const std::string& key, const std::string& cursor,
              std::shared_ptr<const std::string> members, const std::string& next_cursor);
    std::size_t size() const { return pages_.size(); }
    std::size_t bytes() const { return bytes_; }

private:
    // Not owning: a replaced index is freed as usual; an expired one matches nothing, even if a new one takes its
    // address.
    std::weak_ptr<const host::ToolIndex> index_;
    std::map<std::string, std::shared_ptr<const std::string>, std::less<>> pages_;  // key + cursor -> members
    std::set<std::string, std::less<>> given_;  // key + cursor of the pages a kept page leads to
    std::size_t bytes_ = 0;
};

}  // namespace switchboard::gateway
