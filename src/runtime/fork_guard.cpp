// fork_guard.cpp - see fork_guard.h.
#include "runtime/fork_guard.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace mla::rt {
namespace {

std::atomic<bool> g_forked{false};

void on_fork_child() { g_forked.store(true, std::memory_order_relaxed); }

}  // namespace

void fork_guard_install() {
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(nullptr, nullptr, on_fork_child); });
}

bool fork_guard_forked() { return g_forked.load(std::memory_order_relaxed); }

}  // namespace mla::rt
