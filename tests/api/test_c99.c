/* The public header from plain C99 (built with -std=c99 -pedantic -Werror): it must
 * compile without C++ or CUDA, and a C program must link against libgpk alone. */
#include <gpk/gpk.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char *what) {
    if (!ok) {
        printf("FAIL [c99 %s]: %s\n", what, gpk_last_error(NULL));
        ++failures;
    }
}

int main(int argc, char **argv) {
    gpk_context *ctx = NULL;
    int backend = GPK_BACKEND_HOST;
    int major = -1, minor = -1, patch = -1;
    gpk_status st;
    float a[4] = {1.0f, 2.0f, 3.0f, 4.0f}, b[4] = {0.5f, 0.25f, 2.0f, 1.0f}, c[4] = {0, 0, 0, 0};
    double x[3] = {1.5, -2.0, 4.0};
    double sum = 0.0;
    int64_t t[4] = {0, 0, 0, 0};
    const int64_t s[4] = {1, 2, 3, 4};
    gpk_pi_result pi;
    gpk_stage_event events[64];
    int64_t count = -1;

    if (argc > 1 && strcmp(argv[1], "cuda") == 0) backend = GPK_BACKEND_CUDA;
    gpk_version(&major, &minor, &patch);
    check(major == GPK_VERSION_MAJOR && minor == GPK_VERSION_MINOR && patch == GPK_VERSION_PATCH, "version");
    check(gpk_status_string(GPK_ERROR_NO_DEVICE) != NULL, "status string");

    st = gpk_create(&ctx, backend, 0);
    if (st == GPK_ERROR_NO_DEVICE && backend == GPK_BACKEND_CUDA) {
        printf("test_c99 [cuda]: skipped, no usable GPU: %s\n", gpk_last_error(NULL));
        return 77;
    }
    check(st == GPK_SUCCESS, "gpk_create");
    if (st != GPK_SUCCESS) return 1;

    /* Column-major: A = [1 3; 2 4], B = [0.5 2; 0.25 1], C = A * B = [1.25 5; 2 8]. */
    check(gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2, 2, 2, 1.0, a, 2, b, 2, 0.0, c, 2) ==
              GPK_SUCCESS, "gpk_gemm");
    check(c[0] == 1.25f && c[1] == 2.0f && c[2] == 5.0f && c[3] == 8.0f, "gpk_gemm result");
    check(gpk_reduce(ctx, GPK_F64, GPK_SUM, x, 3, &sum) == GPK_SUCCESS && sum == 3.5, "gpk_reduce");
    check(gpk_transpose(ctx, GPK_I64, GPK_ROW_MAJOR, 2, 2, s, 2, t, 2) == GPK_SUCCESS && t[0] == 1 && t[1] == 3 &&
              t[2] == 2 && t[3] == 4, "gpk_transpose");
    check(gpk_pi(ctx, 1000, 1, &pi) == GPK_SUCCESS && pi.samples == 1000 && pi.hits <= 1000, "gpk_pi");
    check(gpk_pi_range(ctx, 500, 500, 1, &pi) == GPK_SUCCESS && pi.samples == 500 && pi.hits <= 500, "gpk_pi_range");
    /* The staging pipeline: the host backend keeps the settings and has no trace;
     * on the GPU the gemm on host arrays above left one. */
    check(gpk_stage_trace(ctx, NULL, 0, &count) == GPK_SUCCESS, "gpk_stage_trace count");
    check(backend == GPK_BACKEND_CUDA ? count > 0 : count == 0, "gpk_stage_trace count value");
    check(gpk_set_staging(ctx, 2, (size_t)1 << 20, 0) == GPK_SUCCESS, "gpk_set_staging");
    check(gpk_set_staging(ctx, 0, 0, 0) == GPK_ERROR_INVALID_ARGUMENT, "gpk_set_staging streams 0");
    check(gpk_gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, 2, 2, 2, 1.0, a, 2, b, 2, 0.0, c, 2) ==
              GPK_SUCCESS && c[3] == 8.0f, "gpk_gemm after gpk_set_staging");
    count = -1;
    check(gpk_stage_trace(ctx, events, 64, &count) == GPK_SUCCESS, "gpk_stage_trace");
    check(backend == GPK_BACKEND_CUDA ? count > 0 && events[0].kind >= GPK_STAGE_COPY_IN &&
                                            events[0].kind <= GPK_STAGE_COPY_OUT && events[0].end_ms >= 0.0
                                      : count == 0,
          "gpk_stage_trace events");
    check(gpk_reduce(ctx, GPK_F64, GPK_MIN, x, 0, &sum) == GPK_ERROR_INVALID_ARGUMENT, "MIN of nothing");
    check(gpk_last_error(ctx)[0] != '\0', "gpk_last_error");
    check(gpk_destroy(ctx) == GPK_SUCCESS, "gpk_destroy");

    printf("test_c99 [%s]: %s\n", backend == GPK_BACKEND_CUDA ? "cuda" : "host", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
