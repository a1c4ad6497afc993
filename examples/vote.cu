// Warp vote intrinsics: __all_sync, __any_sync and __ballot_sync ask every lane of a warp a
// question at once (NVIDIA's simpleVoteIntrinsics).
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            printf("CUDA error %s at line %d: %s\n", cudaGetErrorName(err_), __LINE__,  \
                   cudaGetErrorString(err_));                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

__global__ void vote(const int *in, unsigned int *ballots, int *all, int *any)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int warp = i / 32;
    bool p = in[i] > 0;
    unsigned int b = __ballot_sync(0xffffffff, p);
    int a = __all_sync(0xffffffff, p), y = __any_sync(0xffffffff, p);
    if (threadIdx.x % 32 == 0) {
        ballots[warp] = b;
        all[warp] = a;
        any[warp] = y;
    }
}

int main()
{
    const int warps = 4, n = warps * 32;
    int h[n];
    for (int i = 0; i < n; ++i) {
        int w = i / 32, lane = i % 32;
        h[i] = w == 0 ? 1 : w == 1 ? 0 : w == 2 ? (lane % 3 == 0) : (lane == 31);
    }
    int *d, *dall, *dany;
    unsigned int *db;
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMalloc(&db, warps * sizeof(unsigned int)));
    CHECK(cudaMalloc(&dall, warps * sizeof(int)));
    CHECK(cudaMalloc(&dany, warps * sizeof(int)));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    vote<<<2, 64>>>(d, db, dall, dany);
    CHECK(cudaGetLastError());
    unsigned int b[warps];
    int all[warps], any[warps];
    CHECK(cudaMemcpy(b, db, sizeof b, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(all, dall, sizeof all, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(any, dany, sizeof any, cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int w = 0; w < warps; ++w) {
        unsigned int ref = 0;
        for (int l = 0; l < 32; ++l) ref |= (unsigned)(h[w * 32 + l] > 0) << l;
        ok &= b[w] == ref && all[w] == (ref == 0xffffffffu) && any[w] == (ref != 0);
        printf("warp %d: ballot 0x%08x all %d any %d\n", w, b[w], all[w], any[w]);
    }
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
