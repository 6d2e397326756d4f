// The GPU out of memory, op by op and variant by variant. Contexts (one per variant
// of each op, and "auto") are made first and have made no call, so they own no
// buffers; then the test takes nearly all of the GPU's memory with cudaMalloc and
// calls every op with device arrays and with host arrays (and a device and a host pi
// result):
//  - host arrays must be GPK_ERROR_OUT_OF_MEMORY (staging needs device buffers);
//  - device arrays may succeed only with the right result (a variant that needs no
//    memory of its own), or fail with GPK_ERROR_OUT_OF_MEMORY;
//  - a failure writes nothing (host or device output), leaves a message and leaves
//    no CUDA error pending for the caller.
// Then the memory is given back, and the same contexts must compute every op right.
// The CUDA backend only; skipped (77) without a usable GPU.
#include "../harness.hpp"

#include <memory>

namespace {

using namespace gpkt;

class Hog {
public:
    // Down to blocks of 256 bytes, so that what is left cannot hold even a small
    // staging buffer (the CUDA runtime's own pools included).
    void fill() {
        for (size_t block = size_t(1) << 30; block >= 256;) {
            void *p = nullptr;
            if (cudaMalloc(&p, block) == cudaSuccess) {
                blocks_.push_back(p);
                bytes_ += block;
            } else {
                block /= 2;
            }
        }
        cudaGetLastError();  // the failed attempts are expected
    }
    ~Hog() { release(); }
    void release() {
        for (void *p : blocks_) cudaFree(p);
        blocks_.clear();
    }
    size_t bytes() const { return bytes_; }

private:
    std::vector<void *> blocks_;
    size_t bytes_ = 0;
};

constexpr int64_t kM = 96, kN = 80, kK = 72, kRows = 300, kCols = 200, kX = int64_t{1} << 18;
constexpr uint64_t kSamples = uint64_t{1} << 20;

template <class T>
std::vector<T> small_integers(size_t count, uint64_t seed) {
    Rng rng(seed);
    std::vector<T> v(count);
    for (T &x : v) x = static_cast<T>(static_cast<int>(rng.next() % 9) - 4);
    return v;
}

// The device arrays of every call, made before the GPU is full (sized for F64) and
// filled anew by each call: cudaMemcpy needs no device memory. Each copy moves the
// host vector's bytes only: an F32 call's vectors are half the arrays' size, and
// copying the whole array back would write past their end.
struct Pool {
    DeviceArray a{sizeof(double) * kM * kK}, b{sizeof(double) * kK * kN}, c{sizeof(double) * kM * kN};
    DeviceArray ta{sizeof(double) * kRows * kCols}, tb{sizeof(double) * kRows * kCols};
    DeviceArray x{sizeof(double) * kX}, r{sizeof(double)}, pi{sizeof(gpk_pi_result)};
    bool ok() const { return a.ok() && b.ok() && c.ok() && ta.ok() && tb.ok() && x.ok() && r.ok() && pi.ok(); }
};
Pool *g_pool = nullptr;

template <class T>
size_t bytes_of(const std::vector<T> &v) {
    return sizeof(T) * v.size();
}

// One op's call on one context with host or device arrays: the status, and whether
// the output (read back) is untouched or right.
struct Outcome {
    gpk_status status = GPK_SUCCESS;
    bool untouched = false, right = false;
    std::string detail;
};

template <class T>
Outcome gemm(gpk_context *ctx, bool device) {
    const int dtype = sizeof(T) == 4 ? GPK_F32 : GPK_F64;
    const auto A = small_integers<T>(kM * kK, 1), B = small_integers<T>(kK * kN, 2);
    const std::vector<T> C0(kM * kN, static_cast<T>(-99));
    std::vector<T> C = C0;
    Outcome o;
    if (device) {
        DeviceArray &dA = g_pool->a, &dB = g_pool->b, &dC = g_pool->c;
        if (!dA.upload(A.data(), bytes_of(A)) || !dB.upload(B.data(), bytes_of(B)) ||
            !dC.upload(C.data(), bytes_of(C))) {
            o.status = GPK_ERROR_INTERNAL, o.detail = "the test's cudaMemcpy failed";
            return o;
        }
        o.status = gpk_gemm(ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, kM, kN, kK, 1.0, dA.get(), kM,
                            dB.get(), kK, 0.0, dC.get(), kM);
        if (o.status == GPK_SUCCESS) gpk_synchronize(ctx);
        if (!dC.download(C.data(), bytes_of(C))) o.detail = "the test's cudaMemcpy back failed";
    } else {
        o.status = gpk_gemm(ctx, dtype, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, kM, kN, kK, 1.0, A.data(), kM,
                            B.data(), kK, 0.0, C.data(), kM);
    }
    o.untouched = C == C0;
    o.right = true;
    for (int64_t j = 0; j < kN && o.right; ++j)
        for (int64_t i = 0; i < kM; ++i) {
            double want = 0;
            for (int64_t p = 0; p < kK; ++p) want += static_cast<double>(A[i + p * kM]) * B[p + j * kK];
            if (C[i + j * kM] != static_cast<T>(want)) {
                o.right = false;
                o.detail = format("C(%" PRId64 ", %" PRId64 ") = %g, expected %g", i, j, double(C[i + j * kM]), want);
                break;
            }
        }
    return o;
}

template <class T>
Outcome transpose(gpk_context *ctx, bool device) {
    const int dtype = sizeof(T) == 4 ? GPK_F32 : GPK_F64;
    const auto A = small_integers<T>(kRows * kCols, 3);
    const std::vector<T> B0(kRows * kCols, static_cast<T>(-99));
    std::vector<T> B = B0;
    Outcome o;
    if (device) {
        DeviceArray &dA = g_pool->ta, &dB = g_pool->tb;
        if (!dA.upload(A.data(), bytes_of(A)) || !dB.upload(B.data(), bytes_of(B))) {
            o.status = GPK_ERROR_INTERNAL, o.detail = "the test's cudaMemcpy failed";
            return o;
        }
        o.status = gpk_transpose(ctx, dtype, GPK_COL_MAJOR, kRows, kCols, dA.get(), kRows, dB.get(), kCols);
        if (o.status == GPK_SUCCESS) gpk_synchronize(ctx);
        if (!dB.download(B.data(), bytes_of(B))) o.detail = "the test's cudaMemcpy back failed";
    } else {
        o.status = gpk_transpose(ctx, dtype, GPK_COL_MAJOR, kRows, kCols, A.data(), kRows, B.data(), kCols);
    }
    o.untouched = B == B0;
    o.right = true;
    for (int64_t j = 0; j < kCols && o.right; ++j)
        for (int64_t i = 0; i < kRows; ++i)
            if (B[j + i * kCols] != A[i + j * kRows]) {
                o.right = false, o.detail = "B is not A^T";
                break;
            }
    return o;
}

template <class T>
Outcome reduce(gpk_context *ctx, bool device) {
    const int dtype = sizeof(T) == 4 ? GPK_F32 : GPK_F64;
    const auto x = small_integers<T>(kX, 4);
    const T r0 = static_cast<T>(-12345.5);
    T r = r0;
    Outcome o;
    if (device) {
        DeviceArray &dx = g_pool->x, &dr = g_pool->r;
        if (!dx.upload(x.data(), bytes_of(x)) || !dr.upload(&r, sizeof r)) {
            o.status = GPK_ERROR_INTERNAL, o.detail = "the test's cudaMemcpy failed";
            return o;
        }
        o.status = gpk_reduce(ctx, dtype, GPK_SUM, dx.get(), kX, dr.get());
        if (o.status == GPK_SUCCESS) gpk_synchronize(ctx);
        if (!dr.download(&r, sizeof r)) o.detail = "the test's cudaMemcpy back failed";
    } else {
        o.status = gpk_reduce(ctx, dtype, GPK_SUM, x.data(), kX, &r);
    }
    double want = 0;
    for (T v : x) want += static_cast<double>(v);
    o.untouched = r == r0;
    o.right = r == static_cast<T>(want);
    if (!o.right) o.detail = format("sum %g, expected %g", double(r), want);
    return o;
}

Outcome pi(gpk_context *ctx, bool device, uint64_t host_hits, bool philox) {
    const gpk_pi_result r0{-1, -1, 7, 7};
    gpk_pi_result r = r0;
    Outcome o;
    if (device) {
        DeviceArray &dr = g_pool->pi;
        if (!dr.upload(&r)) {
            o.status = GPK_ERROR_INTERNAL, o.detail = "the test's cudaMemcpy failed";
            return o;
        }
        o.status = gpk_pi(ctx, kSamples, 11, static_cast<gpk_pi_result *>(dr.get()));
        dr.download(&r);
    } else {
        o.status = gpk_pi(ctx, kSamples, 11, &r);
    }
    o.untouched = std::memcmp(&r, &r0, sizeof r) == 0;
    o.right = r.samples == kSamples && (philox ? r.hits == host_hits : std::fabs(r.estimate - M_PI) < 6 * r.std_error);
    if (!o.right) o.detail = format("samples %" PRIu64 " hits %" PRIu64 " (host %" PRIu64 ")", r.samples, r.hits, host_hits);
    return o;
}

struct Subject {
    int op;
    std::string variant;
    gpk_context *ctx;
};

// Runs every call of `s`'s op on its context; `full`: the GPU has no memory left.
void calls(Suite &suite, const Subject &s, bool full, uint64_t host_hits, const char *phase) {
    const bool philox = s.variant == "auto" || s.variant.find("curand") == std::string::npos;
    for (const bool device : {true, false}) {
        for (const int dtype : {GPK_F32, GPK_F64}) {
            if (s.op == GPK_OP_PI && dtype == GPK_F64) continue;
            Case c(suite, format("%s %s, %s arrays, %s%s", op_name(s.op), s.variant.c_str(), device ? "device" : "host",
                                 s.op == GPK_OP_PI ? "" : dtype_name(dtype), phase));
            cudaGetLastError();
            Outcome o;
            switch (s.op) {
                case GPK_OP_GEMM: o = dtype == GPK_F32 ? gemm<float>(s.ctx, device) : gemm<double>(s.ctx, device); break;
                case GPK_OP_REDUCE:
                    o = dtype == GPK_F32 ? reduce<float>(s.ctx, device) : reduce<double>(s.ctx, device);
                    break;
                case GPK_OP_TRANSPOSE:
                    o = dtype == GPK_F32 ? transpose<float>(s.ctx, device) : transpose<double>(s.ctx, device);
                    break;
                default: o = pi(s.ctx, device, host_hits, philox && s.variant != "lecture" && s.variant != "sobol");
            }
            if (o.status == GPK_ERROR_NOT_SUPPORTED && s.variant != "auto") {
                c.mark_unsupported();
                if (!o.untouched) c.fail("NOT_SUPPORTED wrote the output");
                continue;
            }
            const cudaError_t pending = cudaGetLastError();
            if (pending != cudaSuccess) c.fail("a CUDA error was left pending: %s", cudaGetErrorString(pending));
            if (!full) {
                if (o.status != GPK_SUCCESS)
                    c.fail("-> %s: %s", gpk_status_string(o.status), gpk_last_error(s.ctx));
                else if (!o.right)
                    c.fail("wrong result: %s", o.detail.c_str());
                continue;
            }
            if (o.status == GPK_ERROR_OUT_OF_MEMORY) {
                if (!o.untouched) c.fail("GPK_ERROR_OUT_OF_MEMORY, but the output was written");
                if (gpk_last_error(s.ctx)[0] == '\0') c.fail("no message after GPK_ERROR_OUT_OF_MEMORY");
            } else if (o.status == GPK_SUCCESS) {
                // A call that needed no new memory (device arrays a rung computes in
                // place, or host arrays staged through the buffers the context took on
                // first use and keeps): it must be right.
                if (!o.right) c.fail("succeeded with the GPU full, but wrong: %s", o.detail.c_str());
            } else {
                c.fail("-> %s (%s), expected GPK_ERROR_OUT_OF_MEMORY or success", gpk_status_string(o.status),
                       gpk_last_error(s.ctx));
            }
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_oom_gpu", argc, argv);
    if (!suite.cuda()) {
        std::printf("test_oom_gpu [%s]: the GPU's memory is the subject; run it with 'cuda'\n", suite.backend_name());
        return kSkipExit;
    }
    uint64_t host_hits = 0;
    {
        gpk_context *host = suite.open(GPK_BACKEND_HOST);
        gpk_pi_result r{};
        gpk_pi(host, kSamples, 11, &r);
        host_hits = r.hits;
        gpk_destroy(host);
    }
    std::vector<Subject> subjects;
    for (int op = 0; op < 4; ++op)
        for (const std::string &v : suite.variants(op)) {
            gpk_context *ctx = suite.open(GPK_BACKEND_CUDA);
            if (gpk_set_variant(ctx, op, v.c_str()) != GPK_SUCCESS) {
                Case c(suite, format("gpk_set_variant(%s, %s)", op_name(op), v.c_str()));
                c.fail("%s", gpk_last_error(ctx));
            }
            subjects.push_back({op, v, ctx});
        }
    Pool pool;
    g_pool = &pool;
    if (!pool.ok()) {
        Case c(suite, "the test's device arrays");
        c.fail("cudaMalloc failed before the GPU was full");
        return suite.finish();
    }
    // Each context does its work once first, as an application's would before memory
    // runs out: the CUDA runtime loads a kernel's code and the vendor libraries their
    // own on first use, in device memory, and one that finds none then stays unusable
    // in the process (cudaErrorUnknown, CUBLAS_STATUS_NOT_INITIALIZED ever after),
    // which no library code can undo. What is tested is the library's own memory.
    for (const Subject &s : subjects) calls(suite, s, false, host_hits, ", first use");
    Hog hog;
    hog.fill();
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    std::printf("the test holds %.1f GiB of %.1f GiB; %.1f MiB free\n", hog.bytes() / 1073741824.0,
                total / 1073741824.0, free_bytes / 1048576.0);
    for (const Subject &s : subjects) calls(suite, s, true, host_hits, ", GPU full");
    hog.release();
    for (const Subject &s : subjects) calls(suite, s, false, host_hits, ", memory back");
    for (const Subject &s : subjects) gpk_destroy(s.ctx);
    return suite.finish();
}
