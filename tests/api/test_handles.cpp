// Destroyed, stale and forged handles. A handle that is not a live context must be
// GPK_ERROR_INVALID_HANDLE for every function, never read freed memory and never
// reach a live context -- in particular not a newer context that the allocator placed
// where the destroyed one was -- from any thread.
#include "../harness.hpp"

#include <atomic>
#include <set>
#include <thread>

namespace {

using namespace gpkt;

// Every function that takes a context, called with `ctx`; the statuses that are not
// `want`, as text ("" when all are). Outputs that a failing call must leave alone are
// checked too.
std::string every_call(gpk_context *ctx, gpk_status want) {
    std::string bad;
    auto note = [&](const char *call, gpk_status st) {
        if (st != want) bad += format("%s -> %s; ", call, gpk_status_string(st));
    };
    int value = -5;
    note("gpk_get_backend", gpk_get_backend(ctx, &value));
    note("gpk_set_stream", gpk_set_stream(ctx, nullptr));
    note("gpk_synchronize", gpk_synchronize(ctx));
    note("gpk_variant_count", gpk_variant_count(ctx, GPK_OP_GEMM, &value));
    note("gpk_set_variant", gpk_set_variant(ctx, GPK_OP_GEMM, "auto"));
    note("gpk_set_validation", gpk_set_validation(ctx, 0));
    note("gpk_set_staging", gpk_set_staging(ctx, 4, 0, 0));
    int64_t count = -5;
    note("gpk_stage_trace", gpk_stage_trace(ctx, nullptr, 0, &count));
    float A[4] = {1, 2, 3, 4}, B[4] = {1, 0, 0, 1}, C[4] = {9, 9, 9, 9}, T[4] = {9, 9, 9, 9}, r = 9;
    note("gpk_gemm", gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2, 2, 2, 1.0, A, 2, B, 2, 0.0,
                              C, 2));
    note("gpk_reduce", gpk_reduce(ctx, GPK_F32, GPK_SUM, A, 4, &r));
    note("gpk_transpose", gpk_transpose(ctx, GPK_F32, GPK_COL_MAJOR, 2, 2, A, 2, T, 2));
    gpk_pi_result p{-1, -1, 7, 7};
    note("gpk_pi", gpk_pi(ctx, 100, 1, &p));
    note("gpk_pi_range", gpk_pi_range(ctx, 0, 100, 1, &p));
    if (want != GPK_SUCCESS) {
        if (value != -5 || count != -5) bad += "an output of a query was written; ";
        if (C[0] != 9 || T[0] != 9 || r != 9 || p.samples != 7) bad += "an output of an op was written; ";
        if (gpk_variant_name(ctx, GPK_OP_GEMM, 0) != nullptr) bad += "gpk_variant_name gave a name; ";
        if (std::strstr(gpk_last_error(ctx), "not a live") == nullptr)
            bad += format("gpk_last_error(stale) is not the thread's message ('%s'); ", gpk_last_error(ctx));
    }
    return bad;
}

void destroyed_twice(Suite &suite) {
    Case c(suite, "a context destroyed twice");
    gpk_context *ctx = suite.open(suite.backend());
    c.expect(gpk_destroy(ctx), GPK_SUCCESS, "gpk_destroy");
    c.expect(gpk_destroy(ctx), GPK_ERROR_INVALID_HANDLE, "gpk_destroy of a destroyed context");
    if (std::strstr(gpk_last_error(nullptr), "ctx") == nullptr)
        c.fail("the message does not name ctx: '%s'", gpk_last_error(nullptr));
    const std::string bad = every_call(ctx, GPK_ERROR_INVALID_HANDLE);
    if (!bad.empty()) c.fail("with a destroyed context: %s", bad.c_str());
}

// create a, destroy a, create b: the allocator likes to give b a's old place. Every
// handle ever destroyed must stay dead, and reach none of the live contexts.
void stale_handles(Suite &suite) {
    Case c(suite, "stale handles never reach a newer context");
    std::vector<gpk_context *> dead;
    std::set<uintptr_t> seen;
    std::vector<gpk_context *> live;
    for (int round = 0; round < 64; ++round) {
        gpk_context *ctx = suite.open(suite.backend());
        if (!seen.insert(reinterpret_cast<uintptr_t>(ctx)).second)
            c.fail("round %d: gpk_create handed out %p, a handle it had handed out before", round,
                   static_cast<void *>(ctx));
        if (round % 4 == 3) {
            live.push_back(ctx);  // some stay alive while the stale ones are tried
        } else {
            c.expect(gpk_destroy(ctx), GPK_SUCCESS, "gpk_destroy");
            dead.push_back(ctx);
        }
    }
    for (gpk_context *ctx : dead) {
        const gpk_status st = gpk_destroy(ctx);
        if (st != GPK_ERROR_INVALID_HANDLE) {
            c.fail("gpk_destroy(stale %p) -> %s, expected GPK_ERROR_INVALID_HANDLE", static_cast<void *>(ctx),
                   gpk_status_string(st));
            break;
        }
    }
    const std::string bad = every_call(dead.back(), GPK_ERROR_INVALID_HANDLE);
    if (!bad.empty()) c.fail("with a stale handle: %s", bad.c_str());
    // The live ones were not freed by the stale destroys and still work.
    for (gpk_context *ctx : live) {
        const std::string ok = every_call(ctx, GPK_SUCCESS);
        if (!ok.empty()) {
            c.fail("a live context after stale handles were destroyed: %s", ok.c_str());
            break;
        }
        c.expect(gpk_destroy(ctx), GPK_SUCCESS, "gpk_destroy(live)");
    }
}

