// The staging pipeline's planner (libgpk/staging/planner.hpp), which needs no GPU: the
// plans for gemm in core and out of core, transpose and reduce. First a few plans
// worked out by hand from the rules in pipeline.cpp's opening comment, then the
// invariants on many random problems: every element of the output in exactly one
// chunk, each chunk within its lane's buffers and the slots, the plan within the
// device budget (the device_bytes cap included), panels as the rules align them, and
// a plan that does not fit reported with a need above the budget.
#include "../harness.hpp"

#include "staging/planner.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace {

using namespace gpkt;
namespace plan = gpk::cuda::plan;
using gpk::MatrixView;
using plan::Memory;

constexpr size_t KiB = size_t{1} << 10, MiB = size_t{1} << 20, GiB = size_t{1} << 30;

gpk::StagingSettings settings(int streams, size_t chunk_bytes = 0, size_t device_bytes = 0) {
    gpk::StagingSettings st;
    st.streams = streams;
    st.chunk_bytes = chunk_bytes;
    st.device_bytes = device_bytes;
    return st;
}

const char *memory_name(Memory m) { return m == Memory::Device ? "D" : m == Memory::Pinned ? "P" : "H"; }

template <class T>
void expect_eq(Case &c, const char *what, T got, T want) {
    if (got != want)
        c.fail("%s: %lld, expected %lld", what, static_cast<long long>(got), static_cast<long long>(want));
}

void expect_needs(Case &c, const plan::Needs &got, const plan::Needs &want) {
    expect_eq(c, "needs.lanes", got.lanes, want.lanes);
    expect_eq(c, "needs.lane_device", got.lane_device, want.lane_device);
    expect_eq(c, "needs.lane_scratch", got.lane_scratch, want.lane_scratch);
    expect_eq(c, "needs.shared", got.shared, want.shared);
    expect_eq(c, "needs.slot", got.slot, want.slot);
    expect_eq(c, "needs.check", got.check, want.check);
}

// ---- the arithmetic underneath ---------------------------------------------------------

void helpers(Suite &suite) {
    {
        Case c(suite, "device_ld pads lines to 16 bytes");
        expect_eq<int64_t>(c, "device_ld(1, 4)", plan::device_ld(1, 4), 4);
        expect_eq<int64_t>(c, "device_ld(5, 4)", plan::device_ld(5, 4), 8);
        expect_eq<int64_t>(c, "device_ld(8, 4)", plan::device_ld(8, 4), 8);
        expect_eq<int64_t>(c, "device_ld(3, 8)", plan::device_ld(3, 8), 4);
        expect_eq<int64_t>(c, "device_ld(0, 8)", plan::device_ld(0, 8), 1);
        for (size_t es : {size_t{2}, size_t{4}, size_t{8}})
            for (int64_t inner = 1; inner <= 300; ++inner) {
                const int64_t ld = plan::device_ld(inner, es);
                if (ld < inner || ld * static_cast<int64_t>(es) % 16 != 0 || (ld - inner) * static_cast<int64_t>(es) >= 16)
                    c.fail("device_ld(%lld, %zu) = %lld", static_cast<long long>(inner), es, static_cast<long long>(ld));
            }
    }
    {
        Case c(suite, "device and packed bytes are 256-byte aligned");
        expect_eq<size_t>(c, "device_bytes(packed(5, 3), 4)", plan::device_bytes(MatrixView::packed(5, 3), 4), 256);
        expect_eq<size_t>(c, "packed_bytes(packed(5, 3), 4)", plan::packed_bytes(MatrixView::packed(5, 3), 4), 256);
        expect_eq<size_t>(c, "device_bytes(packed(100, 100), 8)", plan::device_bytes(MatrixView::packed(100, 100), 8), 80128);
        expect_eq<size_t>(c, "device_bytes(packed(101, 100), 8)", plan::device_bytes(MatrixView::packed(101, 100), 8), 81664);
        expect_eq<size_t>(c, "packed_bytes(packed(101, 100), 8)", plan::packed_bytes(MatrixView::packed(101, 100), 8), 80896);
    }
    {
        Case c(suite, "zero_in decides on the value in the dtype");
        if (!plan::zero_in(GPK_F32, 1e-300)) c.fail("1e-300 is not zero in F32");
        if (plan::zero_in(GPK_F64, 1e-300)) c.fail("1e-300 is zero in F64");
        if (!plan::zero_in(GPK_F32, -0.0) || !plan::zero_in(GPK_F64, 0.0)) c.fail("a zero is not zero");
        if (plan::zero_in(GPK_F32, 1e-30)) c.fail("1e-30 (a float) is zero in F32");
        // F16 and BF16 apply beta in F32: zero there is zero for them.
        for (int dtype : {int{GPK_F16}, int{GPK_BF16}}) {
            if (!plan::zero_in(dtype, 1e-300)) c.fail("1e-300 is not zero in F32 for dtype %d", dtype);
            if (plan::zero_in(dtype, 1e-30)) c.fail("1e-30 is zero for dtype %d", dtype);
        }
        if (plan::zero_in(GPK_F64, 4.9e-324)) c.fail("the least subnormal double is zero in F64");
    }
    {
        Case c(suite, "device budget: the cap, else free memory less the margin");
        expect_eq<size_t>(c, "cap", plan::device_budget(settings(4, 0, 12345), 8 * GiB, 99), 12345);
        expect_eq<size_t>(c, "1 GiB free", plan::device_budget(settings(4), GiB, 0), GiB - 64 * MiB);
        expect_eq<size_t>(c, "8 GiB free, 5 MiB held", plan::device_budget(settings(4), 8 * GiB, 5 * MiB),
                          8 * GiB - 256 * MiB + 5 * MiB);
        expect_eq<size_t>(c, "2 GiB free", plan::device_budget(settings(4), 2 * GiB, 0), 2 * GiB - 128 * MiB);
        expect_eq<size_t>(c, "32 MiB free, 7 held", plan::device_budget(settings(4), 32 * MiB, 7), 7);
    }
    {
        Case c(suite, "reduce scratch");
        expect_eq<size_t>(c, "reduce_scratch(0)", plan::reduce_scratch(0), 192 * KiB);
        expect_eq<size_t>(c, "reduce_scratch(2^20)", plan::reduce_scratch(int64_t{1} << 20), 192 * KiB);
        // (2^24/256 + 2^24/65536 + 4) * 8 + 128 KiB = 657440 -> 704 KiB
        expect_eq<size_t>(c, "reduce_scratch(2^24)", plan::reduce_scratch(int64_t{1} << 24), 704 * KiB);
    }
    {
        Case c(suite, "panel length");
        // 32 MiB / 3072 bytes per row = 10922 rows, at most 256; two per stream of 4
        // gives 32, raised to the granule of 64.
        expect_eq<int64_t>(c, "default, small", plan::panel_length(256, 3072, settings(4), 64), 64);
        // 32 MiB / 4 bytes, at most 10^6; two per stream: 125000, down to 4096s.
        expect_eq<int64_t>(c, "default, reduce", plan::panel_length(1000000, 4, settings(4), 4096), 122880);
        // chunk_bytes set: 1000 bytes / 8 = 125, down to 64s; no two-per-stream rule.
        expect_eq<int64_t>(c, "chunk_bytes", plan::panel_length(100000, 8, settings(4, 1000), 64), 64);
        expect_eq<int64_t>(c, "chunk_bytes below one unit", plan::panel_length(100, 4096, settings(2, 100), 64), 1);
        expect_eq<int64_t>(c, "nothing streamed", plan::panel_length(777, 0, settings(1, 4096), 64), 768);
    }
}

