// Cooperative groups: the block as a thread_block, its warps as thread_block_tile<32>, and
// tiles of 4 threads, each with its own sync() and shuffles (NVIDIA's simpleCooperativeGroups).
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>

namespace cg = cooperative_groups;

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            printf("CUDA error %s at line %d: %s\n", cudaGetErrorName(err_), __LINE__,  \
                   cudaGetErrorString(err_));                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

template <typename Group>
__device__ int groupSum(Group g, int v)
{
    for (int offset = g.size() / 2; offset > 0; offset /= 2) v += g.shfl_down(v, offset);
    return v;                      // valid in the group's thread_rank() 0
}

__global__ void sums(const int *in, int *blockTotals, int *tile4Totals)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    cg::thread_block_tile<4> quad = cg::tiled_partition<4>(block);
    __shared__ int warpTotals[32];

    int v = in[block.group_index().x * block.size() + block.thread_rank()];
    int q = groupSum(quad, v);
    if (quad.thread_rank() == 0) tile4Totals[(block.group_index().x * block.size() + block.thread_rank()) / 4] = q;
    int w = groupSum(warp, v);
    if (warp.thread_rank() == 0) warpTotals[warp.meta_group_rank()] = w;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        int t = warp.thread_rank() < warp.meta_group_size() ? warpTotals[warp.thread_rank()] : 0;
        t = groupSum(warp, t);
        if (block.thread_rank() == 0) blockTotals[block.group_index().x] = t;
    }
}

int main()
{
    const int blocks = 4, threads = 128, n = blocks * threads;
    int h[n], bt[blocks], qt[n / 4];
    for (int i = 0; i < n; ++i) h[i] = i % 9 + 1;
    int *d, *dbt, *dqt;
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMalloc(&dbt, sizeof bt));
    CHECK(cudaMalloc(&dqt, sizeof qt));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    sums<<<blocks, threads>>>(d, dbt, dqt);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(bt, dbt, sizeof bt, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(qt, dqt, sizeof qt, cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int b = 0; b < blocks; ++b) {
        int ref = 0;
        for (int i = 0; i < threads; ++i) ref += h[b * threads + i];
        ok &= bt[b] == ref;
        printf("block %d: sum %d (expected %d)\n", b, bt[b], ref);
    }
    for (int k = 0; k < n / 4; ++k) ok &= qt[k] == h[4 * k] + h[4 * k + 1] + h[4 * k + 2] + h[4 * k + 3];
    printf("tiles of 4: first sums %d %d %d\n", qt[0], qt[1], qt[2]);
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
