// The staging pipeline's plans (planner.hpp). Sizes in, chunk geometry and needs
// out; the reasons for each rule are in pipeline.cpp's opening comment.
#include "../scalars.hpp"
#include "planner.hpp"

#include <algorithm>
#include <cmath>

namespace gpk::cuda::plan {

int64_t device_ld(int64_t inner, size_t es) {
    const auto per = static_cast<int64_t>(kLinePadBytes / es);
    return std::max<int64_t>(1, ceil_div(inner, per) * per);
}

size_t device_bytes(const MatrixView &s, size_t es) {
    return align_up(static_cast<size_t>(device_ld(s.inner, es) * s.outer) * es);
}

// In a pinned slot the lines are packed.
size_t packed_bytes(const MatrixView &s, size_t es) { return align_up(static_cast<size_t>(s.inner * s.outer) * es); }

bool zero_in(int dtype, double value) { return in_dtype(dtype, value) == 0.0; }

size_t device_budget(const StagingSettings &settings, size_t free_bytes, size_t held) {
    if (settings.device_bytes != 0) return settings.device_bytes;
    // Room left for what others allocate (vendor handles and their workspaces, the
    // context's workspace): 1/16 of what is free, within [64 MiB, 256 MiB]. A GPU with
    // less than 64 MiB free has nothing for the pipeline but what it holds already.
    const size_t margin = std::min(free_bytes, std::clamp(free_bytes / 16, size_t{64} << 20, size_t{256} << 20));
    return held + (free_bytes - margin);
}

// Two passes' partials at most, one 8-byte value per 256 elements or more, or CUB's
// temporary storage (a few KiB on any GPU), rounded as reserve_lane_scratch rounds.
size_t reduce_scratch(int64_t count) {
    const size_t bytes = static_cast<size_t>(count / 256 + count / 65536 + 4) * 8 + (size_t{128} << 10);
    return align_up(bytes, size_t{64} << 10);
}

// With the library's choice of chunk (chunk_bytes 0) there are at least 2 chunks per
// stream when `total` allows, so that the streams overlap, and no fewer than `least`
// elements per chunk; the length is a multiple of `granule` where it exceeds it
// (tile-friendly for kernels).
int64_t panel_length(int64_t total, size_t per_unit, const StagingSettings &st, int64_t granule, int64_t least) {
    const size_t target = st.chunk_bytes != 0 ? st.chunk_bytes : kDefaultChunkBytes;
    int64_t n = per_unit == 0 ? total
                              : static_cast<int64_t>(std::min<size_t>(static_cast<size_t>(total),
                                                                      std::max<size_t>(1, target / per_unit)));
    if (st.chunk_bytes == 0) {
        n = std::min(n, ceil_div(total, 2 * static_cast<int64_t>(st.streams)));
        n = std::max(n, std::min(total, std::max(granule, least)));
    }
    if (n > granule) n -= n % granule;
    return std::max<int64_t>(n, 1);
}

// ---- gemm ---------------------------------------------------------------------------

namespace {

// Rows [i0, i0 + count) of op(A) as stored: a column-major m x k A keeps them as the
// inner part of its k columns; a transposed one (stored k x m) as `count` whole columns.
MatrixView rows_of_op_a(const MatrixView &a, bool transa, int64_t k, int64_t i0, int64_t count, size_t es) {
    return transa ? a.block(0, i0, k, count, es) : a.block(i0, 0, count, k, es);
}
// Columns [j0, j0 + count) of op(B) as stored.
MatrixView cols_of_op_b(const MatrixView &b, bool transb, int64_t k, int64_t j0, int64_t count, size_t es) {
    return transb ? b.block(j0, 0, count, k, es) : b.block(0, j0, k, count, es);
}
// The extent of a piece alone, packed (what a lane's copy of it holds).
MatrixView extent(const MatrixView &v) { return MatrixView::packed(v.inner, v.outer); }

}  // namespace

// The extents are those of the pieces of GemmArrays, cut from arrays with no pointer.
MatrixView GemmProblem::streamed(int64_t count) const {
    return extent(GemmArrays{{}, {}, {}, k, transa, transb, resident_a, es}.streamed(0, count));
}
MatrixView GemmProblem::resident(int64_t count) const {
    return extent(GemmArrays{{}, {}, {}, k, transa, transb, resident_a, es}.resident(0, count));
}
MatrixView GemmProblem::tile(int64_t pc, int64_t qc) const {
    return extent(GemmArrays{{}, {}, {}, k, transa, transb, resident_a, es}.tile(0, pc, 0, qc));
}

MatrixView GemmArrays::streamed(int64_t p0, int64_t count) const {
    return resident_a ? cols_of_op_b(b, transb, k, p0, count, es) : rows_of_op_a(a, transa, k, p0, count, es);
}
MatrixView GemmArrays::resident(int64_t q0, int64_t count) const {
    return resident_a ? rows_of_op_a(a, transa, k, q0, count, es) : cols_of_op_b(b, transb, k, q0, count, es);
}
MatrixView GemmArrays::tile(int64_t p0, int64_t pc, int64_t q0, int64_t qc) const {
    return resident_a ? c.block(q0, p0, qc, pc, es) : c.block(p0, q0, pc, qc, es);
}

GemmChunk GemmPlan::chunk(int64_t index, const GemmProblem &g) const {
    const int64_t q0 = index / panels * block, p0 = index % panels * panel;
    return GemmChunk{p0, std::min(panel, g.P() - p0), q0, std::min(block, g.Q() - q0)};
}

GemmPlan plan_gemm(const GemmProblem &g, const StagingSettings &st, size_t budget) {
    const size_t es = g.es;
    const int64_t P = g.P(), Q = g.Q();
    const bool x_host = g.x != Memory::Device, y_host = g.y != Memory::Device, c_host = g.c != Memory::Device;

    auto lane_bytes = [&](int64_t pc, int64_t qc) {
        return (x_host ? device_bytes(g.streamed(pc), es) : 0) + (c_host ? device_bytes(g.tile(pc, qc), es) : 0) +
               (g.check ? device_bytes(g.tile(pc, qc), es) : 0);
    };
    auto resident_bytes = [&](int64_t qc) { return y_host ? device_bytes(g.resident(qc), es) : 0; };
    auto per_unit = [&](int64_t qc) {  // streamed bytes per element of a panel's length
        return (x_host ? static_cast<size_t>(g.k) * es : 0) +
               (c_host ? static_cast<size_t>(qc) * es * (g.read_c ? 2 : 1) : 0);
    };
    auto lanes_for = [&](int64_t pc, int64_t qc) {
        return static_cast<int>(std::min<int64_t>(st.streams, ceil_div(P, pc) * ceil_div(Q, qc)));
    };
    auto need = [&](int64_t pc, int64_t qc) {
        return resident_bytes(qc) + static_cast<size_t>(lanes_for(pc, qc)) * lane_bytes(pc, qc);
    };
    auto fit_panel = [&](int64_t qc) {
        int64_t pc = panel_length(P, per_unit(qc), st, kPanelGranule);
        while (pc > 1 && need(pc, qc) > budget) pc /= 2;
        return pc;
    };
    // A plan that fits with panels of at least 64 (or the planned length, if shorter):
    // rather than panels of a few rows beside a whole resident operand, blocks of it.
    auto acceptable = [&](int64_t pc, int64_t qc) {
        return need(pc, qc) <= budget && pc >= std::min<int64_t>(panel_length(P, per_unit(qc), st, kPanelGranule), 64);
    };

    GemmPlan plan{};
    int64_t q = Q, pn = fit_panel(Q);
    if (!acceptable(pn, q)) {
        const int64_t whole_pn = pn;
        const bool whole_fits = need(pn, Q) <= budget;
        // Out of core: blocks of the resident operand of at most half the budget, as
        // few as that allows, of equal width; narrower if a panel does not fit beside.
        int64_t widest = 1;
        if (resident_bytes(1) <= budget / 2) {
            int64_t lo = 1, hi = Q;
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo + 1) / 2;
                if (resident_bytes(mid) <= budget / 2) lo = mid;
                else hi = mid - 1;
            }
            widest = lo;
        }
        q = ceil_div(Q, ceil_div(Q, widest));
        for (;;) {
            pn = fit_panel(q);
            if (acceptable(pn, q) || q == 1) break;
            q = ceil_div(q, 2);
        }
        // Blocks do not help when even a block of one column leaves short panels.
        if (!acceptable(pn, q) && whole_fits) q = Q, pn = whole_pn;
        if (need(pn, q) > budget) {
            plan.fits = false;
            plan.shortfall = Shortfall{need(1, 1), lanes_for(1, 1)};
            return plan;
        }
    }

    plan.fits = true;
    plan.panel = pn, plan.block = q;
    plan.panels = ceil_div(P, pn), plan.blocks = ceil_div(Q, q);
    plan.needs = Needs{lanes_for(pn, q), lane_bytes(pn, q), 0, resident_bytes(q), 0};
    const size_t in = (g.x == Memory::Pageable ? packed_bytes(g.streamed(pn), es) : 0) +
                      (g.c == Memory::Pageable && g.read_c ? packed_bytes(g.tile(pn, q), es) : 0);
    const size_t out = g.c == Memory::Pageable ? packed_bytes(g.tile(pn, q), es) : 0;
    plan.needs.slot = std::max(in, out);
    if (g.y == Memory::Pageable) {
        // The resident block goes through lane 0's slots, at least a line at a time.
        const MatrixView y = g.resident(q);
        const size_t line = align_up(static_cast<size_t>(y.inner) * es);
        plan.needs.slot = std::max(plan.needs.slot, std::min(packed_bytes(y, es), std::max(line, kResidentPiece)));
    }
    // The variant's tile and the checker's, side by side.
    if (g.check) plan.needs.check = 2 * packed_bytes(g.tile(pn, q), es);
    return plan;
}

