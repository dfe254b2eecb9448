// Whether a stdio server can answer at all: a process stopped by SIGSTOP (or SIGTSTP) keeps its pipes open and
// looks like a slow one from them. Linux only (/proc); elsewhere nothing is ever reported stopped.
#pragma once

#include <optional>
#include <string>

namespace switchboard::transport {

/// "its process 123 is stopped (SIGSTOP or SIGTSTP)" when the process `pid`, or a descendant that writes to the
/// same stdout (a wrapper such as npx runs the real server as its child), is stopped by a signal; nullopt otherwise,
/// and when /proc cannot tell. A process stopped by a debugger (state `t`) is not reported: someone is looking at it
/// on purpose. At most 64 processes are looked at.
std::optional<std::string> stopped_process_in_tree(int pid);

}  // namespace switchboard::transport
