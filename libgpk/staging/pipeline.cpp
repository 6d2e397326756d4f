// The staging pipeline: how gpk_gemm, gpk_transpose, gpk_reduce and
// gpk_gemm_strided_batched move host arrays through the GPU.
//
// Chunks and lanes. A call is cut into chunks -- panels of C and of the streamed
// operand for gemm, tiles of A and B for transpose, pieces of x for reduce, runs of
// whole products for the batched gemm (a shared operand, stride 0, goes up once
// like gemm's resident block) -- and chunk c goes to lane c mod S, one of the S
// streams of the context's pipeline (gpk_set_staging), as three steps on that
// stream: its copies in, the selected rung
// on device pointers into the lane's buffers, its copy out. The rung is given the
// lane's own context (resources.hpp, Lane): the lane's stream, scratch and vendor
// handle, so that nothing of the caller's context changes during a call. A lane has
// one set of device buffers, which its chunks use one after the other in stream
// order; S lanes keep up to S chunks in flight, so that across lanes the copy engines
// and the SMs work at once. Device arrays among the operands are used in place.
//
// Host memory. Each host operand is classified once: pinned memory (cudaHostAlloc,
// cudaHostRegister) is copied by DMA straight from or to the caller's array; pageable
// memory passes through the lane's two pinned slots. The host fills a slot only after
// cudaEventSynchronize on the slot's last use by the GPU, and copies a result out of
// a slot only after its copy out has finished. Up to S results wait in their slots
// while the host goes on filling the next chunks, so the host thread keeps ahead of
// the GPU as far as the slots allow. With S == 1 nothing overlaps: every chunk is
// copied in, computed and copied out (to the caller's array) before the next begins.
//
// Order. The call records `start` on the context's stream and every lane waits for
// it, so chunks see what earlier calls wrote to device arrays; at the end the
// context's stream waits for every lane and the call synchronizes it (host arrays
// make a call synchronous). Nothing else is waited for, so the trace (two timing
// events around every step) costs only the event records.
//
// gemm's resident operand. The caller's B stays on the device while the row panels
// of the caller's A and C stream through (for a row-major call, whose operands
// dispatch swapped, that is the normalized A, and the panels are columns of the
// normalized C). It is copied on lane 0, and every kernel waits for that copy
// (resident_ready). When it does not fit beside one chunk per lane in the device
// budget, it is cut into blocks of columns of the caller's C, at most half the
// budget each, and the streamed operand is copied again for every block: out of
// core, for operands larger than the GPU. A block is copied only after every lane
// has finished with the one before (marks), since they share one buffer.
//
// Chunk sizes. About chunk_bytes of host data per chunk, or by default 32 MiB and at
// least two chunks per stream; panels are multiples of 64 rows or columns (kernel
// tiles) when longer. Reduce's pieces are reduced to partials in device memory, which
// the rung then reduces in piece order. A transpose's tile of h x w elements is w
// lines of h in A and h lines of w in B. DMA of lines far apart is slow unless they
// are long (on an H100, lines 64 KiB apart: 34 GB/s for 4 KiB lines, 49 for 8
// and 16 KiB, the link's 55 for 32 KiB; lines half their pitch apart run at the
// link's speed however short): the tile is as square as the matrix allows when both
// arrays are on the host (when one is, its lines as long as the matrix allows), and
// by default its lines on the host sides are kTransposeLine (32 KiB) long where two
// tiles per stream allow (16384^2 F32: 9 tiles of up to 5760^2, 22.5 KiB lines).
//
// Budget. gpk_set_staging's device_bytes, or else the GPU's free memory less a
// margin, plus what the pipeline already holds. The plan halves the panels (the
// longer side of transpose's tiles) until one chunk per lane (and gemm's resident
// block) fits. Every buffer, event and handle the call needs, and the trace's room,
// is made before the first copy, so running out of memory is reported before
// anything is written; buffers are kept for the next call and grow only, unless
// keeping them would pass the budget: then the call starts over with what it needs.
//
// Validation mode (gpk_set_validation). A chunk's compute step also runs the checker
// rung on the same lane -- for gemm into a tile of its own, from a copy of C's tile;
// for reduce into partials of its own -- and copies what the comparison reads (the
// two tiles of C; the tiles of A and B) into the lane's pinned check buffer. The host
// compares a lane's chunk when the lane's next chunk needs that buffer, or at the
// end, so the comparisons overlap the GPU's work. The rules (validation.hpp) are the
// whole call's, accumulated over chunks, and the verdict comes after the last result
// is in the caller's arrays: GPK_ERROR_VALIDATION leaves the variant's result there.
// The check tiles count in the budget, the check buffers are pinned like the slots,
// and both are provisioned with the rest.
//
// Files. planner.cpp computes the plans (pure arithmetic, tested on the host),
// executor.cpp provisions them and runs their chunks on the lanes, trace.cpp keeps
// the steps' times; this file joins them for each op and reads the trace for
// gpk_stage_trace.
#include "pipeline.hpp"