// ---- plans worked out by hand -------------------------------------------------------

void gemm_by_hand(Suite &suite) {
    {
        // 256^3 F32, B resident, everything pageable, beta != 0, 4 streams, budget 1 GiB.
        // Streamed bytes per row: k * 4 + 256 * 4 * 2 (C in and out) = 3072: panels of
        // 64 rows (panel_length's "default, small"). Lane: A's panel 64 x 256 and C's
        // 64 x 256, 64 KiB each; B whole: 256 KiB. Slot: both copies in (128 KiB), or B
        // in slot-sized pieces: all of it (256 KiB) fits in one 8 MiB piece.
        Case c(suite, "gemm plan by hand: in core");
        const plan::GemmProblem g{256, 256, 256, false, false, 4, false, true,
                                  Memory::Pageable, Memory::Pageable, Memory::Pageable};
        const plan::GemmPlan p = plan::plan_gemm(g, settings(4), GiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "panel", p.panel, 64);
        expect_eq<int64_t>(c, "block", p.block, 256);
        expect_eq<int64_t>(c, "panels", p.panels, 4);
        expect_eq<int64_t>(c, "blocks", p.blocks, 1);
        expect_needs(c, p.needs, plan::Needs{4, 128 * KiB, 0, 256 * KiB, 256 * KiB});
    }
    {
        // 1024^3 F32, B resident, pageable, beta == 0, 1 stream, device_bytes 4 MiB: B
        // alone (4 MiB) fills the cap. Blocks of at most half the cap: 512 columns
        // (2 MiB), two of them. Panel: 32 MiB / (4096 + 2048) bytes per row -> 1024,
        // two per stream -> 512; 512 rows need 2 MiB + 2 MiB (A) + 1 MiB (C) > 4 MiB,
        // 256 rows 2 + 1 + 0.5 = 3.5 MiB. Slot: the 1 MiB panel of A, or the block
        // of B (2 MiB, within one 8 MiB piece).
        Case c(suite, "gemm plan by hand: out of core under device_bytes");
        const plan::GemmProblem g{1024, 1024, 1024, false, false, 4, false, false,
                                  Memory::Pageable, Memory::Pageable, Memory::Pageable};
        const gpk::StagingSettings st = settings(1, 0, 4 * MiB);
        const plan::GemmPlan p = plan::plan_gemm(g, st, plan::device_budget(st, 80 * GiB, 0));
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "panel", p.panel, 256);
        expect_eq<int64_t>(c, "block", p.block, 512);
        expect_eq<int64_t>(c, "panels", p.panels, 4);
        expect_eq<int64_t>(c, "blocks", p.blocks, 2);
        expect_needs(c, p.needs, plan::Needs{1, 1536 * KiB, 0, 2 * MiB, 2 * MiB});
        // Chunks go panel by panel within a block.
        const plan::GemmChunk ch = p.chunk(5, g);
        expect_eq<int64_t>(c, "chunk 5 p0", ch.p0, 256);
        expect_eq<int64_t>(c, "chunk 5 q0", ch.q0, 512);
    }
    {
        // The same under a 1000-byte cap: not even one column of B (4 KiB) beside a
        // panel of one row (16 KiB of A, 256 bytes of C).
        Case c(suite, "gemm plan by hand: below the smallest chunk");
        const plan::GemmProblem g{1024, 1024, 1024, false, false, 4, false, false,
                                  Memory::Pageable, Memory::Pageable, Memory::Pageable};
        const plan::GemmPlan p = plan::plan_gemm(g, settings(1, 0, 1000), 1000);
        if (p.fits) c.fail("fits in 1000 bytes");
        expect_eq<size_t>(c, "shortfall need", p.shortfall.need, 4096 + 16384 + 256);
        expect_eq<int>(c, "shortfall lanes", p.shortfall.lanes, 1);
    }
    {
        // Row-major call (A resident), C only on the host and k == 0: C = beta C. The
        // panels are columns of C: 300 x 40 F64, 2 streams, chunk_bytes 64 KiB of
        // C per chunk and beta != 0 (in and out): 65536 / (300 * 8 * 2) = 13 columns.
        Case c(suite, "gemm plan by hand: scale only, A resident");
        const plan::GemmProblem g{300, 40, 0, false, true, 8, true, true,
                                  Memory::Device, Memory::Device, Memory::Pageable};
        const plan::GemmPlan p = plan::plan_gemm(g, settings(2, 64 * KiB), GiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "panel", p.panel, 13);
        expect_eq<int64_t>(c, "block", p.block, 300);
        expect_eq<int64_t>(c, "panels", p.panels, 4);
        // Lane: C's 300 x 13 tile, 300 * 13 * 8 = 31200 bytes -> 31232; no resident.
        expect_needs(c, p.needs, plan::Needs{2, 31232, 0, 0, 31232});
    }
    {
        // Validation mode on the first case: each lane also holds the checker's 64 x
        // 256 tile of C (64 KiB), and the comparison reads both tiles (128 KiB pinned
        // per lane). The budget allows the same chunks.
        Case c(suite, "gemm plan by hand: validation, in core");
        plan::GemmProblem g{256, 256, 256, false, false, 4, false, true,
                            Memory::Pageable, Memory::Pageable, Memory::Pageable};
        g.check = true;
        const plan::GemmPlan p = plan::plan_gemm(g, settings(4), GiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "panel", p.panel, 64);
        expect_eq<int64_t>(c, "block", p.block, 256);
        expect_needs(c, p.needs, plan::Needs{4, 192 * KiB, 0, 256 * KiB, 256 * KiB, 128 * KiB});
    }
    {
        // The same within 800 KiB: without validation 256 KiB of B and 4 lanes of
        // 128 KiB fit (768 KiB); with the checker's tiles (4 x 192 KiB) they do not,
        // and panels of 32 rows would be short: blocks of 128 columns of B (128 KiB)
        // beside 4 lanes of 64 rows (64 KiB of A, 32 KiB of C, 32 KiB of the
        // checker's C) take 640 KiB.
        Case c(suite, "gemm plan by hand: validation, its tiles send the call out of core");
        plan::GemmProblem g{256, 256, 256, false, false, 4, false, true,
                            Memory::Pageable, Memory::Pageable, Memory::Pageable};
        const plan::GemmPlan without = plan::plan_gemm(g, settings(4), 800 * KiB);
        expect_eq<int64_t>(c, "panel without validation", without.panel, 64);
        expect_eq<int64_t>(c, "block without validation", without.block, 256);
        g.check = true;
        const plan::GemmPlan p = plan::plan_gemm(g, settings(4), 800 * KiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "panel", p.panel, 64);
        expect_eq<int64_t>(c, "block", p.block, 128);
        expect_eq<int64_t>(c, "blocks", p.blocks, 2);
        expect_needs(c, p.needs, plan::Needs{4, 128 * KiB, 0, 128 * KiB, 128 * KiB, 64 * KiB});
    }
}

