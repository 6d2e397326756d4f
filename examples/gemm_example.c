/* A C consumer of libgpk: multiply two small row-major matrices, sum the result,
 * and print both. Build against an installed libgpk with
 *
 *     cc gemm_example.c $(pkg-config --cflags --libs gpk) -o gemm_example
 *
 * Usage: gemm_example [auto|cuda|host]. Exits non-zero when a call fails or a
 * result is wrong. */
#include <gpk/gpk.h>

#include <stdio.h>
#include <string.h>

static int check(gpk_status status, const gpk_context *ctx, const char *what) {
    if (status == GPK_SUCCESS) return 1;
    fprintf(stderr, "%s: %s: %s\n", what, gpk_status_string(status), gpk_last_error(ctx));
    return 0;
}

int main(int argc, char **argv) {
    int backend = GPK_BACKEND_AUTO;
    if (argc > 1 && strcmp(argv[1], "cuda") == 0) backend = GPK_BACKEND_CUDA;
    if (argc > 1 && strcmp(argv[1], "host") == 0) backend = GPK_BACKEND_HOST;

    /* A is 2 x 3, B is 3 x 2, both row-major. */
    const double A[6] = {1, 2, 3, 4, 5, 6};
    const double B[6] = {7, 8, 9, 10, 11, 12};
    const double want[4] = {58, 64, 139, 154};
    double C[4] = {0, 0, 0, 0};
    double total = 0;

    gpk_context *ctx = NULL;
    if (!check(gpk_create(&ctx, backend, 0), NULL, "gpk_create")) return backend == GPK_BACKEND_CUDA ? 77 : 1;
    int ok = check(gpk_gemm(ctx, GPK_F64, GPK_ROW_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2, 2, 3, 1.0, A, 3, B, 2, 0.0,
                            C, 2),
                   ctx, "gpk_gemm") &&
             check(gpk_reduce(ctx, GPK_F64, GPK_SUM, C, 4, &total), ctx, "gpk_reduce");
    int used = 0;
    gpk_get_backend(ctx, &used);
    gpk_destroy(ctx);
    if (!ok) return 1;

    printf("C = [%g %g; %g %g], sum %g (%s backend)\n", C[0], C[1], C[2], C[3], total,
           used == GPK_BACKEND_CUDA ? "cuda" : "host");
    for (int i = 0; i < 4; ++i)
        if (C[i] != want[i]) {
            fprintf(stderr, "C[%d] = %g, expected %g\n", i, C[i], want[i]);
            return 1;
        }
    if (total != 415) {
        fprintf(stderr, "sum %g, expected 415\n", total);
        return 1;
    }
    return 0;
}
