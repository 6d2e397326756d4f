// The handles of contexts: what a caller's gpk_context * is, and how a call finds the
// context behind it.
//
// The gpk_context * a caller holds is a handle, not the address of the context: a
// 64-bit serial number, never reused, scrambled by an invertible multiplication (so
// that small integers and nearby values are not live handles), and looked up in a
// table of live contexts under a mutex. Its validity therefore depends neither on
// freed memory nor on the allocator handing a new context the address of an old
// one: a destroyed handle stays unknown forever, from any thread.
//
// A call holds a reference to its context for its duration, so that a gpk_destroy
// racing with it on another thread (a misuse: one context, one thread at a time)
// retires the handle at once and frees the context when that call returns, instead
// of freeing it under the call.
#pragma once

#include "gpk/gpk.h"

#include <memory>

namespace gpk {

using ContextRef = std::shared_ptr<gpk_context>;

// Registers a new context (created with `new`; the table owns it from here, also on
// failure) and writes its handle. OUT_OF_MEMORY when the table cannot grow.
gpk_status register_context(gpk_context *ctx, gpk_context **handle);
// The live context behind `handle`, or INVALID_HANDLE (with the thread's message)
// for NULL, a destroyed handle or any value that never was one.
gpk_status acquire(const gpk_context *handle, ContextRef *ctx);
// Like acquire, but without a message: for the calls that answer NULL or the
// thread's message instead of a status (gpk_last_error, gpk_variant_name).
ContextRef lookup(const gpk_context *handle) noexcept;
// Removes `handle` from the table and returns its context, which is freed when the
// last reference goes; INVALID_HANDLE when it was not live.
gpk_status retire(gpk_context *handle, ContextRef *ctx);

}  // namespace gpk
