#include "status.hpp"

#include "context.hpp"

#include <cstdio>

namespace gpk {

namespace {
// Failures without a context (gpk_create) and the NULL-context query read this.
thread_local char t_last_error[512] = "";
}  // namespace

gpk_status fail(gpk_context *ctx, gpk_status status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(t_last_error, sizeof t_last_error, fmt, args);
    va_end(args);
    if (ctx != nullptr) {
        try {
            ctx->last_error = t_last_error;
        } catch (...) {
            ctx->last_error.clear();  // out of memory for the message: keep the status
        }
    }
    return status;
}

const char *thread_last_error() { return t_last_error; }

}  // namespace gpk
