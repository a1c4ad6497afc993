// When does a GPU answer cudaErrorNotReady to cudaEventElapsedTime and cudaEventQuery, and what does it
// answer to their misuse? (tests/test_event_timing.py reads what an H100 printed.)
//
//   event_gpu_probe timing            every combination below, each REPS times
//   event_gpu_probe latency           how soon a record is ready (host spins of 0 to 50 us)
//   event_gpu_probe misuse CASE       one misuse case (a process each: some use destroyed handles)
//
// timing: start and stop are recorded on the "event stream" (the legacy default stream, or the per-thread
// one) around about 2 ms of work issued to the "work stream" (blocking or non-blocking), which ends with
// a kernel or with a device-to-host cudaMemcpyAsync; the host then synchronizes the work stream, the event
// stream, or nothing, may spin for a while, and asks cudaEventElapsedTime (or cudaEventQuery(stop)) first.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define REPS 5
#define NAME(call) cudaGetErrorName(call)

__global__ void spin(long long cycles, int *out) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    if (out) out[threadIdx.x] = 1;
}

static void host_spin(int us) {
    auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) {}
}

static long long cycles_per_ms() {
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    return (long long)khz;
}

static int timing() {
    int *d, *h;
    cudaMalloc(&d, 1 << 20);
    cudaMallocHost(&h, 1 << 20);
    long long ms = cycles_per_ms();
    cudaStream_t evstreams[2] = {cudaStreamLegacy, cudaStreamPerThread};
    const char *evnames[2] = {"legacy", "perthread"};
    const char *syncs[4] = {"work", "event", "none", "device"};
    int spins[3] = {0, 50, 1000};
    spin<<<1, 32>>>(ms, d);
    cudaDeviceSynchronize();
    for (int e = 0; e < 2; e++)
        for (int nb = 0; nb < 2; nb++)
            for (int last = 0; last < 2; last++)
                for (int sy = 0; sy < 4; sy++)
                    for (int sp = 0; sp < 3; sp++)
                        for (int ask = 0; ask < 2; ask++) {
                            printf("timing ev=%s work=%s last=%s sync=%s spin=%d ask=%s:", evnames[e],
                                   nb ? "nonblocking" : "blocking", last ? "memcpy" : "kernel", syncs[sy], spins[sp],
                                   ask ? "query" : "elapsed");
                            for (int r = 0; r < REPS; r++) {
                                cudaStream_t s;
                                cudaStreamCreateWithFlags(&s, nb ? cudaStreamNonBlocking : cudaStreamDefault);
                                cudaEvent_t a, b;
                                cudaEventCreate(&a);
                                cudaEventCreate(&b);
                                cudaEventRecord(a, evstreams[e]);
                                spin<<<1, 32, 0, s>>>(2 * ms, d);
                                if (last) cudaMemcpyAsync(h, d, 1 << 20, cudaMemcpyDeviceToHost, s);
                                cudaEventRecord(b, evstreams[e]);
                                if (sy == 0) cudaStreamSynchronize(s);
                                if (sy == 1) cudaStreamSynchronize(evstreams[e]);
                                if (sy == 3) cudaDeviceSynchronize();
                                host_spin(spins[sp]);
                                float t = -1;
                                cudaError_t first = ask ? cudaEventQuery(b) : cudaEventElapsedTime(&t, a, b);
                                cudaError_t second = ask ? cudaEventElapsedTime(&t, a, b) : cudaEventQuery(b);
                                printf(" %s/%s", NAME(first), NAME(second));
                                cudaDeviceSynchronize();
                                cudaEventDestroy(a);
                                cudaEventDestroy(b);
                                cudaStreamDestroy(s);
                            }
                            printf("\n");
                        }
    // the event on the work stream itself, synchronized by that stream: the control
    for (int nb = 0; nb < 2; nb++) {
        printf("timing ev=work work=%s last=kernel sync=work spin=0 ask=elapsed:", nb ? "nonblocking" : "blocking");
        for (int r = 0; r < REPS; r++) {
            cudaStream_t s;
            cudaStreamCreateWithFlags(&s, nb ? cudaStreamNonBlocking : cudaStreamDefault);
            cudaEvent_t a, b;
            cudaEventCreate(&a);
            cudaEventCreate(&b);
            cudaEventRecord(a, s);
            spin<<<1, 32, 0, s>>>(2 * ms, d);
            cudaEventRecord(b, s);
            cudaStreamSynchronize(s);
            float t = -1;
            cudaError_t first = cudaEventElapsedTime(&t, a, b);
            printf(" %s/%s", NAME(first), NAME(cudaEventQuery(b)));
            cudaDeviceSynchronize();
            cudaEventDestroy(a), cudaEventDestroy(b), cudaStreamDestroy(s);
        }
        printf("\n");
    }
    // stream queries: the legacy stream after a blocking stream's work is synchronized
    for (int nb = 0; nb < 2; nb++)
        for (int sp = 0; sp < 3; sp++) {
            printf("streamquery legacy-after work=%s spin=%d:", nb ? "nonblocking" : "blocking", spins[sp]);
            for (int r = 0; r < REPS; r++) {
                cudaStream_t s;
                cudaStreamCreateWithFlags(&s, nb ? cudaStreamNonBlocking : cudaStreamDefault);
                cudaEvent_t b;
                cudaEventCreate(&b);
                spin<<<1, 32, 0, s>>>(2 * ms, d);
                cudaEventRecord(b, cudaStreamLegacy);
                cudaStreamSynchronize(s);
                host_spin(spins[sp]);
                printf(" %s", NAME(cudaStreamQuery(cudaStreamLegacy)));
                cudaDeviceSynchronize();
                cudaEventDestroy(b), cudaStreamDestroy(s);
            }
            printf("\n");
        }
    return 0;
}

