// "auto" by tuning tables (libgpk/tuning.hpp). Without a GPU: the parser (a good
// table, malformed lines, another device kind, unknown rungs, each refused naming the
// file and line), the calls' keys, the lookup (nearest point, ties, the same choice
// whatever the order of the file's lines, the fall-through when a rung refuses, the
// rungs "auto" never runs), the shipped tables against the ladders' rungs.def, and
// through the API: gpk_load_tuning, gpk_tuning_name, GPK_TUNING at gpk_create and
// gpk_last_variant on the host backend. On the GPU: for a sample of the built-in
// table's points, "auto" runs the rung the table lists first.
//
// usage: test_tuning host|cuda [table=FILE.tsv ...] [load=FILE.tsv ...]
//   table=  a shipped table (compiled in): parsed on the host; on the GPU of its kind,
//           the library's built-in table, and sampled
//   load=   a table to sample on the GPU of its kind only (one just measured)
#include "../harness.hpp"

#include "tuning.hpp"

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace {

using namespace gpkt;
namespace tn = gpk::tuning;

// ---- the CUDA ladders' rung names, from the lists the library is built from ---------

#define GPK_VENDOR(name)
#define GPK_REFERENCE(name)
#define GPK_AUTO(name)
#define GPK_AUTO_NEVER(name)
#define GPK_RUNG(nn, name, launcher, dtypes, takes) #name,
const std::vector<std::string> kGemmRungs = {
#include "cuda/gemm/rungs.def"
};
const std::vector<std::string> kReduceRungs = {
#include "cuda/reduce/rungs.def"
};
const std::vector<std::string> kTransposeRungs = {
#include "cuda/transpose/rungs.def"
};
const std::vector<std::string> kPiRungs = {
#include "cuda/pi/rungs.def"
};
const std::vector<std::string> kBatchedRungs = {
#include "cuda/gemm_batched/rungs.def"
};
#undef GPK_RUNG
#undef GPK_AUTO_NEVER
// The rungs "auto" never runs, from the same lists.
#define GPK_RUNG(nn, name, launcher, dtypes, takes)
#define GPK_AUTO_NEVER(name) #name,
const std::vector<std::string> kNever = {
#include "cuda/gemm/rungs.def"
#include "cuda/reduce/rungs.def"
#include "cuda/transpose/rungs.def"
#include "cuda/pi/rungs.def"
#include "cuda/gemm_batched/rungs.def"
};
#undef GPK_RUNG
#undef GPK_AUTO_NEVER
#undef GPK_AUTO
#undef GPK_REFERENCE
#undef GPK_VENDOR

int index_in(const std::vector<std::string> &names, const char *name) {
    for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return static_cast<int>(i);
    return -1;
}

int cuda_rung(int op, const char *name, void *) {
    switch (op) {
        case GPK_OP_GEMM: return index_in(kGemmRungs, name);
        case GPK_OP_REDUCE: return index_in(kReduceRungs, name);
        case GPK_OP_TRANSPOSE: return index_in(kTransposeRungs, name);
        case GPK_OP_PI: return index_in(kPiRungs, name);
        case GPK_OP_GEMM_BATCHED: return index_in(kBatchedRungs, name);
        default: return -1;
    }
}

// A small ladder for the lookup: every op has rungs "vendor", "a", "b", "c".
const std::vector<std::string> kToy = {"vendor", "a", "b", "c"};
int toy_rung(int, const char *name, void *) { return index_in(kToy, name); }

const tn::DeviceKind kToyKind{"Toy GPU", "9.0", "132"};

std::string header(const std::string &device = "Toy GPU") {
    return "gpk-tuning\t1\ndevice\t" + device + "\ncompute_capability\t9.0\nsm_count\t132\ndriver\t13000\n";
}

bool parse(const std::string &text, tn::Table *t, std::string *error, const tn::DeviceKind *kind = &kToyKind) {
    return tn::parse(text, "toy.tsv", kind, toy_rung, nullptr, t, error);
}

tn::Key gemm_key(int dtype, int layout, int align, int64_t m, int64_t n, int64_t k, int math = GPK_MATH_DEFAULT) {
    tn::Key key;
    key.op = GPK_OP_GEMM, key.dtype = dtype, key.math = math, key.layout = layout, key.align = align, key.ndims = 3;
    key.dims[0] = m, key.dims[1] = n, key.dims[2] = k;
    return key;
}

// The rung choose() gives with `refused` refusing (a takes predicate that counts its calls).
int chosen(const tn::Table *t, const tn::Key &key, std::vector<int> refused, uint64_t never = 0,
           std::vector<int> defaults = {0}) {
    int index = -2;
    const auto takes = [&](int rung, bool *yes) {
        *yes = std::find(refused.begin(), refused.end(), rung) == refused.end();
        return GPK_SUCCESS;
    };
    tn::choose(t, key, defaults.data(), static_cast<int>(defaults.size()), never, takes, &index);
    return index;
}

// ---- the parser ---------------------------------------------------------------------

const char *const kGood =
    "# a comment, then blank lines\n\n"
    "gemm\tbf16\tdefault\tnn\ta16\t4096x4096x4096\tb:171.2,vendor:175.9,a:240\n"
    "gemm\tbf16\tdefault\tnn\ta16\t1024x1024x1024\tvendor:20.5,b:21\n"
    "gemm\tbf16\tdefault\tnn\tu\t4096x4096x4096\ta,vendor\n"
    "gemm\tf32\ttf32\tnt\ta16\t8192x8192x8192\tvendor:2500\r\n"
    "gemm_batched\tf64\tdefault\ttn\ta16\t16x16x16x4096\tc:10,vendor:30\n"
    "reduce\ti64\tdefault\t-\ta16\t268435456\tb\n"
    "transpose\tf16\tdefault\t-\tu\t8192x4096\ta:1e3\n"
    "pi\t-\tdefault\t-\t-\t4294967296\tc,b\n";

void parser(Suite &suite) {
    {
        Case c(suite, "tuning: a good table parses, rows sorted by class and shape");
        tn::Table t;
        std::string error;
        if (!parse(header() + kGood, &t, &error)) {
            c.fail("refused: %s", error.c_str());
        } else {
            if (t.device.name != "Toy GPU" || t.device.compute_capability != "9.0" || t.device.sm_count != "132")
                c.fail("device kind read as '%s' '%s' '%s'", t.device.name.c_str(),
                       t.device.compute_capability.c_str(), t.device.sm_count.c_str());
            if (t.rows.size() != 8) c.fail("%zu rows, expected 8", t.rows.size());
            if (t.info.empty() || t.info[0].first != "driver" || t.info[0].second != "13000")
                c.fail("the driver line was not kept");
            for (size_t i = 1; i < t.rows.size(); ++i)
                if (t.rows[i].key.op < t.rows[i - 1].key.op) c.fail("rows not sorted by op at %zu", i);
            const tn::Row *r = tn::nearest(t, gemm_key(GPK_BF16, 0, tn::kAligned, 1024, 1024, 1024));
            if (r == nullptr || r->rungs != std::vector<int>{0, 2} || r->line != 9)
                c.fail("the 1024^3 row: %s", r ? "wrong rungs or line" : "not found");
        }
    }
    // Each malformed table: the line it is refused at and a word of the reason.
    struct Bad {
        const char *what;
        std::string text;
        int line;
        const char *reason;
    };
    const std::string h = header();  // 5 lines
    const Bad bad[] = {
        {"empty file", "", 1, "empty"},
        {"not a table", "hello\tworld\n", 1, "not a libgpk tuning table"},
        {"a newer format", "gpk-tuning\t2\n", 1, "format version '2'"},
        {"another device kind", header("Other GPU") + kGood, 2, "measured on a GPU of device 'Other GPU'"},
        {"another compute capability", "gpk-tuning\t1\ndevice\tToy GPU\ncompute_capability\t8.0\n", 3,
         "compute_capability '8.0'"},
        {"another SM count", "gpk-tuning\t1\ndevice\tToy GPU\ncompute_capability\t9.0\nsm_count\t66\n", 4,
         "sm_count '66'"},
        {"no device line", "gpk-tuning\t1\ncompute_capability\t9.0\nsm_count\t132\ngemm\tf32\tdefault\tnn\ta16\t1x1x1\ta\n",
         4, "no 'device' line"},
        {"an unknown header key", h + "colour\tblue\n", 6, "unknown header key 'colour'"},
        {"a header line after a row", h + "pi\t-\tdefault\t-\t-\t100\ta\ndate\ttoday\n", 7, "after the first row"},
        {"an unknown rung", h + "gemm\tf32\tdefault\tnn\ta16\t64x64x64\ta,wgmma_zz\n", 6, "unknown rung 'wgmma_zz' of gemm"},
        {"an unknown op", h + "gemv\tf32\tdefault\tnn\ta16\t64x64x64\ta\n", 6, "gemv"},
        {"too few fields", h + "gemm\tf32\tdefault\tnn\ta16\t64x64x64\n", 6, "7 fields"},
        {"a dtype gemm has not", h + "gemm\ti32\tdefault\tnn\ta16\t64x64x64\ta\n", 6, "dtype 'i32'"},
        {"tf32 for f64", h + "gemm\tf64\ttf32\tnn\ta16\t64x64x64\ta\n", 6, "math 'tf32'"},
        {"a layout of reduce", h + "reduce\tf32\tdefault\tnn\ta16\t64\ta\n", 6, "layout 'nn'"},
        {"an unknown alignment class", h + "gemm\tf32\tdefault\tnn\ta8\t64x64x64\ta\n", 6, "align 'a8'"},
        {"two dimensions for gemm", h + "gemm\tf32\tdefault\tnn\ta16\t64x64\ta\n", 6, "3 dimension"},
        {"a zero dimension", h + "gemm\tf32\tdefault\tnn\ta16\t64x0x64\ta\n", 6, "counts from 1"},
        {"a bad time", h + "gemm\tf32\tdefault\tnn\ta16\t64x64x64\ta:fast\n", 6, "not a time"},
        {"a rung twice", h + "gemm\tf32\tdefault\tnn\ta16\t64x64x64\ta,b,a\n", 6, "listed twice"},
        {"no rungs", h + "gemm\tf32\tdefault\tnn\ta16\t64x64x64\t\n", 6, "no rungs"},
        {"the same point twice",
         h + "pi\t-\tdefault\t-\t-\t100\ta\n\npi\t-\tdefault\t-\t-\t100\tb\n", 8, "same point as line 6"},
        {"a line far too long", h + std::string(5000, 'x') + "\n", 6, "longer than"},
    };
    for (const Bad &b : bad) {
        Case c(suite, format("tuning: refused: %s", b.what));
        tn::Table t;
        t.device.name = "untouched";
        std::string error;
        if (parse(b.text, &t, &error)) {
            c.fail("accepted");
            continue;
        }
        const std::string where = format("toy.tsv line %d: ", b.line);
        if (error.compare(0, where.size(), where) != 0 || error.find(b.reason) == std::string::npos)
            c.fail("message '%s', expected '%s...%s'", error.c_str(), where.c_str(), b.reason);
        if (t.device.name != "untouched" || !t.rows.empty()) c.fail("the output table was changed");
    }
    {
        Case c(suite, "tuning: without a device kind to match, any device's table parses");
        tn::Table t;
        std::string error;
        if (!parse(header("Other GPU") + kGood, &t, &error, nullptr)) c.fail("refused: %s", error.c_str());
    }
}

// ---- keys and the lookup ------------------------------------------------------------

void keys(Suite &suite) {
    Case c(suite, "tuning: keys of calls (layout, alignment class, math, column-major form)");
    alignas(16) static float buf[64];
    gpk::GemmArgs g{GPK_F32, false, true, 100, 200, 300, 1.0, buf, 104, buf, 200, 0.0, buf, 100};
    tn::Key k = tn::key_of(g, GPK_MATH_TF32);
    if (k.layout != 1 || k.align != tn::kAligned || k.math != GPK_MATH_TF32 || k.dims[2] != 300)
        c.fail("gemm NT aligned tf32: layout %d align %d math %d", k.layout, k.align, k.math);
    g.ldb = 201;
    if (tn::key_of(g, GPK_MATH_TF32).align != tn::kUnaligned) c.fail("an odd ldb is aligned");
    g.ldb = 200, g.A = buf + 1;
    if (tn::key_of(g, GPK_MATH_DEFAULT).align != tn::kUnaligned) c.fail("A off 16 bytes is aligned");
    g.dtype = GPK_F64, g.A = buf;
    if (tn::key_of(g, GPK_MATH_TF32).math != GPK_MATH_DEFAULT) c.fail("tf32 applies to f64");
    // k == 0 (C = beta C) is nearest the smallest k, not at log2(0).
    g.k = 0;
    if (tn::key_of(g, GPK_MATH_DEFAULT).dims[2] != 1) c.fail("k == 0 keyed as %lld", (long long)tn::key_of(g, 0).dims[2]);
    // A leading dimension whose size in bytes passes 2^63 still has its low bits.
    g.k = 300, g.lda = (int64_t{1} << 62) + 2;
    if (tn::key_of(g, GPK_MATH_DEFAULT).align != tn::kAligned) c.fail("lda 2^62 + 2 (F64) is not aligned");
    g.lda = 104;
    // A row-major batched call reaches the lookup as its column-major transpose (api.cpp
    // swaps it): row-major TN 10 x 20 x 30 (lda 16, ldb 24) arrives as column-major NT
    // 20 x 10 x 30, the operands swapped with their lds and strides, and keys as that.
    gpk::GemmBatchedCall b{GPK_F32, GPK_NO_TRANS, GPK_TRANS, 20, 10, 30, 1.0, buf, 24, 1024,
                           buf, 16, 512, 0.0, buf, 20, 256, 8};
    k = tn::key_of(b, GPK_MATH_DEFAULT);
    if (k.layout != 1 || k.dims[0] != 20 || k.dims[1] != 10 || k.dims[3] != 8 || k.align != tn::kAligned)
        c.fail("row-major TN batched (column-major NT): layout %d dims %lld x %lld, align %d", k.layout,
               static_cast<long long>(k.dims[0]), static_cast<long long>(k.dims[1]), k.align);
    b.stride_c = 257;
    if (tn::key_of(b, GPK_MATH_DEFAULT).align != tn::kUnaligned) c.fail("an odd stride is aligned");
    gpk::ReduceArgs r{GPK_F32, GPK_SUM, buf + 2, 1000, buf};
    if (tn::key_of(r).align != tn::kUnaligned || tn::key_of(r).dims[0] != 1000) c.fail("reduce of x + 2");
    gpk::TransposeArgs tr{GPK_F16, 2, 300, 500, buf, 304, buf, 504};
    if (tn::key_of(tr).align != tn::kAligned || tn::key_of(tr).ndims != 2) c.fail("transpose f16 aligned");
}

void lookup(Suite &suite) {
    tn::Table t;
    std::string error;
    const std::string rows =
        "gemm\tf32\tdefault\tnn\ta16\t1024x1024x1024\ta,vendor\n"
        "gemm\tf32\tdefault\tnn\ta16\t4096x4096x4096\tb,a,vendor\n"
        "gemm\tf32\tdefault\tnn\ta16\t4096x4096x64\tc,b,vendor\n"
        "gemm\tf32\tdefault\tnn\tu\t4096x4096x4096\tc\n"
        "gemm\tf32\ttf32\tnn\ta16\t4096x4096x4096\tvendor\n";
    if (!parse(header() + rows, &t, &error)) {
        Case c(suite, "tuning: lookup table");
        c.fail("refused: %s", error.c_str());
        return;
    }
    const int vendor = 0, a = 1, b = 2, cc = 3;
    {
        Case c(suite, "tuning: the nearest point in log-shape space, within the class");
        const struct {
            tn::Key key;
            int want;
        } cases[] = {
            {gemm_key(GPK_F32, 0, tn::kAligned, 1024, 1024, 1024), a},
            {gemm_key(GPK_F32, 0, tn::kAligned, 1500, 1500, 1500), a},     // log2 0.55 from 1024, 1.45 from 4096
            {gemm_key(GPK_F32, 0, tn::kAligned, 3000, 3000, 3000), b},
            {gemm_key(GPK_F32, 0, tn::kAligned, 65536, 65536, 65536), b},  // beyond the grid: its edge
            {gemm_key(GPK_F32, 0, tn::kAligned, 4096, 4096, 100), cc},     // short k
            {gemm_key(GPK_F32, 0, tn::kUnaligned, 100, 100, 100), cc},     // the unaligned class's one point
            {gemm_key(GPK_F32, 0, tn::kAligned, 4096, 4096, 4096, GPK_MATH_TF32), vendor},
            {gemm_key(GPK_F32, 1, tn::kAligned, 4096, 4096, 4096), vendor},  // NT: no row, the default
            {gemm_key(GPK_F64, 0, tn::kAligned, 4096, 4096, 4096), vendor},
        };
        for (const auto &x : cases) {
            const int got = chosen(&t, x.key, {});
            if (got != x.want)
                c.fail("%s %s %s: rung %d, expected %d", tn::layout_word(x.key.layout), tn::align_word(x.key.align),
                       tn::shape_text(x.key).c_str(), got, x.want);
        }
    }
    {
        Case c(suite, "tuning: equally near points: the smaller shape, whatever the order of the lines");
        // 2048^3 lies as near 1024^3 as 4096^3 in log2 (1 in each dimension).
        const tn::Key mid = gemm_key(GPK_F32, 0, tn::kAligned, 2048, 2048, 2048);
        if (chosen(&t, mid, {}) != a) c.fail("2048^3 took rung %d, expected a (1024^3's)", chosen(&t, mid, {}));
        // The same rows in the reverse order, and again: the same choices.
        std::vector<std::string> lines;
        std::istringstream in(rows);
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        std::string reversed;
        for (auto it = lines.rbegin(); it != lines.rend(); ++it) reversed += *it + "\n";
        tn::Table r;
        if (!parse(header() + reversed, &r, &error)) {
            c.fail("reversed table refused: %s", error.c_str());
        } else {
            for (int64_t s : {1, 700, 1024, 1448, 2048, 2896, 4096, 9000})
                for (int64_t k : {16, 64, 1024, 4096}) {
                    const tn::Key key = gemm_key(GPK_F32, 0, tn::kAligned, s, s, k);
                    const int first = chosen(&t, key, {});
                    if (chosen(&r, key, {}) != first || chosen(&t, key, {}) != first)
                        c.fail("%s: rung %d, then %d (reversed), then %d", tn::shape_text(key).c_str(), first,
                               chosen(&r, key, {}), chosen(&t, key, {}));
                }
        }
    }
    {
        Case c(suite, "tuning: a rung that refuses the call falls to the next of its point's list");
        const tn::Key big = gemm_key(GPK_F32, 0, tn::kAligned, 4096, 4096, 4096);
        if (chosen(&t, big, {b}) != a) c.fail("b refusing: %d, expected a", chosen(&t, big, {b}));
        if (chosen(&t, big, {b, a}) != vendor) c.fail("b and a refusing: %d, expected the vendor", chosen(&t, big, {b, a}));
        // None of the list, nor the default: -1.
        if (chosen(&t, big, {b, a, vendor}) != -1) c.fail("everything refusing: %d", chosen(&t, big, {b, a, vendor}));
        // The default list walked the same way.
        if (chosen(&t, gemm_key(GPK_F64, 0, tn::kAligned, 64, 64, 64), {cc}, 0, {cc, b}) != b)
            c.fail("the default's second rung was not taken");
        // The unaligned point lists c alone: c refusing, the ladder's default.
        if (chosen(&t, gemm_key(GPK_F32, 0, tn::kUnaligned, 4096, 4096, 4096), {cc}) != vendor)
            c.fail("c refusing the unaligned call: not the default");
    }
    {
        Case c(suite, "tuning: a rung \"auto\" never runs is passed over");
        const tn::Key shortk = gemm_key(GPK_F32, 0, tn::kAligned, 4096, 4096, 64);
        if (chosen(&t, shortk, {}, uint64_t{1} << cc) != b) c.fail("c never: %d, expected b", chosen(&t, shortk, {}, 8));
    }
    {
        Case c(suite, "tuning: a takes function's failure stops the walk");
        int index = 7;
        const auto failing = [](int, bool *) { return GPK_ERROR_CUDA; };
        const int defaults[] = {0};
        const gpk_status st = tn::choose(&t, gemm_key(GPK_F32, 0, tn::kAligned, 64, 64, 64), defaults, 1, 0, failing,
                                         &index);
        if (st != GPK_ERROR_CUDA || index != -1) c.fail("status %s, index %d", gpk_status_string(st), index);
    }
    {
        Case c(suite, "tuning: a batch's count weighs a sixteenth of a product's dimension");
        // The rung the lookup takes from `rows` for n^3 products, `count` of them.
        const auto pick = [&](const std::string &rows, int64_t n, int64_t count) {
            tn::Table t;
            if (!parse(header() + rows, &t, &error)) {
                c.fail("refused: %s", error.c_str());
                return -1;
            }
            tn::Key key;
            key.op = GPK_OP_GEMM_BATCHED, key.dtype = GPK_F32, key.layout = 0, key.align = tn::kAligned, key.ndims = 4;
            key.dims[0] = key.dims[1] = key.dims[2] = n, key.dims[3] = count;
            return chosen(&t, key, {});
        };
        // Unweighted, 8^3 would be nearer (10.9 + 5.4 against 0.03 + 18.7).
        const int small = pick("gemm_batched\tf32\tdefault\tnn\ta16\t32x32x32x1000\ta\n"
                               "gemm_batched\tf32\tdefault\tnn\ta16\t8x8x8x100000\tb\n",
                               30, 20000);
        if (small != 1) c.fail("30^3 x 20000 took rung %d, expected a (32^3's)", small);
        // The product's own size at another count before a neighbour's nearer count:
        // 40^3 products filling 1 GiB take 40^3's row at 256 MiB, not 32^3's (with a
        // quarter's weight: 0.46 + 0.31 against 1.0).
        const int own = pick("gemm_batched\tf32\tdefault\tnn\ta16\t32x32x32x65536\ta\n"
                             "gemm_batched\tf32\tdefault\tnn\ta16\t40x40x40x41943\tb\n",
                             40, 167772);
        if (own != 2) c.fail("40^3 x 167772 took rung %d, expected b (40^3's)", own);
    }
    {
        Case c(suite, "tuning: no table: the ladder's default");
        if (chosen(nullptr, gemm_key(GPK_F32, 0, tn::kAligned, 64, 64, 64), {}, 0, {2, 0}) != 2)
            c.fail("not the first default");
    }
}

// gpk_gemm_ex's and gpk_gemm_blockscaled's calls, as api.cpp hands them to dispatch
// (GemmArgs::dtype their class, each operand's dtype beside it), key on their class,
// each operand's alignment in its own element size, and "auto" takes the rung their
// class's row lists: the rows gpk-bench --tune measures for them (apps/bench/tune.cpp).
void gemm_ex_lookup(Suite &suite) {
    Case c(suite, "tuning: gpk_gemm_ex's calls take the rows of their own class");
    const int vendor = 0, a = 1, b = 2, cc = 3;
    const std::string rows =
        "gemm\tbf16\tdefault\ttn\ta16\t4096x4096x4096\ta,vendor\n"
        "gemm\tfp8\tdefault\ttn\ta16\t4096x4096x4096\tb,vendor\n"
        "gemm\tfp8\tdefault\ttn\tu\t4096x4096x4096\tc,b\n"
        "gemm\tfp8\tdefault\tnn\ta16\t4096x4096x4096\ta,b\n"
        "gemm\tfp8_block\tdefault\ttn\ta16\t4096x4096x4096\tc,b\n"
        "gemm\thalf_f32\tdefault\ttn\ta16\t4096x4096x4096\tvendor,a\n";
    tn::Table t;
    std::string error;
    if (!parse(header() + rows, &t, &error)) {
        c.fail("refused: %s", error.c_str());
        return;
    }
    alignas(16) static unsigned char buf[64];
    // E4M3 x E4M3 -> BF16, TN (op(A) = A^T: A is k x m), 4096^3, every ld whole vectors.
    gpk::GemmArgs fp8{gpk::kGemmFp8, true, false, 4096, 4096, 4096, 1.0, buf, 4096, buf, 4096, 0.0, buf, 4096};
    fp8.a_dtype = fp8.b_dtype = GPK_F8E4M3, fp8.c_dtype = GPK_BF16;
    const auto check = [&](const char *what, const gpk::GemmArgs &g, int want, const char *klass,
                           std::vector<int> refused = {}) {
        const tn::Key key = tn::key_of(g, GPK_MATH_DEFAULT);
        if (tn::class_text(key) != klass) c.fail("%s: class '%s', expected '%s'", what, tn::class_text(key).c_str(), klass);
        const int got = chosen(&t, key, refused);
        if (got != want) c.fail("%s: rung %d, expected %d", what, got, want);
    };
    check("FP8 TN aligned", fp8, b, "gemm\tfp8\tdefault\ttn\ta16");
    check("FP8 TN aligned, b refusing", fp8, vendor, "gemm\tfp8\tdefault\ttn\ta16", {b});
    gpk::GemmArgs g = fp8;
    g.a_dtype = GPK_F8E5M2;
    check("E5M2 x E4M3: the same class", g, b, "gemm\tfp8\tdefault\ttn\ta16");
    g = fp8, g.m = g.n = g.k = 1000;
    check("FP8 TN 1000^3: its class's nearest", g, b, "gemm\tfp8\tdefault\ttn\ta16");
    // 4104 one-byte elements are not whole 16-byte vectors (they would be at 2 bytes).
    g = fp8, g.lda = 4104;
    check("FP8 lda 4104", g, cc, "gemm\tfp8\tdefault\ttn\tu");
    g = fp8, g.ldc = 4097;
    check("FP8 odd ldc (BF16 C)", g, cc, "gemm\tfp8\tdefault\ttn\tu");
    g = fp8, g.transa = false;
    check("FP8 NN", g, a, "gemm\tfp8\tdefault\tnn\ta16");
    g = fp8, g.transa = false, g.transb = true;
    check("FP8 NT: no row of its class, the ladder's default", g, vendor, "gemm\tfp8\tdefault\tnt\ta16");
    g = fp8, g.dtype = gpk::kGemmFp8Blockscaled;
    static const float scales[4] = {1, 1, 1, 1};
    g.scale_a = g.scale_b = scales;
    check("block-scaled FP8", g, cc, "gemm\tfp8_block\tdefault\ttn\ta16");
    check("block-scaled FP8, c refusing", g, b, "gemm\tfp8_block\tdefault\ttn\ta16", {cc});
    g = fp8, g.dtype = gpk::kGemmHalfF32, g.a_dtype = g.b_dtype = GPK_BF16, g.c_dtype = GPK_F32;
    check("BF16 x BF16 -> F32", g, vendor, "gemm\thalf_f32\tdefault\ttn\ta16");
    g = fp8, g.dtype = GPK_BF16, g.a_dtype = g.b_dtype = g.c_dtype = -1;
    check("BF16 gpk_gemm beside them", g, a, "gemm\tbf16\tdefault\ttn\ta16");
}

// ---- the shipped tables -------------------------------------------------------------

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void shipped(Suite &suite, const std::vector<std::string> &files) {
    std::vector<tn::Table> tables;
    for (const std::string &file : files) {
        Case c(suite, format("tuning: the shipped table %s parses against the ladders", file.c_str()));
        tn::Table t;
        std::string error;
        if (!tn::parse(read_file(file), file, nullptr, cuda_rung, nullptr, &t, &error)) {
            c.fail("%s", error.c_str());
            continue;
        }
        if (t.rows.empty()) c.fail("no rows");
        bool merged = false;
        for (tn::Table &m : tables)
            if (m.device.name == t.device.name && m.device.sm_count == t.device.sm_count &&
                m.device.compute_capability == t.device.compute_capability) {
                if (!tn::merge(&m, t, &error)) c.fail("%s", error.c_str());
                merged = true;
            }
        if (!merged) tables.push_back(t);
    }
}

// ---- through the API ----------------------------------------------------------------

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/gpk-tuning-XXXXXX";
        if (mkdtemp(tmpl) != nullptr) path = tmpl;
    }
    ~TempDir() {
        for (const std::string &f : files) std::remove(f.c_str());
        if (!path.empty()) rmdir(path.c_str());
    }
    std::string write(const std::string &name, const std::string &text) {
        const std::string f = path + "/" + name;
        std::ofstream(f, std::ios::binary) << text;
        files.push_back(f);
        return f;
    }
    std::vector<std::string> files;
};

