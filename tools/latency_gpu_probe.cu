// How long do chains of dependent steps take on a real GPU, at several occupancies, on one stream and on four?
// (tests/test_timing_latency.py reads what an H100 printed: tools/latency_gpu_probe_h100.txt.)
//
//   latency_gpu_probe                      every case below, each timed REPS times (the median is printed)
//   latency_gpu_probe hist [ROUNDS] [REPS]  only the histogram (an emulator runs it in seconds:
//                                           cudalab run -arch=sm_90 tools/latency_gpu_probe.cu -- hist 5000 1)
//   latency_gpu_probe l2                    only the global chase, its lines in a 4 MB cycle that L2 holds
//
// Every thread of a "chain" kernel runs STEPS steps, each needing the one before it (nothing else to issue
// meanwhile), so a warp alone waits out each step's latency; other warps of its scheduler may fill the wait.
//   int     h = (h ^ r) + c          two integer ALU operations a step
//   imul    h ^= r; h *= p           an integer multiply and a xor (the FNV-like hash of courses' histograms)
//   ffma    v = v * a + b            one float fused multiply-add a step
//   shared  j = next[j]              a load from shared memory whose address is the last load's value
//   global  j = next[j]              the same in global memory, over 256 MB (past L2): each warp reads one
//                                    128-byte line a step, its 32 lanes side by side, lines in a random cycle
// Occupancy: blocks of THREADS threads, BLOCKS per SM (grid = BLOCKS x SMs): 1 to 16 warps per scheduler.
// For each: "alone" one kernel, "serial" four of them in one stream, "streams" four on four streams (between
// two events on the legacy stream, which waits for every blocking stream).
// "hist": a histogram like a course's stream assignment: four chunks of text, each copied in (pinned memory),
// hashed by a kernel of 115 blocks of 256 threads (one character a thread, ROUNDS multiply-xor steps each, into
// a shared 256-bin histogram), its bins copied back; the chunks in one stream, then in four.
__global__ void chain_int(int steps, unsigned *out) {
    unsigned h = threadIdx.x + blockIdx.x;
    for (int r = 0; r < steps; r++) h = (h ^ r) + 0x9e3779b9u;
    if (h == 7) out[0] = h;
}

__global__ void chain_imul(int steps, unsigned *out) {
    unsigned h = 2166136261u ^ (threadIdx.x + blockIdx.x);
    for (int r = 0; r < steps; r++) { h ^= r; h *= 16777619u; }
    if (h == 7) out[0] = h;
}

__global__ void chain_ffma(int steps, unsigned *out) {
    float v = threadIdx.x;
    for (int r = 0; r < steps; r++) v = v * 0.9999f + 0.5f;
    if (v == 7.0f) out[0] = 1;
}

__global__ void chain_shared(int steps, unsigned *out) {
    __shared__ unsigned next[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) next[i] = (i * 97 + 13) & 1023;   // a permutation
    __syncthreads();
    unsigned j = threadIdx.x;
    for (int r = 0; r < steps; r++) j = next[j];
    if (j == 5000) out[0] = j;
}

__global__ void chain_global(int steps, const unsigned *next, unsigned *out) {
    unsigned j = ((blockIdx.x * blockDim.x + threadIdx.x) / 32 * 977 % (1u << 21)) * 32 + threadIdx.x % 32;
    for (int r = 0; r < steps; r++) j = next[j];
    if (j == 0xffffffffu) out[0] = j;
}

