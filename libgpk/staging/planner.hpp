// The staging pipeline's plans: how a call on host arrays is cut into chunks, and
// what device and pinned memory those chunks need (the why of each rule is in
// pipeline.cpp's opening comment). Pure arithmetic on sizes and limits -- no CUDA,
// no context -- so that the host test suite checks it (tests/staging/test_planner.cpp).
// executor.cpp provisions a plan's Needs and runs its chunks; pipeline.cpp joins the two.
#pragma once

#include "../context.hpp"
#include "../matrix_view.hpp"

#include <cstddef>
#include <cstdint>

namespace gpk::cuda::plan {

constexpr size_t kDefaultChunkBytes = size_t{32} << 20;  // of streamed data, when chunk_bytes is 0
constexpr size_t kAlignment = 256;                       // of every buffer carved out of another
constexpr size_t kLinePadBytes = 16;                     // device copies: lines start 16-byte aligned
constexpr size_t kResidentPiece = size_t{8} << 20;       // pageable resident operand: slot-sized pieces
constexpr size_t kUncappedGranule = size_t{1} << 20;     // growth step of buffers without a cap
constexpr size_t kTransposeLine = size_t{32} << 10;      // transpose: least line of a strided copy, by default
constexpr int64_t kPanelGranule = 64;                    // gemm panels, transpose tiles: kernel tiles
constexpr int64_t kReduceGranule = 4096;                 // reduce pieces

inline size_t align_up(size_t bytes, size_t to = kAlignment) { return (bytes + to - 1) / to * to; }
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Where an operand lives: device memory is used in place, pinned host memory is
// copied by DMA from the caller's array, pageable host memory through a pinned slot.
enum class Memory { Device, Pinned, Pageable };

// The leading dimension of a piece's device copy: lines padded to 16 bytes, so that
// the rungs' vector paths apply.
int64_t device_ld(int64_t inner, size_t es);
// Bytes of a piece's device copy (device_ld lines), and of its packed copy in a slot:
// of a view, only the extent counts (`outer` lines of `inner` elements), not its ld.
size_t device_bytes(const MatrixView &s, size_t es);
size_t packed_bytes(const MatrixView &s, size_t es);

// Whether a gemm scalar is zero in the call's dtype (F32, F16, BF16: after rounding
// to float),
// as the header decides: beta 1e-300 is zero in F32, and C is then not read.
bool zero_in(int dtype, double value);

// The device bytes a call may use: settings.device_bytes when set, else what the
// pipeline already holds (`held`) plus the GPU's free memory less a margin for what
// others allocate.
size_t device_budget(const StagingSettings &settings, size_t free_bytes, size_t held);

// Scratch that a reduce rung asks for on `count` elements (rounded as a lane's
// scratch is).
size_t reduce_scratch(int64_t count);

// What a plan needs, provisioned before the first copy.
struct Needs {
    int lanes;            // lanes it uses
    size_t lane_device;   // device bytes per lane
    size_t lane_scratch;  // device bytes per lane reserved for the rung's scratch (reduce)
    size_t shared;        // device bytes shared by the lanes
    size_t slot;          // pinned bytes per slot; 0 when no operand is pageable
    size_t check = 0;     // validation mode: pinned bytes per lane that a chunk's comparison reads