void transpose_by_hand(Suite &suite) {
    {
        // 1000^2 F32, both pageable, 4 streams: the default tile of 8192^2 (32 KiB
        // lines) cut to 10^6 / 8 = 125000 elements, a square of side 353, down to 320.
        Case c(suite, "transpose plan by hand: both on the host");
        const plan::TransposeProblem t{1000, 1000, 4, Memory::Pageable, Memory::Pageable};
        const plan::TransposePlan p = plan::plan_transpose(t, settings(4), GiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "h", p.h, 320);
        expect_eq<int64_t>(c, "w", p.w, 320);
        expect_eq<int64_t>(c, "chunks", p.chunks(), 16);
        expect_needs(c, p.needs, plan::Needs{4, 2 * 409600, 0, 0, 409600});
        // Down a column of tiles first.
        const plan::TransposeChunk ch = p.chunk(5, t);
        expect_eq<int64_t>(c, "chunk 5 i0", ch.i0, 320);
        expect_eq<int64_t>(c, "chunk 5 j0", ch.j0, 320);
        const plan::TransposeChunk last = p.chunk(15, t);
        expect_eq<int64_t>(c, "last chunk hc", last.hc, 40);
        expect_eq<int64_t>(c, "last chunk wc", last.wc, 40);
    }
    {
        // 100 x 3000 F64, A on the device, B pageable, 2 streams, chunk_bytes 64 KiB:
        // 8192 elements a tile, B's lines (the columns of A) as long as the matrix
        // allows: w = 3000, h = 2.
        Case c(suite, "transpose plan by hand: one side on the host");
        const plan::TransposeProblem t{100, 3000, 8, Memory::Device, Memory::Pageable};
        const plan::TransposePlan p = plan::plan_transpose(t, settings(2, 64 * KiB), GiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "h", p.h, 2);
        expect_eq<int64_t>(c, "w", p.w, 3000);
        expect_eq<int64_t>(c, "chunks", p.chunks(), 50);
        expect_needs(c, p.needs, plan::Needs{2, 48128, 0, 0, 48128});
    }
    {
        // The first case under 1 MiB: the longer side halved until 4 tiles fit,
        // 320 -> 160 x 320 (4 x 409600 bytes) -> 160 x 160 (4 x 204800 = 800 KiB).
        Case c(suite, "transpose plan by hand: halved into the budget");
        const plan::TransposeProblem t{1000, 1000, 4, Memory::Pageable, Memory::Pageable};
        const plan::TransposePlan p = plan::plan_transpose(t, settings(4, 0, MiB), MiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "h", p.h, 160);
        expect_eq<int64_t>(c, "w", p.w, 160);
        expect_needs(c, p.needs, plan::Needs{4, 2 * 102400, 0, 0, 102400});
    }
    {
        // Validation mode reads each tile of A and of B on the host: 2 x 409600
        // pinned bytes per lane beside the first case's plan, which it leaves as it was.
        Case c(suite, "transpose plan by hand: validation");
        plan::TransposeProblem t{1000, 1000, 4, Memory::Pageable, Memory::Pageable};
        t.check = true;
        const plan::TransposePlan p = plan::plan_transpose(t, settings(4), GiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "h", p.h, 320);
        expect_eq<int64_t>(c, "w", p.w, 320);
        expect_needs(c, p.needs, plan::Needs{4, 2 * 409600, 0, 0, 409600, 2 * 409600});
    }
}

void reduce_by_hand(Suite &suite) {
    {
        // 10^6 F32 pageable, 4 streams: pieces of 122880 (panel_length's "default,
        // reduce"), 9 of them; partials 36 bytes -> 256, result 256.
        Case c(suite, "reduce plan by hand: default");
        const plan::ReduceProblem r{1000000, 4, 4, false, false};
        const plan::ReducePlan p = plan::plan_reduce(r, settings(4), GiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "piece", p.piece, 122880);
        expect_eq<int64_t>(c, "pieces", p.pieces, 9);
        expect_eq<size_t>(c, "result offset", p.result_offset, 256);
        expect_needs(c, p.needs, plan::Needs{4, 491520, 192 * KiB, 512, 491520});
        expect_eq<int64_t>(c, "last piece", p.chunk(8, r).count, 1000000 - 8 * 122880);
    }
    {
        // Under 1 MiB: 4 lanes of 192 KiB scratch leave room for pieces of 15360
        // (60 KiB), 66 of them: 768 + 4 * (61440 + 196608) = 1032960 bytes.
        Case c(suite, "reduce plan by hand: halved into the budget");
        const plan::ReduceProblem r{1000000, 4, 4, true, false};
        const plan::ReducePlan p = plan::plan_reduce(r, settings(4), MiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "piece", p.piece, 15360);
        expect_eq<int64_t>(c, "pieces", p.pieces, 66);
        expect_needs(c, p.needs, plan::Needs{4, 61440, 192 * KiB, 768, 0});
    }
    {
        // 100000 bytes hold not even the partials of one-element pieces (4 MB).
        Case c(suite, "reduce plan by hand: below the smallest chunk");
        const plan::ReduceProblem r{1000000, 4, 4, false, false};
        const plan::ReducePlan p = plan::plan_reduce(r, settings(4), 100000);
        if (p.fits) c.fail("fits in 100000 bytes");
        expect_eq<size_t>(c, "shortfall need", p.shortfall.need, 4000000 + 256 + 4 * (256 + 192 * KiB));
        expect_eq<int>(c, "shortfall lanes", p.shortfall.lanes, 4);
    }
    {
        // Validation mode: the checker's 9 partials and result follow the variant's in
        // the shared buffer (256 bytes each), the pieces as without it.
        Case c(suite, "reduce plan by hand: validation");
        plan::ReduceProblem r{1000000, 4, 4, false, false};
        r.check = true;
        const plan::ReducePlan p = plan::plan_reduce(r, settings(4), GiB);
        if (!p.fits) c.fail("does not fit");
        expect_eq<int64_t>(c, "piece", p.piece, 122880);
        expect_eq<size_t>(c, "result offset", p.result_offset, 256);
        expect_eq<size_t>(c, "check offset", p.check_offset, 512);
        expect_eq<size_t>(c, "check result offset", p.check_result_offset, 768);
        expect_needs(c, p.needs, plan::Needs{4, 491520, 192 * KiB, 1024, 491520});
        // With the result in device memory, the checker's partials take its place.
        r.dev_result = true;
        const plan::ReducePlan d = plan::plan_reduce(r, settings(4), GiB);
        expect_eq<size_t>(c, "check offset (device result)", d.check_offset, 256);
        expect_eq<size_t>(c, "check result offset (device result)", d.check_result_offset, 512);
        expect_eq<size_t>(c, "shared (device result)", d.needs.shared, 768);
    }
}