// how long after the host's call is a record ready: on an idle stream, and on the legacy stream behind a
// blocking stream's device-to-host copy that the host has just synchronized
static int latency() {
    int *d, *h;
    cudaMalloc(&d, 1 << 20);
    cudaMallocHost(&h, 1 << 20);
    long long ms = cycles_per_ms();
    spin<<<1, 32>>>(ms, d);
    cudaDeviceSynchronize();
    int spins[] = {0, 1, 2, 3, 5, 8, 12, 20, 30, 50};
    for (int copy = 0; copy < 2; copy++)
        for (int sp : spins) {
            printf("latency %s spin=%d:", copy ? "legacy-behind-copy" : "idle-stream", sp);
            for (int r = 0; r < 10; r++) {
                cudaStream_t s;
                cudaStreamCreate(&s);
                cudaEvent_t b;
                cudaEventCreate(&b);
                if (copy) {
                    spin<<<1, 32, 0, s>>>(ms, d);
                    cudaMemcpyAsync(h, d, 1 << 20, cudaMemcpyDeviceToHost, s);
                    cudaEventRecord(b, cudaStreamLegacy);
                    cudaStreamSynchronize(s);
                } else {
                    cudaEventRecord(b, s);
                }
                host_spin(sp);
                printf(" %s", cudaEventQuery(b) == cudaSuccess ? "ok" : "NR");
                cudaDeviceSynchronize();
                cudaEventDestroy(b), cudaStreamDestroy(s);
            }
            printf("\n");
        }
    return 0;
}

#define SHOW(call) printf("%s %s -> %s\n", which, #call, NAME(call))

