// Launchers of the CUDA rungs, one per file under cuda/<op>/, numbered in ladder
// order; 00_ wraps the vendor library. Each launcher runs asynchronously on the
// context's stream (gpk_pi returns with the hits on the host), checks every CUDA
// call and the last error after every launch, and reports failures through
// gpk::fail with the CUDA/cuBLAS/cuRAND error text.
#pragma once

#include "../ops.hpp"

namespace gpk::cuda {

gpk_status gemm_cublas(gpk_context &ctx, const GemmArgs &args);          // gemm/00_cublas.cu
gpk_status gemm_naive(gpk_context &ctx, const GemmArgs &args);           // gemm/01_naive.cu
gpk_status gemm_coalesced(gpk_context &ctx, const GemmArgs &args);       // gemm/02_coalesced.cu
gpk_status gemm_smem_tile(gpk_context &ctx, const GemmArgs &args);       // gemm/03_smem_tile.cu
gpk_status gemm_multi_output(gpk_context &ctx, const GemmArgs &args);    // gemm/04_multi_output.cu
gpk_status gemm_transposed_b(gpk_context &ctx, const GemmArgs &args);    // gemm/05_transposed_b.cu
gpk_status gemm_rank1(gpk_context &ctx, const GemmArgs &args);           // gemm/06_rank1.cu
gpk_status gemm_register_2d(gpk_context &ctx, const GemmArgs &args);     // gemm/07_register_2d.cu
gpk_status gemm_warptile_async(gpk_context &ctx, const GemmArgs &args);  // gemm/08_warptile_async.cu
gpk_status gemm_dmma_f64(gpk_context &ctx, const GemmArgs &args);        // gemm/09_dmma_f64.cu
gpk_status gemm_prefetch(gpk_context &ctx, const GemmArgs &args);        // gemm/10_prefetch.cu

gpk_status reduce_cub(gpk_context &ctx, const ReduceArgs &args);         // reduce/00_cub.cu
gpk_status reduce_interleaved(gpk_context &ctx, const ReduceArgs &args); // reduce/01_interleaved.cu
gpk_status reduce_interleaved_strided(gpk_context &ctx, const ReduceArgs &args); // reduce/02_interleaved_strided.cu
gpk_status reduce_sequential(gpk_context &ctx, const ReduceArgs &args);          // reduce/03_sequential.cu
gpk_status reduce_first_add(gpk_context &ctx, const ReduceArgs &args);           // reduce/04_first_add.cu
gpk_status reduce_unroll_last_warp(gpk_context &ctx, const ReduceArgs &args);    // reduce/05_unroll_last_warp.cu
gpk_status reduce_unroll_complete(gpk_context &ctx, const ReduceArgs &args);     // reduce/06_unroll_complete.cu
gpk_status reduce_multi_add(gpk_context &ctx, const ReduceArgs &args);           // reduce/07_multi_add.cu
gpk_status reduce_unroll8(gpk_context &ctx, const ReduceArgs &args);             // reduce/08_unroll8.cu
gpk_status reduce_warp_shuffle(gpk_context &ctx, const ReduceArgs &args);        // reduce/09_warp_shuffle.cu
gpk_status reduce_vec16(gpk_context &ctx, const ReduceArgs &args);               // reduce/10_vec16.cu
gpk_status reduce_single_pass(gpk_context &ctx, const ReduceArgs &args);         // reduce/11_single_pass.cu

gpk_status transpose_geam(gpk_context &ctx, const TransposeArgs &args);  // transpose/00_cublas_geam.cu
gpk_status transpose_naive(gpk_context &ctx, const TransposeArgs &args); // transpose/01_naive.cu
gpk_status transpose_smem_tile(gpk_context &ctx, const TransposeArgs &args);     // transpose/02_smem_tile.cu
gpk_status transpose_padded_tile(gpk_context &ctx, const TransposeArgs &args);   // transpose/03_padded_tile.cu
gpk_status transpose_block_rows(gpk_context &ctx, const TransposeArgs &args);    // transpose/04_block_rows.cu
gpk_status transpose_tile64(gpk_context &ctx, const TransposeArgs &args);        // transpose/05_tile64.cu
gpk_status transpose_tile64_vec2(gpk_context &ctx, const TransposeArgs &args);   // transpose/06_tile64_vec2.cu
gpk_status transpose_tile64_vec16(gpk_context &ctx, const TransposeArgs &args);  // transpose/07_tile64_vec16.cu

// gemm_batched/launch.cu: the rungs of gemm_batched/NN_*.cu behind the library's
// launcher signature; the call arrives raw (the rungs normalise the layout).
gpk_status gemm_batched_cublas(gpk_context &ctx, const GemmBatchedCall &args);          // gemm_batched/00_cublas.cu
gpk_status gemm_batched_thread_product(gpk_context &ctx, const GemmBatchedCall &args);  // gemm_batched/01_thread_product.cu
gpk_status gemm_batched_staged(gpk_context &ctx, const GemmBatchedCall &args);          // gemm_batched/02_staged.cu
gpk_status gemm_batched_prefetch(gpk_context &ctx, const GemmBatchedCall &args);        // gemm_batched/03_prefetch.cu
gpk_status gemm_batched_dmma(gpk_context &ctx, const GemmBatchedCall &args);            // gemm_batched/04_dmma.cu

gpk_status pi_curand(gpk_context &ctx, const PiArgs &args);              // pi/00_curand_thrust.cu
// pi_curand takes sample i from numbers 2i and 2i + 1 of cuRAND's sequence, whose
// offset is a 64-bit count of numbers: it reaches samples [0, 2^63) and no further.
constexpr uint64_t kCurandPiSamples = uint64_t(1) << 63;
gpk_status pi_lecture(gpk_context &ctx, const PiArgs &args);             // pi/01_lecture.cu
gpk_status pi_fused(gpk_context &ctx, const PiArgs &args);               // pi/02_fused.cu
gpk_status pi_registers(gpk_context &ctx, const PiArgs &args);           // pi/03_registers.cu
gpk_status pi_ilp(gpk_context &ctx, const PiArgs &args);                 // pi/04_ilp.cu
gpk_status pi_persistent(gpk_context &ctx, const PiArgs &args);          // pi/05_persistent.cu
gpk_status pi_sobol(gpk_context &ctx, const PiArgs &args);               // pi/06_sobol.cu

}  // namespace gpk::cuda
