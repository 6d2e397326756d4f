/* The calls of libgpk that Python makes once per operation -- gpk_gemm,
 * gpk_gemm_strided_batched, gpk_reduce, gpk_transpose, gpk_gemm_ex and
 * gpk_gemm_blockscaled -- without ctypes.
 *
 * ctypes converts each argument through its argtypes' Python-level machinery,
 * which costs a small product's call more than the C library spends on it. This
 * module converts the same arguments with the C API and calls the same functions
 * of the same loaded libgpk: _library hands it their addresses (bind), so it links
 * nothing and calls whichever library ctypes opened. Arguments convert as ctypes
 * converts them (integers modulo 2^64, then narrowed as C does; None is a NULL
 * pointer; any real number is a double), and the GIL is released around the call,
 * as ctypes releases it. The package works without this module, through ctypes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

typedef int (*gemm_fn)(void *, int, int, int, int, int64_t, int64_t, int64_t, double, const void *, int64_t,
                       const void *, int64_t, double, void *, int64_t);
typedef int (*batched_fn)(void *, int, int, int, int, int64_t, int64_t, int64_t, double, const void *, int64_t,
                          int64_t, const void *, int64_t, int64_t, double, void *, int64_t, int64_t, int64_t);
typedef int (*reduce_fn)(void *, int, int, const void *, int64_t, void *);
typedef int (*transpose_fn)(void *, int, int, int64_t, int64_t, const void *, int64_t, void *, int64_t);
typedef int (*gemm_ex_fn)(void *, int, int, int, int64_t, int64_t, int64_t, double, int, const void *, int64_t, int,
                          const void *, int64_t, double, int, void *, int64_t);
typedef int (*blockscaled_fn)(void *, int, int, int, int64_t, int64_t, int64_t, double, int, const void *, int64_t,
                              const float *, int, const void *, int64_t, const float *, double, int, void *, int64_t);

static gemm_fn gemm_p;
static batched_fn batched_p;
static reduce_fn reduce_p;
static transpose_fn transpose_p;
static gemm_ex_fn gemm_ex_p;
static blockscaled_fn blockscaled_p;

/* An integer argument as ctypes takes it: the low 64 bits of the int (or of what
 * __index__ gives, for numpy's integers). */
static int as_u64(PyObject *o, uint64_t *out) {
    unsigned long long v;
    if (PyLong_Check(o)) {
        v = PyLong_AsUnsignedLongLongMask(o);
    } else {
        PyObject *i = PyNumber_Index(o);
        if (i == NULL) return -1;
        v = PyLong_AsUnsignedLongLongMask(i);
        Py_DECREF(i);
    }
    if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    *out = (uint64_t)v;
    return 0;
}

static int as_ptr(PyObject *o, void **out) {
    uint64_t v = 0;
    if (o == Py_None) {
        *out = NULL;
        return 0;
    }
    if (as_u64(o, &v) < 0) return -1;
    *out = (void *)(uintptr_t)v;
    return 0;
}

static int as_int(PyObject *o, int *out) {
    uint64_t v = 0;
    if (as_u64(o, &v) < 0) return -1;
    *out = (int)(int64_t)v;
    return 0;
}

static int as_i64(PyObject *o, int64_t *out) {
    uint64_t v = 0;
    if (as_u64(o, &v) < 0) return -1;
    *out = (int64_t)v;
    return 0;
}

static int as_double(PyObject *o, double *out) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) return -1;
    *out = v;
    return 0;
}

static int count_is(Py_ssize_t n, Py_ssize_t want, const char *name) {
    if (n == want) return 0;
    PyErr_Format(PyExc_TypeError, "%s takes %zd arguments (%zd given)", name, want, n);
    return -1;
}

static int bound(const void *fn) {
    if (fn != NULL) return 0;
    PyErr_SetString(PyExc_RuntimeError, "gpk._calls: bind() has not been called");
    return -1;
}

/* bind(gemm, gemm_strided_batched, reduce, transpose, gemm_ex, gemm_blockscaled):
 * the functions' addresses. */
static PyObject *bind(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    void *p[6];
    (void)self;
    if (count_is(n, 6, "bind") < 0) return NULL;
    for (int i = 0; i < 6; ++i)
        if (as_ptr(args[i], &p[i]) < 0) return NULL;
    gemm_p = (gemm_fn)(uintptr_t)p[0];
    batched_p = (batched_fn)(uintptr_t)p[1];
    reduce_p = (reduce_fn)(uintptr_t)p[2];
    transpose_p = (transpose_fn)(uintptr_t)p[3];
    gemm_ex_p = (gemm_ex_fn)(uintptr_t)p[4];
    blockscaled_p = (blockscaled_fn)(uintptr_t)p[5];
    Py_RETURN_NONE;
}

