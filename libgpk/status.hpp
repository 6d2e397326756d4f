// Internal error helpers: one line per check, the message says what was wrong.
#pragma once

#include "gpk/gpk.h"

#include <cstdarg>

struct gpk_context;

namespace gpk {

// Records `status` and a formatted message as the context's last error (and the
// calling thread's), then returns `status`. ctx may be null (failures without a
// context, e.g. in gpk_create). Never throws.
gpk_status fail(gpk_context *ctx, gpk_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

// The calling thread's last failure message ("" if none).
const char *thread_last_error();

}  // namespace gpk

// Return `status` with a message when `cond` holds.
#define GPK_RETURN_ERROR_IF(cond, ctx, status, ...)                                 \
    do {                                                                            \
        if (cond) return ::gpk::fail((ctx), (status), __VA_ARGS__);                 \
    } while (0)

// Return early with the status of `expr` when it is not GPK_SUCCESS.
#define GPK_FORWARD_IF_ERROR(expr)                                                  \
    do {                                                                            \
        const gpk_status gpk_forward_status_ = (expr);                              \
        if (gpk_forward_status_ != GPK_SUCCESS) return gpk_forward_status_;         \
    } while (0)