const char *const kHostHeader = "gpk-tuning\t1\ndevice\thost\ncompute_capability\t-\nsm_count\t-\n";
const char *const kHostRows =
    "gemm\tf32\tdefault\tnn\ta16\t64x64x64\thost:12\n"
    "reduce\tf32\tdefault\t-\ta16\t1000\thost\n"
    "transpose\tf64\tdefault\t-\tu\t30x40\thost\n"
    "pi\t-\tdefault\t-\t-\t100000\thost\n"
    "gemm_batched\tf64\tdefault\ttt\ta16\t8x8x8x16\thost\n";

void api(Suite &suite) {
    if (suite.cuda()) return;  // the host backend's kind is what these tables name
    TempDir dir;
    const std::string good = dir.write("good.tsv", std::string(kHostHeader) + kHostRows);
    const std::string gpu = dir.write("gpu.tsv", header("NVIDIA H200") + "gemm\tf32\tdefault\tnn\ta16\t64x64x64\tcublas\n");
    const std::string unknown = dir.write("unknown.tsv", std::string(kHostHeader) + kHostRows +
                                                             "gemm\tf64\tdefault\tnn\ta16\t64x64x64\tcublas\n");
    const std::string malformed = dir.write("malformed.tsv", std::string(kHostHeader) + "gemm\tf32\toops\n");
    gpk_context *ctx = suite.ctx();
    {
        Case c(suite, "tuning API: a host context starts with no table");
        const char *name = gpk_tuning_name(ctx);
        if (name == nullptr || std::strcmp(name, tn::kNoTable) != 0) c.fail("gpk_tuning_name: '%s'", name ? name : "NULL");
        if (gpk_tuning_name(nullptr) != nullptr) c.fail("gpk_tuning_name(NULL) is not NULL");
    }
    {
        Case c(suite, "tuning API: a good table loads, and NULL restores the built-in");
        if (c.expect(gpk_load_tuning(ctx, good.c_str()), GPK_SUCCESS, "gpk_load_tuning(good)")) {
            const char *name = gpk_tuning_name(ctx);
            if (name == nullptr || good != name) c.fail("gpk_tuning_name: '%s'", name ? name : "NULL");
        }
        c.expect(gpk_load_tuning(ctx, nullptr), GPK_SUCCESS, "gpk_load_tuning(NULL)");
        if (std::strcmp(gpk_tuning_name(ctx), tn::kNoTable) != 0) c.fail("after NULL: '%s'", gpk_tuning_name(ctx));
    }
    // Each bad file: INVALID_ARGUMENT naming the file (and line), the table unchanged.
    const struct {
        const char *what;
        std::string path;
        const char *says;
    } bad[] = {
        {"another device kind", gpu, " line 2: the table was measured on a GPU of device 'NVIDIA H200'"},
        {"an unknown rung", unknown, " line 10: unknown rung 'cublas' of gemm"},
        {"a malformed line", malformed, " line 5: a row has 7 fields"},
        {"no such file", dir.path + "/missing.tsv", ": cannot be opened"},
        {"a directory", dir.path, ": cannot be read"},
    };
    for (const auto &b : bad) {
        Case c(suite, format("tuning API: gpk_load_tuning refuses %s", b.what));
        c.expect(gpk_load_tuning(ctx, good.c_str()), GPK_SUCCESS, "gpk_load_tuning(good)");
        if (!c.expect(gpk_load_tuning(ctx, b.path.c_str()), GPK_ERROR_INVALID_ARGUMENT, "gpk_load_tuning(bad)"))
            continue;
        const std::string want = b.path + b.says;
        if (std::strstr(gpk_last_error(ctx), want.c_str()) == nullptr)
            c.fail("message '%s', expected it to contain '%s'", gpk_last_error(ctx), want.c_str());
        if (good != gpk_tuning_name(ctx)) c.fail("the table changed to '%s'", gpk_tuning_name(ctx));
    }
    {
        Case c(suite, "tuning API: bad arguments");
        c.expect(gpk_load_tuning(ctx, ""), GPK_ERROR_INVALID_ARGUMENT, "gpk_load_tuning(\"\")");
        c.expect(gpk_load_tuning(nullptr, good.c_str()), GPK_ERROR_INVALID_HANDLE, "gpk_load_tuning(NULL ctx)");
    }
    {
        Case c(suite, "tuning API: GPK_TUNING at gpk_create");
        for (const auto &b : bad) {
            setenv("GPK_TUNING", b.path.c_str(), 1);
            gpk_context *other = reinterpret_cast<gpk_context *>(1);
            const gpk_status st = gpk_create(&other, GPK_BACKEND_HOST, 0);
            const std::string want = "GPK_TUNING: " + b.path + b.says;
            if (st != GPK_ERROR_INVALID_ARGUMENT || other != nullptr)
                c.fail("%s: gpk_create -> %s", b.what, gpk_status_string(st));
            else if (std::strstr(gpk_last_error(nullptr), want.c_str()) == nullptr)
                c.fail("%s: message '%s', expected '%s'", b.what, gpk_last_error(nullptr), want.c_str());
            if (st == GPK_SUCCESS) gpk_destroy(other);
        }
        setenv("GPK_TUNING", good.c_str(), 1);
        gpk_context *other = nullptr;
        if (c.expect(gpk_create(&other, GPK_BACKEND_HOST, 0), GPK_SUCCESS, "gpk_create with a good GPK_TUNING")) {
            if (good != gpk_tuning_name(other)) c.fail("GPK_TUNING's table not in use: '%s'", gpk_tuning_name(other));
            gpk_destroy(other);
        }
        setenv("GPK_TUNING", "", 1);  // empty: as unset
        if (c.expect(gpk_create(&other, GPK_BACKEND_HOST, 0), GPK_SUCCESS, "gpk_create with GPK_TUNING empty")) {
            if (std::strcmp(gpk_tuning_name(other), tn::kNoTable) != 0) c.fail("GPK_TUNING empty: a table in use");
            gpk_destroy(other);
        }
        unsetenv("GPK_TUNING");
    }
}

