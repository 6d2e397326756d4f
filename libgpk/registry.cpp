// The ladders. Order is the ladder's: the vendor library (or, on the host backend,
// the reference) first, then the rungs from the simplest kernel up. Adding a rung is
// one line here and one file under cuda/<op>/.
#include "registry.hpp"

#include "cuda/ladders.hpp"
#include "host/host.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace gpk {
namespace {

// ---- host backend: one reference implementation per op ---------------------------

constexpr Variant<GemmArgs> kHostGemm[] = {{"host", kFloatTypes | k16BitTypes, host::gemm}};
constexpr Variant<ReduceArgs> kHostReduce[] = {{"host", kAllTypes, host::reduce}};
constexpr Variant<TransposeArgs> kHostTranspose[] = {{"host", kAllTypes, host::transpose}};
constexpr Variant<PiArgs> kHostPi[] = {{"host", kAllTypes, host::pi}};
constexpr Variant<GemmBatchedCall> kHostGemmBatched[] = {{"host", kFloatTypes | k16BitTypes, host::gemm_batched}};

template <class Args>
int first_rung(const Args &) { return 0; }

// The index of the rung called `name` in `rungs`, at compile time: a pick names its
// rung, and a renamed or removed rung fails the build instead of picking another.
constexpr bool same_name(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) ++a, ++b;
    return *a == *b;
}
template <class Args, int N>
constexpr int rung(const Variant<Args> (&rungs)[N], const char *name) {
    for (int i = 0; i < N; ++i)
        if (same_name(rungs[i].name, name)) return i;
    throw "no rung of that name";  // not a constant expression: a compile error
}

// ---- CUDA backend -----------------------------------------------------------------

constexpr Variant<GemmArgs> kCudaGemm[] = {
    {"cublas", kFloatTypes | k16BitTypes, cuda::gemm_cublas},
    {"naive", kFloatTypes, cuda::gemm_naive},
    {"coalesced", kFloatTypes, cuda::gemm_coalesced},
    {"smem_tile", kFloatTypes, cuda::gemm_smem_tile},
    {"multi_output", kFloatTypes, cuda::gemm_multi_output},
    {"transposed_b", kFloatTypes, cuda::gemm_transposed_b},
    {"rank1", kFloatTypes, cuda::gemm_rank1},
    {"register_2d", kFloatTypes, cuda::gemm_register_2d},
    {"warptile_async", kFloatTypes, cuda::gemm_warptile_async},
    {"dmma_f64", dtype_bit(GPK_F64), cuda::gemm_dmma_f64},
    {"prefetch", dtype_bit(GPK_F32), cuda::gemm_prefetch},
};
// "auto" is cuBLAS: the best rung of ours, prefetch, reaches 0.91x of it at 4096^3 and
// 8192^3 and 0.83-0.84x at 1000^3 and 4097^3 on the H100, and leads only where k is
// small (8192x8192x256: 1.00-1.03x, runs 30a and 31 in docs/PERFORMANCE.md), by less
// than the spread between runs.
int pick_gemm(const GemmArgs &) { return 0; }

constexpr Variant<ReduceArgs> kCudaReduce[] = {
    {"cub", kAllTypes, cuda::reduce_cub},
    {"interleaved", kAllTypes, cuda::reduce_interleaved},
    {"interleaved_strided", kAllTypes, cuda::reduce_interleaved_strided},
    {"sequential", kAllTypes, cuda::reduce_sequential},
    {"first_add", kAllTypes, cuda::reduce_first_add},
    {"unroll_last_warp", kAllTypes, cuda::reduce_unroll_last_warp},
    {"unroll_complete", kAllTypes, cuda::reduce_unroll_complete},
    {"multi_add", kAllTypes, cuda::reduce_multi_add},
    {"unroll8", kAllTypes, cuda::reduce_unroll8},
    {"warp_shuffle", kAllTypes, cuda::reduce_warp_shuffle},
    {"vec16", kAllTypes, cuda::reduce_vec16},
    {"single_pass", kAllTypes, cuda::reduce_single_pass},
};
// The single-pass rung (one launch, 16-byte loads, partials combined in a fixed order
// by the last block) leads CUB where launches count and matches it at DRAM speed on
// the H100: 1.21x at 2^22 elements, 1.00-1.01x at 2^28, and 0.95x or better at every
// power of two from 2^10 to 2^30 (run 22 in docs/PERFORMANCE.md).
int pick_reduce(const ReduceArgs &) {
    constexpr int best = rung(kCudaReduce, "single_pass");
    return best;
}

