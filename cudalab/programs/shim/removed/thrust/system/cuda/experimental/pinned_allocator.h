/* cudalab's stand-in for thrust/system/cuda/experimental/pinned_allocator.h, a header of Thrust up to CUDA 12
 * that CUDA 13's (CCCL 3) no longer has: its pinned_allocator<T> (page-locked host memory for a host_vector)
 * is Thrust's universal_host_pinned_allocator<T> now, the same cudaMallocHost memory.
 * (given only to a unit that includes it; see programs/removed_headers.py) */
#pragma once
#include <thrust/system/cuda/memory.h>

THRUST_NAMESPACE_BEGIN
namespace system::cuda::experimental
{
template <typename T>
using pinned_allocator = thrust::cuda_cub::universal_host_pinned_allocator<T>;
} // namespace system::cuda::experimental
namespace cuda::experimental
{
using thrust::system::cuda::experimental::pinned_allocator;
} // namespace cuda::experimental
THRUST_NAMESPACE_END
