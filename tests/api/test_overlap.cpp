// Arrays at the top of the address space. The overlap rule (C must not overlap A or B;
// transpose's B must not overlap A) has to hold there too: an array whose last byte is
// the last byte of the address space has an end address of 2^64, which wraps to 0 in
// 64-bit arithmetic and once hid the overlap. An array that would run past the end is
// no memory at all: GPK_ERROR_INVALID_ARGUMENT naming it -- for a batched gemm, an
// operand whose last matrix would run past the end, though its first fits. None of
// these pointers is valid memory, so any access crashes: every case must be refused
// before one.
#include "../harness.hpp"

namespace {

using namespace gpkt;

// An address `below` bytes under 2^64.
void *top(uintptr_t below) { return reinterpret_cast<void *>(uintptr_t{0} - below); }

void expect_refused(Suite &suite, const std::string &name, gpk_status st, std::initializer_list<const char *> words) {
    Case c(suite, name);
    if (!c.expect(st, GPK_ERROR_INVALID_ARGUMENT, name.c_str())) return;
    const std::string msg = gpk_last_error(suite.ctx());
    for (const char *w : words)
        if (msg.find(w) == std::string::npos) c.fail("the message does not say '%s': \"%s\"", w, msg.c_str());
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_overlap", argc, argv);
    gpk_context *ctx = suite.ctx();
    constexpr int64_t n = 32;  // 32 x 32 F32: 4096 bytes

    // B's last byte is the address space's last: its end wraps to 0. A overlaps it.
    expect_refused(suite, "transpose: B ends at the top, A overlaps it",
                   gpk_transpose(ctx, GPK_F32, GPK_COL_MAJOR, n, n, top(6000), n, top(4096), n), {"overlaps"});
    expect_refused(suite, "transpose: A ends at the top, B overlaps it",
                   gpk_transpose(ctx, GPK_F32, GPK_ROW_MAJOR, n, n, top(4096), n, top(4100), n), {"overlaps"});
    expect_refused(suite, "gemm: C ends at the top, A overlaps it",
                   gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, top(8000), n,
                            top(40000), n, 0.0, top(4096), n),
                   {"C overlaps A"});
    expect_refused(suite, "gemm: C ends at the top, B overlaps it",
                   gpk_gemm(ctx, GPK_F64, GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_TRANS, n, n, n, 1.0, top(40000), n,
                            top(9000), n, 1.0, top(8192), n),
                   {"C overlaps B"});
    // Runs past the end of the address space: refused by name, whatever else holds.
    expect_refused(suite, "transpose: A runs past the end",
                   gpk_transpose(ctx, GPK_F32, GPK_COL_MAJOR, n, n, top(2048), n, top(1u << 20), n),
                   {"A", "past the end"});
    expect_refused(suite, "gemm: C runs past the end",
                   gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, top(1u << 20), n,
                            top(1u << 21), n, 0.0, top(100), n),
                   {"C", "past the end"});
    expect_refused(suite, "gemm: B runs past the end",
                   gpk_gemm(ctx, GPK_F64, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, top(1u << 20), n,
                            top(16), n, 0.0, top(1u << 21), n),
                   {"B", "past the end"});
    // gpk_gemm_strided_batched: the same rule, for each operand's whole batch. One
    // product as above; then batches whose matrix 0 fits below the top and whose
    // second matrix would run past it. The operands lie far apart, so that no overlap
    // is refused in their place.
    const int64_t s = n * n + 16;  // elements from one matrix to the next
    const uintptr_t kb = 1u << 10;
    auto batched = [&](int dtype, const void *A, int64_t sa, const void *B, int64_t sb, void *C, int64_t sc,
                       int64_t batch) {
        return gpk_gemm_strided_batched(ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0, A, n, sa,
                                        B, n, sb, 0.0, C, n, sc, batch);
    };
    expect_refused(suite, "gemm_batched: C runs past the end, one product",
                   batched(GPK_F32, top(1024 * kb), 0, top(2048 * kb), 0, top(100), s, 1), {"C", "past the end"});
    expect_refused(suite, "gemm_batched: the second C matrix runs past the end",
                   batched(GPK_F32, top(1024 * kb), 0, top(2048 * kb), 0, top(4096 + 32), s, 2),
                   {"C", "past the end"});
    expect_refused(suite, "gemm_batched: the second A matrix runs past the end",
                   batched(GPK_F32, top(4096 + 8), s, top(2048 * kb), s, top(1024 * kb), s, 2), {"A", "past the end"});
    expect_refused(suite, "gemm_batched: the third B matrix runs past the end",
                   batched(GPK_F64, top(4096 * kb), 0, top(2 * 8 * s + 8192 - 8), s, top(1024 * kb), s, 3),
                   {"B", "past the end"});
    float r = 0;
    expect_refused(suite, "reduce: x runs past the end", gpk_reduce(ctx, GPK_F32, GPK_SUM, top(64), 17, &r),
                   {"x", "past the end"});
    {
        // The boundary: an array ending exactly at the top is memory like any other
        // (its rules are checked, it is not refused for where it lies). MIN of no
        // elements fails on n, not on x.
        Case c(suite, "reduce: x ending at the top is not refused for its place");
        const gpk_status st = gpk_reduce(ctx, GPK_F32, GPK_MIN, top(64), 0, &r);
        if (c.expect(st, GPK_ERROR_INVALID_ARGUMENT, "gpk_reduce(MIN, n = 0)") &&
            std::strstr(gpk_last_error(ctx), "past the end") != nullptr)
            c.fail("refused for its place: \"%s\"", gpk_last_error(ctx));
    }
    return suite.finish();
}
