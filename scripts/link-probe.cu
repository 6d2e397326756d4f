// scripts/link-probe.cu: what the host<->device link does with the staging pipeline's copies:
// 2-D DMA throughput against line length and pitch, both directions at once, copies by the
// SMs (zero-copy), and a staged 16384^2 F32 transpose emulated with several tile shapes.
// Build and run on a GPU machine: nvcc -O3 -arch=sm_90 scripts/link-probe.cu -o link-probe && ./link-probe
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); std::exit(1);} } while (0)

__global__ void tr(const float *a, int lda, float *b, int ldb, int rows, int cols) {
    __shared__ float t[32][33];
    int i = blockIdx.x * 32 + threadIdx.x, j = blockIdx.y * 32 + threadIdx.y;
    for (int k = 0; k < 32; k += 8)
        if (i < rows && j + k < cols) t[threadIdx.y + k][threadIdx.x] = a[i + (size_t)(j + k) * lda];
    __syncthreads();
    i = blockIdx.y * 32 + threadIdx.x, j = blockIdx.x * 32 + threadIdx.y;
    for (int k = 0; k < 32; k += 8)
        if (i < cols && j + k < rows) b[i + (size_t)(j + k) * ldb] = t[threadIdx.x][threadIdx.y + k];
}

__global__ void smcopy(const float4 *src, size_t sp, float4 *dst, size_t dp, size_t w, size_t h) {
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < w * h; k += (size_t)gridDim.x * blockDim.x) {
        size_t i = k % w, j = k / w;
        dst[i + j * dp] = src[i + j * sp];
    }
}

const size_t N = 16384, es = 4;
char *hA, *hB;

float time_it(cudaStream_t /*stream: the events say when*/, cudaEvent_t e0, cudaEvent_t e1) { float ms; CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); return ms; }

