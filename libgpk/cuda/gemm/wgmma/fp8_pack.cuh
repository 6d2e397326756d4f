// The packing of gemm rung 15 (15_wgmma_fp8.cu): an FP8 operand that FP8 wgmma cannot
// read in place (MN-major, or a pointer or leading dimension off 16 bytes) copied once
// into k-major workspace, rows packed_ld(K, 1) bytes apart (k rounded up to 128, the
// pad zeros).
//
// common.cuh's pack kernel moves one element per thread and instruction: for 1-byte
// elements it runs at a third of the memory's rate, which an MN-major operand of a large
// product pays for in full. Here a block moves a 128 x 128-byte tile through shared
// memory: an MN-major source is read 16 bytes at a time along its rows (m or n), each
// thread turns 4 x 4-byte blocks into words along k with byte permutes, and the tile
// leaves in 128-byte rows of the k-major copy. Where the source's pointer or leading
// dimension is not a multiple of 16 bytes, the words are read 4 bytes at a time (off 4,
// as aligned pairs realigned with a byte permute; the same tile, the same stores).

#pragma once

#include "common.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpk::cuda::tc::wgmma {

constexpr int PACK_TILE = 128, PACK_ROW = PACK_TILE + 4;  // a tile row in shared memory, padded

// Bytes (c0 .. c0 + 3) of row r of a source stored as `rows` rows of `cols` bytes, `ld`
// apart, as one word (zero past its rows and columns). Off 4 bytes (words false), the two
// aligned words around them are read and the four bytes picked out with a byte permute,
// where both words lie inside the source's span (the caller's row padding included,
// nothing past its last byte); at that span's ends, byte by byte.
__device__ __forceinline__ uint32_t pack_word_k(const uint8_t *src, int64_t ld, int64_t r, int64_t c0, int64_t rows,
                                                int64_t cols, bool words) {
    if (r >= rows) return 0;
    const uint8_t *a = src + r * ld + c0;
    if (c0 + 4 <= cols) {
        if (words) return *reinterpret_cast<const uint32_t *>(a);
        const uintptr_t w0 = reinterpret_cast<uintptr_t>(a) & ~uintptr_t(3);
        const uintptr_t end = reinterpret_cast<uintptr_t>(src + (rows - 1) * ld + cols);
        if (w0 >= reinterpret_cast<uintptr_t>(src) && w0 + 8 <= end) {
            const uint32_t lo = *reinterpret_cast<const uint32_t *>(w0), hi = *reinterpret_cast<const uint32_t *>(w0 + 4);
            return __byte_perm(lo, hi, 0x3210u + 0x1111u * unsigned(reinterpret_cast<uintptr_t>(a) & 3));
        }
    }
    uint32_t w = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i)
        if (c0 + i < cols) w |= uint32_t(a[i]) << (8 * i);
    return w;
}