// ---- invariants on random problems ---------------------------------------------------

Memory random_memory(Rng &rng, bool device_allowed) {
    const int64_t r = rng.range(device_allowed ? 0 : 1, 2);
    return r == 0 ? Memory::Device : r == 1 ? Memory::Pinned : Memory::Pageable;
}

// A budget: huge, or a cap that may be below the operands or below what the
// unconstrained plan takes (`full`), so that panels are halved and gemm goes out of
// core, or below a chunk.
size_t random_budget(Rng &rng, size_t operands, size_t full, bool *capped) {
    *capped = rng.range(0, 3) != 0;
    if (!*capped) return 80 * GiB;
    const size_t scale = rng.range(0, 1) == 0 ? operands : full;
    const double fraction = rng.range(0, 1) == 0 ? 0.05 + rng.uniform() : 0.001 + 0.2 * rng.uniform();
    return std::max<size_t>(1, static_cast<size_t>(static_cast<double>(scale) * fraction));
}

gpk::StagingSettings random_settings(Rng &rng) {
    const int streams = static_cast<int>(rng.range(1, gpk::StagingSettings::kMaxStreams));
    const size_t chunk = rng.range(0, 2) == 0 ? static_cast<size_t>(rng.range(1, 1 << 20)) : 0;
    return settings(streams, chunk);
}

void check_lanes(Case &c, const plan::Needs &n, int streams, int64_t chunks) {
    if (n.lanes < 1 || n.lanes > streams || n.lanes > chunks)
        c.fail("%d lanes for %d streams and %lld chunks", n.lanes, streams, static_cast<long long>(chunks));
    if (n.lane_device % plan::kAlignment != 0 || n.shared % plan::kAlignment != 0 || n.slot % plan::kAlignment != 0)
        c.fail("unaligned needs: lane %zu, shared %zu, slot %zu", n.lane_device, n.shared, n.slot);
}

// Whether `piece` lies inside `whole` (the same ld): its first element at a row and
// line of `whole` from which its extent stays inside, and its extent `want`.
bool inside(Case &c, const char *what, int64_t index, const MatrixView &piece, const MatrixView &whole, size_t es,
            const MatrixView &want) {
    const std::ptrdiff_t bytes = piece.bytes() - whole.bytes();
    const int64_t at = bytes / static_cast<std::ptrdiff_t>(es);
    if (piece.inner != want.inner || piece.outer != want.outer || piece.ld != whole.ld || bytes < 0 ||
        bytes % static_cast<std::ptrdiff_t>(es) != 0 || at % whole.ld + piece.inner > whole.inner ||
        at / whole.ld + piece.outer > whole.outer) {
        c.fail("chunk %lld: %s %lld x %lld (ld %lld) at element %lld of %lld x %lld (ld %lld), planned %lld x %lld",
               static_cast<long long>(index), what, static_cast<long long>(piece.inner),
               static_cast<long long>(piece.outer), static_cast<long long>(piece.ld), static_cast<long long>(at),
               static_cast<long long>(whole.inner), static_cast<long long>(whole.outer),
               static_cast<long long>(whole.ld), static_cast<long long>(want.inner),
               static_cast<long long>(want.outer));
        return false;
    }
    return true;
}

