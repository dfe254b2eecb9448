// The LLM stream's assembly of content, reasoning and tool-call deltas (OpenAI-compatible chunks from llama-server,
// Ollama, vLLM, ...): each input line that is JSON is one `data:` chunk; the last line may be a whole response.
#include <switchboard/llm/stream_assembler.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    std::size_t calls_seen = 0;
    switchboard::llm::StreamCallbacks callbacks;
    callbacks.on_content = [](std::string_view) {};
    callbacks.on_reasoning = [](std::string_view) {};
    callbacks.on_tool_call = [&](const switchboard::llm::ToolCall&) { ++calls_seen; };
    switchboard::llm::StreamAssembler assembler(callbacks);
    switchboard::llm::StreamAssembler whole;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const auto line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        boost::system::error_code ec;
        // Parsed into one arena per line: a malloc per JSON node costs most of the time under ASan.
        boost::json::monotonic_resource arena;
        auto v = boost::json::parse(line, ec, &arena);
        if (ec || !v.is_object()) continue;
        (void)assembler.add_chunk(v.get_object());
        (void)whole.add_response(v.get_object());
    }
    (void)assembler.message();
    (void)whole.message();
    (void)assembler.has_tool_calls();
    return 0;
}
