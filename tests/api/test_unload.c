/* libgpk loaded and unloaded at run time, as ctypes and plugin hosts do: dlopen,
 * host gemms large enough to start the host backend's helper threads (a pool kept
 * between calls), dlclose; twenty times. After each dlclose the library must be gone
 * and so must its threads -- a helper left running would execute unmapped code -- and
 * the process must have as many threads as before the dlopen. Then, in a child
 * process, the library loaded, used and still loaded at exit(): the exit must complete
 * (the helpers joined, no hang: the child is killed after 60 s) with status 0.
 * With the argument "helpers" (a build with OpenMP, OMP_NUM_THREADS above 1: helpers
 * to be had) the library must hold threads of its own between the calls -- the pool --
 * and as many after the third call as after the first: reused, not started again.
 * On a machine with a GPU the library asks the CUDA driver whether GPUs are present
 * (a host context must refuse device memory), and the driver starts a thread of its
 * own that lives as long as the driver, which is never unloaded. The driver is
 * brought up before the count, so that what is counted is libgpk's alone.
 * Not linked with libgpk: its path is the first argument. Run under valgrind by
 * .ci/run (no error, no leak: the table of contexts goes with the last context). */
#include "gpk/gpk.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef gpk_status (*create_fn)(gpk_context **, int, int);
typedef gpk_status (*destroy_fn)(gpk_context *);
typedef gpk_status (*gemm_fn)(gpk_context *, int, int, int, int, int64_t, int64_t, int64_t, double, const void *,
                              int64_t, const void *, int64_t, double, void *, int64_t);
typedef const char *(*error_fn)(gpk_context *);

enum { kN = 128, kRounds = 20, kCallsPerRound = 3 };

static float A[kN * kN], B[kN * kN], C[kN * kN];

/* Under AddressSanitizer (the sanitizer build of .ci/run): no leak check at exit.
 * libgomp's initialiser leaves a few bytes behind at each unload, and once unloaded
 * the sanitizer cannot name the library to suppress them; valgrind, which keeps the
 * unloaded libraries' names, counts every other leak of the unloads in .ci/run. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

static int threads_now(void) {
    DIR *d = opendir("/proc/self/task");
    if (d == NULL) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') ++n;
    closedir(d);
    return n;
}

/* Loads the library, runs kCallsPerRound gemms on a host context and checks them;
 * returns the handle (still loaded), or NULL having said why. */
static void *load_and_use(const char *path, int *threads_after_first) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        printf("FAIL: dlopen %s: %s\n", path, dlerror());
        return NULL;
    }
    create_fn create = (create_fn)dlsym(lib, "gpk_create");
    destroy_fn destroy = (destroy_fn)dlsym(lib, "gpk_destroy");
    gemm_fn gemm = (gemm_fn)dlsym(lib, "gpk_gemm");
    error_fn last_error = (error_fn)dlsym(lib, "gpk_last_error");
    if (!create || !destroy || !gemm || !last_error) {
        printf("FAIL: a gpk_* symbol is missing\n");
        dlclose(lib);
        return NULL;
    }
    gpk_context *ctx = NULL;
    if (create(&ctx, GPK_BACKEND_HOST, 0) != GPK_SUCCESS) {
        printf("FAIL: gpk_create: %s\n", last_error(NULL));
        dlclose(lib);
        return NULL;
    }
    int ok = 1;
    for (int call = 0; call < kCallsPerRound && ok; ++call) {
        memset(C, 0xff, sizeof C);
        /* A = 1, B = 2 + call: every element of C is 128 * (2 + call), exactly. */
        for (int i = 0; i < kN * kN; ++i) B[i] = (float)(2 + call);
        if (gemm(ctx, GPK_F32, GPK_COL_MAJOR, GPK_NO_TRANS, GPK_NO_TRANS, kN, kN, kN, 1.0, A, kN, B, kN, 0.0, C,
                 kN) != GPK_SUCCESS) {
            printf("FAIL: gpk_gemm: %s\n", last_error(ctx));
            ok = 0;
        }
        for (int i = 0; i < kN * kN && ok; ++i)
            if (C[i] != (float)(kN * (2 + call))) {
                printf("FAIL: C[%d] = %g, not %d\n", i, (double)C[i], kN * (2 + call));
                ok = 0;
            }
        if (call == 0 && threads_after_first != NULL) *threads_after_first = threads_now();
    }
    destroy(ctx);
    if (!ok) {
        dlclose(lib);
        return NULL;
    }
    return lib;
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "helpers") != 0 && strcmp(argv[2], "no-helpers") != 0)) {
        fprintf(stderr, "usage: test_unload LIBGPK helpers|no-helpers\n");
        return 2;
    }
    const char *path = argv[1];
    const int helpers = strcmp(argv[2], "helpers") == 0;
    for (int i = 0; i < kN * kN; ++i) A[i] = 1.0f;
    int failures = 0;

    /* The driver's own threads before the baseline (none where there is no driver). */
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver != NULL) {
        int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(driver, "cuInit");
        if (cu_init != NULL) cu_init(0);
    }

    const int before = threads_now();
    for (int round = 0; round < kRounds; ++round) {
        int first = 0;
        void *lib = load_and_use(path, &first);
        if (lib == NULL) return 1;
        const int loaded = threads_now();
        if (helpers && (loaded <= before || loaded != first)) {
            printf("FAIL: round %d: %d threads before dlopen, %d after the first call, %d after the third: "
                   "no pool of helpers kept between calls\n",
                   round, before, first, loaded);
            ++failures;
        }
        if (dlclose(lib) != 0) {
            printf("FAIL: dlclose: %s\n", dlerror());
            return 1;
        }
        /* RTLD_NOLOAD: a handle only if the library is still mapped. */
        void *still = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (still != NULL) {
            printf("FAIL: round %d: libgpk is still loaded after dlclose\n", round);
            dlclose(still);
            ++failures;
        }
        const int after = threads_now();
        if (after != before) {
            printf("FAIL: round %d: %d threads before dlopen, %d with libgpk loaded, %d after dlclose\n", round,
                   before, loaded, after);
            ++failures;
        }
        if (round == 0) printf("round 0: %d threads before dlopen, %d after the calls, %d after dlclose\n", before,
                               loaded, after);
    }
    if (failures == 0) printf("ok: %d rounds of dlopen, gemm, dlclose\n", kRounds);

    /* exit() with the library loaded and its helpers waiting for work. */
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        alarm(60);
        if (load_and_use(path, NULL) == NULL) _exit(1);
        exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        printf("ok: exit() with libgpk loaded\n");
    } else {
        printf("FAIL: exit() with libgpk loaded: %s %d\n", WIFSIGNALED(status) ? "signal" : "exit status",
               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        ++failures;
    }
    return failures == 0 ? 0 : 1;
}
