/* bench/textures.py's kernels as plain C loops on one core: what a texture fetch computes, without one.
 *   textures fetch N     out[i] = 2 * x[i] + 1 over N floats
 *   textures matmul N    C = A * B, N x N floats, one dot product per element in k order
 * Prints the best of 3 runs' CPU seconds (after a warm-up run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long n_;
static float *a_, *b_, *c_;

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void fetch(void) {
    for (long i = 0; i < n_; i++) c_[i] = 2.0f * a_[i] + 1.0f;
}

static void matmul(void) {
    for (long r = 0; r < n_; r++)
        for (long col = 0; col < n_; col++) {
            float sum = 0.0f;
            for (long k = 0; k < n_; k++) sum += a_[r * n_ + k] * b_[k * n_ + col];
            c_[r * n_ + col] = sum;
        }
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    n_ = atol(argv[2]);
    int mm = strcmp(argv[1], "matmul") == 0;
    long elems = mm ? n_ * n_ : n_;
    a_ = malloc(elems * sizeof(float)); b_ = malloc(elems * sizeof(float)); c_ = malloc(elems * sizeof(float));
    for (long i = 0; i < elems; i++) { a_[i] = (float)(i % 7) - 3.0f; b_[i] = (float)(i % 5) * 0.5f; }
    void (*fn)(void) = mm ? matmul : fetch;
    fn();
    double best = 1e30;
    for (int k = 0; k < 3; k++) {
        double t = cpu();
        fn();
        t = cpu() - t;
        if (t < best) best = t;
    }
    printf("%.6f %g\n", best, (double)c_[elems / 2]);
    return 0;
}
