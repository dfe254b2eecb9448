// A stored conversation written out whole: as Markdown to read (`conversations show`, the web UI's export) and as
// JSON with every message's record and meta (`conversations show --json`, the export's JSON).
//
// Thread-safety: plain functions.
#pragma once

#include <switchboard/store/conversation_store.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace switchboard::store {

/// A Markdown transcript: the title, one section per message, each tool call followed by its result.
std::string markdown_transcript(const ConversationInfo& info, const std::vector<StoredMessage>& messages);
/// {id, title, model, created, updated, settings, messages: [message + meta + created]}.
boost::json::object transcript_json(const ConversationInfo& info, const ConversationSettings& settings,
                                    const std::vector<StoredMessage>& messages);
/// "2024-05-01T14:03:12.345Z".
std::string iso_time(std::int64_t ms);
/// "2024-05-01 16:03", in the local time zone.
std::string local_time(std::int64_t ms);

}  // namespace switchboard::store