// ---- transpose ------------------------------------------------------------------------

TransposeChunk TransposePlan::chunk(int64_t index, const TransposeProblem &t) const {
    const int64_t j0 = index / tile_rows * w, i0 = index % tile_rows * h;
    return TransposeChunk{i0, std::min(h, t.rows - i0), j0, std::min(w, t.cols - j0)};
}

TransposePlan plan_transpose(const TransposeProblem &t, const StagingSettings &st, size_t budget) {
    const size_t es = t.es;
    const bool a_host = t.a != Memory::Device, b_host = t.b != Memory::Device;
    auto lane_bytes = [&](int64_t hc, int64_t wc) {
        return (a_host ? device_bytes(t.a_tile(hc, wc), es) : 0) + (b_host ? device_bytes(t.b_tile(hc, wc), es) : 0);
    };
    auto chunks_for = [&](int64_t hc, int64_t wc) { return ceil_div(t.rows, hc) * ceil_div(t.cols, wc); };
    auto lanes_for = [&](int64_t hc, int64_t wc) {
        return static_cast<int>(std::min<int64_t>(st.streams, chunks_for(hc, wc)));
    };
    auto need = [&](int64_t hc, int64_t wc) { return static_cast<size_t>(lanes_for(hc, wc)) * lane_bytes(hc, wc); };

    // Elements per tile: about chunk_bytes of host data. By default 32 MiB, or more where
    // that gives lines shorter than kTransposeLine on a host side (one DMA line per line
    // of the tile), but at least two tiles per stream.
    const int64_t total = t.rows * t.cols, host_sides = (a_host ? 1 : 0) + (b_host ? 1 : 0);
    const int64_t granule = kPanelGranule, line = std::max<int64_t>(1, static_cast<int64_t>(kTransposeLine / es));
    const size_t target = st.chunk_bytes != 0 ? st.chunk_bytes : kDefaultChunkBytes;
    int64_t area = std::max<int64_t>(
        1, static_cast<int64_t>(std::min<size_t>(static_cast<size_t>(total), target / (es * host_sides))));
    if (st.chunk_bytes == 0) {
        // Lines of `line` elements on both host sides take a tile of line x line.
        area = std::max(area, host_sides == 2 ? line * line : line);
        area = std::max<int64_t>(1, std::min(area, ceil_div(total, 2 * static_cast<int64_t>(st.streams))));
    }
    // A host side's lines as long as possible: both sides' the same (a square tile)
    // when both are on the host, unless a side of the matrix is shorter; one host
    // side's lines as long as the matrix allows.
    int64_t h = 0, w = 0;
    if (host_sides == 2) {
        const auto side = static_cast<int64_t>(std::sqrt(static_cast<double>(area)));
        if (side >= t.rows) h = t.rows, w = std::clamp<int64_t>(area / t.rows, 1, t.cols);
        else if (side >= t.cols) w = t.cols, h = std::clamp<int64_t>(area / t.cols, 1, t.rows);
        else h = w = std::max<int64_t>(side, 1);
    } else if (a_host) {
        h = std::min(t.rows, area), w = std::clamp<int64_t>(area / h, 1, t.cols);
    } else {
        w = std::min(t.cols, area), h = std::clamp<int64_t>(area / w, 1, t.rows);
    }
    // Multiples of the kernels' tiles where longer.
    if (h > granule && h < t.rows) h -= h % granule;
    if (w > granule && w < t.cols) w -= w % granule;
    // Within the budget: the longer side halved, until one tile per lane fits.
    while ((h > 1 || w > 1) && need(h, w) > budget) {
        if (h >= w) h = std::max<int64_t>(1, h / 2);
        else w = std::max<int64_t>(1, w / 2);
    }

    TransposePlan plan{};
    if (need(h, w) > budget) {
        plan.fits = false;
        plan.shortfall = Shortfall{need(1, 1), lanes_for(1, 1)};
        return plan;
    }
    plan.fits = true;
    plan.h = h, plan.w = w;
    plan.tile_rows = ceil_div(t.rows, h), plan.tile_cols = ceil_div(t.cols, w);
    plan.needs = Needs{lanes_for(h, w), lane_bytes(h, w), 0, 0, 0};
    // The result overwrites the copy in within the slot: stream order places it after.
    plan.needs.slot = std::max(t.a == Memory::Pageable ? packed_bytes(t.a_tile(h, w), es) : 0,
                               t.b == Memory::Pageable ? packed_bytes(t.b_tile(h, w), es) : 0);
    if (t.check) plan.needs.check = packed_bytes(t.a_tile(h, w), es) + packed_bytes(t.b_tile(h, w), es);
    return plan;
}

