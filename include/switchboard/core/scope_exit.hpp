// Runs a function when the scope ends, also when a coroutine frame is destroyed mid-suspension.
//
// Thread-safety: plain value.
#pragma once

#include <utility>

namespace switchboard::core {

template <class F>
class ScopeExit {
public:
    explicit ScopeExit(F f) : f_(std::move(f)) {}
    ~ScopeExit() {
        if (armed_) f_();
    }
    ScopeExit(const ScopeExit&) = delete;
    ScopeExit& operator=(const ScopeExit&) = delete;
    /// The function will not run.
    void release() { armed_ = false; }

private:
    F f_;
    bool armed_ = true;
};

}  // namespace switchboard::core
