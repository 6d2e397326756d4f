// How rungs 13_skinny and 14_gram run a call on kernel.cuh's kernels: the
// call's form (which operand is W, the long one, and which is X), the kernel
// configuration as a table over the operands' layouts, the workspace, the launches.
#pragma once

#include "../gemm_util.cuh"
#include "kernel.cuh"

#include <map>
#include <mutex>
#include <utility>

namespace gpk::cuda::membound {

// The short side both rungs take: min(m, n) at most this.
constexpr int64_t kMaxShort = 128;
// Partials of the splits, per launch; longer W is cut into launches of fewer rows.
constexpr size_t kWorkspaceBytes = size_t(64) << 20;

// The call as out(p, q) = sum_k W(p, k) X(k, q). C = op(A) op(B) with n <= m is
// out = C (W = op(A), X = op(B)); with m < n it is out = C^T (W = op(B)^T, X =
// op(A)^T), the transpose identity, so that X always has the short side s.
struct Form {
    const void *W, *X;
    int64_t ldw, ldx;
    bool wk, xk;  // W(p, k) contiguous along k; X(k, q) contiguous along k
    int64_t L, s;
    int64_t c_p, c_q;
};

inline Form form_of(const GemmArgs &a) {
    if (a.n <= a.m) return Form{a.A, a.B, a.lda, a.ldb, a.transa, !a.transb, a.m, a.n, 1, a.ldc};
    return Form{a.B, a.A, a.ldb, a.lda, !a.transb, a.transa, a.n, a.m, a.ldc, 1};
}

// 16-byte copies: the pointer on 16 bytes and the leading dimension whole vectors.
inline bool vec_ok(const void *p, int64_t ld, size_t es) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (ld * static_cast<int64_t>(es)) % 16 == 0;
}

// One kernel configuration, for the call's layouts.
template <class T, class Acc>
struct Plan {
    void (*kernel)(Params<T, Acc>);
    int threads, bp, bq;
    size_t smem;
};

template <class T, int RP, int PT, int TQ, int QT, int G, int BK>
struct SimtCfg {
    template <bool Wk, bool Xk>
    static Plan<T, T> one() {
        using S = Simt<T, RP, PT, TQ, QT, G, BK, Wk, Xk>;
        return {simt_kernel<T, RP, PT, TQ, QT, G, BK, Wk, Xk>, S::kThreads, S::BP, S::BQ, S::kSmem};
    }
    static Plan<T, T> plan(bool wk, bool xk) {
        return wk ? (xk ? one<true, true>() : one<true, false>()) : (xk ? one<false, true>() : one<false, false>());
    }
};

// The tensor-core kernel takes the layouts as arguments: one kernel for all four.
template <bool kBf16, int WP, int MT, int G, int BK>
struct MmaCfg {
    static Plan<uint16_t, float> plan(bool wk, bool xk) {
        using S = Mma<WP, MT, G, BK>;
        return {mma_kernel<kBf16, WP, MT, G, BK>, S::kThreads, S::BP, S::BQ, S::smem(wk, xk)};
    }
};

// The rung's kernel for a call: F32 and F64 on the FMA units (TF32 mode computes in
// exact F32 too), F16 and BF16 on the tensor cores.
struct Plans {
    Plan<float, float> f32;
    Plan<double, double> f64;
    Plan<uint16_t, float> f16, bf16;
};

// What a device allows, asked once per device and process: these calls are short
// (tens of microseconds), and the runtime's queries would be a part of them.
struct DeviceLimits {
    int major = 0;
    size_t smem_optin = 0;
};

inline gpk_status device_limits(gpk_context &ctx, DeviceLimits *out) {
    static std::mutex mutex;
    static DeviceLimits known[64];
    static bool asked[64] = {};
    const int d = ctx.device;
    if (d >= 0 && d < 64) {
        std::lock_guard<std::mutex> lock(mutex);
        if (asked[d]) {
            *out = known[d];
            return GPK_SUCCESS;
        }
    }
    int major = 0, optin = 0;
    GPK_FORWARD_IF_ERROR(gemm_util::device_attribute(ctx, cudaDevAttrComputeCapabilityMajor, &major));
    GPK_FORWARD_IF_ERROR(gemm_util::device_attribute(ctx, cudaDevAttrMaxSharedMemoryPerBlockOptin, &optin));
    *out = DeviceLimits{major, static_cast<size_t>(optin)};
    if (d >= 0 && d < 64) {
        std::lock_guard<std::mutex> lock(mutex);
        known[d] = *out, asked[d] = true;
    }
    return GPK_SUCCESS;
}