__global__ void hist_chain(const unsigned char *text, int n, int rounds, unsigned *bins) {
    __shared__ unsigned local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned h = 2166136261u ^ text[i];
        for (int r = 0; r < rounds; r++) { h ^= r; h *= 16777619u; }
        atomicAdd(&local[h & 255], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}

// ---- the host side (the kernels above need no header: tests/test_timing_latency.py compiles them alone)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

static int REPS = 5;
#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    printf("error %s at line %d\n", cudaGetErrorName(e_), __LINE__); exit(1); } } while (0)

enum Kind { INT, IMUL, FFMA, SHARED, GLOBAL };
static const char *NAMES[] = {"int", "imul", "ffma", "shared", "global"};
static const int STEPS[] = {20000, 20000, 20000, 10000, 1000};
static unsigned *dnext, *dout;
static cudaStream_t streams[4];
static cudaEvent_t ev0, ev1;

static void launch(Kind k, int grid, int threads, cudaStream_t s) {
    int n = STEPS[k];
    if (k == INT) chain_int<<<grid, threads, 0, s>>>(n, dout);
    else if (k == IMUL) chain_imul<<<grid, threads, 0, s>>>(n, dout);
    else if (k == FFMA) chain_ffma<<<grid, threads, 0, s>>>(n, dout);
    else if (k == SHARED) chain_shared<<<grid, threads, 0, s>>>(n, dout);
    else chain_global<<<grid, threads, 0, s>>>(n, dnext, dout);
}

// kernels launched by ``issue`` between two legacy-stream events: the median of REPS, in ms
static void chains(int sms, int khz);
static void chase_table(unsigned cycle);
static void shapes(int sms, int khz, Kind kind, const char *name);
static void histogram(int rounds);

template <class F> static float timed(F issue) {
    std::vector<float> t;
    for (int r = 0; r < REPS; r++) {
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaEventRecord(ev0, 0));
        issue();
        CHECK(cudaEventRecord(ev1, 0));
        CHECK(cudaEventSynchronize(ev1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[REPS / 2];
}

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    cudaDeviceProp p;
    int khz = 0;
    CHECK(cudaGetDeviceProperties(&p, 0));
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    int sms = p.multiProcessorCount;
    printf("# %s, %d SMs, clock %d kHz\n", p.name, sms, khz);
    bool hist_only = argc > 1 && !strcmp(argv[1], "hist"), l2 = argc > 1 && !strcmp(argv[1], "l2");
    int rounds = hist_only && argc > 2 ? atoi(argv[2]) : 5000;
    if (hist_only && argc > 3) REPS = atoi(argv[3]);
    for (int i = 0; i < 4; i++) CHECK(cudaStreamCreate(&streams[i]));
    CHECK(cudaEventCreate(&ev0));
    CHECK(cudaEventCreate(&ev1));
    if (l2) {
        chase_table(1u << 15);
        shapes(sms, khz, GLOBAL, "l2");
        return 0;
    }
    if (!hist_only) chains(sms, khz);
    histogram(rounds);
    return 0;
}

// 2^21 lines of 32 words (256 MB): next[line, lane] = (following line, lane), the first ``cycle`` lines in
// one random cycle (Sattolo's shuffle), every other line leading into it
static void chase_table(unsigned cycle) {
    const unsigned lines = 1u << 21;
    std::vector<unsigned> order(cycle), next((size_t)lines * 32);
    for (unsigned i = 0; i < cycle; i++) order[i] = i;
    srand(12345);
    for (unsigned i = cycle - 1; i > 0; i--) std::swap(order[i], order[((unsigned)rand() * 2654435761u + rand()) % i]);
    for (unsigned i = 0; i < lines; i++)
        for (unsigned l = 0; l < 32; l++)
            next[(size_t)(i < cycle ? order[i] : i) * 32 + l] = (i < cycle ? order[(i + 1) % cycle] : i % cycle) * 32 + l;
    CHECK(cudaMalloc(&dnext, next.size() * 4));
    CHECK(cudaMemcpy(dnext, next.data(), next.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&dout, 4));
}

// every chain kernel at every shape: alone, four in one stream, four on four streams
static void chains(int sms, int khz) {
    chase_table(1u << 21);                       // all 256 MB in the cycle: past L2
    for (int k = 0; k < 5; k++) shapes(sms, khz, (Kind)k, NAMES[k]);
}

// one chain kernel at every shape
static void shapes(int sms, int khz, Kind kind, const char *name) {
    launch(kind, 1, 32, 0);
    CHECK(cudaDeviceSynchronize());
    const int shape_list[5][2] = {{128, 1}, {256, 1}, {256, 2}, {256, 4}, {256, 8}};   // threads, blocks per SM
    int k = kind;
    for (auto &sh : shape_list) {
        int threads = sh[0], grid = sh[1] * sms;
        float alone = timed([&] { launch(kind, grid, threads, streams[0]); });
        float serial = timed([&] { for (int i = 0; i < 4; i++) launch(kind, grid, threads, streams[0]); });
        float split = timed([&] { for (int i = 0; i < 4; i++) launch(kind, grid, threads, streams[i]); });
        printf("chain kernel=%s steps=%d threads=%d blocks_per_sm=%d warps_per_scheduler=%d alone_ms=%.4f "
               "serial_ms=%.4f streams_ms=%.4f speedup=%.2f cycles_per_step=%.2f\n", name, STEPS[k], threads,
               sh[1], threads / 32 * sh[1] / 4, alone, serial, split, serial / split,
               alone * 1e-3 * khz * 1e3 / STEPS[k]);
    }
}

// the histogram: four chunks of 115 x 256 characters, ``rounds`` multiply-xor steps a character
static void histogram(int rounds) {
    const int chunk = 115 * 256;
    unsigned char *htext, *dtext;
    unsigned *hbins, *dbins;
    CHECK(cudaMallocHost(&htext, 4 * chunk));
    CHECK(cudaMallocHost(&hbins, 4 * 256 * 4));
    CHECK(cudaMalloc(&dtext, 4 * chunk));
    CHECK(cudaMalloc(&dbins, 4 * 256 * 4));
    for (int i = 0; i < 4 * chunk; i++) htext[i] = 'a' + i * 7 % 26;
    auto hist = [&](bool four) {
        for (int c = 0; c < 4; c++) {
            cudaStream_t s = streams[four ? c : 0];
            CHECK(cudaMemcpyAsync(dtext + c * chunk, htext + c * chunk, chunk, cudaMemcpyHostToDevice, s));
            CHECK(cudaMemsetAsync(dbins + c * 256, 0, 256 * 4, s));
            hist_chain<<<115, 256, 0, s>>>(dtext + c * chunk, chunk, rounds, dbins + c * 256);
            CHECK(cudaMemcpyAsync(hbins + c * 256, dbins + c * 256, 256 * 4, cudaMemcpyDeviceToHost, s));
        }
    };
    float kernel = timed([&] { hist_chain<<<115, 256, 0, streams[0]>>>(dtext, chunk, rounds, dbins); });
    float one = timed([&] { hist(false); }), four = timed([&] { hist(true); });
    CHECK(cudaDeviceSynchronize());
    unsigned total = 0;
    for (int i = 0; i < 4 * 256; i++) total += hbins[i];
    printf("hist chunks=4 blocks=115 threads=256 rounds=%d kernel_ms=%.4f one_stream_ms=%.4f four_streams_ms=%.4f "
           "speedup=%.2f counted=%u of %d\n", rounds, kernel, one, four, one / four, total, 4 * chunk);
}
