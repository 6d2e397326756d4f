// Faults on the GPU: out of device memory. The test takes nearly all of the GPU's
// memory for itself, then makes calls that must allocate (host arrays to stage, a
// first call's workspace and vendor handles): each must return
// GPK_ERROR_OUT_OF_MEMORY with a message, leave no CUDA error pending for the caller,
// and not disturb a call that needs no new memory. Once the memory is given back, the
// same context must compute every op right: a failed call leaves its stream and
// workspace whole. The CUDA backend only; skipped (77) without a usable GPU.
#include "../harness.hpp"

namespace {

using namespace gpkt;

// Takes device memory in decreasing blocks until none is left; frees it on release.
class Hog {
public:
    Hog() {
        for (size_t block = size_t(1) << 30; block >= (size_t(1) << 20);) {
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
    Hog(const Hog &) = delete;
    Hog &operator=(const Hog &) = delete;
    void release() {
        for (void *p : blocks_) cudaFree(p);
        blocks_.clear();
    }
    size_t bytes() const { return bytes_; }

private:
    std::vector<void *> blocks_;
    size_t bytes_ = 0;
};

constexpr int64_t kN = 512;  // gemm and transpose sizes; 256 KiB..1 MiB arrays

// Small integers, so that every product and sum is exact in F32.
std::vector<float> integers(size_t count, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(count);
    for (float &x : v) x = static_cast<float>(static_cast<int>(rng.next() % 9) - 4);
    return v;
}

struct Data {
    std::vector<float> A = integers(kN * kN, 1), B = integers(kN * kN, 2), x = integers(size_t(1) << 22, 3);
    std::vector<float> C = std::vector<float>(kN * kN, std::numeric_limits<float>::quiet_NaN());
    std::vector<float> T = std::vector<float>(kN * kN, std::numeric_limits<float>::quiet_NaN());
    float sum = 0;  // an F32 sum is written as F32
};

// The three calls on host arrays; the statuses they returned.
struct Statuses {
    gpk_status gemm, reduce, transpose;
};

Statuses calls(gpk_context *ctx, Data &d) {
    Statuses s{};
    s.gemm = gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, kN, kN, kN, 1.0, d.A.data(), kN,
                      d.B.data(), kN, 0.0, d.C.data(), kN);
    s.reduce = gpk_reduce(ctx, GPK_F32, GPK_SUM, d.x.data(), static_cast<int64_t>(d.x.size()), &d.sum);
    s.transpose = gpk_transpose(ctx, GPK_F32, GPK_COL_MAJOR, kN, kN, d.A.data(), kN, d.T.data(), kN);
    return s;
}

void check_results(Case &c, const Data &d) {
    for (int64_t j = 0; j < kN; ++j)
        for (int64_t i = 0; i < kN; ++i) {
            float want = 0;
            for (int64_t p = 0; p < kN; ++p) want += d.A[i + p * kN] * d.B[p + j * kN];
            if (d.C[i + j * kN] != want)
                return c.fail("gemm: C(%" PRId64 ", %" PRId64 ") = %g, expected %g", i, j, d.C[i + j * kN], want);
            if (d.T[j + i * kN] != d.A[i + j * kN])
                return c.fail("transpose: B(%" PRId64 ", %" PRId64 ") is not A(%" PRId64 ", %" PRId64 ")", j, i, i, j);
        }
    double want = 0;
    for (float v : d.x) want += v;  // integers: exact in any order
    if (d.sum != want) c.fail("reduce: sum %.9g, expected %.17g", d.sum, want);
}

void out_of_memory(Suite &suite) {
    // A context of its own that has made no call yet: it owns no buffers and no vendor
    // handles, so every call on host arrays has to allocate.
    gpk_context *ctx = suite.open(GPK_BACKEND_CUDA);
    DeviceArray dx(sizeof(float) * 1024), dr(sizeof(float));
    std::vector<float> ones(1024, 1.0f);
    {
        Case c(suite, "device arrays before the GPU is full");
        if (!dx.upload(ones.data()) || !dr.ok()) c.fail("cudaMalloc/cudaMemcpy: %s", dx.error());
        else c.expect(gpk_reduce(ctx, GPK_F32, GPK_SUM, dx.get(), 1024, dr.get()), GPK_SUCCESS, "gpk_reduce");
    }
    Data d;
    Hog hog;
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    std::printf("the test holds %.1f GiB of %.1f GiB; %.1f MiB free\n", hog.bytes() / 1073741824.0,
                total / 1073741824.0, free_bytes / 1048576.0);
    {
        Case c(suite, "out of device memory: calls on host arrays");
        const Statuses s = calls(ctx, d);
        const std::pair<const char *, gpk_status> got[] = {
            {"gpk_gemm", s.gemm}, {"gpk_reduce", s.reduce}, {"gpk_transpose", s.transpose}};
        for (const auto &[call, st] : got) {
            if (st != GPK_ERROR_OUT_OF_MEMORY)
                c.fail("%s with the GPU full -> %s (%s), expected GPK_ERROR_OUT_OF_MEMORY", call,
                       gpk_status_string(st), gpk_last_error(ctx));
        }
        const char *message = gpk_last_error(ctx);
        if (message == nullptr || message[0] == '\0') c.fail("no message after GPK_ERROR_OUT_OF_MEMORY");
        else std::printf("last message: %s\n", message);
        const cudaError_t pending = cudaGetLastError();
        if (pending != cudaSuccess) c.fail("a CUDA error was left pending for the caller: %s", cudaGetErrorString(pending));
        if (!std::isnan(d.C[0]) || !std::isnan(d.T[0])) c.fail("a failed call wrote to its output");
    }
    {
        // The reduce of device arrays above made its workspace: this one needs no
        // new memory and must work with the GPU full.
        Case c(suite, "out of device memory: a call that allocates nothing");
        float sum = 0;  // an F32 sum is written as F32
        if (c.expect(gpk_reduce(ctx, GPK_F32, GPK_SUM, dx.get(), 1024, dr.get()), GPK_SUCCESS, "gpk_reduce") &&
            c.expect(gpk_synchronize(ctx), GPK_SUCCESS, "gpk_synchronize")) {
            if (cudaMemcpy(&sum, dr.get(), sizeof sum, cudaMemcpyDeviceToHost) != cudaSuccess)
                c.fail("cudaMemcpy of the result failed");
            else if (sum != 1024.0f)
                c.fail("sum %.9g, expected 1024", sum);
        }
    }
    hog.release();
    {
        Case c(suite, "memory back: the same context computes every op right");
        const Statuses s = calls(ctx, d);
        if (c.expect(s.gemm, GPK_SUCCESS, "gpk_gemm") && c.expect(s.reduce, GPK_SUCCESS, "gpk_reduce") &&
            c.expect(s.transpose, GPK_SUCCESS, "gpk_transpose"))
            check_results(c, d);
    }
    {
        Case c(suite, "memory back: validation mode (cuBLAS, CUB) on the same context");
        if (c.expect(gpk_set_validation(ctx, 1), GPK_SUCCESS, "gpk_set_validation")) {
            std::fill(d.C.begin(), d.C.end(), std::numeric_limits<float>::quiet_NaN());
            const Statuses s = calls(ctx, d);
            if (c.expect(s.gemm, GPK_SUCCESS, "gpk_gemm") && c.expect(s.reduce, GPK_SUCCESS, "gpk_reduce") &&
                c.expect(s.transpose, GPK_SUCCESS, "gpk_transpose"))
                check_results(c, d);
        }
    }
    gpk_destroy(ctx);
}

}  // namespace

int main(int argc, char **argv) {
    Suite suite("test_faults", argc, argv);
    if (!suite.cuda()) {
        std::printf("test_faults [%s]: the faults are the GPU's; run it with 'cuda'\n", suite.backend_name());
        return kSkipExit;
    }
    out_of_memory(suite);
    return suite.finish();
}