    size_t device() const { return shared + static_cast<size_t>(lanes) * (lane_device + lane_scratch); }
};

// A plan that does not fit reports what the smallest one would need: `need` bytes
// over `lanes` lanes (the message of GPK_ERROR_OUT_OF_MEMORY).
struct Shortfall {
    size_t need;
    int lanes;
};

// Chunk c runs on lane c mod lanes.
inline int lane_of(int64_t chunk, int lanes) { return static_cast<int>(chunk % lanes); }

// ---- gemm ---------------------------------------------------------------------------
// C (m x n) = alpha op(A) op(B) + beta C, column-major as dispatch normalized it. X is
// the streamed operand, Y the resident one: with resident_a, Y is op(A) and panels are
// columns of C; otherwise Y is op(B) and panels are rows of C. Panels run along P,
// the resident blocks along Q.
struct GemmProblem {
    int64_t m, n, k;
    bool transa, transb;
    size_t es;
    bool resident_a;
    bool read_c;                  // beta != 0 in the dtype
    Memory x, y, c;               // Device for X and Y when k == 0 (not read)
    // Validation mode: each lane also holds the checker's tile of C (device), and
    // the comparison reads the variant's and the checker's tile (Needs::check).
    bool check = false;
    int64_t P() const { return resident_a ? n : m; }
    int64_t Q() const { return resident_a ? m : n; }
    // Extents as stored, packed: a panel of `count` of X, a block of `count` of Y, C's tile.
    MatrixView streamed(int64_t count) const;
    MatrixView resident(int64_t count) const;
    MatrixView tile(int64_t pc, int64_t qc) const;
};

struct GemmChunk {
    int64_t p0, pc, q0, qc;  // panel [p0, p0 + pc) of block [q0, q0 + qc)
};

// Where a chunk's pieces lie in the caller's arrays, in GemmProblem's orientation (its
// extents are these pieces' extents): a, b and c are the whole A (m x k as stored, k x m
// when transa), B (k x n, or n x k) and C (m x n).
struct GemmArrays {
    MatrixView a, b, c;
    int64_t k;
    bool transa, transb, resident_a;
    size_t es;
    MatrixView streamed(int64_t p0, int64_t count) const;  // a panel of X
    MatrixView resident(int64_t q0, int64_t count) const;  // a block of Y
    MatrixView tile(int64_t p0, int64_t pc, int64_t q0, int64_t qc) const;  // C's tile
};

struct GemmPlan {
    bool fits;
    Shortfall shortfall;  // when !fits
    int64_t panel;        // pn: panel length along P
    int64_t block;        // q: block width along Q (Q itself when in core)
    int64_t panels, blocks;
    Needs needs;
    int64_t chunks() const { return panels * blocks; }
    // Chunks go panel by panel within a block, block after block.
    GemmChunk chunk(int64_t index, const GemmProblem &g) const;
};

GemmPlan plan_gemm(const GemmProblem &g, const StagingSettings &st, size_t budget);

// ---- transpose ------------------------------------------------------------------------
// B (cols x rows) = A (rows x cols)^T; chunks are tiles of A, h rows by w columns.
struct TransposeProblem {
    int64_t rows, cols;
    size_t es;
    Memory a, b;
    bool check = false;  // validation mode: the comparison reads each tile of A and of B (Needs::check)
    MatrixView a_tile(int64_t hc, int64_t wc) const { return MatrixView::packed(hc, wc); }
    MatrixView b_tile(int64_t hc, int64_t wc) const { return MatrixView::packed(wc, hc); }
};

struct TransposeChunk {
    int64_t i0, hc, j0, wc;  // rows [i0, i0 + hc), columns [j0, j0 + wc) of A
};

// A chunk's tile in the caller's arrays: wc lines of hc elements in A (rows x cols as
// stored), hc lines of wc in B (cols x rows).
struct TransposeArrays {
    MatrixView a, b;
    size_t es;
    MatrixView a_tile(const TransposeChunk &ch) const { return a.block(ch.i0, ch.j0, ch.hc, ch.wc, es); }
    MatrixView b_tile(const TransposeChunk &ch) const { return b.block(ch.j0, ch.i0, ch.wc, ch.hc, es); }
};

struct TransposePlan {
    bool fits;
    Shortfall shortfall;
    int64_t h, w;
    int64_t tile_rows, tile_cols;  // tiles down and across A
    Needs needs;
    int64_t chunks() const { return tile_rows * tile_cols; }
    // Tiles go down a column of tiles, column after column.
    TransposeChunk chunk(int64_t index, const TransposeProblem &t) const;
};

TransposePlan plan_transpose(const TransposeProblem &t, const StagingSettings &st, size_t budget);

// ---- reduce ---------------------------------------------------------------------------
// x[0..n) in host memory, cut into pieces whose partials (rs bytes each) go to the
// shared buffer, followed by the result unless it is device memory.
struct ReduceProblem {
    int64_t n;
    size_t es, rs;
    bool pinned;      // x is pinned host memory
    bool dev_result;  // the result is device memory
    // Validation mode: the checker's partials and result follow in the shared buffer.
    bool check = false;
};

struct ReduceChunk {
    int64_t first, count;
};

struct ReducePlan {
    bool fits;
    Shortfall shortfall;
    int64_t piece;   // elements per piece
    int64_t pieces;
    Needs needs;
    size_t result_offset;  // of the result in the shared buffer (when !dev_result)
    size_t check_offset;         // when check: the checker's partials in the shared buffer,
    size_t check_result_offset;  // and its result
    int64_t chunks() const { return pieces; }
    ReduceChunk chunk(int64_t index, const ReduceProblem &r) const;
};

ReducePlan plan_reduce(const ReduceProblem &r, const StagingSettings &st, size_t budget);

// ---- gemm_batched ------------------------------------------------------------------------
// batch_count products of one shape; the host operands of one product take a, b and c
// bytes on the device (0 for an operand used in place or not read). A shared operand
// (stride 0) is copied once for the whole call; the others travel in chunks of whole
// products, as many as fit about chunk_bytes (never less than one), on the lanes like
// gemm's panels -- by default at least two chunks per lane. `several` is false when a
// chunk's products of some operand do not move in one 2-D copy (spans that overlap,
// C matrices not evenly spaced): then a chunk is one product. The pinned slots take a
// chunk's pageable copies in (slot_a, slot_b, slot_c_in per product, each copy
// aligned) or its copy out (slot_c_out per product), and a pageable shared operand
// (slot_shared bytes, copied through lane 0's slots as one line). Validation mode:
// check_c, one product's C packed; a lane holds the checker's packed C of its chunk,
// and its pinned check buffer the variant's and the checker's side by side.
struct GemmBatchedProblem {
    int64_t batch;
    size_t a, b, c;
    bool shared_a, shared_b;
    bool several = true;
    size_t slot_a = 0, slot_b = 0, slot_c_in = 0, slot_c_out = 0, slot_shared = 0;
    size_t check_c = 0;
    size_t per_product() const { return (shared_a ? 0 : a) + (shared_b ? 0 : b) + c; }
};

struct GemmBatchedChunk {
    int64_t first, count;  // products [first, first + count)
};

struct GemmBatchedPlan {
    bool fits;
    Shortfall shortfall;
    int64_t per_chunk;  // products in a chunk (the last may hold fewer)
    int64_t count;      // chunks
    Needs needs;        // `shared` holds the shared operands
    int64_t chunks() const { return count; }
    GemmBatchedChunk chunk(int64_t index, const GemmBatchedProblem &g) const;
};

GemmBatchedPlan plan_gemm_batched(const GemmBatchedProblem &g, const StagingSettings &st, size_t budget);

// Elements of a panel: about `target` bytes of streamed data at `per_unit` bytes per
// element of the panel's length, within [1, total] (see planner.cpp). Exposed for tests.
int64_t panel_length(int64_t total, size_t per_unit, const StagingSettings &st, int64_t granule, int64_t least = 0);

}  // namespace gpk::cuda::plan