int main() {
    CK(cudaHostAlloc((void **)&hA, N * N * es, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostAlloc((void **)&hB, N * N * es, cudaHostAllocMapped | cudaHostAllocPortable));
    for (size_t i = 0; i < N * N; ++i) ((float *)hA)[i] = (float)(i % 1000003);
    std::memset(hB, 0, N * N * es);
    const int S = 4;
    cudaStream_t st[S + 1];
    for (auto &s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1, inEv[S], outEv[S], ea[S], eb[S];
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (int l = 0; l < S; ++l) { CK(cudaEventCreateWithFlags(&inEv[l], cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&outEv[l], cudaEventDisableTiming)); CK(cudaEventCreate(&ea[l])); CK(cudaEventCreate(&eb[l])); }
    const size_t devbytes = size_t{512} << 20;
    char *d[S][2];
    for (int l = 0; l < S; ++l) for (int k = 0; k < 2; ++k) CK(cudaMalloc((void **)&d[l][k], devbytes));
    int dev; cudaDeviceProp pr; CK(cudaGetDevice(&dev)); CK(cudaGetDeviceProperties(&pr, dev));
    std::printf("device %s asyncEngineCount %d\n", pr.name, pr.asyncEngineCount);

    // 1. single copies: H lines of W bytes at host pitch P, device side packed
    std::printf("== single 2D copies (GB/s), host pitch 64 KiB unless noted\n");
    auto one = [&](size_t W, size_t P, int dir) {
        const size_t H = std::min((size_t{256} << 20) / W, (N * N * es) / P);
        float best = 1e30f;
        for (int r = 0; r < 3; ++r) {
            CK(cudaEventRecord(e0, st[0]));
            if (dir == 0) CK(cudaMemcpy2DAsync(d[0][0], W, hA, P, W, H, cudaMemcpyHostToDevice, st[0]));
            else CK(cudaMemcpy2DAsync(hB, P, d[0][0], W, W, H, cudaMemcpyDeviceToHost, st[0]));
            CK(cudaEventRecord(e1, st[0]));
            best = std::min(best, time_it(st[0], e0, e1));
        }
        return W * H / best / 1e6;
    };
    for (size_t W : {1024, 2048, 4096, 8192, 16384, 32768, 65536})
        std::printf("W=%6zu: H2D %.1f  D2H %.1f\n", W, one(W, N * es, 0), one(W, N * es, 1));
    std::printf("W= 16384 pitch 32 KiB: H2D %.1f  D2H %.1f\n", one(16384, 32768, 0), one(16384, 32768, 1));
    std::printf("W=  4096 pitch  8 KiB: H2D %.1f  D2H %.1f\n", one(4096, 8192, 0), one(4096, 8192, 1));
    // 2. bidirectional: H2D of lines Wi on st0 and D2H of lines Wo on st1 at once, 256 MiB each way
    std::printf("== bidirectional, 256 MiB each way (GB/s)\n");
    for (auto [Wi, Wo] : {std::pair<size_t, size_t>{65536, 65536}, {16384, 65536}, {65536, 16384}, {16384, 16384}, {4096, 65536}, {65536, 4096}}) {
        const size_t Hi = std::min((size_t{256} << 20) / Wi, N), Ho = std::min((size_t{256} << 20) / Wo, N);
        float best = 1e30f, bi = 0, bo = 0;
        for (int r = 0; r < 3; ++r) {
            CK(cudaEventRecord(e0, st[S]));
            CK(cudaStreamWaitEvent(st[0], e0)); CK(cudaStreamWaitEvent(st[1], e0));
            CK(cudaEventRecord(ea[0], st[0])); CK(cudaEventRecord(ea[1], st[1]));
            CK(cudaMemcpy2DAsync(d[0][0], Wi, hA, N * es, Wi, Hi, cudaMemcpyHostToDevice, st[0]));
            CK(cudaMemcpy2DAsync(hB, N * es, d[1][0], Wo, Wo, Ho, cudaMemcpyDeviceToHost, st[1]));
            CK(cudaEventRecord(eb[0], st[0])); CK(cudaEventRecord(eb[1], st[1]));
            CK(cudaStreamWaitEvent(st[S], eb[0])); CK(cudaStreamWaitEvent(st[S], eb[1]));
            CK(cudaEventRecord(e1, st[S]));
            float t = time_it(st[S], e0, e1);
            if (t < best) { best = t; bi = time_it(st[0], ea[0], eb[0]); bo = time_it(st[1], ea[1], eb[1]); }
        }
        std::printf("in lines %6zu, out lines %6zu (%zu + %zu MiB): in %.1f, out %.1f, both %.1f\n", Wi, Wo, Wi * Hi >> 20, Wo * Ho >> 20,
                    Wi * Hi / bi / 1e6, Wo * Ho / bo / 1e6, (Wi * Hi + Wo * Ho) / best / 1e6);
    }
    // 2b. SM copies through mapped pinned memory, lines of W at pitch 64 KiB, 256 MiB
    std::printf("== SM (zero-copy) 2D copies, 256 MiB (GB/s)\n");
    for (size_t W : {4096, 16384}) {
        const size_t H = std::min((size_t{256} << 20) / W, N);
        for (int dir = 0; dir < 3; ++dir) {
            float best = 1e30f;
            for (int r = 0; r < 3; ++r) {
                CK(cudaEventRecord(e0, st[0]));
                if (dir != 1) smcopy<<<264, 1024, 0, st[0]>>>((const float4 *)hA, N * es / 16, (float4 *)d[0][0], W / 16, W / 16, H);
                if (dir != 0) smcopy<<<264, 1024, 0, dir == 2 ? st[1] : st[0]>>>((const float4 *)d[1][0], W / 16, (float4 *)hB, N * es / 16, W / 16, H);
                if (dir == 2) { CK(cudaEventRecord(eb[1], st[1])); CK(cudaStreamWaitEvent(st[0], eb[1])); }
                CK(cudaEventRecord(e1, st[0]));
                best = std::min(best, time_it(st[0], e0, e1));
            }
            std::printf("W=%6zu %s: %.1f\n", W, dir == 0 ? "H2D" : dir == 1 ? "D2H" : "both (sum)", (dir == 2 ? 2 : 1) * W * H / best / 1e6);
        }
    }
    // 3. pipeline emulation: tiles h x w of col-major A (N x N), S lanes
    std::printf("== pipeline, 1 GiB in + 1 GiB out, %d lanes\n", S);
    struct Cfg { size_t h, w; };
    for (Cfg c : {Cfg{1024, N}, Cfg{4096, N}, Cfg{N, 1024}, Cfg{N, 4096}, Cfg{4096, 4096}, Cfg{2048, 2048}, Cfg{8192, 8192}}) {
        for (int chain = 0; chain < 2; ++chain) {
            float best = 1e30f;
            for (int r = 0; r < 3; ++r) {
                CK(cudaEventRecord(e0, st[S]));
                for (int l = 0; l < S; ++l) CK(cudaStreamWaitEvent(st[l], e0));
                int idx = 0;
                for (size_t j0 = 0; j0 < N; j0 += c.w)
                    for (size_t i0 = 0; i0 < N; i0 += c.h, ++idx) {
                        int l = idx % S, pl = (idx + S - 1) % S;
                        cudaStream_t s = st[l];
                        if (chain && idx > 0) CK(cudaStreamWaitEvent(s, inEv[pl]));
                        CK(cudaMemcpy2DAsync(d[l][0], c.h * es, hA + (i0 + j0 * N) * es, N * es, c.h * es, c.w, cudaMemcpyHostToDevice, s));
                        if (chain) CK(cudaEventRecord(inEv[l], s));
                        dim3 g((c.h + 31) / 32, (c.w + 31) / 32), b(32, 8);
                        tr<<<g, b, 0, s>>>((float *)d[l][0], c.h, (float *)d[l][1], c.w, c.h, c.w);
                        if (chain && idx > 0) CK(cudaStreamWaitEvent(s, outEv[pl]));
                        CK(cudaMemcpy2DAsync(hB + (j0 + i0 * N) * es, N * es, d[l][1], c.w * es, c.w * es, c.h, cudaMemcpyDeviceToHost, s));
                        if (chain) CK(cudaEventRecord(outEv[l], s));
                    }
                for (int l = 0; l < S; ++l) { CK(cudaEventRecord(eb[l], st[l])); CK(cudaStreamWaitEvent(st[S], eb[l])); }
                CK(cudaEventRecord(e1, st[S]));
                best = std::min(best, time_it(st[S], e0, e1));
            }
            bool ok = true;
            for (size_t k = 0; k < 1000 && ok; ++k) { size_t i = (k * 7919) % N, j = (k * 104729) % N; ok = ((float *)hB)[j + i * N] == ((float *)hA)[i + j * N]; }
            std::printf("tile %5zu x %5zu (in lines %6zu B, out lines %6zu B, %3zu MiB) %s: %.2f ms, %.1f GB/s (A+B)%s\n", c.h, c.w, c.h * es, c.w * es, c.h * c.w * es >> 20,
                        chain ? "chained " : "lanes   ", best, 2.0 * N * N * es / best / 1e6, ok ? "" : " WRONG");
            std::memset(hB, 0, 4096);
        }
    }
    return 0;
}
