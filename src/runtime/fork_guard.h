// fork_guard.h - whether this process is a fork() child of the process that loaded a GPU
// runtime. A driver context does not survive fork(), so the runtimes refuse every call in such a
// child [RUNTIME_UNAVAILABLE]. Comparing getpid() on every call would cost a system call per
// launch (three per mla_decode_fwd); instead a pthread_atfork child handler raises a flag, and
// the runtimes compare pids only once it is up.
#pragma once

namespace mla::rt {

// Registers the child handler, once per process; call when a runtime loads, before it records
// its pid.
void fork_guard_install();

// True in a process forked after fork_guard_install() (and in its forks).
bool fork_guard_forked();

}  // namespace mla::rt