static int misuse(const char *which) {
    int *d;
    cudaMalloc(&d, 4096);
    long long ms = cycles_per_ms();
    cudaEvent_t a, b, nt, nt2;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventCreateWithFlags(&nt, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&nt2, cudaEventDisableTiming);
    cudaStream_t s, s2;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    float t = -1;
    if (!strcmp(which, "unrecorded")) {
        SHOW(cudaEventElapsedTime(&t, a, b));
        SHOW(cudaEventQuery(a));
        SHOW(cudaEventSynchronize(a));
        SHOW(cudaEventElapsedTime(nullptr, a, b));
        SHOW(cudaEventElapsedTime(&t, a, a));
        SHOW(cudaEventRecord(b, 0));
        SHOW(cudaEventSynchronize(b));
        SHOW(cudaEventElapsedTime(&t, a, b));
        SHOW(cudaEventElapsedTime(&t, b, a));
        SHOW(cudaEventElapsedTime(nullptr, a, b));
    } else if (!strcmp(which, "notiming")) {
        SHOW(cudaEventElapsedTime(&t, nt, nt2));
        SHOW(cudaEventElapsedTime(&t, a, nt));
        SHOW(cudaEventQuery(nt));
        SHOW(cudaEventRecord(a, 0));
        SHOW(cudaEventRecord(nt, 0));
        SHOW(cudaEventSynchronize(nt));
        SHOW(cudaEventQuery(nt));
        SHOW(cudaEventElapsedTime(&t, a, nt));
        SHOW(cudaEventElapsedTime(&t, nt, a));
        SHOW(cudaEventElapsedTime(&t, nt, nt));
        SHOW(cudaEventElapsedTime(&t, a, nt2));
        SHOW(cudaEventElapsedTime(&t, nt2, a));
        SHOW(cudaEventElapsedTime(nullptr, a, nt));
    } else if (!strcmp(which, "pending")) {
        // start behind 20 ms of work on s, stop on an idle stream s2: stop done, start not
        spin<<<1, 32, 0, s>>>(20 * ms, d);
        SHOW(cudaEventRecord(a, s));
        SHOW(cudaEventRecord(b, s2));
        SHOW(cudaEventSynchronize(b));
        SHOW(cudaEventElapsedTime(&t, a, b));
        SHOW(cudaEventElapsedTime(&t, b, a));
        SHOW(cudaEventQuery(a));
        SHOW(cudaStreamQuery(s));
        SHOW(cudaStreamQuery(s2));
        SHOW(cudaEventElapsedTime(nullptr, a, b));
        SHOW(cudaEventElapsedTime(&t, a, nt));
        SHOW(cudaEventSynchronize(a));
        SHOW(cudaEventElapsedTime(&t, a, b));
        printf("%s negative %d\n", which, t < 0);
        SHOW(cudaEventElapsedTime(&t, a, a));
        printf("%s same %g\n", which, t);
        // re-recorded behind more work: the start is pending again
        spin<<<1, 32, 0, s>>>(20 * ms, d);
        SHOW(cudaEventRecord(a, s));
        SHOW(cudaEventElapsedTime(&t, b, a));
        SHOW(cudaEventQuery(a));
        SHOW(cudaDeviceSynchronize());
        SHOW(cudaEventElapsedTime(&t, b, a));
    } else if (!strcmp(which, "destroyed")) {
        SHOW(cudaEventRecord(a, 0));
        SHOW(cudaEventRecord(b, 0));
        SHOW(cudaEventSynchronize(b));
        SHOW(cudaEventDestroy(b));
        SHOW(cudaEventElapsedTime(&t, a, b));
        SHOW(cudaEventElapsedTime(&t, b, a));
        SHOW(cudaEventQuery(b));
        SHOW(cudaEventSynchronize(b));
        SHOW(cudaEventRecord(b, 0));
        SHOW(cudaStreamWaitEvent(s, b, 0));
        SHOW(cudaEventDestroy(b));
        SHOW(cudaGetLastError());
    } else if (!strcmp(which, "null")) {
        SHOW(cudaEventRecord(a, 0));
        SHOW(cudaEventSynchronize(a));
        SHOW(cudaEventElapsedTime(&t, a, nullptr));
        SHOW(cudaEventElapsedTime(&t, nullptr, a));
        SHOW(cudaEventElapsedTime(&t, nullptr, nullptr));
        SHOW(cudaEventElapsedTime(nullptr, nullptr, nullptr));
        SHOW(cudaEventQuery(nullptr));
        SHOW(cudaEventSynchronize(nullptr));
        SHOW(cudaEventRecord(nullptr, 0));
        SHOW(cudaEventDestroy(nullptr));
        SHOW(cudaGetLastError());
    } else if (!strcmp(which, "streams")) {
        spin<<<1, 32, 0, s>>>(20 * ms, d);
        SHOW(cudaStreamQuery(s));
        SHOW(cudaStreamQuery(cudaStreamLegacy));
        SHOW(cudaStreamQuery(cudaStreamPerThread));
        SHOW(cudaStreamQuery(0));
        SHOW(cudaStreamSynchronize(s));
        SHOW(cudaStreamQuery(s));
        cudaStream_t blocking;
        cudaStreamCreate(&blocking);
        spin<<<1, 32, 0, blocking>>>(20 * ms, d);
        SHOW(cudaStreamQuery(cudaStreamLegacy));
        SHOW(cudaStreamQuery(cudaStreamPerThread));
        SHOW(cudaStreamSynchronize(blocking));
        SHOW(cudaStreamDestroy(s2));
        SHOW(cudaStreamQuery(s2));
        SHOW(cudaGetLastError());
    } else if (!strcmp(which, "capture")) {
        cudaStream_t c;
        cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking);
        SHOW(cudaStreamBeginCapture(c, cudaStreamCaptureModeRelaxed));
        SHOW(cudaEventRecord(a, c));
        spin<<<1, 32, 0, c>>>(ms, d);
        SHOW(cudaEventRecord(b, c));
        SHOW(cudaStreamQuery(c));
        SHOW(cudaEventQuery(a));
        SHOW(cudaEventElapsedTime(&t, a, b));
        cudaGraph_t g = nullptr;
        SHOW(cudaStreamEndCapture(c, &g));
        SHOW(cudaEventQuery(a));
        SHOW(cudaEventElapsedTime(&t, a, b));
        SHOW(cudaEventSynchronize(b));
        SHOW(cudaGetLastError());
    } else if (!strcmp(which, "reset")) {
        SHOW(cudaEventRecord(a, 0));
        SHOW(cudaEventRecord(b, 0));
        SHOW(cudaEventSynchronize(b));
        SHOW(cudaDeviceReset());
        SHOW(cudaEventQuery(a));
        SHOW(cudaEventElapsedTime(&t, a, b));
        SHOW(cudaEventSynchronize(a));
        SHOW(cudaEventRecord(a, 0));
        SHOW(cudaGetLastError());
    } else if (!strcmp(which, "device")) {
        SHOW(cudaSetDevice(1));
        SHOW(cudaEventRecord(a, 0));
        SHOW(cudaEventSynchronize(a));
        SHOW(cudaEventElapsedTime(&t, a, a));
        SHOW(cudaGetLastError());
    } else {
        printf("no case %s\n", which);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "timing")) return timing();
    if (argc > 1 && !strcmp(argv[1], "latency")) return latency();
    if (argc > 2 && !strcmp(argv[1], "misuse")) return misuse(argv[2]);
    fprintf(stderr, "usage: %s timing | misuse CASE\n", argv[0]);
    return 2;
}
