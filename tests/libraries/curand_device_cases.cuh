// cuRAND's device API after curand_init, for tests/test_curand_device.py: each thread initialises an XORWOW,
// a Philox4_32_10 and an MRG32k3a generator with its (seed, subsequence, offset), and writes RECORD words: the
// states' words, numbers drawn from them, and XORWOW's state and next number after a skipahead and a
// skipahead_sequence. curand_device_probe.cu runs it on a GPU; the test runs it on the emulator.
#include <curand_kernel.h>

#define RECORD 48

__device__ void put_bits(unsigned *out, int &at, double x) {
    unsigned long long b = __double_as_longlong(x);
    out[at++] = (unsigned)b;
    out[at++] = (unsigned)(b >> 32);
}

extern "C" __global__ void record(const unsigned long long *cases, unsigned *records, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned long long seed = cases[3 * t], subsequence = cases[3 * t + 1], offset = cases[3 * t + 2];
    unsigned *out = records + RECORD * t;
    int at = 0;

    curandState x;                                   // XORWOW: 24 words
    curand_init(seed, subsequence, offset, &x);
    out[at++] = x.d;
    for (int i = 0; i < 5; i++) out[at++] = x.v[i];
    for (int i = 0; i < 4; i++) out[at++] = curand(&x);
    out[at++] = __float_as_uint(curand_uniform(&x));
    out[at++] = __float_as_uint(curand_normal(&x));
    out[at++] = __float_as_uint(curand_normal(&x));
    put_bits(out, at, curand_uniform_double(&x));
    put_bits(out, at, curand_normal_double(&x));
    skipahead(offset + 17, &x);
    skipahead_sequence(subsequence % 1000 + 1, &x);
    out[at++] = x.d;
    for (int i = 0; i < 5; i++) out[at++] = x.v[i];
    out[at++] = curand(&x);

    curandStatePhilox4_32_10_t p;                    // Philox: 15 words
    curand_init(seed, subsequence, offset, &p);
    out[at++] = p.ctr.x; out[at++] = p.ctr.y; out[at++] = p.ctr.z; out[at++] = p.ctr.w;
    out[at++] = p.output.x; out[at++] = p.output.y; out[at++] = p.output.z; out[at++] = p.output.w;
    out[at++] = p.key.x; out[at++] = p.key.y; out[at++] = p.STATE;
    for (int i = 0; i < 4; i++) out[at++] = curand(&p);

    curandStateMRG32k3a_t m;                         // MRG32k3a: 8 words
    curand_init(seed, subsequence, offset, &m);
    for (int i = 0; i < 3; i++) out[at++] = m.s1[i];
    for (int i = 0; i < 3; i++) out[at++] = m.s2[i];
    for (int i = 0; i < 2; i++) out[at++] = curand(&m);
    out[at++] = 0xC0DA1AB;                           // the end marker (47 words above)
}