// dst[r * ldd + c] = element (r, c) for c < cols, 0 up to ldd; a block per 128 x 128
// tile (grid x over c, y over r, both grid-stride). vec: the source's pointer and leading
// dimension are multiples of 16 bytes; words: of 4.
//
// In an unnamed namespace (with prepare_f8, its launch): a kernel that is no template,
// defined in a header, is defined again in each file that includes it, and the library's
// link would see each definition under the same name.
namespace {
__global__ void __launch_bounds__(256) pack_f8_kernel(const uint8_t *__restrict__ src, int64_t ld, bool kmajor,
                                                      int64_t rows, int64_t cols, uint8_t *__restrict__ dst,
                                                      int64_t ldd, bool vec, bool words) {
    __shared__ uint32_t tile[PACK_TILE * PACK_ROW / 4];  // tile[r][c], words of 4 c's
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    constexpr int W = PACK_ROW / 4;  // words per tile row: odd, so a column of words spans the banks
    for (int64_t r0 = int64_t(blockIdx.y) * PACK_TILE; r0 < rows; r0 += int64_t(gridDim.y) * PACK_TILE)
        for (int64_t c0 = int64_t(blockIdx.x) * PACK_TILE; c0 < ldd; c0 += int64_t(gridDim.x) * PACK_TILE) {
            // Thread: columns c .. c + 3 (c = c0 + 4 lane) of rows r .. r + 15 (r = r0 + 16 warp).
            const int64_t r = r0 + 16 * warp, c = c0 + 4 * lane;
            if (kmajor) {
#pragma unroll
                for (int j = 0; j < 16; ++j) tile[(16 * warp + j) * W + lane] = pack_word_k(src, ld, r + j, c, rows, cols, words);
            } else {
                // w[k][q]: rows r + 4q .. r + 4q + 3 of column c + k (16 bytes along the
                // source's rows per column, in one load where aligned); each 4 x 4 block
                // turned into 4 words of row r + 4q + j by byte permutes.
                uint32_t w[4][4];
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    if (vec && c + k < cols && r + 16 <= rows) {
                        const uint4 v = *reinterpret_cast<const uint4 *>(src + (c + k) * ld + r);
                        w[k][0] = v.x;
                        w[k][1] = v.y;
                        w[k][2] = v.z;
                        w[k][3] = v.w;
                    } else {
#pragma unroll
                        for (int q = 0; q < 4; ++q) w[k][q] = pack_word_k(src, ld, c + k, r + 4 * q, cols, rows, words);
                    }
                }
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const uint32_t t0 = __byte_perm(w[0][q], w[1][q], 0x5140), t1 = __byte_perm(w[2][q], w[3][q], 0x5140);
                    const uint32_t t2 = __byte_perm(w[0][q], w[1][q], 0x7362), t3 = __byte_perm(w[2][q], w[3][q], 0x7362);
                    uint32_t *row = tile + (16 * warp + 4 * q) * W + lane;
                    row[0] = __byte_perm(t0, t1, 0x5410);
                    row[W] = __byte_perm(t0, t1, 0x7632);
                    row[2 * W] = __byte_perm(t2, t3, 0x5410);
                    row[3 * W] = __byte_perm(t2, t3, 0x7632);
                }
            }
            __syncthreads();
            // Each warp writes 16 rows, a row of 128 bytes per instruction.
#pragma unroll 4
            for (int rr = warp; rr < PACK_TILE; rr += 8) {
                const int64_t rw = r0 + rr, cw = c0 + 4 * lane;
                if (rw < rows && cw < ldd) *reinterpret_cast<uint32_t *>(dst + rw * ldd + cw) = tile[rr * W + lane];
            }
            __syncthreads();
        }
}

// The workspace bytes and launches for both operands: each one that FP8 wgmma cannot
// read in place is packed (common.cuh's Prepared says which and where).
inline Result prepare_f8(const Normal &nf, const GemmTc &g, Prepared *pr) {
    if (pack_bytes(nf, 1, 1) > g.workspace_bytes) return {Status::WorkspaceTooSmall, "workspace", cudaSuccess};
    const int64_t ldd = packed_ld(nf.K, 1);
    uint8_t *ws = static_cast<uint8_t *>(g.workspace);
    auto one = [&](const Operand &o, const void **ptr, int64_t *ld, bool *packed) -> cudaError_t {
        *packed = !in_place(o, nf.K, 1, 1);
        if (!*packed) {
            *ptr = o.ptr;
            *ld = o.ld;
            return cudaSuccess;
        }
        const uintptr_t p = reinterpret_cast<uintptr_t>(o.ptr);
        const bool vec = p % 16 == 0 && o.ld % 16 == 0, words = p % 4 == 0 && o.ld % 4 == 0;
        const int64_t rt = (o.rows + PACK_TILE - 1) / PACK_TILE;
        const dim3 grid(unsigned(ldd / PACK_TILE), unsigned(rt < 65535 ? rt : 65535));
        pack_f8_kernel<<<grid, 256, 0, g.stream>>>(static_cast<const uint8_t *>(o.ptr), o.ld, o.kmajor, o.rows, nf.K,
                                                   ws, ldd, vec, words);
        *ptr = ws;
        *ld = ldd;
        ws += round_up_256(size_t(o.rows) * size_t(ldd));
        return cudaGetLastError();
    };
    cudaError_t e = one(nf.X, &pr->X, &pr->ldx, &pr->packed_x);
    if (e == cudaSuccess) e = one(nf.Y, &pr->Y, &pr->ldy, &pr->packed_y);
    if (e != cudaSuccess) return cuda_failed(e, "gemm rung wgmma_fp8: packing an operand");
    pr->xk = pr->yk = true;
    return ok();
}

}  // namespace
}  // namespace gpk::cuda::tc::wgmma