constexpr Variant<TransposeArgs> kCudaTranspose[] = {
    {"cublas_geam", kFloatTypes, cuda::transpose_geam},  // not 16-bit: see 00_cublas_geam.cu
    {"naive", kAllTypes, cuda::transpose_naive},
    {"smem_tile", kAllTypes, cuda::transpose_smem_tile},
    {"padded_tile", kAllTypes, cuda::transpose_padded_tile},
    {"block_rows", kAllTypes, cuda::transpose_block_rows},
    {"tile64", kAllTypes, cuda::transpose_tile64},
    {"tile64_vec2", kAllTypes, cuda::transpose_tile64_vec2},
    {"tile64_vec16", kWordTypes, cuda::transpose_tile64_vec16},
};
// geam computes 1 * A + 0 * B, which quiets signalling NaNs and rewrites NaN
// payloads, so "auto" is always a rung of ours, which moves bits (and takes 2-byte
// elements, which geam cannot move exactly). On the H100 the
// 64x64 tile with pair accesses is the fastest F32 rung (1.01x geam at 8192^2 and
// 16384^2, 0.96x the copy) and on a par with the others for F64 (1.02x geam); the
// 16-byte rung is slower for F32 (run 23 in docs/PERFORMANCE.md). It falls back to
// the plain 64x64 tile when the arrays are not aligned for pairs.
int pick_transpose(const TransposeArgs &) {
    constexpr int best = rung(kCudaTranspose, "tile64_vec2");
    return best;
}

constexpr Variant<GemmBatchedCall> kCudaGemmBatched[] = {
    {"cublas", kFloatTypes | k16BitTypes, cuda::gemm_batched_cublas},
    {"thread_product", kFloatTypes, cuda::gemm_batched_thread_product},
    {"staged", kFloatTypes, cuda::gemm_batched_staged},
    {"prefetch", dtype_bit(GPK_F32), cuda::gemm_batched_prefetch},
    {"dmma", dtype_bit(GPK_F64), cuda::gemm_batched_dmma},
};
// "auto" by dtype and the largest of m, n, k, from the gpk-bench measurements of square
// products on the H100 (docs/PERFORMANCE.md, "Auto: gemm_batched"); a size between two
// timed ones takes the rung of the next timed size up. F32: staged up to 16, prefetch
// from 32 to 128, cuBLAS from 256. F64: staged up to 16, cuBLAS at 32 and 64, the FP64
// tensor-core rung at 128, cuBLAS from 256. F16 and BF16: cuBLAS, the only rung that
// takes them. Every rung picked takes every call of its range (staged holds products
// of up to 90 x 90 in F32 and 64 x 64 in F64); one that refuses a call on the device
// at hand (dmma below sm_80) is replaced by cuBLAS in dispatch.
int pick_gemm_batched(const GemmBatchedCall &c) {
    constexpr int vendor = rung(kCudaGemmBatched, "cublas");
    constexpr int staged = rung(kCudaGemmBatched, "staged");
    constexpr int prefetch = rung(kCudaGemmBatched, "prefetch");
    constexpr int dmma = rung(kCudaGemmBatched, "dmma");
    const int64_t size = std::max(c.m, std::max(c.n, c.k));
    if (c.dtype == GPK_F32) return size <= 16 ? staged : size <= 128 ? prefetch : vendor;
    if (c.dtype == GPK_F64) return size <= 16 ? staged : size <= 64 ? vendor : size <= 128 ? dmma : vendor;
    return vendor;
}