// Why the GPU of `lim` cannot run the call's configuration, or null when it can.
inline const char *refusal(const DeviceLimits &lim, const GemmArgs &a, size_t smem) {
    if (a.m > kMaxShort && a.n > kMaxShort) return "neither m nor n is at most 128";
    if (lim.major < 8) return "it needs a GPU of compute capability 8.0 or newer";
    if (smem > lim.smem_optin) return "the GPU cannot give a block the shared memory it needs";
    return nullptr;
}

// Lets `kernel` use `bytes` of dynamic shared memory on the context's device, once per
// kernel and device (refusal has checked that the device has that much). A kernel's
// bytes are the most its layouts need, asked for on its first call, and more on a
// later call whose layout needs more.
inline gpk_status allow_smem(gpk_context &ctx, const void *kernel, size_t bytes) {
    if (bytes <= 48 * 1024) return GPK_SUCCESS;
    static std::mutex mutex;
    static std::map<std::pair<const void *, int>, size_t> allowed;
    const std::pair<const void *, int> key{kernel, ctx.device};
    {
        std::lock_guard<std::mutex> lock(mutex);
        const auto it = allowed.find(key);
        if (it != allowed.end() && it->second >= bytes) return GPK_SUCCESS;
    }
    GPK_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    std::lock_guard<std::mutex> lock(mutex);
    size_t &known = allowed[key];
    if (bytes > known) known = bytes;
    return GPK_SUCCESS;
}

inline size_t smem_of(const Plans &p, int dtype) {
    switch (dtype) {
        case GPK_F32: return p.f32.smem;
        case GPK_F64: return p.f64.smem;
        case GPK_BF16: return p.bf16.smem;
        default: return p.f16.smem;
    }
}

// Launches `plan` over the call in `f`, in launches of as many rows of W as the
// workspace holds partials for, each followed by `combine` when k has several splits.
template <class T, class Acc>
gpk_status run_plan(gpk_context &ctx, const char *name, const Form &f, int64_t k, const Plan<T, Acc> &plan,
                    Splits sp, double alpha, double beta, void *C, bool bf16, bool pdl) {
    GPK_FORWARD_IF_ERROR(allow_smem(ctx, reinterpret_cast<const void *>(plan.kernel), plan.smem));
    Params<T, Acc> pr{};
    pr.W = static_cast<const T *>(f.W), pr.ldw = f.ldw;
    pr.X = static_cast<const T *>(f.X), pr.ldx = f.ldx;
    pr.C = static_cast<T *>(C), pr.c_p = f.c_p, pr.c_q = f.c_q;
    pr.L = f.L, pr.s = f.s, pr.k = k;
    pr.splits = sp;
    pr.alpha = static_cast<Acc>(alpha), pr.beta = static_cast<Acc>(beta);
    pr.w_vec = vec_ok(f.W, f.ldw, sizeof(T));
    pr.x_vec = vec_ok(f.X, f.ldx, sizeof(T));
    pr.bf16 = bf16;
    pr.wk = f.wk, pr.xk = f.xk;

    const int64_t bp = plan.bp;
    int64_t rows = round_up(f.L, bp);
    const int64_t limit_tiles = int64_t(1) << 30;  // grid.x
    if (rows / bp > limit_tiles) rows = limit_tiles * bp;
    if (sp.count > 1) {
        const int64_t per_row = sp.count * f.s * static_cast<int64_t>(sizeof(Acc));
        const int64_t fit = static_cast<int64_t>(kWorkspaceBytes) / per_row / bp * bp;
        rows = fit < bp ? bp : (fit < rows ? fit : rows);
        void *ws = nullptr;
        GPK_FORWARD_IF_ERROR(buffer(ctx, Slot::Scratch, static_cast<size_t>(per_row * rows), &ws));
        pr.part = static_cast<Acc *>(ws);
    }
    const unsigned q_blocks = static_cast<unsigned>(ceil_div(f.s, plan.bq));
    for (int64_t p = 0; p < f.L; p += rows) {
        pr.p_begin = p;
        pr.p_end = p + rows < f.L ? p + rows : f.L;
        const dim3 grid(static_cast<unsigned>(ceil_div(pr.p_end - p, bp)), static_cast<unsigned>(sp.count), q_blocks);
        plan.kernel<<<grid, plan.threads, plan.smem, stream(ctx)>>>(pr);
        GPK_LAUNCH_CHECK(ctx, name);
        if (sp.count > 1) {
            const int64_t items = (pr.p_end - p) * f.s;
            // Launched to overlap the product's tail where the GPU can (kernel.cuh, "launch overlap").
            cudaLaunchConfig_t cfg{};
            cudaLaunchAttribute overlap{};
            overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
            overlap.val.programmaticStreamSerializationAllowed = 1;
            cfg.blockDim = dim3(256);
            cfg.stream = stream(ctx);
            cfg.attrs = &overlap;
            cfg.numAttrs = pdl ? 1 : 0;
            const bool warp = sp.count > 32;
            cfg.gridDim = dim3(grid_size(items, warp ? 8 : 256, int64_t(1) << 20));
            const cudaError_t e = warp ? cudaLaunchKernelEx(&cfg, combine_kernel<T, Acc, true>, pr)
                                       : cudaLaunchKernelEx(&cfg, combine_kernel<T, Acc, false>, pr);
            GPK_FORWARD_IF_ERROR(check(ctx, e, "gemm membound::combine_kernel"));
        }
    }
    return GPK_SUCCESS;
}