/* gemm(ctx, dtype, layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) */
static PyObject *gemm(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    void *ctx, *C;
    void *A, *B;
    int dtype, layout, ta, tb;
    int64_t m, nn, k, lda, ldb, ldc;
    double alpha, beta;
    (void)self;
    if (bound((const void *)gemm_p) < 0 || count_is(n, 16, "gemm") < 0) return NULL;
    if (as_ptr(a[0], &ctx) < 0 || as_int(a[1], &dtype) < 0 || as_int(a[2], &layout) < 0 || as_int(a[3], &ta) < 0 ||
        as_int(a[4], &tb) < 0 || as_i64(a[5], &m) < 0 || as_i64(a[6], &nn) < 0 || as_i64(a[7], &k) < 0 ||
        as_double(a[8], &alpha) < 0 || as_ptr(a[9], &A) < 0 || as_i64(a[10], &lda) < 0 || as_ptr(a[11], &B) < 0 ||
        as_i64(a[12], &ldb) < 0 || as_double(a[13], &beta) < 0 || as_ptr(a[14], &C) < 0 || as_i64(a[15], &ldc) < 0)
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = gemm_p(ctx, dtype, layout, ta, tb, m, nn, k, alpha, A, lda, B, ldb, beta, C, ldc);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

/* gemm_strided_batched(ctx, dtype, layout, transa, transb, m, n, k, alpha, A, lda,
 *                      stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch_count) */
static PyObject *gemm_strided_batched(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    void *ctx, *C;
    void *A, *B;
    int dtype, layout, ta, tb;
    int64_t m, nn, k, lda, sa, ldb, sb, ldc, sc, count;
    double alpha, beta;
    (void)self;
    if (bound((const void *)batched_p) < 0 || count_is(n, 20, "gemm_strided_batched") < 0) return NULL;
    if (as_ptr(a[0], &ctx) < 0 || as_int(a[1], &dtype) < 0 || as_int(a[2], &layout) < 0 || as_int(a[3], &ta) < 0 ||
        as_int(a[4], &tb) < 0 || as_i64(a[5], &m) < 0 || as_i64(a[6], &nn) < 0 || as_i64(a[7], &k) < 0 ||
        as_double(a[8], &alpha) < 0 || as_ptr(a[9], &A) < 0 || as_i64(a[10], &lda) < 0 || as_i64(a[11], &sa) < 0 ||
        as_ptr(a[12], &B) < 0 || as_i64(a[13], &ldb) < 0 || as_i64(a[14], &sb) < 0 || as_double(a[15], &beta) < 0 ||
        as_ptr(a[16], &C) < 0 || as_i64(a[17], &ldc) < 0 || as_i64(a[18], &sc) < 0 || as_i64(a[19], &count) < 0)
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = batched_p(ctx, dtype, layout, ta, tb, m, nn, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, count);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

/* reduce(ctx, dtype, op, x, n, result) */
static PyObject *reduce(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    void *ctx, *x, *result;
    int dtype, op;
    int64_t count;
    (void)self;
    if (bound((const void *)reduce_p) < 0 || count_is(n, 6, "reduce") < 0) return NULL;
    if (as_ptr(a[0], &ctx) < 0 || as_int(a[1], &dtype) < 0 || as_int(a[2], &op) < 0 || as_ptr(a[3], &x) < 0 ||
        as_i64(a[4], &count) < 0 || as_ptr(a[5], &result) < 0)
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = reduce_p(ctx, dtype, op, x, count, result);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

/* transpose(ctx, dtype, layout, rows, cols, A, lda, B, ldb) */
static PyObject *transpose(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    void *ctx, *A, *B;
    int dtype, layout;
    int64_t rows, cols, lda, ldb;
    (void)self;
    if (bound((const void *)transpose_p) < 0 || count_is(n, 9, "transpose") < 0) return NULL;
    if (as_ptr(a[0], &ctx) < 0 || as_int(a[1], &dtype) < 0 || as_int(a[2], &layout) < 0 || as_i64(a[3], &rows) < 0 ||
        as_i64(a[4], &cols) < 0 || as_ptr(a[5], &A) < 0 || as_i64(a[6], &lda) < 0 || as_ptr(a[7], &B) < 0 ||
        as_i64(a[8], &ldb) < 0)
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = transpose_p(ctx, dtype, layout, rows, cols, A, lda, B, ldb);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

/* gemm_ex(ctx, layout, transa, transb, m, n, k, alpha, a_dtype, A, lda, b_dtype, B, ldb,
 *         beta, c_dtype, C, ldc) */
static PyObject *gemm_ex(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    void *ctx, *A, *B, *C;
    int layout, ta, tb, da, db, dc;
    int64_t m, nn, k, lda, ldb, ldc;
    double alpha, beta;
    (void)self;
    if (bound((const void *)gemm_ex_p) < 0 || count_is(n, 18, "gemm_ex") < 0) return NULL;
    if (as_ptr(a[0], &ctx) < 0 || as_int(a[1], &layout) < 0 || as_int(a[2], &ta) < 0 || as_int(a[3], &tb) < 0 ||
        as_i64(a[4], &m) < 0 || as_i64(a[5], &nn) < 0 || as_i64(a[6], &k) < 0 || as_double(a[7], &alpha) < 0 ||
        as_int(a[8], &da) < 0 || as_ptr(a[9], &A) < 0 || as_i64(a[10], &lda) < 0 || as_int(a[11], &db) < 0 ||
        as_ptr(a[12], &B) < 0 || as_i64(a[13], &ldb) < 0 || as_double(a[14], &beta) < 0 || as_int(a[15], &dc) < 0 ||
        as_ptr(a[16], &C) < 0 || as_i64(a[17], &ldc) < 0)
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = gemm_ex_p(ctx, layout, ta, tb, m, nn, k, alpha, da, A, lda, db, B, ldb, beta, dc, C, ldc);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

/* gemm_blockscaled(ctx, layout, transa, transb, m, n, k, alpha, a_dtype, A, lda, scale_a,
 *                  b_dtype, B, ldb, scale_b, beta, c_dtype, C, ldc) */
static PyObject *gemm_blockscaled(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    void *ctx, *A, *B, *C, *sa, *sb;
    int layout, ta, tb, da, db, dc;
    int64_t m, nn, k, lda, ldb, ldc;
    double alpha, beta;
    (void)self;
    if (bound((const void *)blockscaled_p) < 0 || count_is(n, 20, "gemm_blockscaled") < 0) return NULL;
    if (as_ptr(a[0], &ctx) < 0 || as_int(a[1], &layout) < 0 || as_int(a[2], &ta) < 0 || as_int(a[3], &tb) < 0 ||
        as_i64(a[4], &m) < 0 || as_i64(a[5], &nn) < 0 || as_i64(a[6], &k) < 0 || as_double(a[7], &alpha) < 0 ||
        as_int(a[8], &da) < 0 || as_ptr(a[9], &A) < 0 || as_i64(a[10], &lda) < 0 || as_ptr(a[11], &sa) < 0 ||
        as_int(a[12], &db) < 0 || as_ptr(a[13], &B) < 0 || as_i64(a[14], &ldb) < 0 || as_ptr(a[15], &sb) < 0 ||
        as_double(a[16], &beta) < 0 || as_int(a[17], &dc) < 0 || as_ptr(a[18], &C) < 0 || as_i64(a[19], &ldc) < 0)
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = blockscaled_p(ctx, layout, ta, tb, m, nn, k, alpha, da, A, lda, (const float *)sa, db, B, ldb,
                           (const float *)sb, beta, dc, C, ldc);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

static PyMethodDef methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL,
     "bind(gemm, gemm_strided_batched, reduce, transpose, gemm_ex, gemm_blockscaled)"},
    {"gemm", (PyCFunction)(void (*)(void))gemm, METH_FASTCALL, "gpk_gemm's arguments; returns its status"},
    {"gemm_strided_batched", (PyCFunction)(void (*)(void))gemm_strided_batched, METH_FASTCALL,
     "gpk_gemm_strided_batched's arguments; returns its status"},
    {"reduce", (PyCFunction)(void (*)(void))reduce, METH_FASTCALL, "gpk_reduce's arguments; returns its status"},
    {"transpose", (PyCFunction)(void (*)(void))transpose, METH_FASTCALL,
     "gpk_transpose's arguments; returns its status"},
    {"gemm_ex", (PyCFunction)(void (*)(void))gemm_ex, METH_FASTCALL, "gpk_gemm_ex's arguments; returns its status"},
    {"gemm_blockscaled", (PyCFunction)(void (*)(void))gemm_blockscaled, METH_FASTCALL,
     "gpk_gemm_blockscaled's arguments; returns its status"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_calls", "libgpk's per-operation calls without ctypes (see _library.py)", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__calls(void) { return PyModule_Create(&module); }