// gpk_last_variant on the host backend: NULL before a call, "host" after one, kept
// by a failed call; NULL for a bad op or handle.
void last_variant(Suite &suite) {
    if (suite.cuda()) return;
    Case c(suite, "tuning API: gpk_last_variant on the host backend");
    gpk_context *ctx = nullptr;
    if (!c.expect(gpk_create(&ctx, GPK_BACKEND_HOST, 0), GPK_SUCCESS, "gpk_create")) return;
    for (int op = 0; op < 5; ++op)
        if (gpk_last_variant(ctx, op) != nullptr) c.fail("op %d: not NULL before any call", op);
    if (gpk_last_variant(ctx, 5) != nullptr || gpk_last_variant(ctx, -1) != nullptr) c.fail("bad op: not NULL");
    if (gpk_last_variant(nullptr, 0) != nullptr) c.fail("NULL handle: not NULL");
    float a[16], b[16], cm[16], sum = 0;
    for (int i = 0; i < 16; ++i) a[i] = b[i] = 1, cm[i] = 0;
    c.expect(gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 4, 4, 4, 1.0, a, 4, b, 4, 0.0, cm, 4),
             GPK_SUCCESS, "gpk_gemm");
    // A failed reduce leaves its op without a call; a quick return runs no rung.
    c.expect(gpk_reduce(ctx, GPK_F32, GPK_SUM, a, -1, &sum), GPK_ERROR_INVALID_ARGUMENT, "gpk_reduce(n = -1)");
    c.expect(gpk_transpose(ctx, GPK_F32, GPK_COL_MAJOR, 0, 4, a, 1, b, 4), GPK_SUCCESS, "gpk_transpose(0 rows)");
    const char *g = gpk_last_variant(ctx, GPK_OP_GEMM);
    if (g == nullptr || std::strcmp(g, "host") != 0) c.fail("gemm: '%s'", g ? g : "NULL");
    if (gpk_last_variant(ctx, GPK_OP_REDUCE) != nullptr) c.fail("reduce: not NULL after a failed call");
    if (gpk_last_variant(ctx, GPK_OP_TRANSPOSE) != nullptr) c.fail("transpose: not NULL after a quick return");
    gpk_pi_result pi{};
    c.expect(gpk_pi(ctx, 1000, 1, &pi), GPK_SUCCESS, "gpk_pi");
    c.expect(gpk_reduce(ctx, GPK_F32, GPK_SUM, a, 16, &sum), GPK_SUCCESS, "gpk_reduce");
    for (int op : {GPK_OP_PI, GPK_OP_REDUCE}) {
        const char *name = gpk_last_variant(ctx, op);
        if (name == nullptr || std::strcmp(name, "host") != 0) c.fail("op %d: '%s'", op, name ? name : "NULL");
    }
    gpk_destroy(ctx);
}

