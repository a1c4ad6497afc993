// Records curand_device_cases.cuh on a GPU (NVIDIA's curand_kernel.h, unchanged):
//   nvcc -arch=native -o probe curand_device_probe.cu && ./probe > curand_device_GPU.json
// The cases: seeds, subsequences and offsets of 0, small, and large (up to 2^64 - 1), then 256 threads of
// one seed on subsequences 0..255 (the usual curand_init(seed, id, 0, &state)).
#include <cstdio>
#include <vector>
#include "curand_device_cases.cuh"

int main() {
    std::vector<unsigned long long> c = {
        0, 0, 0,   1234, 0, 0,   1234, 1, 0,   1234, 0, 1,   1234, 4095, 0,   1234, 1ull << 20, 0,
        1234, (1ull << 40) + 12345, 0,   ~0ull, ~0ull, ~0ull,   987654321987ull, 123456789, 987654321,
        42, 0, (1ull << 63) + 5,   7, 3, 1000000,   0xDEADBEEFCAFEull, 1ull << 62, 1ull << 33};
    for (unsigned long long i = 0; i < 256; i++) { c.push_back(2026); c.push_back(i); c.push_back(0); }
    int n = (int)c.size() / 3;
    unsigned long long *dc; unsigned *dr;
    cudaMalloc(&dc, c.size() * 8);
    cudaMalloc(&dr, (size_t)n * RECORD * 4);
    cudaMemcpy(dc, c.data(), c.size() * 8, cudaMemcpyHostToDevice);
    record<<<(n + 63) / 64, 64>>>(dc, dr, n);
    std::vector<unsigned> r((size_t)n * RECORD);
    cudaError_t e = cudaMemcpy(r.data(), dr, r.size() * 4, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(e)); return 1; }
    cudaDeviceProp prop; cudaGetDeviceProperties(&prop, 0);
    printf("{\"gpu\": \"%s\", \"cases\": [", prop.name);
    for (int t = 0; t < n; t++) printf("%s[%llu, %llu, %llu]", t ? ", " : "", c[3 * t], c[3 * t + 1], c[3 * t + 2]);
    printf("],\n \"records\": [");
    for (int t = 0; t < n; t++) {
        printf("%s\n  [", t ? "," : "");
        for (int i = 0; i < RECORD; i++) printf("%s%u", i ? ", " : "", r[(size_t)t * RECORD + i]);
        printf("]");
    }
    printf("]}\n");
    return 0;
}
