/* The bench kernels as plain C loops, one core: the "native" column of bench/speed.py.
 *
 * Each kernel does what its CUDA version in bench/kernels.py does, thread by thread in order.
 * Build: cc -O2 -o kernels kernels.c  (bench/speed.py builds it and prints the command).
 * Usage: kernels NAME SIZE -> prints "seconds checksum" for the best of 3 runs (after a warm-up
 * run, so page faults on the inputs are not timed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);   /* CPU time: a busy machine does not inflate it */
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static float *a_f, *b_f, *c_f;
static int *x_i, *out_i;
static unsigned char *bytes;
static unsigned int *hist, *start;
static long n_;

static void vector_add(void) {
    for (long i = 0; i < n_; i++) c_f[i] = a_f[i] + b_f[i];
}

static void matmul(void) {        /* the tiled kernel's arithmetic: acc += A[row][k] * B[k][col] */
    long n = n_;
    for (long row = 0; row < n; row++)
        for (long col = 0; col < n; col++) {
            float acc = 0.0f;
            for (long k = 0; k < n; k++) acc += a_f[row * n + k] * b_f[k * n + col];
            c_f[row * n + col] = acc;
        }
}

static void histogram(void) {
    memset(hist, 0, 256 * sizeof *hist);
    for (long i = 0; i < n_; i++) hist[bytes[i]]++;
}

static void warp_reduce(void) {   /* one sum of 32 per warp, as the shuffle tree computes it */
    for (long w = 0; w < n_ / 32; w++) {
        int v = 0;
        for (int l = 0; l < 32; l++) v += x_i[w * 32 + l];
        out_i[w] = v;
    }
}

static void reduce(void) {        /* one sum per block of 256, in the shared-memory tree's order */
    float s[256];
    for (long b = 0; b < n_ / 256; b++) {
        memcpy(s, a_f + b * 256, sizeof s);
        for (int stride = 128; stride > 0; stride >>= 1)
            for (int t = 0; t < stride; t++) s[t] += s[t + stride];
        c_f[b] = s[0];
    }
}

static void block_relax(void) {   /* one block's Jacobi sweeps: SIZE turns over 128 points */
    float s[130], next[128];
    s[0] = 0.0f;
    s[129] = 1.0f;
    memcpy(s + 1, a_f, 128 * sizeof(float));
    for (long k = 0; k < n_; k++) {
        for (int t = 1; t <= 128; t++) next[t - 1] = 0.5f * (s[t - 1] + s[t + 1]);
        memcpy(s + 1, next, sizeof next);
    }
    memcpy(c_f, s + 1, 128 * sizeof(float));
}

static void collatz(void) {
    for (long i = 0; i < n_; i++) {
        unsigned long long x = start[i];
        int s = 0;
        while (x != 1) {
            x = (x & 1) ? 3 * x + 1 : x >> 1;
            ++s;
        }
        out_i[i] = s;
    }
}

static void grid_stride(void) {   /* saxpy: y = 2x + y */
    for (long i = 0; i < n_; i++) c_f[i] = 2.0f * a_f[i] + c_f[i];
}

#define GRID_SUM_THREADS (288 * 256)
static void grid_sum(void) {      /* each of 288 x 256 threads' sum of every (288 x 256)-th float, in its order */
    memset(c_f, 0, GRID_SUM_THREADS * sizeof *c_f);
    for (long row = 0; row < n_; row += GRID_SUM_THREADS)
        for (long t = 0; t < GRID_SUM_THREADS && row + t < n_; t++) c_f[t] += a_f[row + t];
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s vector_add|matmul|matmul32|histogram|warp_shuffle|collatz|grid_stride|grid_sum|reduction|block_relax SIZE\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    n_ = atol(argv[2]);
    long elems = strcmp(name, "matmul") == 0 || strcmp(name, "matmul32") == 0 ? n_ * n_ : strcmp(name, "block_relax") == 0 ? 128 : n_;
    a_f = malloc(elems * sizeof(float));
    b_f = malloc(elems * sizeof(float));
    c_f = calloc(elems, sizeof(float));
    x_i = malloc(elems * sizeof(int));
    out_i = calloc(elems, sizeof(int));
    bytes = malloc(elems);
    hist = calloc(256, sizeof *hist);
    start = malloc(elems * sizeof *start);
    srand(1);
    for (long i = 0; i < elems; i++) {
        a_f[i] = rand() / (float)RAND_MAX;
        b_f[i] = rand() / (float)RAND_MAX;
        x_i[i] = rand() % 200 - 100;
        bytes[i] = rand() & 255;
        start[i] = (unsigned int)(i + 1);
    }
    void (*fn)(void) = strcmp(name, "vector_add") == 0 ? vector_add : strcmp(name, "matmul") == 0 ? matmul
        : strcmp(name, "matmul32") == 0 ? matmul
        : strcmp(name, "histogram") == 0 ? histogram : strcmp(name, "warp_shuffle") == 0 ? warp_reduce
        : strcmp(name, "collatz") == 0 ? collatz : strcmp(name, "grid_stride") == 0 ? grid_stride
        : strcmp(name, "grid_sum") == 0 ? grid_sum
        : strcmp(name, "reduction") == 0 ? reduce : strcmp(name, "block_relax") == 0 ? block_relax : NULL;
    if (!fn) {
        fprintf(stderr, "unknown kernel %s\n", name);
        return 2;
    }
    fn();
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t = now();
        fn();
        t = now() - t;
        if (t < best) best = t;
    }
    double sum = 0;
    for (long i = 0; i < elems; i++) sum += c_f[i] + out_i[i];
    for (int i = 0; i < 256; i++) sum += hist[i];
    printf("%.9f %.6g\n", best, sum);
    return 0;
}
