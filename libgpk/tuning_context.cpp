// The context's tuning table (tuning.hpp): the built-in one for its device kind, a
// file's through gpk_load_tuning or GPK_TUNING, and the context's kind they are
// checked against.
#include "context.hpp"
#include "registry.hpp"
#include "status.hpp"
#include "tuning.hpp"

#include <cuda_runtime.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace gpk::tuning {
namespace {

// Larger than any table the tuner writes by far: a file this large is not one.
constexpr long kMaxFileBytes = 16L << 20;

int rung_of(int op, const char *name, void *user) { return variant_index(op, *static_cast<int *>(user), name); }

// The device kind of the context's GPU; the host backend's is "host".
gpk_status kind_of(gpk_context &ctx, DeviceKind *kind) {
    if (ctx.backend != GPK_BACKEND_CUDA) {
        *kind = DeviceKind{"host", "-", "-"};
        return GPK_SUCCESS;
    }
    cudaDeviceProp p{};
    const cudaError_t e = cudaGetDeviceProperties(&p, ctx.device);
    GPK_RETURN_ERROR_IF(e != cudaSuccess, &ctx, GPK_ERROR_CUDA, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
    p.name[sizeof p.name - 1] = '\0';
    *kind = DeviceKind{p.name, std::to_string(p.major) + "." + std::to_string(p.minor),
                       std::to_string(p.multiProcessorCount)};
    return GPK_SUCCESS;
}

bool same_kind(const DeviceKind &a, const DeviceKind &b) {
    return a.name == b.name && a.compute_capability == b.compute_capability && a.sm_count == b.sm_count;
}

// The built-in tables, one per device kind, each merged from its files. Parsed once;
// a file that does not parse (tests/tuning/test_tuning.cpp checks every one) is left out.
const std::vector<std::shared_ptr<const Table>> &builtins() {
    static const std::vector<std::shared_ptr<const Table>> tables = [] {
        std::vector<std::shared_ptr<Table>> merged;
        int backend = GPK_BACKEND_CUDA;
        for (const BuiltinText *b = kBuiltinTexts; b->file != nullptr; ++b) {
            Table t;
            std::string error;
            if (!parse(b->text, b->file, nullptr, rung_of, &backend, &t, &error)) continue;
            std::shared_ptr<Table> *into = nullptr;
            for (auto &m : merged)
                if (same_kind(m->device, t.device)) into = &m;
            if (into == nullptr) {
                merged.push_back(std::make_shared<Table>(std::move(t)));
                continue;
            }
            // A point in two files of one table: the later file's rows are left out.
            merge(into->get(), t, &error);
        }
        return std::vector<std::shared_ptr<const Table>>(merged.begin(), merged.end());
    }();
    return tables;
}

// Puts the built-in table for the context's kind (or none) in place.
gpk_status install_builtin(gpk_context &ctx) {
    std::shared_ptr<const Table> table;
    if (ctx.backend == GPK_BACKEND_CUDA) {
        DeviceKind kind;
        GPK_FORWARD_IF_ERROR(kind_of(ctx, &kind));
        for (const auto &t : builtins())
            if (same_kind(t->device, kind)) table = t;
    }
    std::string name = table ? "built-in: " + table->device.name : kNoTable;
    ctx.tuning_name.swap(name);
    ctx.tuning = std::move(table);
    return GPK_SUCCESS;
}

// The file's table for the context, or *error saying why not ("PATH line N: ...").
bool read_table(gpk_context &ctx, const char *path, std::shared_ptr<const Table> *out, std::string *error) {
    std::FILE *f = std::fopen(path, "rb");
    if (f == nullptr) {
        *error = std::string(path) + ": cannot be opened: " + std::strerror(errno);
        return false;
    }
    std::string text;
    char buf[65536];
    size_t got = 0;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() <= static_cast<size_t>(kMaxFileBytes))
        text.append(buf, got);
    const bool failed = std::ferror(f) != 0;
    const int err = errno;
    std::fclose(f);
    if (failed) {
        *error = std::string(path) + ": cannot be read: " + std::strerror(err);
        return false;
    }
    if (text.size() > static_cast<size_t>(kMaxFileBytes)) {
        *error = std::string(path) + ": larger than 16 MiB, which no tuning table is";
        return false;
    }
    DeviceKind kind;
    if (kind_of(ctx, &kind) != GPK_SUCCESS) {
        *error = ctx.last_error;
        return false;
    }
    auto table = std::make_shared<Table>();
    int backend = ctx.backend;
    if (!parse(text, path, &kind, rung_of, &backend, table.get(), error)) return false;
    *out = std::move(table);
    return true;
}

}  // namespace

gpk_status install_at_create(gpk_context &ctx) {
    // The context is not the registry's yet: nothing may escape that would leave it
    // to no one.
    try {
        if (install_builtin(ctx) != GPK_SUCCESS)
            return fail(nullptr, GPK_ERROR_CUDA, "the device kind for the tuning table: %s", ctx.last_error.c_str());
        const char *path = std::getenv("GPK_TUNING");
        if (path == nullptr || *path == '\0') return GPK_SUCCESS;
        std::shared_ptr<const Table> table;
        std::string error;
        if (!read_table(ctx, path, &table, &error))
            return fail(nullptr, GPK_ERROR_INVALID_ARGUMENT, "GPK_TUNING: %s", error.c_str());
        ctx.tuning_name = path;
        ctx.tuning = std::move(table);
        return GPK_SUCCESS;
    } catch (const std::bad_alloc &) {
        return fail(nullptr, GPK_ERROR_OUT_OF_MEMORY, "out of host memory for the tuning table");
    } catch (...) {
        return fail(nullptr, GPK_ERROR_INTERNAL, "internal error: unexpected exception reading the tuning table");
    }
}

gpk_status load(gpk_context &ctx, const char *path) {
    if (path == nullptr) return install_builtin(ctx);
    GPK_RETURN_ERROR_IF(*path == '\0', &ctx, GPK_ERROR_INVALID_ARGUMENT,
                        "path is empty: a tuning table's file, or NULL for the built-in table");
    std::shared_ptr<const Table> table;
    std::string error;
    GPK_RETURN_ERROR_IF(!read_table(ctx, path, &table, &error), &ctx, GPK_ERROR_INVALID_ARGUMENT, "%s", error.c_str());
    // Nothing can fail from here: the context changes whole or not at all.
    std::string name = path;
    ctx.tuning_name.swap(name);
    ctx.tuning = std::move(table);
    return GPK_SUCCESS;
}

}  // namespace gpk::tuning
