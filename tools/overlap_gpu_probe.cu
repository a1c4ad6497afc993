// How much faster are kernels on several streams than on one, on a real GPU? (tests/test_timeline_overlap.py
// reads what an H100 printed: tools/overlap_gpu_probe_h100.txt.)
//
//   overlap_gpu_probe            every case below, each timed REPS times (the median is printed)
//   overlap_gpu_probe many       only the many-streams cases
//   overlap_gpu_probe pairs      simpleHyperQ's pattern: two dependent 1 ms kernels on each of 8 to 32 streams
//
// A case launches the same kernels twice: all in one stream ("serial"), then kernel i in stream i
// ("streams"), between two events on the legacy default stream (which waits for every blocking stream),
// and prints serial / streams: the speed-up the streams bought. Kernels:
//   spin    every thread waits on clock64() for SPIN_US: a block's time is fixed, so the ratio says how
//           the block scheduler shares the SMs' slots (cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs)
//   work    a dependent multiply-xor chain per thread (compute, no clock)
//   copy    a grid-stride copy of 32 MiB (memory-bound: the streams share DRAM)
// "fill" is the grid's share of the device's block slots (1/8, 1/2, 1, 2: a grid of two full waves).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define REPS 5
#define SPIN_US 200
#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    printf("error %s at line %d\n", cudaGetErrorName(e_), __LINE__); exit(1); } } while (0)

__global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

__global__ void spin_timer(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

__global__ void work(int rounds, unsigned *out) {
    unsigned h = 2166136261u ^ threadIdx.x;
    for (int r = 0; r < rounds; r++) { h ^= r; h *= 16777619u; }
    if (h == 0) out[0] = h;
}

__global__ void copy(const float *a, float *b, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) b[i] = a[i];
}

static int sms, slots, threads = 256;
static long long cycles;
static float *da, *db;
static unsigned *dout;
static const int COPY_N = 8 << 20;

enum Kind { SPIN, WORK, COPY, TIMER };

static void launch(Kind k, int grid, cudaStream_t s) {
    if (k == SPIN) spin<<<grid, threads, 0, s>>>(cycles);
    else if (k == WORK) work<<<grid, threads, 0, s>>>(200000, dout);
    else if (k == COPY) copy<<<grid, threads, 0, s>>>(da, db, COPY_N);
    else spin_timer<<<grid, threads, 0, s>>>(SPIN_US * 1000ull);
}

static cudaStream_t streams[256];
static cudaEvent_t ev0, ev1;

