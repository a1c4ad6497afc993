// How a cudaMemsetAsync shares the device with a kernel of another stream (clock round 19).
//
// The timeline (cudalab/device/timeline.py) models a memset as a kernel of MEMSET_BLOCK_BYTES blocks, 8 an
// SM, writing at half the DRAM bandwidth. This probe asks a GPU: a kernel of `fill` 256-thread blocks per SM
// spins 200 us on clock64() on one stream; 20 us after its launch a memset of `bytes` goes to another
// stream. Both streams wait for an event recorded before the spin. Printed, medians of 5: when the memset
// ended and when the spin ended, in us after that event. fill=0 is the memset alone; fill=8 is every
// thread slot of an SM (2048 threads) taken: a memset that needs the SMs waits for the spin.
//
//   nvcc -O2 -arch=sm_90 tools/memset_gpu_probe.cu -o memset_probe && ./memset_probe
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}

static void host_wait_us(double us) {
    auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) { }
}

int main() {
    int khz, sms;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    printf("# %s, %d SMs, clock %d kHz\n", prop.name, sms, khz);
    cudaStream_t a, b;
    cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
    size_t most = 256u << 20;
    char *buf;
    cudaMalloc(&buf, most);
    cudaEvent_t start, memset_done, spin_done;
    cudaEventCreate(&start), cudaEventCreate(&memset_done), cudaEventCreate(&spin_done);
    long long cycles = 200LL * khz / 1000;                  // 200 us
    spin<<<sms, 256, 0, a>>>(cycles);                       // warm up
    cudaMemsetAsync(buf, 0, most, b);
    cudaDeviceSynchronize();
    const int fills[] = {0, 4, 7, 8};
    const size_t sizes[] = {1u << 10, 1u << 16, 1u << 20, 1u << 24, 1u << 28};
    for (int fill : fills) {
        for (size_t bytes : sizes) {
            std::vector<float> m, s;
            for (int rep = 0; rep < 5; rep++) {
                cudaEventRecord(start, a);
                cudaStreamWaitEvent(b, start, 0);
                if (fill) spin<<<fill * sms, 256, 0, a>>>(cycles);
                host_wait_us(20);
                cudaMemsetAsync(buf, rep, bytes, b);
                cudaEventRecord(memset_done, b);
                cudaEventRecord(spin_done, a);
                cudaDeviceSynchronize();
                float ms1, ms2;
                cudaEventElapsedTime(&ms1, start, memset_done);
                cudaEventElapsedTime(&ms2, start, spin_done);
                m.push_back(ms1 * 1000), s.push_back(ms2 * 1000);
            }
            std::sort(m.begin(), m.end()), std::sort(s.begin(), s.end());
            printf("memset fill=%d bytes=%zu memset_end_us=%.1f spin_end_us=%.1f\n", fill, bytes, m[2], fill ? s[2] : 0.0f);
        }
    }
    printf("# %s\n", cudaGetErrorString(cudaGetLastError()));
}