#include "../cuda/ladders.hpp"
#include "../validation.hpp"
#include "executor.hpp"

#include <algorithm>

namespace gpk::cuda {

using plan::device_bytes;
using plan::device_ld;

// ---- gemm -------------------------------------------------------------------------------

gpk_status staged_gemm(gpk_context &ctx, const GemmArgs &a, const Rung<GemmArgs> &rung, bool resident_a, bool dev_a,
                       bool dev_b, bool dev_c, const Checker<GemmArgs> *check, bool *refused) {
    *refused = false;
    Pipeline *pp = nullptr;
    GPK_FORWARD_IF_ERROR(get_pipeline(ctx, &pp));
    Pipeline &p = *pp;
    const size_t es = dtype_size(a.dtype);
    const bool product = a.k > 0;                       // else C = beta C: A and B are not read
    const bool read_c = !plan::zero_in(a.dtype, a.beta);  // beta == 0 in the dtype: NaN in C cannot leak
    // The rung decides on the same value: a beta that is zero in the dtype reaches it as
    // 0, so that it does not read the C that was not copied in.
    GemmArgs args = a;
    if (!read_c) args.beta = 0.0;

    // X is the streamed operand, Y the resident one. Panels run along P (rows of C when
    // B is resident, columns when A is), the resident blocks along Q.
    const int64_t P = resident_a ? a.n : a.m, Q = resident_a ? a.m : a.n;
    const plan::GemmArrays arrays{MatrixView::of_op(a.transa, a.m, a.k, a.lda, a.A),
                                  MatrixView::of_op(a.transb, a.k, a.n, a.ldb, a.B),
                                  MatrixView{a.m, a.n, a.ldc, a.C},
                                  a.k,
                                  a.transa,
                                  a.transb,
                                  resident_a,
                                  es};
    const Memory mx = product ? memory_of(arrays.streamed(0, P), es, resident_a ? dev_b : dev_a) : Memory::Device;
    const Memory my = product ? memory_of(arrays.resident(0, Q), es, resident_a ? dev_a : dev_b) : Memory::Device;
    const Memory mc = memory_of(arrays.tile(0, P, 0, Q), es, dev_c);
    const bool x_host = mx != Memory::Device, y_host = my != Memory::Device, c_host = mc != Memory::Device;

    const plan::GemmProblem g{a.m, a.n, a.k, a.transa, a.transb, es, resident_a, read_c, mx, my, mc, check != nullptr};
    size_t budget = 0;
    GPK_FORWARD_IF_ERROR(device_budget(ctx, p, &budget));
    const plan::GemmPlan pl = plan::plan_gemm(g, ctx.staging, budget);
    if (!pl.fits) return too_small(ctx, pl.shortfall, budget);
    const bool cublas_handle = rung.run == gemm_cublas || (check != nullptr && check->run == gemm_cublas);
    GPK_FORWARD_IF_ERROR(provision(ctx, p, pl.needs, budget, cublas_handle, false));
    // Steps: per chunk its copies in, the compute and the copy out; per block of Y
    // its upload.
    const int64_t per_chunk = (x_host ? 1 : 0) + (c_host && read_c ? 1 : 0) + 1 + (c_host ? 1 : 0);
    int64_t steps = pl.chunks() * per_chunk;
    if (y_host)
        for (int64_t q0 = 0; q0 < Q; q0 += pl.block) {
            const MatrixView y = arrays.resident(q0, std::min(pl.block, Q - q0));
            steps += resident_copies(p, transfer(y, p.shared, device_ld(y.inner, es), es, my));
        }
    GPK_FORWARD_IF_ERROR(p.trace.reserve(ctx, static_cast<size_t>(steps)));

    // Validation: a chunk's check buffer holds its tile of C as the variant computed
    // it, then as the checker did, both packed.
    validation::GemmCheck verdict(ctx, a);
    const auto compare = [&](int64_t index, const char *data) {
        const plan::GemmChunk ch = pl.chunk(index, g);
        const int64_t rows = resident_a ? ch.qc : ch.pc, cols = resident_a ? ch.pc : ch.qc;
        const char *want = data + plan::packed_bytes(MatrixView::packed(rows, cols), es);
        verdict.add(data, rows, want, rows, rows, cols, resident_a ? ch.q0 : ch.p0, resident_a ? ch.p0 : ch.q0);
    };
    const Compare comparison(compare);

    Call call(ctx, p, pl.needs.lanes);
    // Where a block of Y is read from: the caller's array, or the shared buffer that
    // its copy goes to.
    auto resident_at = [&](int64_t q0, int64_t qc, const void **ptr, int64_t *ld) {
        const MatrixView y = arrays.resident(q0, qc);
        *ptr = y_host ? p.shared : y.ptr;
        *ld = y_host ? device_ld(y.inner, es) : y.ld;
    };
    // Chunk `index`'s arguments for the rung, on the lane's buffer where an array is on
    // the host, and its copies in and out; *dev: past what the chunk's copies take.
    auto chunk_args = [&](int64_t index, GemmArgs *gc, Transfer *in, int *n_in, Transfer *out, char **dev) {
        const plan::GemmChunk ch = pl.chunk(index, g);
        const int64_t p0 = ch.p0, pc = ch.pc, q0 = ch.q0, qc = ch.qc;
        *dev = call.device_of(index);
        *n_in = 0, *out = Transfer{};
        *gc = args;
        if (product) {
            const void *y_ptr = nullptr;
            int64_t y_ld = 1;
            resident_at(q0, qc, &y_ptr, &y_ld);
            const MatrixView x = arrays.streamed(p0, pc);
            const void *x_ptr = x.ptr;
            int64_t x_ld = x.ld;
            if (x_host) {
                x_ptr = *dev, x_ld = device_ld(x.inner, es);
                in[(*n_in)++] = transfer(x, *dev, x_ld, es, mx);
                *dev += device_bytes(x, es);
            }
            if (resident_a) gc->A = y_ptr, gc->lda = y_ld, gc->B = x_ptr, gc->ldb = x_ld;
            else gc->A = x_ptr, gc->lda = x_ld, gc->B = y_ptr, gc->ldb = y_ld;
        }
        gc->m = resident_a ? qc : pc;
        gc->n = resident_a ? pc : qc;
        const MatrixView c = arrays.tile(p0, pc, q0, qc);
        gc->C = c.bytes(), gc->ldc = c.ld;
        if (c_host) {
            gc->C = *dev, gc->ldc = device_ld(c.inner, es);
            *out = transfer(c, *dev, gc->ldc, es, mc);
            if (read_c) in[(*n_in)++] = *out;
            *dev += device_bytes(c, es);
        }
    };
    if (rung.takes != nullptr)
        for (int64_t index = 0; index < pl.chunks(); ++index) {
            GemmArgs gc;
            Transfer in[2], out;
            int n_in = 0;
            char *dev = nullptr;
            chunk_args(index, &gc, in, &n_in, &out, &dev);
            const char *why_not = nullptr;
            GPK_FORWARD_IF_ERROR(rung.takes(ctx, gc, &why_not));
            if (why_not != nullptr) return *refused = true, refuse(ctx, "gemm", rung.name, why_not);
        }
    if (check != nullptr) call.compare_with(&comparison);
    return call.run([&]() -> gpk_status {
        for (int64_t index = 0; index < pl.chunks(); ++index) {
            const plan::GemmChunk ch = pl.chunk(index, g);
            if (product && y_host && ch.p0 == 0) {  // a new block of Y
                const MatrixView y = arrays.resident(ch.q0, ch.qc);
                GPK_FORWARD_IF_ERROR(
                    call.upload_resident(index, transfer(y, p.shared, device_ld(y.inner, es), es, my), ch.q0 > 0));
            }
            GemmArgs gc;
            Transfer in[2], out;
            int n_in = 0;
            char *dev = nullptr;
            chunk_args(index, &gc, in, &n_in, &out, &dev);
            // The checker computes into the lane's next tile, from a copy of C's.
            GemmArgs cc = gc;
            cc.C = dev, cc.ldc = device_ld(gc.m, es);
            const auto compute = [&](gpk_context &on) -> gpk_status {
                if (check == nullptr) return rung.run(on, gc);
                const size_t row_bytes = static_cast<size_t>(gc.m) * es;
                if (read_c)
                    GPK_FORWARD_IF_ERROR(cuda::check(on,
                                                     cudaMemcpy2DAsync(cc.C, cc.ldc * es, gc.C, gc.ldc * es, row_bytes,
                                                                       gc.n, cudaMemcpyDeviceToDevice, stream(on)),
                                                     "cudaMemcpy2DAsync (validation, C for the checker)"));
                GPK_FORWARD_IF_ERROR(rung.run(on, gc));
                GPK_FORWARD_IF_ERROR(check->run(on, cc));
                char *host = call.check_of(index);
                GPK_FORWARD_IF_ERROR(fetch(on, host, gc.C, gc.ldc, gc.m, gc.n, es));
                const size_t want = plan::packed_bytes(MatrixView::packed(gc.m, gc.n), es);
                return fetch(on, host + want, cc.C, cc.ldc, gc.m, gc.n, es);
            };
            GPK_FORWARD_IF_ERROR(
                call.chunk(index, in, n_in, c_host ? &out : nullptr, product && y_host, compute));
        }
        GPK_FORWARD_IF_ERROR(call.finish());
        GPK_FORWARD_IF_ERROR(call.wait());
        return check != nullptr ? verdict.verdict(ctx, check->variant, check->checker) : GPK_SUCCESS;
    });
}

// ---- transpose ----------------------------------------------------------------------------

gpk_status staged_transpose(gpk_context &ctx, const TransposeArgs &a, const Rung<TransposeArgs> &rung, bool dev_a,
                            bool dev_b, const Checker<TransposeArgs> *check, bool *refused) {
    *refused = false;
    Pipeline *pp = nullptr;
    GPK_FORWARD_IF_ERROR(get_pipeline(ctx, &pp));
    Pipeline &p = *pp;
    const size_t es = a.elem_size;
    // Chunks are tiles of A, h rows by w columns, whose transposes are tiles of B: in
    // the caller's arrays, w lines of h elements in A and h lines of w elements in B.
    const plan::TransposeArrays arrays{MatrixView{a.rows, a.cols, a.lda, a.A}, MatrixView{a.cols, a.rows, a.ldb, a.B},
                                       es};
    const Memory ma = memory_of(arrays.a, es, dev_a);
    const Memory mb = memory_of(arrays.b, es, dev_b);
    const bool a_host = ma != Memory::Device, b_host = mb != Memory::Device;

    const plan::TransposeProblem t{a.rows, a.cols, es, ma, mb, check != nullptr};
    size_t budget = 0;
    GPK_FORWARD_IF_ERROR(device_budget(ctx, p, &budget));
    const plan::TransposePlan pl = plan::plan_transpose(t, ctx.staging, budget);
    if (!pl.fits) return too_small(ctx, pl.shortfall, budget);
    GPK_FORWARD_IF_ERROR(provision(ctx, p, pl.needs, budget, rung.run == transpose_geam, false));
    const int64_t per_chunk = (a_host ? 1 : 0) + 1 + (b_host ? 1 : 0);
    GPK_FORWARD_IF_ERROR(p.trace.reserve(ctx, static_cast<size_t>(pl.chunks() * per_chunk)));

    // Validation: a chunk's check buffer holds its tile of A, then the variant's
    // transpose of it, both packed.
    validation::TransposeCheck verdict(a);
    const auto compare = [&](int64_t index, const char *data) {
        const plan::TransposeChunk ch = pl.chunk(index, t);
        const char *b = data + plan::packed_bytes(t.a_tile(ch.hc, ch.wc), es);
        verdict.add(data, ch.hc, b, ch.wc, ch.hc, ch.wc, ch.i0, ch.j0);
    };
    const Compare comparison(compare);

    Call call(ctx, p, pl.needs.lanes);
    // Chunk `index`'s arguments for the rung, on the lane's buffers where an array is on
    // the host, and its copies in and out.
    auto chunk_args = [&](int64_t index, TransposeArgs *tc, Transfer *in, Transfer *out) {
        const plan::TransposeChunk ch = pl.chunk(index, t);
        char *dev = call.device_of(index);
        *tc = a;
        tc->rows = ch.hc, tc->cols = ch.wc;
        const MatrixView ap = arrays.a_tile(ch), bp = arrays.b_tile(ch);
        *in = Transfer{}, *out = Transfer{};
        tc->A = ap.ptr, tc->lda = ap.ld;
        if (a_host) {
            tc->A = dev, tc->lda = device_ld(ap.inner, es);
            *in = transfer(ap, dev, tc->lda, es, ma);
            dev += device_bytes(ap, es);
        }
        tc->B = bp.bytes(), tc->ldb = bp.ld;
        if (b_host) {
            tc->B = dev, tc->ldb = device_ld(bp.inner, es);
            *out = transfer(bp, dev, tc->ldb, es, mb);
        }
    };
    // A rung that refuses some piece refuses the whole call here, before the first
    // copy: otherwise the pieces before it would already be in B when the call fails.
    if (rung.takes != nullptr)
        for (int64_t index = 0; index < pl.chunks(); ++index) {
            TransposeArgs tc;
            Transfer in{}, out{};
            chunk_args(index, &tc, &in, &out);
            const char *why_not = nullptr;
            GPK_FORWARD_IF_ERROR(rung.takes(ctx, tc, &why_not));
            if (why_not != nullptr) return *refused = true, refuse(ctx, "transpose", rung.name, why_not);
        }
    if (check != nullptr) call.compare_with(&comparison);
    return call.run([&]() -> gpk_status {
        for (int64_t index = 0; index < pl.chunks(); ++index) {
            TransposeArgs tc;
            Transfer in{}, out{};
            chunk_args(index, &tc, &in, &out);
            const int64_t hc = tc.rows, wc = tc.cols;
            const auto compute = [&](gpk_context &on) -> gpk_status {
                GPK_FORWARD_IF_ERROR(rung.run(on, tc));
                if (check == nullptr) return GPK_SUCCESS;
                char *host = call.check_of(index);
                GPK_FORWARD_IF_ERROR(fetch(on, host, tc.A, tc.lda, hc, wc, es));
                return fetch(on, host + plan::packed_bytes(t.a_tile(hc, wc), es), tc.B, tc.ldb, wc, hc, es);
            };
            GPK_FORWARD_IF_ERROR(call.chunk(index, &in, a_host ? 1 : 0, b_host ? &out : nullptr, false, compute));
        }
        GPK_FORWARD_IF_ERROR(call.finish());
        GPK_FORWARD_IF_ERROR(call.wait());
        return check != nullptr ? verdict.verdict(ctx, check->variant) : GPK_SUCCESS;
    });
}

// ---- reduce -------------------------------------------------------------------------------

gpk_status staged_reduce(gpk_context &ctx, const ReduceArgs &a, const Rung<ReduceArgs> &rung, bool dev_result,
                         const Checker<ReduceArgs> *check, bool *refused) {
    *refused = false;
    Pipeline *pp = nullptr;
    GPK_FORWARD_IF_ERROR(get_pipeline(ctx, &pp));
    Pipeline &p = *pp;
    const size_t es = dtype_size(a.dtype), rs = reduce_result_size(a.dtype);
    char *x = static_cast<char *>(const_cast<void *>(a.x));
    const bool pinned = pinned_span(x, static_cast<size_t>(a.n) * es);
    // Partials have the result's type: integers are already 64-bit sums, and F16 and
    // BF16 partials are F32 sums.
    const int partial_dtype = a.dtype == GPK_F32 || is_16bit(a.dtype) ? GPK_F32 : a.dtype == GPK_F64 ? GPK_F64 : GPK_I64;

    const plan::ReduceProblem r{a.n, es, rs, pinned, dev_result, check != nullptr};
    size_t budget = 0;
    GPK_FORWARD_IF_ERROR(device_budget(ctx, p, &budget));
    const plan::ReducePlan pl = plan::plan_reduce(r, ctx.staging, budget);
    if (!pl.fits) return too_small(ctx, pl.shortfall, budget);
    GPK_FORWARD_IF_ERROR(provision(ctx, p, pl.needs, budget, false, true));
    GPK_FORWARD_IF_ERROR(p.trace.reserve(ctx, static_cast<size_t>(pl.chunks() * 2)));  // copy in, compute
    char *partials = p.shared;
    void *result = dev_result ? a.result : p.shared + pl.result_offset;
    // Validation: the checker reduces the same pieces into partials of its own, then
    // those, and the two results are compared (the rule compares whole results).
    char *check_partials = p.shared + pl.check_offset;
    void *check_result = p.shared + pl.check_result_offset;
    unsigned char got[8] = {}, want[8] = {};

    Call call(ctx, p, pl.needs.lanes);
    // The rung reduces each piece, then the partials: it is asked about all of them
    // before the first copy.
    const ReduceArgs last{partial_dtype, a.op, partials, pl.pieces, result};
    if (rung.takes != nullptr)
        for (int64_t index = 0; index <= pl.chunks(); ++index) {
            const plan::ReduceChunk ch = pl.chunk(std::min(index, pl.chunks() - 1), r);
            const ReduceArgs rc = index < pl.chunks()
                                      ? ReduceArgs{a.dtype, a.op, call.device_of(index), ch.count, partials + index * rs}
                                      : last;
            const char *why_not = nullptr;
            GPK_FORWARD_IF_ERROR(rung.takes(ctx, rc, &why_not));
            if (why_not != nullptr) return *refused = true, refuse(ctx, "reduce", rung.name, why_not);
        }
    return call.run([&]() -> gpk_status {
        for (int64_t index = 0; index < pl.chunks(); ++index) {
            const plan::ReduceChunk ch = pl.chunk(index, r);
            char *dev = call.device_of(index);
            const size_t bytes = static_cast<size_t>(ch.count) * es;
            const Transfer in{x + ch.first * es, bytes, dev, bytes, bytes, 1, pinned};
            const ReduceArgs rc{a.dtype, a.op, dev, ch.count, partials + index * rs};
            const auto compute = [&](gpk_context &on) -> gpk_status {
                GPK_FORWARD_IF_ERROR(rung.run(on, rc));
                if (check == nullptr) return GPK_SUCCESS;
                return check->run(on, ReduceArgs{a.dtype, a.op, dev, ch.count, check_partials + index * rs});
            };
            GPK_FORWARD_IF_ERROR(call.chunk(index, &in, 1, nullptr, false, compute));
        }
        GPK_FORWARD_IF_ERROR(call.finish());
        // The checker's partials first: whatever it fails with comes before the
        // variant's result is written.
        if (check != nullptr)
            GPK_FORWARD_IF_ERROR(
                check->run(ctx, ReduceArgs{partial_dtype, a.op, check_partials, pl.pieces, check_result}));
        // The partials in piece order, on the context's stream: the same tree every run.
        GPK_FORWARD_IF_ERROR(rung.run(ctx, last));
        if (!dev_result)
            GPK_CUDA_TRY(ctx, cudaMemcpyAsync(a.result, result, rs, cudaMemcpyDeviceToHost, stream(ctx)));
        if (check != nullptr) {
            GPK_CUDA_TRY(ctx, cudaMemcpyAsync(got, result, rs, cudaMemcpyDeviceToHost, stream(ctx)));
            GPK_CUDA_TRY(ctx, cudaMemcpyAsync(want, check_result, rs, cudaMemcpyDeviceToHost, stream(ctx)));
        }
        GPK_FORWARD_IF_ERROR(call.wait());
        if (check == nullptr) return GPK_SUCCESS;
        // x is host memory, read in place for the tolerance.
        const double abs_sum = validation::reduce_needs_abs_sum(a, got, want) ? validation::reduce_abs_sum(a, x) : 0;
        return validation::compare_reduce(ctx, a, got, want, abs_sum, check->variant, check->checker);
    });
}

// ---- gemm_batched -------------------------------------------------------------------------

gpk_status staged_gemm_batched(gpk_context &ctx, const GemmBatchedCall &user, Launcher<GemmBatchedCall> run,
                               const MatrixView &sa, const MatrixView &sb, const MatrixView &sc, bool dev_a,
                               bool dev_b, bool dev_c, const Checker<GemmBatchedCall> *check) {
    Pipeline *pp = nullptr;
    GPK_FORWARD_IF_ERROR(get_pipeline(ctx, &pp));
    Pipeline &p = *pp;
    const size_t es = dtype_size(user.dtype);
    const int64_t batch = user.batch_count;
    // Whether A and B are read and C is, on alpha and beta in the dtype (scalars.hpp);
    // the rung gets beta as 0 where C was not copied in.
    const bool product = user.k > 0 && !plan::zero_in(user.dtype, user.alpha);
    const bool read_c = !plan::zero_in(user.dtype, user.beta);
    GemmBatchedCall args = user;
    if (!read_c) args.beta = 0.0;

    // On the device a chunk's products lie one after another: A and B as their spans
    // (their ld kept), C as whole lines (ld * lines, its ldc kept), so that each
    // operand of a chunk moves in one 2-D copy -- when the caller's spans do not
    // overlap and its C matrices are evenly spaced; else a chunk is one product.
    const bool copy_a = product && !dev_a, copy_b = product && !dev_b, c_host = !dev_c;
    const bool shared_a = copy_a && user.stride_a == 0, shared_b = copy_b && user.stride_b == 0;
    const int64_t span_a = sa.span(), span_b = sb.span(), step_c = sc.ld * sc.outer;
    char *A = static_cast<char *>(const_cast<void *>(user.A)), *B = static_cast<char *>(const_cast<void *>(user.B));
    char *C = static_cast<char *>(user.C);
    // The whole batch of each operand, for where it lives.
    auto batch_of = [&](char *ptr, int64_t span, int64_t stride) {
        return stride == 0 ? MatrixView{span, 1, span, ptr} : MatrixView{span, batch, stride, ptr};
    };
    const Memory ma = copy_a ? memory_of(batch_of(A, span_a, user.stride_a), es, false) : Memory::Device;
    const Memory mb = copy_b ? memory_of(batch_of(B, span_b, user.stride_b), es, false) : Memory::Device;
    const Memory mc = c_host ? memory_of(batch_of(C, sc.span(), user.stride_c), es, false) : Memory::Device;
    const bool several = (!copy_a || shared_a || user.stride_a >= span_a) &&
                         (!copy_b || shared_b || user.stride_b >= span_b) && (!c_host || user.stride_c == step_c);
    auto pageable = [](Memory m, int64_t elements, size_t size) {
        return m == Memory::Pageable ? static_cast<size_t>(elements) * size : size_t{0};
    };
    plan::GemmBatchedProblem g{batch,
                               copy_a ? static_cast<size_t>(span_a) * es : 0,
                               copy_b ? static_cast<size_t>(span_b) * es : 0,
                               c_host ? static_cast<size_t>(step_c) * es : 0,
                               shared_a,
                               shared_b};
    g.several = several;
    g.slot_a = shared_a ? 0 : pageable(ma, span_a, es);
    g.slot_b = shared_b ? 0 : pageable(mb, span_b, es);
    g.slot_c_out = pageable(mc, sc.inner * sc.outer, es);
    g.slot_c_in = read_c ? g.slot_c_out : 0;
    g.slot_shared = std::max(shared_a ? pageable(ma, span_a, es) : 0, shared_b ? pageable(mb, span_b, es) : 0);
    const int64_t packed_c = sc.inner * sc.outer;  // one product's C, packed
    if (check != nullptr) g.check_c = static_cast<size_t>(packed_c) * es;
    size_t budget = 0;
    GPK_FORWARD_IF_ERROR(device_budget(ctx, p, &budget));
    const plan::GemmBatchedPlan pl = plan::plan_gemm_batched(g, ctx.staging, budget);
    if (!pl.fits) return too_small(ctx, pl.shortfall, budget);
    const bool cublas_handle = run == gemm_batched_cublas ||
                               (check != nullptr && check->run == gemm_batched_cublas);
    GPK_FORWARD_IF_ERROR(provision(ctx, p, pl.needs, budget, cublas_handle, false));

    // The shared operands, in the pipeline's shared buffer.
    char *shared_a_dev = p.shared, *shared_b_dev = p.shared + (shared_a ? plan::align_up(g.a) : 0);
    const Transfer up_a = transfer(batch_of(A, span_a, 0), shared_a_dev, span_a, es, ma);
    const Transfer up_b = transfer(batch_of(B, span_b, 0), shared_b_dev, span_b, es, mb);
    const int64_t per_chunk = (copy_a && !shared_a ? 1 : 0) + (copy_b && !shared_b ? 1 : 0) +
                              (c_host && read_c ? 1 : 0) + 1 + (c_host ? 1 : 0);
    int64_t steps = pl.chunks() * per_chunk;
    if (shared_a) steps += resident_copies(p, up_a);
    if (shared_b) steps += resident_copies(p, up_b);
    GPK_FORWARD_IF_ERROR(p.trace.reserve(ctx, static_cast<size_t>(steps)));

    // Validation: a chunk's check buffer holds its products' C as the variant computed
    // them, then as the checker did, both packed; each product is a gemm of its own,
    // with its own scale and tolerance. The first product beyond its tolerance is the
    // verdict.
    const GemmArgs one{user.dtype, false, false, user.m, user.n, user.k, user.alpha, nullptr, 1, nullptr, 1,
                       user.beta, nullptr, 1};
    int64_t failed = -1;
    double failed_tolerance = 0;
    const auto compare = [&](int64_t index, const char *data) {
        const plan::GemmBatchedChunk ch = pl.chunk(index, g);
        const size_t bytes = static_cast<size_t>(packed_c) * es;
        const char *want = data + plan::align_up(bytes * static_cast<size_t>(pl.per_chunk));
        for (int64_t b = 0; b < ch.count && failed < 0; ++b) {
            validation::GemmCheck verdict(ctx, one);
            verdict.add(data + b * bytes, sc.inner, want + b * bytes, sc.inner, sc.inner, sc.outer, 0, 0);
            if (!verdict.passed()) failed = ch.first + b, failed_tolerance = verdict.tolerance();
        }
    };
    const Compare comparison(compare);

    Call call(ctx, p, pl.needs.lanes);
    if (check != nullptr) call.compare_with(&comparison);
    return call.run([&]() -> gpk_status {
        if (shared_a) GPK_FORWARD_IF_ERROR(call.upload_resident(0, up_a, false));
        if (shared_b) GPK_FORWARD_IF_ERROR(call.upload_resident(0, up_b, false));
        for (int64_t index = 0; index < pl.chunks(); ++index) {
            const plan::GemmBatchedChunk ch = pl.chunk(index, g);
            const int64_t first = ch.first, n = ch.count;
            char *dev = call.device_of(index);
            Transfer in[3];
            int n_in = 0;
            GemmBatchedCall c = args;
            c.batch_count = n;
            // A and B may be NULL when they are not read: no offset is formed then.
            if (product) {
                c.A = A + first * user.stride_a * es;
                c.B = B + first * user.stride_b * es;
            }
            auto stage = [&](const void *from, int64_t span, int64_t stride, Memory m, const void **ptr,
                             int64_t *dstride) {
                in[n_in++] = transfer(MatrixView{span, n, n > 1 ? stride : span, from}, dev, span, es, m);
                *ptr = dev, *dstride = span;
                dev += plan::align_up(static_cast<size_t>(n * span) * es);
            };
            if (shared_a) c.A = shared_a_dev;
            else if (copy_a) stage(c.A, span_a, user.stride_a, ma, &c.A, &c.stride_a);
            if (shared_b) c.B = shared_b_dev;
            else if (copy_b) stage(c.B, span_b, user.stride_b, mb, &c.B, &c.stride_b);
            Transfer out{};
            c.C = C + first * user.stride_c * es;
            if (c_host) {
                // n products' lines, evenly spaced (or one product's).
                out = transfer(MatrixView{sc.inner, n * sc.outer, sc.ld, c.C}, dev, sc.ld, es, mc);
                if (read_c) in[n_in++] = out;
                c.C = dev, c.stride_c = step_c;
                dev += plan::align_up(static_cast<size_t>(n * step_c) * es);
            }
            // The checker computes into packed matrices after the lane's operands, from a
            // copy of C's when C is read.
            GemmBatchedCall kc = c;
            kc.C = dev, kc.ldc = sc.inner, kc.stride_c = packed_c;
            const auto compute = [&](gpk_context &on) -> gpk_status {
                // C's products, one 2-D copy each, between `c`'s layout and packed ones.
                auto each = [&](void *to, int64_t to_ld, int64_t to_stride, const void *from, int64_t from_ld,
                                int64_t from_stride, cudaMemcpyKind kind) -> gpk_status {
                    for (int64_t b = 0; b < n; ++b)
                        GPK_CUDA_TRY(on, cudaMemcpy2DAsync(static_cast<char *>(to) + b * to_stride * es, to_ld * es,
                                                           static_cast<const char *>(from) + b * from_stride * es,
                                                           from_ld * es, sc.inner * es, sc.outer, kind, stream(on)));
                    return GPK_SUCCESS;
                };
                if (check != nullptr && read_c)
                    GPK_FORWARD_IF_ERROR(each(kc.C, kc.ldc, kc.stride_c, c.C, c.ldc, c.stride_c,
                                              cudaMemcpyDeviceToDevice));
                const gpk_status st = run(on, c);
                if (st != GPK_SUCCESS || check == nullptr) return st;
                GPK_FORWARD_IF_ERROR(check->run(on, kc));
                char *host = call.check_of(index);
                const size_t bytes = static_cast<size_t>(packed_c) * es;
                GPK_FORWARD_IF_ERROR(each(host, sc.inner, packed_c, c.C, c.ldc, c.stride_c, cudaMemcpyDeviceToHost));
                const size_t want = plan::align_up(bytes * static_cast<size_t>(pl.per_chunk));
                return each(host + want, sc.inner, packed_c, kc.C, kc.ldc, kc.stride_c, cudaMemcpyDeviceToHost);
            };
            GPK_FORWARD_IF_ERROR(call.chunk(index, in, n_in, c_host ? &out : nullptr, shared_a || shared_b, compute));
        }
        GPK_FORWARD_IF_ERROR(call.finish());
        GPK_FORWARD_IF_ERROR(call.wait());
        GPK_RETURN_ERROR_IF(failed >= 0, &ctx, GPK_ERROR_VALIDATION,
                            "gemm_batched variant '%s' differs from '%s' in product %lld beyond tolerance %.3g",
                            check->variant, check->checker, static_cast<long long>(failed), failed_tolerance);
        return GPK_SUCCESS;
    });
}

// gpk_stage_trace: the steps of the context's last staged call, read from its
// pipeline's trace; none before the pipeline is made.
gpk_status stage_trace(gpk_context &ctx, gpk_stage_event *events, int64_t capacity, int64_t *count) {
    const Pipeline *p = pipeline_of(ctx);
    if (p == nullptr) {
        *count = 0;
        return GPK_SUCCESS;
    }
    return p->trace.read(ctx, events, capacity, count);
}

}  // namespace gpk::cuda
