#include "panels.hpp"

#include "../common/gpus.hpp"

#if defined(GPK_APP_NCCL)
#include <nccl.h>
#endif

#include <algorithm>
#include <thread>

namespace gpk_gemm_app::panels {

namespace gpus = gpk_app::gpus;

Span share(uint64_t total, int parts, int index) {
    const uint64_t p = static_cast<uint64_t>(parts), i = static_cast<uint64_t>(index);
    const uint64_t base = total / p, extra = total % p;
    return Span{i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

Span b_rows(const Plan &plan, int parts, int index) {
    if (plan.b_from_root) return index == 0 ? Span{0, plan.opt.k} : Span{0, 0};
    return share(plan.opt.k, parts, index);
}

bool cuda_ok(Part *p, cudaError_t err, const char *what) {
    if (err == cudaSuccess) return true;
    (void)cudaGetLastError();
    if (p->error.empty())
        p->error = "GPU " + std::to_string(p->device) + ": " + what + ": " + cudaGetErrorString(err);
    return false;
}

bool gpk_ok(Part *p, gpk_status st, const char *what) {
    if (st == GPK_SUCCESS) return true;
    if (p->error.empty())
        p->error = "GPU " + std::to_string(p->device) + ": " + what + ": " + gpk_status_string(st) + ": " +
                   gpk_last_error(p->ctx);
    return false;
}

#if defined(GPK_APP_NCCL)
bool nccl_ok(Part *p, int result, const char *what) {
    const auto r = static_cast<ncclResult_t>(result);
    if (r == ncclSuccess) return true;
    if (p->error.empty())
        p->error = "GPU " + std::to_string(p->device) + ": " + what + ": " + ncclGetErrorString(r);
    return false;
}
#else
bool nccl_ok(Part *p, int result, const char *what) {
    if (result == 0) return true;
    if (p->error.empty()) p->error = "GPU " + std::to_string(p->device) + ": " + what + ": NCCL error";
    return false;
}
#endif

uint64_t chunk_rows_for(const Options &o) {
    const uint64_t row_bytes = std::max(o.k, o.n) * elem_size(o.dtype);
    const uint64_t target = o.chunk_bytes ? o.chunk_bytes : kDefaultChunkBytes;
    uint64_t rows = std::max<uint64_t>(1, target / std::max<uint64_t>(1, row_bytes));
    // Whole tiles of 128 rows where the chunk is that large, for the kernels' sake.
    if (rows > 128) rows -= rows % 128;
    return std::min<uint64_t>(rows, std::max<uint64_t>(1, o.m));
}

// Streams, device buffers and events for a part on the GPU, before any timing.
bool set_up_gpu(Part *p, const Plan &plan) {
    const Options &o = plan.opt;
    const size_t e = elem_size(o.dtype);
    if (!cuda_ok(p, cudaSetDevice(p->device), "cudaSetDevice")) return false;
    for (cudaStream_t *s : {&p->h2d, &p->compute, &p->d2h})
        if (!cuda_ok(p, cudaStreamCreateWithFlags(s, cudaStreamNonBlocking), "cudaStreamCreate")) return false;
    if (!gpk_ok(p, gpk_set_stream(p->ctx, p->compute), "gpk_set_stream")) return false;
    if (!cuda_ok(p, cudaMalloc(&p->dB, std::max<size_t>(1, o.k * o.n * e)), "cudaMalloc of B")) return false;
    for (int s = 0; s < kSlots; ++s) {
        if (!cuda_ok(p, cudaMalloc(&p->dA[s], std::max<size_t>(1, plan.chunk_rows * o.k * e)), "cudaMalloc of A's ring") ||
            !cuda_ok(p, cudaMalloc(&p->dC[s], std::max<size_t>(1, plan.chunk_rows * o.n * e)), "cudaMalloc of C's ring"))
            return false;
        for (cudaEvent_t *ev : {&p->loaded[s], &p->computed[s], &p->stored[s]})
            if (!cuda_ok(p, cudaEventCreateWithFlags(ev, cudaEventDisableTiming), "cudaEventCreate")) return false;
    }
    const uint64_t most_chunks = (std::max<uint64_t>(1, o.m) + plan.chunk_rows - 1) / plan.chunk_rows;
    p->kernel_start.resize(most_chunks);
    p->kernel_end.resize(most_chunks);
    for (uint64_t c = 0; c < most_chunks; ++c)
        if (!cuda_ok(p, cudaEventCreate(&p->kernel_start[c]), "cudaEventCreate") ||
            !cuda_ok(p, cudaEventCreate(&p->kernel_end[c]), "cudaEventCreate"))
            return false;
    return true;
}

void tear_down_gpu(Part *p) {
    if (p->backend != GPK_BACKEND_CUDA) return;
    cudaSetDevice(p->device);
    for (cudaEvent_t ev : p->kernel_start) cudaEventDestroy(ev);
    for (cudaEvent_t ev : p->kernel_end) cudaEventDestroy(ev);
    for (int s = 0; s < kSlots; ++s) {
        cudaFree(p->dA[s]);
        cudaFree(p->dC[s]);
        for (cudaEvent_t ev : {p->loaded[s], p->computed[s], p->stored[s]})
            if (ev) cudaEventDestroy(ev);
    }
    cudaFree(p->dB);
    // The context's work goes on the compute stream: back to the default stream
    // before that one goes.
    if (p->ctx) gpk_set_stream(p->ctx, nullptr);
    for (cudaStream_t s : {p->h2d, p->compute, p->d2h})
        if (s) cudaStreamDestroy(s);
    (void)cudaGetLastError();
}

// One pass of the pipeline on part p's GPU over `parts` parts (1: p alone, all rows,
// no exchange of B). Returns when p's rows of C are in host memory.
static bool pass_gpu(Part *p, const Plan &plan, int parts, int index) {
    const Options &o = plan.opt;
    const size_t e = elem_size(o.dtype);
    const auto *A = static_cast<const unsigned char *>(plan.A);
    const auto *B = static_cast<const unsigned char *>(plan.B);
    auto *C = static_cast<unsigned char *>(plan.C);
    auto *dB = static_cast<unsigned char *>(p->dB);
    p->start = gpus::now();
    p->rows = share(o.m, parts, index);
    if (!cuda_ok(p, cudaSetDevice(p->device), "cudaSetDevice")) return false;

    // B: this part's slice from the host, then every slice from its part over NVLink.
    const Span slice = b_rows(plan, parts, index);
    if (slice.count > 0 &&
        !cuda_ok(p, cudaMemcpyAsync(dB + slice.first * o.n * e, B + slice.first * o.n * e, slice.count * o.n * e,
                                    cudaMemcpyHostToDevice, p->h2d),
                 "copy of B's slice to the GPU"))
        return false;
    if (parts > 1) {
#if defined(GPK_APP_NCCL)
        cudaEvent_t b_in = p->loaded[0];
        if (!cuda_ok(p, cudaEventRecord(b_in, p->h2d), "cudaEventRecord") ||
            !cuda_ok(p, cudaStreamWaitEvent(p->compute, b_in, 0), "cudaStreamWaitEvent"))
            return false;
        const ncclDataType_t type = o.dtype == GPK_F32 ? ncclFloat32 : ncclFloat64;
        bool ok = nccl_ok(p, ncclGroupStart(), "ncclGroupStart");
        for (int root = 0; root < parts && ok; ++root) {
            const Span s = b_rows(plan, parts, root);
            if (s.count == 0) continue;
            void *at = dB + s.first * o.n * e;
            ok = nccl_ok(p, ncclBroadcast(at, at, s.count * o.n, type, root, static_cast<ncclComm_t>(p->comm), p->compute),
                         "ncclBroadcast of B");
        }
        if (!nccl_ok(p, ncclGroupEnd(), "ncclGroupEnd") || !ok) return false;
#else
        p->error = "this build has no NCCL: B cannot go from GPU to GPU";
        return false;
#endif
    } else {
        if (!cuda_ok(p, cudaEventRecord(p->loaded[0], p->h2d), "cudaEventRecord") ||
            !cuda_ok(p, cudaStreamWaitEvent(p->compute, p->loaded[0], 0), "cudaStreamWaitEvent"))
            return false;
    }

    // A in, gpk_gemm, C out, chunk by chunk through the ring. Each stage waits for
    // the one before it on the same chunk, and for the slot's previous chunk to have
    // left the stage after it: a copy in may not overwrite A's slot before its
    // product has read it, a product may not overwrite C's slot before its copy out.
    const uint64_t R = plan.chunk_rows;
    p->chunks = (p->rows.count + R - 1) / R;
    for (uint64_t c = 0; c < p->chunks; ++c) {
        const int s = static_cast<int>(c % kSlots);
        const uint64_t row = p->rows.first + c * R, rows = std::min(R, p->rows.first + p->rows.count - row);
        const bool reused = c >= static_cast<uint64_t>(kSlots);
        if (reused && !cuda_ok(p, cudaStreamWaitEvent(p->h2d, p->computed[s], 0), "cudaStreamWaitEvent")) return false;
        if (!cuda_ok(p, cudaMemcpyAsync(p->dA[s], A + row * o.k * e, rows * o.k * e, cudaMemcpyHostToDevice, p->h2d),
                     "copy of A's rows to the GPU") ||
            !cuda_ok(p, cudaEventRecord(p->loaded[s], p->h2d), "cudaEventRecord") ||
            !cuda_ok(p, cudaStreamWaitEvent(p->compute, p->loaded[s], 0), "cudaStreamWaitEvent"))
            return false;
        if (reused && !cuda_ok(p, cudaStreamWaitEvent(p->compute, p->stored[s], 0), "cudaStreamWaitEvent")) return false;
        if (!cuda_ok(p, cudaEventRecord(p->kernel_start[c], p->compute), "cudaEventRecord") ||
            !gpk_ok(p, multiply(p->ctx, o.dtype, rows, o.n, o.k, p->dA[s], p->dB, p->dC[s]), "gpk_gemm") ||
            !cuda_ok(p, cudaEventRecord(p->kernel_end[c], p->compute), "cudaEventRecord") ||
            !cuda_ok(p, cudaEventRecord(p->computed[s], p->compute), "cudaEventRecord") ||
            !cuda_ok(p, cudaStreamWaitEvent(p->d2h, p->computed[s], 0), "cudaStreamWaitEvent") ||
            !cuda_ok(p, cudaMemcpyAsync(C + row * o.n * e, p->dC[s], rows * o.n * e, cudaMemcpyDeviceToHost, p->d2h),
                     "copy of C's rows to the host") ||
            !cuda_ok(p, cudaEventRecord(p->stored[s], p->d2h), "cudaEventRecord"))
            return false;
    }
    // Every stream of the part drains: the copies out end last, but an empty share
    // has only the exchange of B on the compute stream.
    for (cudaStream_t st : {p->h2d, p->compute, p->d2h})
        if (!cuda_ok(p, cudaStreamSynchronize(st), "the part's work on the GPU")) return false;
    p->end = gpus::now();
    p->compute_s = 0;
    for (uint64_t c = 0; c < p->chunks; ++c) {
        float ms = 0;
        if (!cuda_ok(p, cudaEventElapsedTime(&ms, p->kernel_start[c], p->kernel_end[c]), "cudaEventElapsedTime"))
            return false;
        p->compute_s += ms * 1e-3;
    }
    return true;
}

// The same split on the host backend: no copies, each thread's rows in place.
static bool pass_host(Part *p, const Plan &plan, int parts, int index) {
    const Options &o = plan.opt;
    const size_t e = elem_size(o.dtype);
    p->start = gpus::now();
    p->rows = share(o.m, parts, index);
    p->chunks = p->rows.count > 0 ? 1 : 0;
    if (p->rows.count > 0 &&
        !gpk_ok(p,
                multiply(p->ctx, o.dtype, p->rows.count, o.n, o.k,
                         static_cast<const unsigned char *>(plan.A) + p->rows.first * o.k * e, plan.B,
                         static_cast<unsigned char *>(plan.C) + p->rows.first * o.n * e),
                "gpk_gemm"))
        return false;
    p->end = gpus::now();
    p->compute_s = p->end - p->start;
    return true;
}

bool pass(Part *p, const Plan &plan, int parts, int index) {
    return p->backend == GPK_BACKEND_CUDA ? pass_gpu(p, plan, parts, index) : pass_host(p, plan, parts, index);
}

// fill(), row ranges on several threads: the matrices of a large problem are
// gigabytes, and one thread would take longer to make them than the GPUs to multiply.
void fill_parallel(Matrix *x, uint64_t seed, int stream) {
    const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    const uint64_t count = x->rows() * x->cols();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([=] {
            const Span s = share(count, static_cast<int>(threads), static_cast<int>(t));
            if (x->dtype() == GPK_F32) {
                float *p = static_cast<float *>(x->data());
                for (uint64_t e = s.first; e < s.first + s.count; ++e) p[e] = static_cast<float>(entry(seed, stream, e));
            } else {
                double *p = static_cast<double *>(x->data());
                for (uint64_t e = s.first; e < s.first + s.count; ++e) p[e] = entry(seed, stream, e);
            }
        });
    for (std::thread &t : pool) t.join();
}

}  // namespace gpk_gemm_app::panels