void gemm_invariants(Suite &suite) {
    Rng rng(seed_of({20, 19, 1}));
    const int cases = suite.quick() ? 300 : 3000;
    for (int i = 0; i < cases; ++i) {
        plan::GemmProblem g{};
        g.m = rng.range(1, 300), g.n = rng.range(1, 300), g.k = rng.range(0, 3) == 0 ? 0 : rng.range(1, 400);
        g.transa = rng.range(0, 1) == 1, g.transb = rng.range(0, 1) == 1;
        g.es = rng.range(0, 1) == 0 ? 4 : 8;
        g.resident_a = rng.range(0, 1) == 1;
        g.read_c = rng.range(0, 1) == 1;
        g.c = random_memory(rng, true);
        g.x = g.k == 0 ? Memory::Device : random_memory(rng, true);
        g.y = g.k == 0 ? Memory::Device : random_memory(rng, true);
        if (g.x == Memory::Device && g.y == Memory::Device && g.c == Memory::Device) g.c = Memory::Pageable;
        g.check = i % 3 == 0;  // validation mode
        const gpk::StagingSettings st = random_settings(rng);
        const size_t operands = (static_cast<size_t>(g.m * g.k + g.k * g.n + g.m * g.n)) * g.es;
        bool capped = false;
        const size_t full = plan::plan_gemm(g, st, 80 * GiB).needs.device();
        const size_t budget = random_budget(rng, operands, full, &capped);
        Case c(suite, format("gemm plan %d: %lldx%lldx%lld es %zu %s%s res_%c X%s Y%s C%s beta%s%s, %d streams, "
                             "chunk %zu, budget %zu",
                             i, static_cast<long long>(g.m), static_cast<long long>(g.n), static_cast<long long>(g.k),
                             g.es, g.transa ? "T" : "N", g.transb ? "T" : "N", g.resident_a ? 'A' : 'B',
                             memory_name(g.x), memory_name(g.y), memory_name(g.c), g.read_c ? "!=0" : "=0",
                             g.check ? " validated" : "", st.streams, st.chunk_bytes, budget));
        const plan::GemmPlan p = plan::plan_gemm(g, st, budget);
        if (!p.fits) {
            // No plan only when one element of C per lane beside one column of the
            // resident operand does not fit.
            const int64_t lanes = std::min<int64_t>(st.streams, g.P() * g.Q());
            const size_t smallest =
                (g.y != Memory::Device ? plan::device_bytes(g.resident(1), g.es) : 0) +
                static_cast<size_t>(lanes) * ((g.x != Memory::Device ? plan::device_bytes(g.streamed(1), g.es) : 0) +
                                              (g.c != Memory::Device ? plan::device_bytes(g.tile(1, 1), g.es) : 0) +
                                              (g.check ? plan::device_bytes(g.tile(1, 1), g.es) : 0));
            if (p.shortfall.need != smallest || p.shortfall.lanes != lanes)
                c.fail("shortfall %zu bytes on %d lanes, the smallest plan needs %zu on %lld", p.shortfall.need,
                       p.shortfall.lanes, smallest, static_cast<long long>(lanes));
            if (smallest <= budget) c.fail("no plan, yet the smallest (%zu bytes) is within the budget", smallest);
            if (!capped) c.fail("no plan within 80 GiB");
            continue;
        }
        const int64_t P = g.P(), Q = g.Q();
        if (p.panel < 1 || p.panel > P || p.block < 1 || p.block > Q)
            c.fail("panel %lld of %lld, block %lld of %lld", static_cast<long long>(p.panel),
                   static_cast<long long>(P), static_cast<long long>(p.block), static_cast<long long>(Q));
        check_lanes(c, p.needs, st.streams, p.chunks());
        if (p.needs.device() > budget) c.fail("needs %zu bytes, budget %zu", p.needs.device(), budget);
        // Out of core, blocks are at most half the budget, unless one column of the
        // resident operand is more than that (then blocks of one column).
        if (p.block > 1 && p.block < Q && g.y != Memory::Device && p.needs.shared > budget / 2)
            c.fail("out of core with a resident block of %zu bytes, above half the budget", p.needs.shared);
        // Unconstrained panels are multiples of the kernels' tile where longer.
        if (!capped && st.chunk_bytes == 0 && p.panel > plan::kPanelGranule && p.panel % plan::kPanelGranule != 0 &&
            p.panel != P)
            c.fail("panel %lld is not a multiple of %lld", static_cast<long long>(p.panel),
                   static_cast<long long>(plan::kPanelGranule));
        // Validation keeps the chunks of the call without it (in core) when the
        // checker's tiles fit beside them.
        if (g.check) {
            plan::GemmProblem u = g;
            u.check = false;
            const plan::GemmPlan up = plan::plan_gemm(u, st, budget);
            if (up.fits && up.block == Q &&
                up.needs.device() + static_cast<size_t>(up.needs.lanes) *
                                        plan::device_bytes(g.tile(up.panel, up.block), g.es) <= budget &&
                (p.panel != up.panel || p.block != up.block))
                c.fail("validation changed panels %lld x %lld to %lld x %lld, though its tiles fit",
                       static_cast<long long>(up.panel), static_cast<long long>(up.block),
                       static_cast<long long>(p.panel), static_cast<long long>(p.block));
        }
        // The caller's arrays, leading dimensions above their minimum: every piece of
        // a chunk lies inside its array, with the extent its buffers were planned for.
        const int64_t ra = g.transa ? g.k : g.m, ca = g.transa ? g.m : g.k;
        const int64_t rb = g.transb ? g.n : g.k, cb = g.transb ? g.k : g.n;
        const MatrixView whole_a{ra, ca, ra + rng.range(0, 3)}, whole_b{rb, cb, rb + rng.range(0, 3)},
            whole_c{g.m, g.n, g.m + rng.range(0, 3)};
        static std::vector<char> arena(size_t{2} << 20);  // past every array of these sizes
        const plan::GemmArrays arrays{MatrixView{ra, ca, whole_a.ld, arena.data()},
                                      MatrixView{rb, cb, whole_b.ld, arena.data()},
                                      MatrixView{g.m, g.n, whole_c.ld, arena.data()},
                                      g.k,
                                      g.transa,
                                      g.transb,
                                      g.resident_a,
                                      g.es};
        // Every element of C in exactly one chunk; each chunk within the buffers.
        std::vector<unsigned char> hits(static_cast<size_t>(P * Q), 0);
        for (int64_t index = 0; index < p.chunks() && !c.failed(); ++index) {
            const plan::GemmChunk ch = p.chunk(index, g);
            if (ch.pc < 1 || ch.qc < 1 || ch.p0 < 0 || ch.q0 < 0 || ch.p0 + ch.pc > P || ch.q0 + ch.qc > Q) {
                c.fail("chunk %lld out of bounds", static_cast<long long>(index));
                break;
            }
            const MatrixView x_whole = g.resident_a ? arrays.b : arrays.a, y_whole = g.resident_a ? arrays.a : arrays.b;
            if (g.k > 0 && !(inside(c, "X", index, arrays.streamed(ch.p0, ch.pc), x_whole, g.es, g.streamed(ch.pc)) &&
                             inside(c, "Y", index, arrays.resident(ch.q0, ch.qc), y_whole, g.es, g.resident(ch.qc))))
                break;
            if (!inside(c, "C", index, arrays.tile(ch.p0, ch.pc, ch.q0, ch.qc), arrays.c, g.es, g.tile(ch.pc, ch.qc)))
                break;
            // C's tile starts at row p0 (or q0) and column q0 (or p0) of C.
            const int64_t row = g.resident_a ? ch.q0 : ch.p0, col = g.resident_a ? ch.p0 : ch.q0;
            if (arrays.tile(ch.p0, ch.pc, ch.q0, ch.qc).bytes() - arrays.c.bytes() !=
                static_cast<std::ptrdiff_t>((row + col * whole_c.ld) * static_cast<int64_t>(g.es)))
                c.fail("chunk %lld: C's tile not at (%lld, %lld)", static_cast<long long>(index),
                       static_cast<long long>(row), static_cast<long long>(col));
            for (int64_t q = ch.q0; q < ch.q0 + ch.qc; ++q)
                for (int64_t r = ch.p0; r < ch.p0 + ch.pc; ++r) ++hits[static_cast<size_t>(r + q * P)];
            const size_t lane = (g.x != Memory::Device ? plan::device_bytes(g.streamed(ch.pc), g.es) : 0) +
                                (g.c != Memory::Device ? plan::device_bytes(g.tile(ch.pc, ch.qc), g.es) : 0) +
                                (g.check ? plan::device_bytes(g.tile(ch.pc, ch.qc), g.es) : 0);
            // Validation: the variant's tile and the checker's, packed, in the check buffer.
            if (g.check ? p.needs.check < 2 * plan::packed_bytes(g.tile(ch.pc, ch.qc), g.es) : p.needs.check != 0)
                c.fail("chunk %lld: check buffer of %zu bytes", static_cast<long long>(index), p.needs.check);
            if (lane > p.needs.lane_device) c.fail("chunk %lld needs %zu bytes on its lane, planned %zu",
                                                   static_cast<long long>(index), lane, p.needs.lane_device);
            if (g.y != Memory::Device && plan::device_bytes(g.resident(ch.qc), g.es) > p.needs.shared)
                c.fail("chunk %lld: resident block larger than the shared buffer", static_cast<long long>(index));
            const size_t in = (g.x == Memory::Pageable ? plan::packed_bytes(g.streamed(ch.pc), g.es) : 0) +
                              (g.c == Memory::Pageable && g.read_c ? plan::packed_bytes(g.tile(ch.pc, ch.qc), g.es)
                                                                   : 0);
            if (in > p.needs.slot) c.fail("chunk %lld: %zu bytes into a slot of %zu", static_cast<long long>(index),
                                          in, p.needs.slot);
            if (g.y == Memory::Pageable &&
                p.needs.slot < std::min(plan::packed_bytes(g.resident(ch.qc), g.es),
                                        plan::align_up(static_cast<size_t>(g.resident(ch.qc).inner) * g.es)))
                c.fail("a line of the resident block does not fit a slot");
        }
        if (!c.failed())
            for (size_t e = 0; e < hits.size(); ++e)
                if (hits[e] != 1) {
                    c.fail("C(%zu) in %d chunks", e, hits[e]);
                    break;
                }
    }
}

