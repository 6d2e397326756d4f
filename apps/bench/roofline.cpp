// The roofline of a gemm call, as docs/PERFORMANCE.md and the performance notes
// define it: the longer of (every operand's bytes once) / (the copy bandwidth) and
// (the call's flops) / (the dtype's peak), both measured in this run on this GPU:
//
// * the copy bandwidth: cudaMemcpyAsync of 1 GiB device to device, its bytes read and
//   written counted, the median of 10 calls after one untimed;
// * the peak: the vendor's gemm (variant 0, cuBLAS, through the library) at 8192^3 in
//   the dtype and math mode, column-major NN on data of +-[0.25, 1), the median of 5
//   calls after one untimed -- what PERF.md calls the dtype's peak.
//
// Each is measured once per run, the first time a case asks, before that case's
// arrays exist; a row's roofline fraction is the roofline time over its median time.
#include "bench.hpp"

#include "../../libgpk/common/half.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace gpk_bench {
namespace {

// Times `call` (which issues work on the stream) with CUDA events: the median of
// `repeats` after one untimed call.
template <class Call>
double median_ms(Env &env, int repeats, Call &&call) {
    cudaEvent_t start = nullptr, stop = nullptr;
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
    std::vector<double> ms;
    try {
        call();
        for (int i = 0; i < repeats; ++i) {
            check_cuda(cudaEventRecord(start, env.stream), "cudaEventRecord");
            call();
            check_cuda(cudaEventRecord(stop, env.stream), "cudaEventRecord");
            check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
            float t = 0;
            check_cuda(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
            ms.push_back(t);
        }
    } catch (...) {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        throw;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

double copy_gbs(Env &env) {
    static std::map<int, double> measured;  // by device
    const auto it = measured.find(env.device);
    if (it != measured.end()) return it->second;
    const size_t bytes = size_t(1) << 30;
    Buffer src(env, bytes, Place::kDevice), dst(env, bytes, Place::kDevice);
    src.poison();
    const double ms = median_ms(env, 10, [&] {
        check_cuda(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, env.stream),
                   "cudaMemcpyAsync (copy bandwidth)");
    });
    const double gbs = 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
    measured[env.device] = gbs;
    return gbs;
}

double peak_tflops(Env &env, int dtype, bool tf32) {
    static std::map<std::pair<int, int>, double> measured;  // by (device, dtype; TF32 as -1)
    const std::pair<int, int> key{env.device, tf32 ? -1 : dtype};
    const auto it = measured.find(key);
    if (it != measured.end()) return it->second;
    const int64_t n = 8192;
    const size_t count = size_t(n) * size_t(n), es = dtype == GPK_F64 ? 8 : dtype == GPK_F32 ? 4 : 2;
    std::vector<unsigned char> host(count * es);
    if (dtype == GPK_F64) {
        fill_signed(reinterpret_cast<double *>(host.data()), count, 0x8192);
    } else {
        std::vector<float> f(count);
        fill_signed(f.data(), count, 0x8192);
        if (dtype == GPK_F32) {
            std::copy(f.begin(), f.end(), reinterpret_cast<float *>(host.data()));
        } else {
            uint16_t *h = reinterpret_cast<uint16_t *>(host.data());
            for (size_t i = 0; i < count; ++i) h[i] = dtype == GPK_BF16 ? gpk::float_to_bf16(f[i]) : gpk::float_to_half(f[i]);
        }
    }
    Buffer a(env, host.size(), Place::kDevice), b(env, host.size(), Place::kDevice), c(env, host.size(), Place::kDevice);
    a.upload(host.data());
    b.upload(host.data());
    const char *vendor = gpk_variant_name(env.ctx, GPK_OP_GEMM, 0);
    int mode = GPK_MATH_DEFAULT;
    gpk_get_math_mode(env.ctx, &mode);
    gpk_set_math_mode(env.ctx, tf32 ? GPK_MATH_TF32 : GPK_MATH_DEFAULT);
    gpk_set_variant(env.ctx, GPK_OP_GEMM, vendor);
    gpk_status st = GPK_SUCCESS;
    double ms = 0;
    try {
        ms = median_ms(env, 5, [&] {
            const gpk_status s = gpk_gemm(env.ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, n, n, n, 1.0,
                                          a.data(), n, b.data(), n, 0.0, c.data(), n);
            if (s != GPK_SUCCESS) st = s;
        });
    } catch (...) {
        gpk_set_math_mode(env.ctx, mode);
        gpk_set_variant(env.ctx, GPK_OP_GEMM, nullptr);
        throw;
    }
    gpk_set_math_mode(env.ctx, mode);
    gpk_set_variant(env.ctx, GPK_OP_GEMM, nullptr);
    if (st != GPK_SUCCESS)
        throw Error(std::string("the peak's gemm (") + (vendor ? vendor : "?") + ", 8192^3): " + gpk_status_string(st));
    const double tflops = 2.0 * double(n) * double(n) * double(n) / (ms * 1e-3) / 1e12;
    measured[key] = tflops;
    return tflops;
}

}  // namespace

std::optional<Roofline> roofline_of(Env &env, const RooflineWork &w) {
    if (!env.event_timing() || w.dtype < 0) return std::nullopt;
    Roofline r;
    r.copy_gbs = copy_gbs(env);
    r.peak_tflops = peak_tflops(env, w.dtype, w.tf32);
    const double memory_ms = w.bytes / (r.copy_gbs * 1e9) * 1e3;
    const double compute_ms = w.flops / (r.peak_tflops * 1e12) * 1e3;
    r.compute_bound = compute_ms > memory_ms;
    r.ms = std::max(memory_ms, compute_ms);
    return r;
}

}  // namespace gpk_bench