// ---- on the GPU: "auto" runs what the table says ------------------------------------

// The rung names of op's ladder, in index order.
const std::vector<std::string> &rungs_of(int op) {
    static const std::vector<std::string> none;
    switch (op) {
        case GPK_OP_GEMM: return kGemmRungs;
        case GPK_OP_REDUCE: return kReduceRungs;
        case GPK_OP_TRANSPOSE: return kTransposeRungs;
        case GPK_OP_PI: return kPiRungs;
        case GPK_OP_GEMM_BATCHED: return kBatchedRungs;
        default: return none;
    }
}

size_t elem(int dtype) {
    if (dtype == GPK_F8E4M3) return 1;
    return dtype == GPK_F16 || dtype == GPK_BF16 ? 2 : dtype == GPK_F64 || dtype == GPK_I64 ? 8 : 4;
}

// A gemm class's operands as gpk-bench --tune times them: gpk_gemm_ex's FP8 classes
// E4M3 into BF16 C, half_f32 BF16 into F32 C; otherwise the class's dtype.
bool fp8_class(int dtype) { return dtype == gpk::kGemmFp8 || dtype == gpk::kGemmFp8Blockscaled; }
int ab_of(int dtype) { return fp8_class(dtype) ? GPK_F8E4M3 : dtype == gpk::kGemmHalfF32 ? GPK_BF16 : dtype; }
int c_of(int dtype) { return fp8_class(dtype) ? GPK_BF16 : dtype == gpk::kGemmHalfF32 ? GPK_F32 : dtype; }
constexpr size_t kScaleBytes = size_t(16) << 20;  // the block scales' array (arrays[3]), all ones