void transpose_invariants(Suite &suite) {
    Rng rng(seed_of({20, 19, 2}));
    const int cases = suite.quick() ? 300 : 3000;
    for (int i = 0; i < cases; ++i) {
        plan::TransposeProblem t{};
        t.rows = rng.range(1, 400), t.cols = rng.range(1, 400), t.es = rng.range(0, 1) == 0 ? 4 : 8;
        t.a = random_memory(rng, true), t.b = random_memory(rng, t.a != Memory::Device);
        t.check = i % 3 == 0;  // validation mode
        const gpk::StagingSettings st = random_settings(rng);
        bool capped = false;
        const size_t full = plan::plan_transpose(t, st, 80 * GiB).needs.device();
        const size_t budget = random_budget(rng, static_cast<size_t>(2 * t.rows * t.cols) * t.es, full, &capped);
        Case c(suite, format("transpose plan %d: %lldx%lld es %zu A%s B%s%s, %d streams, chunk %zu, budget %zu", i,
                             static_cast<long long>(t.rows), static_cast<long long>(t.cols), t.es, memory_name(t.a),
                             memory_name(t.b), t.check ? " validated" : "", st.streams, st.chunk_bytes, budget));
        const plan::TransposePlan p = plan::plan_transpose(t, st, budget);
        {
            // Validation takes no device memory: the same tiles as without it.
            plan::TransposeProblem u = t;
            u.check = false;
            const plan::TransposePlan up = plan::plan_transpose(u, st, budget);
            if (up.fits != p.fits || (p.fits && (up.h != p.h || up.w != p.w || up.needs.device() != p.needs.device())))
                c.fail("validation changed the plan");
        }
        if (!p.fits) {
            // No plan only when a tile of one element per lane does not fit.
            const int64_t lanes = std::min<int64_t>(st.streams, t.rows * t.cols);
            const size_t smallest = static_cast<size_t>(lanes) * plan::kAlignment *
                                    ((t.a != Memory::Device ? 1 : 0) + (t.b != Memory::Device ? 1 : 0));
            if (p.shortfall.need != smallest || p.shortfall.lanes != lanes)
                c.fail("shortfall %zu bytes on %d lanes, the smallest plan needs %zu on %lld", p.shortfall.need,
                       p.shortfall.lanes, smallest, static_cast<long long>(lanes));
            if (smallest <= budget) c.fail("no plan, yet the smallest (%zu bytes) is within the budget", smallest);
            if (!capped) c.fail("no plan within 80 GiB");
            continue;
        }
        if (p.h < 1 || p.h > t.rows || p.w < 1 || p.w > t.cols)
            c.fail("tile %lldx%lld", static_cast<long long>(p.h), static_cast<long long>(p.w));
        check_lanes(c, p.needs, st.streams, p.chunks());
        if (p.needs.device() > budget) c.fail("needs %zu bytes, budget %zu", p.needs.device(), budget);
        // The caller's A and B, leading dimensions above their minimum: each chunk's
        // tiles lie inside them, with the extents planned, B's the transpose of A's.
        static std::vector<char> arena(size_t{2} << 20);  // past every array of these sizes
        const plan::TransposeArrays arrays{MatrixView{t.rows, t.cols, t.rows + rng.range(0, 3), arena.data()},
                                           MatrixView{t.cols, t.rows, t.cols + rng.range(0, 3), arena.data()}, t.es};
        std::vector<unsigned char> hits(static_cast<size_t>(t.rows * t.cols), 0);
        for (int64_t index = 0; index < p.chunks() && !c.failed(); ++index) {
            const plan::TransposeChunk ch = p.chunk(index, t);
            if (ch.hc < 1 || ch.wc < 1 || ch.i0 < 0 || ch.j0 < 0 || ch.i0 + ch.hc > t.rows || ch.j0 + ch.wc > t.cols) {
                c.fail("chunk %lld out of bounds", static_cast<long long>(index));
                break;
            }
            const MatrixView at = arrays.a_tile(ch), bt = arrays.b_tile(ch);
            if (!inside(c, "A's tile", index, at, arrays.a, t.es, t.a_tile(ch.hc, ch.wc)) ||
                !inside(c, "B's tile", index, bt, arrays.b, t.es, t.b_tile(ch.hc, ch.wc)))
                break;
            if (at.bytes() - arrays.a.bytes() != static_cast<std::ptrdiff_t>((ch.i0 + ch.j0 * arrays.a.ld) * t.es) ||
                bt.bytes() - arrays.b.bytes() != static_cast<std::ptrdiff_t>((ch.j0 + ch.i0 * arrays.b.ld) * t.es))
                c.fail("chunk %lld: tiles not at A(%lld, %lld) and B(%lld, %lld)", static_cast<long long>(index),
                       static_cast<long long>(ch.i0), static_cast<long long>(ch.j0), static_cast<long long>(ch.j0),
                       static_cast<long long>(ch.i0));
            for (int64_t j = ch.j0; j < ch.j0 + ch.wc; ++j)
                for (int64_t r = ch.i0; r < ch.i0 + ch.hc; ++r) ++hits[static_cast<size_t>(r + j * t.rows)];
            const size_t lane = (t.a != Memory::Device ? plan::device_bytes(t.a_tile(ch.hc, ch.wc), t.es) : 0) +
                                (t.b != Memory::Device ? plan::device_bytes(t.b_tile(ch.hc, ch.wc), t.es) : 0);
            if (lane > p.needs.lane_device) c.fail("chunk %lld needs %zu bytes on its lane, planned %zu",
                                                   static_cast<long long>(index), lane, p.needs.lane_device);
            const size_t slot = std::max(t.a == Memory::Pageable ? plan::packed_bytes(t.a_tile(ch.hc, ch.wc), t.es) : 0,
                                         t.b == Memory::Pageable ? plan::packed_bytes(t.b_tile(ch.hc, ch.wc), t.es) : 0);
            if (slot > p.needs.slot) c.fail("chunk %lld: %zu bytes into a slot of %zu", static_cast<long long>(index),
                                            slot, p.needs.slot);
            const size_t check = plan::packed_bytes(t.a_tile(ch.hc, ch.wc), t.es) +
                                 plan::packed_bytes(t.b_tile(ch.hc, ch.wc), t.es);
            if (t.check ? p.needs.check < check : p.needs.check != 0)
                c.fail("chunk %lld: check buffer of %zu bytes", static_cast<long long>(index), p.needs.check);
        }
        if (!c.failed())
            for (size_t e = 0; e < hits.size(); ++e)
                if (hits[e] != 1) {
                    c.fail("A(%zu) in %d tiles", e, hits[e]);
                    break;
                }
    }
}