// ---- the rungs ------------------------------------------------------------------------

// Rung skinny's plans by the short side s (13_skinny.cu), which rung gram's tiles of
// 128 rows share.
Plans skinny_plans(int64_t s, bool wk, bool xk);

// A rung is its name, its plans for a call and its splits of k:
//   struct Rung { static constexpr const char *kName;
//                 static Plans plans(const Form &);
//                 static Splits splits(const Form &, int64_t k, const Plans &, int dtype); };
// and these two functions are its launchers.
template <class Rung>
gpk_status rung_takes(gpk_context &ctx, const GemmArgs &a, const char **why_not) {
    DeviceLimits lim;
    GPK_FORWARD_IF_ERROR(device_limits(ctx, &lim));
    *why_not = refusal(lim, a, smem_of(Rung::plans(form_of(a)), a.dtype));
    return GPK_SUCCESS;
}

template <class Rung>
gpk_status rung_run(gpk_context &ctx, const GemmArgs &a) {
    const Form f = form_of(a);
    const Plans plans = Rung::plans(f);
    DeviceLimits lim;
    GPK_FORWARD_IF_ERROR(device_limits(ctx, &lim));
    if (const char *why_not = refusal(lim, a, smem_of(plans, a.dtype))) return refuse(ctx, "gemm", Rung::kName, why_not);
    const Splits sp = Rung::splits(f, a.k, plans, a.dtype);
    const char *name = Rung::kName;
    const bool pdl = lim.major >= 9;
    switch (a.dtype) {
        case GPK_F32: return run_plan<float, float>(ctx, name, f, a.k, plans.f32, sp, a.alpha, a.beta, a.C, false, pdl);
        case GPK_F64: return run_plan<double, double>(ctx, name, f, a.k, plans.f64, sp, a.alpha, a.beta, a.C, false, pdl);
        case GPK_F16: return run_plan<uint16_t, float>(ctx, name, f, a.k, plans.f16, sp, a.alpha, a.beta, a.C, false, pdl);
        case GPK_BF16: return run_plan<uint16_t, float>(ctx, name, f, a.k, plans.bf16, sp, a.alpha, a.beta, a.C, true, pdl);
        default: return fail(&ctx, GPK_ERROR_NOT_SUPPORTED, "gemm variant '%s' does not support dtype %d", name, a.dtype);
    }
}

}  // namespace gpk::cuda::membound