// Leading dimensions as gpk-bench --tune makes them (apps/bench/tune.cpp): whole
// 16-byte vectors for a16, odd for u.
int64_t ld_for(int64_t rows, size_t es, bool aligned) {
    if (!aligned) return rows % 2 ? rows : rows + 1;
    const int64_t v = static_cast<int64_t>(16 / es);
    return (rows + v - 1) / v * v;
}

// One call at the row's point, device arrays, as the tuner made it (arrays[3]: block
// scales); *bytes the largest array it needs (nothing is called when `arrays` is null).
gpk_status call_at(gpk_context *ctx, const tn::Key &k, char *const *arrays, size_t *bytes) {
    const size_t es = elem(k.dtype);
    const bool al = k.align == tn::kAligned;
    const int64_t *d = k.dims;
    if (k.op == GPK_OP_GEMM || k.op == GPK_OP_GEMM_BATCHED) {
        const size_t es_ab = elem(ab_of(k.dtype)), es_c = elem(c_of(k.dtype));
        const bool ta = k.layout & 2, tb = k.layout & 1;
        const int64_t lda = ld_for(ta ? d[2] : d[0], es_ab, al), ldb = ld_for(tb ? d[1] : d[2], es_ab, al);
        const int64_t ldc = ld_for(d[0], es_c, al);
        const int64_t sa = lda * (ta ? d[0] : d[2]), sb = ldb * (tb ? d[2] : d[1]), sc = ldc * d[1];
        const int64_t batch = k.op == GPK_OP_GEMM_BATCHED ? d[3] : 1;
        *bytes = static_cast<size_t>(std::max({sa * int64_t(es_ab), sb * int64_t(es_ab), sc * int64_t(es_c)}) * batch);
        const int64_t kb = (d[2] + 127) / 128, scale_floats = std::max(d[0], (d[1] + 127) / 128) * kb;
        if (k.dtype == gpk::kGemmFp8Blockscaled && static_cast<size_t>(scale_floats) * 4 > kScaleBytes)
            *bytes = SIZE_MAX;  // not sampled
        if (arrays == nullptr) return GPK_SUCCESS;
        const int t_a = ta ? GPK_TRANS : GPK_NO_TRANS, t_b = tb ? GPK_TRANS : GPK_NO_TRANS;
        const float *scales = reinterpret_cast<const float *>(arrays[3]);
        if (k.dtype == gpk::kGemmFp8Blockscaled)
            return gpk_gemm_blockscaled(ctx, GPK_COL_MAJOR, t_a, t_b, d[0], d[1], d[2], 1.0, GPK_F8E4M3, arrays[0], lda,
                                        scales, GPK_F8E4M3, arrays[1], ldb, scales, 0.0, GPK_BF16, arrays[2], ldc);
        if (gpk::is_gemm_ex_class(k.dtype))
            return gpk_gemm_ex(ctx, GPK_COL_MAJOR, t_a, t_b, d[0], d[1], d[2], 1.0, ab_of(k.dtype), arrays[0], lda,
                               ab_of(k.dtype), arrays[1], ldb, 0.0, c_of(k.dtype), arrays[2], ldc);
        if (k.op == GPK_OP_GEMM)
            return gpk_gemm(ctx, k.dtype, GPK_COL_MAJOR, t_a, t_b, d[0], d[1], d[2], 1.0, arrays[0], lda, arrays[1], ldb,
                            0.0, arrays[2], ldc);
        return gpk_gemm_strided_batched(ctx, k.dtype, GPK_COL_MAJOR, t_a, t_b, d[0], d[1], d[2], 1.0, arrays[0], lda,
                                        sa, arrays[1], ldb, sb, 0.0, arrays[2], ldc, sc, batch);
    }
    if (k.op == GPK_OP_REDUCE) {
        *bytes = static_cast<size_t>(d[0] + 1) * es;
        return arrays == nullptr ? GPK_SUCCESS
                                 : gpk_reduce(ctx, k.dtype, GPK_SUM, arrays[0] + (al ? 0 : es), d[0], arrays[2]);
    }
    if (k.op == GPK_OP_TRANSPOSE) {
        const int64_t lda = ld_for(d[0], es, al), ldb = ld_for(d[1], es, al);
        *bytes = static_cast<size_t>(std::max(lda * d[1], ldb * d[0])) * es;
        return arrays == nullptr ? GPK_SUCCESS
                                 : gpk_transpose(ctx, k.dtype, GPK_COL_MAJOR, d[0], d[1], arrays[0], lda, arrays[1], ldb);
    }
    *bytes = 64;
    gpk_pi_result r{};
    return arrays == nullptr ? GPK_SUCCESS : gpk_pi(ctx, static_cast<uint64_t>(d[0]), 1, &r);
}