void reduce_invariants(Suite &suite) {
    Rng rng(seed_of({20, 19, 3}));
    const int cases = suite.quick() ? 300 : 3000;
    for (int i = 0; i < cases; ++i) {
        plan::ReduceProblem r{};
        r.n = rng.range(0, 1) == 0 ? rng.range(1, 5000) : rng.range(1, 3000000);
        const int dtype = static_cast<int>(rng.range(0, 3));
        r.es = dtype_size(dtype), r.rs = dtype == GPK_F32 ? 4 : 8;
        r.pinned = rng.range(0, 1) == 1, r.dev_result = rng.range(0, 1) == 1;
        r.check = i % 3 == 0;  // validation mode
        const gpk::StagingSettings st = random_settings(rng);
        bool capped = false;
        const size_t full = plan::plan_reduce(r, st, 80 * GiB).needs.device();
        const size_t budget = random_budget(rng, static_cast<size_t>(r.n) * r.es + 4 * MiB, full, &capped);
        Case c(suite, format("reduce plan %d: n %lld %s%s%s%s, %d streams, chunk %zu, budget %zu", i,
                             static_cast<long long>(r.n), dtype_name(dtype), r.pinned ? " pinned" : "",
                             r.dev_result ? " device result" : "", r.check ? " validated" : "", st.streams,
                             st.chunk_bytes, budget));
        const plan::ReducePlan p = plan::plan_reduce(r, st, budget);
        if (!p.fits) {
            // No plan only when pieces of one element do not fit: n partials, the
            // result, and per lane one element and its scratch.
            const int64_t lanes = std::min<int64_t>(st.streams, r.n);
            const size_t smallest = plan::align_up(static_cast<size_t>(r.n) * r.rs) * (r.check ? 2 : 1) +
                                    (r.dev_result ? 0 : plan::align_up(r.rs)) + (r.check ? plan::align_up(r.rs) : 0) +
                                    static_cast<size_t>(lanes) * (plan::align_up(r.es) + plan::reduce_scratch(1));
            if (p.shortfall.need != smallest || p.shortfall.lanes != lanes)
                c.fail("shortfall %zu bytes on %d lanes, the smallest plan needs %zu on %lld", p.shortfall.need,
                       p.shortfall.lanes, smallest, static_cast<long long>(lanes));
            if (smallest <= budget) c.fail("no plan, yet the smallest (%zu bytes) is within the budget", smallest);
            if (!capped) c.fail("no plan within 80 GiB");
            continue;
        }
        check_lanes(c, p.needs, st.streams, p.chunks());
        if (p.needs.device() > budget) c.fail("needs %zu bytes, budget %zu", p.needs.device(), budget);
        if (p.needs.lane_scratch < plan::reduce_scratch(p.piece)) c.fail("scratch below what a piece asks for");
        if ((p.needs.slot != 0) == r.pinned) c.fail("slot %zu for %s x", p.needs.slot, r.pinned ? "pinned" : "pageable");
        const size_t partials = static_cast<size_t>(p.pieces) * r.rs;
        if (p.result_offset < partials || p.result_offset % plan::kAlignment != 0 ||
            p.needs.shared < (r.dev_result ? partials : p.result_offset + r.rs))
            c.fail("partials %zu, result at %zu, shared %zu", partials, p.result_offset, p.needs.shared);
        // Validation: the checker's partials after the result, then its result.
        if (r.check && (p.check_offset < (r.dev_result ? partials : p.result_offset + r.rs) ||
                        p.check_offset % plan::kAlignment != 0 || p.check_result_offset < p.check_offset + partials ||
                        p.check_result_offset % plan::kAlignment != 0 ||
                        p.needs.shared < p.check_result_offset + r.rs))
            c.fail("checker's partials at %zu, its result at %zu, shared %zu", p.check_offset, p.check_result_offset,
                   p.needs.shared);
        if (!r.check && p.needs.check != 0) c.fail("check buffer of %zu bytes without validation", p.needs.check);
        // The pieces in order, end to end, cover x once.
        int64_t next = 0;
        for (int64_t index = 0; index < p.chunks(); ++index) {
            const plan::ReduceChunk ch = p.chunk(index, r);
            if (ch.first != next || ch.count < 1 || ch.count > p.piece ||
                static_cast<size_t>(ch.count) * r.es > p.needs.lane_device) {
                c.fail("piece %lld: [%lld, +%lld) after %lld", static_cast<long long>(index),
                       static_cast<long long>(ch.first), static_cast<long long>(ch.count),
                       static_cast<long long>(next));
                break;
            }
            next += ch.count;
        }
        if (!c.failed() && next != r.n) c.fail("pieces cover %lld of %lld", static_cast<long long>(next),
                                               static_cast<long long>(r.n));
    }
}

