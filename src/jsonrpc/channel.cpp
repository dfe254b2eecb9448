#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/message.hpp>

namespace switchboard::jsonrpc {

boost::asio::awaitable<boost::system::error_code> Channel::write_stream(std::shared_ptr<ResultStream> stream) {
    co_return co_await write(stream->text());
}

}  // namespace switchboard::jsonrpc