// For the shipped tables of this GPU's kind: loaded (and, where the library holds it,
// built in), "auto" at a sample of their points runs the first rung each lists that
// it may run: the fastest measured, which took that very call when it was measured.
void on_gpu(Suite &suite, const std::vector<std::string> &files, size_t shipped) {
    gpk_context *ctx = suite.ctx();
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return;
    const tn::DeviceKind kind{prop.name, std::to_string(prop.major) + "." + std::to_string(prop.minor),
                              std::to_string(prop.multiProcessorCount)};
    constexpr size_t kMaxBytes = size_t(1) << 30;
    char *arrays[4] = {nullptr, nullptr, nullptr, nullptr};
    const std::vector<float> ones(kScaleBytes / sizeof(float), 1.0f);
    for (char *&a : arrays)
        if (cudaMalloc(&a, &a == &arrays[3] ? kScaleBytes : kMaxBytes) != cudaSuccess) {
            std::printf("test_tuning: no room for 3 GiB of arrays on the GPU: the sample is skipped\n");
            for (char *p : arrays) cudaFree(p);
            return;
        }
    if (cudaMemcpy(arrays[3], ones.data(), kScaleBytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        Case c(suite, "tuning: the block scales of the sample");
        c.fail("cudaMemcpy of the block scales failed");
    }
    int tables = 0;
    for (size_t f = 0; f < files.size(); ++f) {
        const std::string &file = files[f];
        tn::Table t;
        std::string error;
        if (!tn::parse(read_file(file), file, &kind, cuda_rung, nullptr, &t, &error)) continue;  // another kind
        ++tables;
        if (f < shipped) {
            Case c(suite, format("tuning: the built-in table of %s", prop.name));
            // The previous file's sample loaded that file: back to the built-in table.
            c.expect(gpk_load_tuning(ctx, nullptr), GPK_SUCCESS, "gpk_load_tuning(NULL)");
            const std::string want = std::string("built-in: ") + prop.name;
            if (want != gpk_tuning_name(ctx)) c.fail("gpk_tuning_name: '%s', expected '%s'", gpk_tuning_name(ctx), want.c_str());
        }
        Case c(suite, format("tuning: \"auto\" runs the table's first rung, sample of %s", file.c_str()));
        if (!c.expect(gpk_load_tuning(ctx, file.c_str()), GPK_SUCCESS, "gpk_load_tuning")) continue;
        int sampled = 0;
        for (size_t i = 0; i < t.rows.size(); i += 7) {
            const tn::Row &row = t.rows[i];
            size_t bytes = 0;
            call_at(ctx, row.key, nullptr, &bytes);
            if (bytes > kMaxBytes) continue;
            std::string want;
            for (int r : row.rungs) {
                const std::string &name = rungs_of(row.key.op)[static_cast<size_t>(r)];
                if (std::find(kNever.begin(), kNever.end(), name) == kNever.end()) {
                    want = name;
                    break;
                }
            }
            if (want.empty()) continue;
            gpk_set_math_mode(ctx, row.key.math);
            const gpk_status st = call_at(ctx, row.key, arrays, &bytes);
            const gpk_status synced = gpk_synchronize(ctx);
            const char *ran = gpk_last_variant(ctx, row.key.op);
            ++sampled;
            if (st != GPK_SUCCESS || synced != GPK_SUCCESS || ran == nullptr || want != ran)
                c.fail("line %d, %s %s %s %s %s %s: ran '%s' (%s), the table's first is '%s'", row.line,
                       tn::op_word(row.key.op), tn::dtype_word(row.key.dtype),
                       row.key.math == GPK_MATH_TF32 ? "tf32" : "default", tn::layout_word(row.key.layout),
                       tn::align_word(row.key.align), tn::shape_text(row.key).c_str(), ran ? ran : "NULL",
                       gpk_status_string(st != GPK_SUCCESS ? st : synced), want.c_str());
        }
        gpk_set_math_mode(ctx, GPK_MATH_DEFAULT);
        std::printf("test_tuning: %d points of %s sampled\n", sampled, file.c_str());
    }
    if (tables == 0) std::printf("test_tuning: no table for %s among the shipped ones\n", prop.name);
    gpk_load_tuning(ctx, nullptr);
    for (char *a : arrays) cudaFree(a);
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> tables, loads;
    std::vector<char *> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strncmp(argv[i], "table=", 6) == 0)
            tables.emplace_back(argv[i] + 6);
        else if (std::strncmp(argv[i], "load=", 5) == 0)
            loads.emplace_back(argv[i] + 5);
        else
            args.push_back(argv[i]);
    }
    Suite suite("test_tuning", static_cast<int>(args.size()), args.data());
    if (!suite.cuda()) {
        parser(suite);
        keys(suite);
        lookup(suite);
        gemm_ex_lookup(suite);
        shipped(suite, tables);
        api(suite);
        last_variant(suite);
    } else {
        const size_t shipped = tables.size();
        tables.insert(tables.end(), loads.begin(), loads.end());
        on_gpu(suite, tables, shipped);
    }
    return suite.finish();
}