constexpr Variant<PiArgs> kCudaPi[] = {
    {"curand_thrust", kAllTypes, cuda::pi_curand},
    {"lecture", kAllTypes, cuda::pi_lecture},
    {"fused", kAllTypes, cuda::pi_fused},
    {"registers", kAllTypes, cuda::pi_registers},
    {"ilp", kAllTypes, cuda::pi_ilp},
    {"persistent", kAllTypes, cuda::pi_persistent},
    {"sobol", kAllTypes, cuda::pi_sobol},
};
// The default must be of the Philox family, so that hits match the host backend.
int pick_pi(const PiArgs &) {
    constexpr int best = rung(kCudaPi, "persistent");
    return best;
}

template <class Args, int N>
constexpr Ladder<Args> ladder(const Variant<Args> (&rungs)[N], int vendor, int (*pick)(const Args &)) {
    return Ladder<Args>{rungs, N, vendor, pick};
}

const Ladder<GemmArgs> kGemm[2] = {ladder(kCudaGemm, 0, pick_gemm), ladder(kHostGemm, -1, first_rung<GemmArgs>)};
const Ladder<ReduceArgs> kReduce[2] = {ladder(kCudaReduce, 0, pick_reduce),
                                       ladder(kHostReduce, -1, first_rung<ReduceArgs>)};
const Ladder<TransposeArgs> kTranspose[2] = {ladder(kCudaTranspose, 0, pick_transpose),
                                             ladder(kHostTranspose, -1, first_rung<TransposeArgs>)};
const Ladder<GemmBatchedCall> kGemmBatched[2] = {ladder(kCudaGemmBatched, 0, pick_gemm_batched),
                                                  ladder(kHostGemmBatched, -1, first_rung<GemmBatchedCall>)};
const Ladder<PiArgs> kPi[2] = {ladder(kCudaPi, 0, pick_pi), ladder(kHostPi, -1, first_rung<PiArgs>)};

int slot(int backend) { return backend == GPK_BACKEND_CUDA ? 0 : 1; }

template <class Args>
const char *name_of(const Ladder<Args> &l, int index) {
    return (index >= 0 && index < l.count) ? l.rungs[index].name : nullptr;
}

}  // namespace

const Ladder<GemmArgs> &gemm_ladder(int backend) { return kGemm[slot(backend)]; }
const Ladder<ReduceArgs> &reduce_ladder(int backend) { return kReduce[slot(backend)]; }
const Ladder<TransposeArgs> &transpose_ladder(int backend) { return kTranspose[slot(backend)]; }
const Ladder<PiArgs> &pi_ladder(int backend) { return kPi[slot(backend)]; }
const Ladder<GemmBatchedCall> &gemm_batched_ladder(int backend) { return kGemmBatched[slot(backend)]; }

int variant_count(int op, int backend) {
    switch (op) {
        case GPK_OP_GEMM: return gemm_ladder(backend).count;
        case GPK_OP_REDUCE: return reduce_ladder(backend).count;
        case GPK_OP_TRANSPOSE: return transpose_ladder(backend).count;
        case GPK_OP_PI: return pi_ladder(backend).count;
        case GPK_OP_GEMM_BATCHED: return gemm_batched_ladder(backend).count;
        default: return 0;
    }
}

const char *variant_name(int op, int backend, int index) {
    switch (op) {
        case GPK_OP_GEMM: return name_of(gemm_ladder(backend), index);
        case GPK_OP_REDUCE: return name_of(reduce_ladder(backend), index);
        case GPK_OP_TRANSPOSE: return name_of(transpose_ladder(backend), index);
        case GPK_OP_PI: return name_of(pi_ladder(backend), index);
        case GPK_OP_GEMM_BATCHED: return name_of(gemm_batched_ladder(backend), index);
        default: return nullptr;
    }
}

int variant_index(int op, int backend, const char *name) {
    const int count = variant_count(op, backend);
    for (int i = 0; i < count; ++i)
        if (std::strcmp(variant_name(op, backend, i), name) == 0) return i;
    return -1;
}

}  // namespace gpk