// Batched gemm: chunks of whole products. By hand: 4 KiB products in 32 MiB chunks;
// a shared A counted once; a budget that halves the chunk; one product too large.
// Then invariants: every product in exactly one chunk, in order, chunks within the
// lane's bytes, the plan within the budget or reported with a need above it.
void gemm_batched_plans(Suite &suite) {
    {
        Case c(suite, "planner gemm_batched by hand: default chunk");
        const plan::GemmBatchedProblem g{100000, 1 * KiB, 1 * KiB, 2 * KiB, false, false};
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(4), 1 * GiB);
        expect_eq(c, "fits", p.fits, true);
        expect_eq(c, "per_chunk", p.per_chunk, int64_t(plan::kDefaultChunkBytes / (4 * KiB)));
        expect_eq(c, "chunks", p.chunks(), plan::ceil_div(100000, p.per_chunk));
        expect_eq(c, "needs.shared", p.needs.shared, size_t{0});
        expect_eq(c, "needs.lane_device", p.needs.lane_device, plan::kDefaultChunkBytes);
        const plan::GemmBatchedChunk last = p.chunk(p.chunks() - 1, g);
        expect_eq(c, "last chunk ends at the batch", last.first + last.count, int64_t(100000));
    }
    {
        Case c(suite, "planner gemm_batched by hand: shared A copied once");
        const plan::GemmBatchedProblem g{64, 1000, 512, 512, true, false};
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(1, 4 * KiB), 1 * GiB);
        expect_eq(c, "per_chunk", p.per_chunk, int64_t(4));  // 4 KiB over 1 KiB per product
        expect_eq(c, "needs.shared", p.needs.shared, plan::align_up(1000));
        expect_eq(c, "needs.lane_device", p.needs.lane_device, size_t{2 * 2048});
    }
    {
        Case c(suite, "planner gemm_batched by hand: the budget halves the chunk");
        const plan::GemmBatchedProblem g{1000, 256, 256, 512, false, false};
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(1, 1 * MiB), 100 * KiB);
        expect_eq(c, "fits", p.fits, true);
        if (p.needs.device() > 100 * KiB) c.fail("needs %zu bytes over a budget of %zu", p.needs.device(), 100 * KiB);
        expect_eq(c, "per_chunk", p.per_chunk, int64_t(63));  // the batch of 1000 halved, rounding up, to 63 KiB
    }
    {
        Case c(suite, "planner gemm_batched by hand: one product beyond the budget");
        const plan::GemmBatchedProblem g{3, 1 * MiB, 1 * MiB, 1 * MiB, false, false};
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(1), 2 * MiB);
        expect_eq(c, "fits", p.fits, false);
        expect_eq(c, "per_chunk", p.per_chunk, int64_t(1));
        if (!(p.shortfall.need > 2 * MiB)) c.fail("shortfall %zu is not above the budget", p.shortfall.need);
    }
    {
        Case c(suite, "planner gemm_batched by hand: two chunks per lane by default");
        const plan::GemmBatchedProblem g{1000, 1 * KiB, 1 * KiB, 2 * KiB, false, false};
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(4), 1 * GiB);
        expect_eq(c, "per_chunk", p.per_chunk, int64_t(125));  // 1000 over 2 chunks on each of 4 lanes
        expect_eq(c, "chunks", p.chunks(), int64_t(8));
        expect_eq(c, "needs.lanes", p.needs.lanes, 4);
        expect_eq(c, "needs.slot (nothing pageable)", p.needs.slot, size_t{0});
    }
    {
        Case c(suite, "planner gemm_batched by hand: one product a chunk where a chunk cannot move in one copy");
        plan::GemmBatchedProblem g{3, 1 * KiB, 1 * KiB, 2 * KiB, false, false};
        g.several = false;
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(4, 1 * MiB), 1 * GiB);
        expect_eq(c, "per_chunk", p.per_chunk, int64_t(1));
        expect_eq(c, "needs.lanes", p.needs.lanes, 3);
    }
    {
        Case c(suite, "planner gemm_batched by hand: slots for the pageable copies");
        plan::GemmBatchedProblem g{64, 1000, 512, 512, false, true};
        g.slot_a = 1000, g.slot_c_in = 300, g.slot_c_out = 300, g.slot_shared = 512;
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(2, 4 * KiB), 1 * GiB);
        expect_eq(c, "per_chunk", p.per_chunk, int64_t(2));  // 4 KiB over 1.5 KiB per product
        expect_eq(c, "needs.slot", p.needs.slot, plan::align_up(2000) + plan::align_up(600));
        expect_eq(c, "needs.shared", p.needs.shared, plan::align_up(512));
    }
    {
        Case c(suite, "planner gemm_batched by hand: validation's packed C on the lane and in the check buffer");
        plan::GemmBatchedProblem g{64, 1000, 512, 512, false, false};
        g.check_c = 300;
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(1, 4 * KiB), 1 * GiB);
        expect_eq(c, "per_chunk", p.per_chunk, int64_t(2));  // 4 KiB over 2 KiB per product
        expect_eq(c, "needs.lane_device", p.needs.lane_device,
                  plan::align_up(2000) + plan::align_up(1024) + plan::align_up(1024) + plan::align_up(600));
        expect_eq(c, "needs.check", p.needs.check, 2 * plan::align_up(600));
    }
    {
        Case c(suite, "planner gemm_batched by hand: lanes give way to a small budget");
        const plan::GemmBatchedProblem g{8, 1 * MiB, 0, 1 * MiB, false, false};
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(4), 5 * MiB / 2);
        expect_eq(c, "fits", p.fits, true);
        expect_eq(c, "per_chunk", p.per_chunk, int64_t(1));
        expect_eq(c, "needs.lanes", p.needs.lanes, 1);
    }
    Rng rng(0xBA7C);
    Case c(suite, "planner gemm_batched invariants");
    for (int trial = 0; trial < 2000 && !c.failed(); ++trial) {
        const bool shared_a = rng.range(0, 3) == 0, shared_b = rng.range(0, 3) == 0;
        const plan::GemmBatchedProblem g{rng.range(1, 1 << 20), size_t(rng.range(0, 1 << 16)), size_t(rng.range(0, 1 << 16)),
                                         size_t(rng.range(1, 1 << 16)), shared_a, shared_b};
        const size_t chunk_bytes = rng.range(0, 1) ? 0 : size_t(rng.range(1, 1 << 26));
        const size_t budget = size_t(rng.range(1 << 16, 1 << 30));
        const int st_streams = int(rng.range(1, 16));
        const plan::GemmBatchedPlan p = plan::plan_gemm_batched(g, settings(st_streams, chunk_bytes), budget);
        if (p.fits != (p.needs.device() <= budget)) c.fail("trial %d: fits says %d for %zu bytes over %zu", trial, p.fits, p.needs.device(), budget);
        if (!p.fits && !(p.per_chunk == 1 && p.needs.lanes == 1 && p.shortfall.need > budget))
            c.fail("trial %d: a refused plan is not one product on one lane over the budget", trial);
        if (p.needs.lanes < 1 || p.needs.lanes > st_streams || p.needs.lanes > std::max<int64_t>(1, p.chunks()))
            c.fail("trial %d: %d lanes for %lld chunks on %d streams", trial, p.needs.lanes, (long long)p.chunks(),
                   st_streams);
        int64_t next = 0;
        for (int64_t i = 0; i < p.chunks(); ++i) {
            const plan::GemmBatchedChunk k = p.chunk(i, g);
            if (k.first != next || k.count < 1 || k.count > p.per_chunk) {
                c.fail("trial %d: chunk %lld is [%lld, +%lld), expected to start at %lld", trial, (long long)i,
                       (long long)k.first, (long long)k.count, (long long)next);
                break;
            }
            const auto n = size_t(k.count);
            const size_t lane = (g.shared_a ? 0 : g.a * n) + (g.shared_b ? 0 : g.b * n) + g.c * n;
            if (lane > p.needs.lane_device) c.fail("trial %d: chunk %lld needs %zu lane bytes of %zu", trial, (long long)i, lane, p.needs.lane_device);
            next += k.count;
        }
        if (next != g.batch) c.fail("trial %d: chunks cover %lld of %lld products", trial, (long long)next, (long long)g.batch);
    }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_planner", argc, argv);
    helpers(suite);
    gemm_by_hand(suite);
    transpose_by_hand(suite);
    reduce_by_hand(suite);
    gemm_invariants(suite);
    transpose_invariants(suite);
    reduce_invariants(suite);
    gemm_batched_plans(suite);
    return suite.finish();
}