// Values that never were handles: small integers, a pointer to the stack, a block
// made to look like a context's memory.
void forged_handles(Suite &suite) {
    Case c(suite, "forged handles");
    gpk_context *keep = suite.open(suite.backend());  // a live one, so that the registry is not empty
    alignas(64) unsigned char fake[256];
    std::memset(fake, 0, sizeof fake);
    const uint32_t magic = 0x67706b63u;  // what a context once began with
    std::memcpy(fake, &magic, sizeof magic);
    gpk_context *forged[] = {reinterpret_cast<gpk_context *>(uintptr_t{1}),
                             reinterpret_cast<gpk_context *>(uintptr_t{0x1000}),
                             reinterpret_cast<gpk_context *>(fake),
                             reinterpret_cast<gpk_context *>(reinterpret_cast<uintptr_t>(keep) + 1),
                             reinterpret_cast<gpk_context *>(~uintptr_t{0})};
    for (gpk_context *f : forged) {
        const std::string bad = every_call(f, GPK_ERROR_INVALID_HANDLE);
        if (!bad.empty()) c.fail("handle %p: %s", static_cast<void *>(f), bad.c_str());
        c.expect(gpk_destroy(f), GPK_ERROR_INVALID_HANDLE, "gpk_destroy(forged)");
    }
    int backend = -1;
    if (c.expect(gpk_get_backend(keep, &backend), GPK_SUCCESS, "gpk_get_backend(live)") && backend != suite.backend())
        c.fail("the live context's backend changed to %d", backend);
    gpk_destroy(keep);
}

// Threads create and destroy contexts and throw each other's dead handles at the
// library; a dead handle must never succeed, a live one must never fail.
void threads(Suite &suite) {
    Case c(suite, "stale handles from several threads");
    constexpr int kThreads = 4, kRounds = 200;
    std::vector<std::atomic<uintptr_t>> board(kThreads * 8);
    for (auto &slot : board) slot = 0;
    std::atomic<int> wrong{0};
    std::vector<std::string> first(kThreads);
    auto body = [&](int t) {
        Rng rng(seed_of({t, 99}));
        for (int round = 0; round < kRounds; ++round) {
            gpk_context *ctx = nullptr;
            if (gpk_create(&ctx, suite.backend(), 0) != GPK_SUCCESS) {
                if (first[t].empty()) first[t] = format("gpk_create: %s", gpk_last_error(nullptr));
                ++wrong;
                return;
            }
            int backend = -1;
            if (gpk_get_backend(ctx, &backend) != GPK_SUCCESS) {
                if (first[t].empty()) first[t] = "a live context was refused";
                ++wrong;
            }
            gpk_destroy(ctx);
            board[t * 8 + round % 8] = reinterpret_cast<uintptr_t>(ctx);
            // Someone's dead handle (perhaps one whose memory another thread's new
            // context now occupies).
            const auto stale = reinterpret_cast<gpk_context *>(board[rng.range(0, kThreads * 8 - 1)].load());
            if (stale != nullptr) {
                const gpk_status a = gpk_destroy(stale), b = gpk_get_backend(stale, &backend);
                if (a != GPK_ERROR_INVALID_HANDLE || b != GPK_ERROR_INVALID_HANDLE) {
                    if (first[t].empty())
                        first[t] = format("stale %p: gpk_destroy -> %s, gpk_get_backend -> %s",
                                          static_cast<void *>(stale), gpk_status_string(a), gpk_status_string(b));
                    ++wrong;
                }
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t) pool.emplace_back(body, t);
    for (auto &th : pool) th.join();
    if (wrong != 0) {
        std::string all;
        for (const auto &f : first)
            if (!f.empty()) all += f + "; ";
        c.fail("%d wrong answers: %s", wrong.load(), all.c_str());
    }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_handles", argc, argv);
    destroyed_twice(suite);
    stale_handles(suite);
    forged_handles(suite);
    threads(suite);
    return suite.finish();
}
