// "auto" by measurement: tuning tables.
//
// "auto" runs, for each call, the rung measured fastest for calls like it on a GPU of
// the context's kind (for gemm, the vendor's where it measured within 3 % of that; for
// transpose, the ladder's default).
// What was measured is a table, a text file that gpk-bench writes (`gpk-bench --tune
// FILE`) on the GPU at hand:
//
//   gpk-tuning	1                        format and its version: the first line
//   device	NVIDIA H200                  the device kind: cudaDeviceProp's name,
//   compute_capability	9.0              major.minor and multiProcessorCount, which
//   sm_count	132                          a context's GPU must match
//   driver	13.0                         informative: cudaDriverGetVersion,
//   runtime	13.0                         cudaRuntimeGetVersion, the libgpk
//   libgpk	0.1.0                        version, the date, how the grid was
//   date	2026-12-01                   timed; read and kept, never compared
//   timing	...
//   # op  dtype  math  layout  align  shape  rungs
//   gemm	bf16	default	nn	a16	4096x4096x4096	wgmma_ws:171.2,cublas:175.9,mma_sync:240.3
//
// Fields are separated by one tab; `#` starts a comment line; blank lines are skipped.
// A row is a measured point of one op: its class (dtype, math mode, layout class,
// alignment class) and its shape, then the rungs that ran there in the order "auto"
// prefers them, the vendor's included, each with its median time in microseconds
// (informative; a rung may be named alone). gpk-bench orders them fastest first, save
// that for gemm it puts the vendor's first where it is within 3 % of the fastest, and
// for transpose the ladder's default (apps/bench/tune.cpp says why). Rungs that could
// not take the call, or were dropped from the timing as hopeless (over 4x the best),
// are not listed.
//
//   op      gemm, gemm_batched, reduce, transpose, pi
//   dtype   f32 f64 f16 bf16 (gemm, gemm_batched); also i32 i64 (reduce, transpose);
//           fp8, fp8_block, half_f32 for gemm's gpk_gemm_ex classes (ops.hpp);
//           - (pi)
//   math    tf32 for F32 gemm and gemm_batched in GPK_MATH_TF32, default otherwise
//   layout  gemm and gemm_batched: nn nt tn tt, op(A) then op(B) of the call in
//           column-major form (a row-major call is its transpose: m and n, A and B and
//           their transposes swap); - for the other ops
//   align   a16: every array's address, and every leading dimension and stride in
//           bytes, a multiple of 16 (whole 16-byte vectors); u: anything else; - (pi)
//   shape   gemm MxNxK (column-major form); gemm_batched MxNxKxBATCH; reduce N;
//           transpose ROWSxCOLS (column-major form: A is ROWS x COLS); pi SAMPLES
//
// Lookup, for a call: its key (op, dtype, math, layout, align, shape); among the rows of
// the same op and class, the nearest in log-shape space (the sum over the dimensions
// of the squared difference of log2, a batch's count weighing a sixteenth: a factor of
// 16 in it is as far as a factor of 2 in m, n or k), ties going to the smaller shape (rows are
// sorted by shape at load, so the order of a file's lines does not matter); then the
// first rung of that row's list that takes the call (its dtypes and its `takes`
// function: alignment, the GPU) and that "auto" may run (rungs.def's GPK_AUTO_NEVER).
// Where no row of the class exists or none of its rungs takes the call: the ladder's
// default, the first of rungs.def's GPK_AUTO lines that takes it (the vendor library
// for gemm and gemm_batched). The same table and call always make the same choice.
//
// Where tables come from: the library carries tables measured on the GPUs it was
// tuned on (libgpk/tuning/*.tsv, compiled in), and a context on the CUDA backend
// starts with the one whose device kind (name, compute capability, SM count) is its
// GPU's; without one it has none ("none: the vendor library and each ladder's
// default"). gpk_load_tuning(ctx, path) puts a file's table in its place (NULL: the
// built-in again), and gpk_create reads GPK_TUNING=path. A file is refused whole --
// wrong device kind, a malformed line, a rung its op's ladder does not have -- with
// GPK_ERROR_INVALID_ARGUMENT naming the file and line, and the context keeps its
// table. The host backend's kind is "host" (compute capability and SM count "-"),
// whose ladders have the one rung "host".
//
// The parser and the lookup are plain functions of the table and the call (no GPU, no
// context), so that tests run them on the host; the rungs' `takes` functions enter
// the lookup as a predicate.
#pragma once

#include "gpk/gpk.h"
#include "ops.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpk::tuning {

enum Align { kAlignNone = 0, kAligned = 1, kUnaligned = 2 };
constexpr int kNoLayout = -1;  // layouts 0..3: nn, nt, tn, tt (2 * op(A) + op(B))
constexpr int kMaxDims = 4;