// ---- reduce -------------------------------------------------------------------------------

ReduceChunk ReducePlan::chunk(int64_t index, const ReduceProblem &r) const {
    const int64_t first = index * piece;
    return ReduceChunk{first, std::min(piece, r.n - first)};
}

ReducePlan plan_reduce(const ReduceProblem &r, const StagingSettings &st, size_t budget) {
    const int64_t n = r.n;
    const size_t es = r.es, rs = r.rs;
    auto pieces_of = [&](int64_t pc) { return ceil_div(n, pc); };
    auto lanes_for = [&](int64_t pc) { return static_cast<int>(std::min<int64_t>(st.streams, pieces_of(pc))); };
    auto shared_bytes = [&](int64_t pc) {
        const size_t partials = align_up(static_cast<size_t>(pieces_of(pc)) * rs);
        return partials + (r.dev_result ? 0 : align_up(rs)) + (r.check ? partials + align_up(rs) : 0);
    };
    auto need = [&](int64_t pc) {
        return shared_bytes(pc) +
               static_cast<size_t>(lanes_for(pc)) * (align_up(static_cast<size_t>(pc) * es) + reduce_scratch(pc));
    };
    int64_t pn = panel_length(n, es, st, kReduceGranule);
    while (pn > 1 && need(pn) > budget) pn /= 2;

    ReducePlan plan{};
    if (need(pn) > budget) {
        plan.fits = false;
        plan.shortfall = Shortfall{need(pn), lanes_for(pn)};
        return plan;
    }
    plan.fits = true;
    plan.piece = pn;
    plan.pieces = pieces_of(pn);
    plan.needs = Needs{lanes_for(pn), align_up(static_cast<size_t>(pn) * es), reduce_scratch(pn), shared_bytes(pn),
                       r.pinned ? 0 : align_up(static_cast<size_t>(pn) * es)};
    plan.result_offset = align_up(static_cast<size_t>(plan.pieces) * rs);
    plan.check_offset = plan.result_offset + (r.dev_result ? 0 : align_up(rs));
    plan.check_result_offset = plan.check_offset + plan.result_offset;
    return plan;
}

