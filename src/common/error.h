// error.h - the internal error model: C++ code throws mla::Error; every exported C function runs
// its body through mla::guard(), which turns the exception into a status plus this thread's
// message (mla_last_error). No exception crosses the C boundary.
#pragma once
#include <exception>
#include <sstream>
#include <string>

#include "mla_c_api.h"

namespace mla {

// An error with a status and a human-readable message.
class Error : public std::exception {
public:
    Error(mla_status status, std::string message) : status_(status), message_(std::move(message)) {}
    mla_status status() const noexcept { return status_; }
    const char* what() const noexcept override { return message_.c_str(); }
    const std::string& message() const noexcept { return message_; }

private:
    mla_status status_;
    std::string message_;
};

// Sets / reads / clears this thread's last error message (mla_last_error).
void set_last_error(const std::string& message);
const char* last_error_cstr();
void clear_last_error();

// Runs f(); maps mla::Error to its status, std::bad_alloc and other exceptions to
// MLA_ERROR_INTERNAL, storing the message. Returns MLA_SUCCESS if f returned normally.
template <class F>
mla_status guard(F&& f) noexcept {
    try {
        f();
        return MLA_SUCCESS;
    } catch (const Error& e) {
        set_last_error(e.message());
        return e.status();
    } catch (const std::bad_alloc&) {
        set_last_error("out of host memory");
        return MLA_ERROR_INTERNAL;
    } catch (const std::exception& e) {
        set_last_error(std::string("internal error: ") + e.what());
        return MLA_ERROR_INTERNAL;
    } catch (...) {
        set_last_error("internal error: unknown exception");
        return MLA_ERROR_INTERNAL;
    }
}

}  // namespace mla

// MLA_FAIL(status, a << b << c): throws mla::Error with the streamed message.
#define MLA_FAIL(status, msg_stream)                              \
    do {                                                          \
        std::ostringstream mla_fail_os_;                          \
        mla_fail_os_ << msg_stream;                               \
        throw ::mla::Error((status), mla_fail_os_.str());         \
    } while (0)

// MLA_CHECK(cond, status, msg): fails with status and message unless cond holds.
#define MLA_CHECK(cond, status, msg_stream)                       \
    do {                                                          \
        if (!(cond)) MLA_FAIL(status, msg_stream);                \
    } while (0)

// MLA_CHECK_ARG(cond, msg): MLA_CHECK with MLA_ERROR_INVALID_ARGUMENT.
#define MLA_CHECK_ARG(cond, msg_stream) MLA_CHECK(cond, MLA_ERROR_INVALID_ARGUMENT, msg_stream)