// A call as the table sees it: its class and its shape.
struct Key {
    int op = -1;
    int dtype = -1;  // -1: none (pi)
    int math = GPK_MATH_DEFAULT;
    int layout = kNoLayout;
    int align = kAlignNone;
    int ndims = 0;
    int64_t dims[kMaxDims] = {};
};

// Whether two keys are of the same op and class (the shape aside).
bool same_class(const Key &a, const Key &b);

// The keys of the ops' calls (as dispatch receives them: gemm and the batched gemm
// normalized to column-major), in the context's math mode.
Key key_of(const GemmArgs &a, int math_mode);
Key key_of(const GemmBatchedCall &c, int math_mode);
Key key_of(const ReduceArgs &a);
Key key_of(const TransposeArgs &a);
Key key_of(const PiArgs &a);

// What a table was measured on. The host backend's: {"host", "-", "-"}.
struct DeviceKind {
    std::string name, compute_capability, sm_count;
};

struct Row {
    Key key;
    double log_dims[kMaxDims] = {};  // log2 of key.dims
    std::vector<int> rungs;          // ladder indices, fastest first
    int line = 0;                    // where it stood in its file
};

struct Table {
    DeviceKind device;
    std::vector<std::pair<std::string, std::string>> info;  // driver, runtime, ...: as read
    std::vector<Row> rows;  // sorted by class, then by shape
};

// The ladder index of rung `name` of `op` on the backend the table is for; -1 if
// its ladder has none.
using RungIndex = int (*)(int op, const char *name, void *user);

// Parses a table. `source` names it in messages (a path). With `kind`, a table of
// another device kind is refused. On failure returns false with *error
// "SOURCE line N: what is wrong" and *out untouched.
bool parse(const std::string &text, const std::string &source, const DeviceKind *kind, RungIndex rung,
           void *user, Table *out, std::string *error);

// Adds the rows of `from` to `into`: one device's table kept in several files (one per
// op). False with *error, and `into` unchanged, when both hold the same point.
bool merge(Table *into, const Table &from, std::string *error);

// The row nearest `key` among those of its class, or null when the class has none.
const Row *nearest(const Table &table, const Key &key);

// The rung "auto" runs for a call of `key`: the first rung of the nearest row that
// `takes` accepts and `never` (bit i: rung i) leaves to "auto", else the first of
// `defaults` that `takes` accepts; -1 in *index when none does. `table` may be null
// (no table). takes(int rung, bool *accepts) returns a status; a failure stops the
// walk and is returned.
template <class Takes>
gpk_status choose(const Table *table, const Key &key, const int *defaults, int default_count, uint64_t never,
                  Takes &&takes, int *index) {
    *index = -1;
    const Row *row = table != nullptr ? nearest(*table, key) : nullptr;
    if (row != nullptr)
        for (int rung : row->rungs) {
            if (rung < 64 && (never >> rung & 1)) continue;
            bool accepts = false;
            const gpk_status st = takes(rung, &accepts);
            if (st != GPK_SUCCESS) return st;
            if (accepts) {
                *index = rung;
                return GPK_SUCCESS;
            }
        }
    for (int i = 0; i < default_count; ++i) {
        bool accepts = false;
        const gpk_status st = takes(defaults[i], &accepts);
        if (st != GPK_SUCCESS) return st;
        if (accepts) {
            *index = defaults[i];
            return GPK_SUCCESS;
        }
    }
    return GPK_SUCCESS;
}

// The words of the table's columns.
const char *op_word(int op);        // "gemm", ...; null for an unknown op
const char *dtype_word(int dtype);  // "f32", ...; "-" for none
const char *layout_word(int layout);
const char *align_word(int align);
const char *math_word(int math);  // "tf32", "default"
// The class columns of the key's row, tab-separated: "gemm\tbf16\tdefault\tnn\ta16"
std::string class_text(const Key &key);
// "4096x4096x4096"
std::string shape_text(const Key &key);

// The tables compiled into the library (libgpk/tuning/*.tsv): each file's name and
// text, ending with {nullptr, nullptr}. One device's table may span several files
// (one per op), which share the header lines and together make the built-in table.
struct BuiltinText {
    const char *file;
    const char *text;
};
extern const BuiltinText kBuiltinTexts[];

// ---- the context's table (tuning_context.cpp) -------------------------------------

// What gpk_tuning_name says when a context has no table.
constexpr const char *kNoTable = "none: the vendor library and each ladder's default";

// At gpk_create: the built-in table for the context's device kind (none if there is
// none), then GPK_TUNING's file when the variable is set and not empty. A file that
// cannot be used fails with GPK_ERROR_INVALID_ARGUMENT, recorded through fail(nullptr)
// (the context does not exist yet), naming GPK_TUNING and the reason.
gpk_status install_at_create(gpk_context &ctx);
// gpk_load_tuning: the file at `path`, or with null the built-in table again.
gpk_status load(gpk_context &ctx, const char *path);

}  // namespace gpk::tuning
