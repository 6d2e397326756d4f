#include "handles.hpp"

#include "context.hpp"
#include "status.hpp"

#include "cuda/resources.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <unordered_map>

namespace gpk {
namespace {

// Serial n is handed out as n * kScramble (mod 2^64): odd, so the map is a bijection
// and two serials never share a handle; serial 0 (handle NULL) is never used.
constexpr uint64_t kScramble = 0x9E3779B97F4A7C15ull;
static_assert(sizeof(uintptr_t) == sizeof(uint64_t), "handles are 64-bit serial numbers");

// Destroys a context when its last reference goes: waits for its work and frees what
// it owns, as gpk_destroy promises.
struct Teardown {
    void operator()(gpk_context *ctx) const noexcept {
        cuda::destroy(*ctx);
        delete ctx;
    }
};

struct HandleTable {
    std::mutex mutex;
    uint64_t last_serial = 0;
    std::unordered_map<uintptr_t, ContextRef> live;
};

// The table is made by the first call that needs it and lives while the library is
// loaded. At unload (dlclose, or exit) it is freed only when no context is left:
// contexts a program leaves alive at exit are not torn down then, since static
// destructors run in no useful order and the CUDA runtime may be gone already; the
// table stays with them. Both globals are constant-initialised, so that they are
// valid before and after every dynamic initialiser and destructor.
std::atomic<HandleTable *> g_table{nullptr};
std::atomic<bool> g_unloaded{false};
std::mutex g_making;

struct ReleaseAtUnload {
    ~ReleaseAtUnload() {
        g_unloaded.store(true);
        HandleTable *t = g_table.load();
        if (t == nullptr) return;
        bool empty = false;
        try {
            std::lock_guard<std::mutex> lock(t->mutex);
            empty = t->live.empty();
        } catch (...) {
            return;  // the mutex unusable: leave the table be
        }
        if (!empty) return;
        g_table.store(nullptr);
        delete t;
    }
} g_release_at_unload;

// The table, made on first use; nullptr once the library is being unloaded. Throws
// std::bad_alloc (and std::system_error from a mutex) to the callers, which answer
// with a status.
HandleTable *table() {
    HandleTable *t = g_table.load(std::memory_order_acquire);
    if (t != nullptr || g_unloaded.load()) return t;
    std::lock_guard<std::mutex> lock(g_making);
    t = g_table.load(std::memory_order_acquire);
    if (t == nullptr && !g_unloaded.load()) {
        t = new HandleTable;
        g_table.store(t, std::memory_order_release);
    }
    return t;
}

}  // namespace

gpk_status register_context(gpk_context *ctx, gpk_context **handle) {
    ContextRef owned;
    try {
        owned = ContextRef(ctx, Teardown{});  // on bad_alloc, Teardown frees ctx
        HandleTable *t = table();
        if (t == nullptr)
            return fail(nullptr, GPK_ERROR_INTERNAL, "internal error: libgpk is being unloaded; no context can be made");
        std::lock_guard<std::mutex> lock(t->mutex);
        const auto value = static_cast<uintptr_t>(++t->last_serial * kScramble);
        t->live.emplace(value, std::move(owned));
        *handle = reinterpret_cast<gpk_context *>(value);
    } catch (const std::bad_alloc &) {
        return fail(nullptr, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the table of contexts");
    } catch (...) {
        return fail(nullptr, GPK_ERROR_INTERNAL, "internal error: the table of contexts is unusable");
    }
    return GPK_SUCCESS;
}

ContextRef lookup(const gpk_context *handle) noexcept {
    if (handle == nullptr) return nullptr;
    try {
        HandleTable *t = g_table.load(std::memory_order_acquire);  // no table: no live context
        if (t == nullptr) return nullptr;
        std::lock_guard<std::mutex> lock(t->mutex);
        const auto it = t->live.find(reinterpret_cast<uintptr_t>(handle));
        return it == t->live.end() ? nullptr : it->second;
    } catch (...) {
        return nullptr;  // std::mutex::lock failing: no context rather than a crash
    }
}

gpk_status acquire(const gpk_context *handle, ContextRef *ctx) {
    GPK_RETURN_ERROR_IF(handle == nullptr, nullptr, GPK_ERROR_INVALID_HANDLE, "ctx is NULL");
    *ctx = lookup(handle);
    GPK_RETURN_ERROR_IF(*ctx == nullptr, nullptr, GPK_ERROR_INVALID_HANDLE,
                        "ctx (%p) is not a live gpk_context (destroyed or never created)",
                        static_cast<const void *>(handle));
    return GPK_SUCCESS;
}

gpk_status retire(gpk_context *handle, ContextRef *ctx) {
    GPK_RETURN_ERROR_IF(handle == nullptr, nullptr, GPK_ERROR_INVALID_HANDLE, "ctx is NULL");
    try {
        HandleTable *t = g_table.load(std::memory_order_acquire);
        if (t != nullptr) {
            std::lock_guard<std::mutex> lock(t->mutex);
            const auto it = t->live.find(reinterpret_cast<uintptr_t>(handle));
            if (it != t->live.end()) {
                *ctx = std::move(it->second);
                t->live.erase(it);
            }
        }
    } catch (...) {
        return fail(nullptr, GPK_ERROR_INTERNAL, "internal error: the table of contexts is unusable");
    }
    GPK_RETURN_ERROR_IF(*ctx == nullptr, nullptr, GPK_ERROR_INVALID_HANDLE,
                        "ctx (%p) is not a live gpk_context (destroyed or never created)",
                        static_cast<const void *>(handle));
    return GPK_SUCCESS;
}

}  // namespace gpk