// ---- gemm_batched --------------------------------------------------------------------------

GemmBatchedChunk GemmBatchedPlan::chunk(int64_t index, const GemmBatchedProblem &g) const {
    const int64_t first = index * per_chunk;
    return GemmBatchedChunk{first, std::min(per_chunk, g.batch - first)};
}

// Products go whole: a rung runs on whole matrices, and a product is small next to a
// chunk for the sizes batching is for. The chunk halves until the plan fits the budget,
// then the lanes fall to one; one product on one lane that does not fit is the
// shortfall.
GemmBatchedPlan plan_gemm_batched(const GemmBatchedProblem &g, const StagingSettings &st, size_t budget) {
    GemmBatchedPlan p{};
    const size_t per = g.per_product();
    const size_t target = st.chunk_bytes != 0 ? st.chunk_bytes : kDefaultChunkBytes;
    int64_t count = per == 0 ? g.batch : static_cast<int64_t>(std::min<size_t>(std::max<size_t>(1, target / per),
                                                                               static_cast<size_t>(g.batch)));
    if (st.chunk_bytes == 0) count = std::min(count, ceil_div(g.batch, 2 * static_cast<int64_t>(st.streams)));
    if (!g.several) count = 1;
    count = std::max<int64_t>(1, std::min(count, g.batch));
    const size_t shared = (g.shared_a ? align_up(g.a) : 0) + (g.shared_b ? align_up(g.b) : 0);
    auto lane = [&](int64_t n) {
        const auto k = static_cast<size_t>(n);
        return (g.shared_a ? 0 : align_up(g.a * k)) + (g.shared_b ? 0 : align_up(g.b * k)) + align_up(g.c * k) +
               align_up(g.check_c * k);
    };
    auto lanes_for = [&](int64_t n) {
        return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(st.streams, ceil_div(g.batch, n))));
    };
    int lanes = lanes_for(count);
    auto need = [&](int64_t n, int l) { return shared + static_cast<size_t>(l) * lane(n); };
    while (count > 1 && need(count, lanes) > budget) count = (count + 1) / 2, lanes = lanes_for(count);
    while (lanes > 1 && need(count, lanes) > budget) --lanes;
    p.per_chunk = count;
    p.count = g.batch == 0 ? 0 : ceil_div(g.batch, count);
    const auto k = static_cast<size_t>(count);
    const size_t in = align_up(g.slot_a * k) + align_up(g.slot_b * k) + align_up(g.slot_c_in * k);
    const size_t out = align_up(g.slot_c_out * k);
    const size_t slot = in + out == 0 ? align_up(g.slot_shared) : std::max({in, out, align_up(g.slot_shared)});
    p.needs = Needs{lanes, lane(count), 0, shared, slot};
    p.needs.check = 2 * align_up(g.check_c * k);
    p.fits = p.needs.device() <= budget;
    if (!p.fits) p.shortfall = Shortfall{p.needs.device(), lanes};
    return p;
}

}  // namespace gpk::cuda::plan