// grids[i] launched on stream streams[on[i]] (-1: the legacy stream); ms between legacy-stream events
static float timed(Kind k, const std::vector<int> &grids, const std::vector<int> &on) {
    std::vector<float> t;
    for (int r = 0; r < REPS; r++) {
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaEventRecord(ev0, 0));
        for (size_t i = 0; i < grids.size(); i++) launch(k, grids[i], on[i] < 0 ? (cudaStream_t)0 : streams[on[i]]);
        CHECK(cudaEventRecord(ev1, 0));
        CHECK(cudaEventSynchronize(ev1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[REPS / 2];
}

static void ratio(const char *name, Kind k, const std::vector<int> &grids, const std::vector<int> &on) {
    std::vector<int> one(grids.size(), 0);
    float serial = timed(k, grids, one), split = timed(k, grids, on);
    float alone = timed(k, {grids[0]}, {0});
    printf("%s serial_ms=%.4f streams_ms=%.4f alone_ms=%.4f speedup=%.2f serial_over_alone=%.2f\n", name, serial,
           split, alone, serial / split, serial / alone);
}

static int grid_of(double fill) { return std::max(1, (int)(fill * slots + 0.5)); }

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    int dev = 0, khz = 0, blocks = 0;
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, dev));
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
    sms = p.multiProcessorCount;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spin, threads, 0));
    slots = blocks * sms;
    cycles = (long long)khz * SPIN_US / 1000;
    const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    printf("# %s, %d SMs, %d blocks of %d threads per SM (%d slots), clock %d kHz, concurrentKernels %d, "
           "CUDA_DEVICE_MAX_CONNECTIONS=%s\n", p.name, sms, blocks, threads, slots, khz, p.concurrentKernels,
           conn ? conn : "(unset: 8)");
    CHECK(cudaMalloc(&da, COPY_N * sizeof(float)));
    CHECK(cudaMalloc(&db, COPY_N * sizeof(float)));
    CHECK(cudaMalloc(&dout, 4));
    for (int i = 0; i < 256; i++) CHECK(cudaStreamCreate(&streams[i]));
    CHECK(cudaEventCreate(&ev0));
    CHECK(cudaEventCreate(&ev1));
    launch(SPIN, 1, 0);
    launch(WORK, 1, 0);
    launch(COPY, 1, 0);
    CHECK(cudaDeviceSynchronize());

    if (argc > 1 && !strcmp(argv[1], "pairs")) {
        // simpleHyperQ's pattern: two 1 ms kernels (one block of one thread) per stream, the second waiting
        // for the first; issued depth first (A0 B0 A1 B1 ...) or breadth first (A0 A1 ... B0 B1 ...).
        // Serial would be 2 x streams ms; with a hardware queue per stream, 2 ms.
        long long ms1 = (long long)khz;
        const int counts[3] = {8, 16, 32};
        for (int c = 0; c < 3; c++)
            for (int breadth = 0; breadth < 2; breadth++) {
                std::vector<float> t;
                for (int r = 0; r < REPS; r++) {
                    CHECK(cudaDeviceSynchronize());
                    CHECK(cudaEventRecord(ev0, 0));
                    for (int k = 0; k < 2 * counts[c]; k++) {
                        int i = breadth ? k % counts[c] : k / 2;
                        spin<<<1, 1, 0, streams[i]>>>(ms1);
                    }
                    CHECK(cudaEventRecord(ev1, 0));
                    CHECK(cudaEventSynchronize(ev1));
                    float ms;
                    CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
                    t.push_back(ms);
                }
                std::sort(t.begin(), t.end());
                printf("pairs streams=%d order=%s connections=%s ms=%.3f kernel_ms=1\n", counts[c],
                       breadth ? "breadth" : "depth", conn ? conn : "8", t[REPS / 2]);
            }
        return 0;
    }
    bool many_only = argc > 1 && !strcmp(argv[1], "many");
    char name[160];
    if (!many_only) {
        // how long one spin kernel lasts, against what its clock reads asked for
        float t = timed(SPIN, {1}, {0});
        printf("duration spin=clock64 asked_ms=%.3f ms=%.4f ratio=%.3f\n", SPIN_US / 1000.0, t, t / (SPIN_US / 1000.0));
        t = timed(TIMER, {1}, {0});
        printf("duration spin=globaltimer asked_ms=%.3f ms=%.4f ratio=%.3f\n", SPIN_US / 1000.0, t,
               t / (SPIN_US / 1000.0));
        t = timed(SPIN, {grid_of(2.0)}, {0});
        printf("duration spin=clock64 fill=2 waves=2 ms=%.4f ratio=%.3f\n", t, t / (SPIN_US / 1000.0));

        const double fills[4] = {0.125, 0.5, 1.0, 2.0};
        const char *fill_names[4] = {"1/8", "1/2", "1", "2"};
        const int counts[3] = {2, 4, 8};
        for (int f = 0; f < 4; f++)
            for (int c = 0; c < 3; c++) {
                std::vector<int> grids(counts[c], grid_of(fills[f])), on;
                for (int i = 0; i < counts[c]; i++) on.push_back(i);
                snprintf(name, sizeof name, "overlap kernel=spin fill=%s streams=%d", fill_names[f], counts[c]);
                ratio(name, SPIN, grids, on);
            }
        // the tail of a grid of 1.5 waves, then a grid of half a wave on another stream
        ratio("tail kernel=spin fills=1.5,0.5 streams=2", SPIN, {grid_of(1.5), grid_of(0.5)}, {0, 1});
        ratio("tail kernel=spin fills=0.5,1.5 streams=2", SPIN, {grid_of(0.5), grid_of(1.5)}, {0, 1});
        ratio("mixed kernel=spin fills=1,1/8 streams=2", SPIN, {grid_of(1.0), grid_of(0.125)}, {0, 1});
        for (int f = 0; f < 2; f++) {
            std::vector<int> grids(4, grid_of(fills[f])), on = {0, 1, 2, 3};
            snprintf(name, sizeof name, "overlap kernel=work fill=%s streams=4", fill_names[f]);
            ratio(name, WORK, grids, on);
            snprintf(name, sizeof name, "overlap kernel=copy fill=%s streams=4", fill_names[f]);
            ratio(name, COPY, grids, on);
        }
        // the legacy default stream between blocking streams: kernel 2 of 4 on stream 0
        ratio("legacy kernel=spin fill=1/8 streams=4 legacy_at=2", SPIN, std::vector<int>(4, grid_of(0.125)),
              {0, 1, -1, 2});
        ratio("legacy kernel=spin fill=1/8 streams=2 legacy_at=1", SPIN, std::vector<int>(3, grid_of(0.125)),
              {0, -1, 1});
    }
    // many streams: one small kernel (1 block) each
    const int many[4] = {8, 16, 32, 160};
    for (int m = 0; m < 4; m++) {
        std::vector<int> grids(many[m], 1), on;
        for (int i = 0; i < many[m]; i++) on.push_back(i);
        snprintf(name, sizeof name, "many kernel=spin blocks=1 streams=%d connections=%s", many[m], conn ? conn : "8");
        ratio(name, SPIN, grids, on);
    }
    return 0;
}
