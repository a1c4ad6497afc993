// Vector addition, the first kernel of the CUDA C++ Programming Guide: C = A + B.
// Run it with:  cudalab run examples/vector_add.cu
//
// The `// cudalab:` lines tell `cudalab run` how to launch the kernel (see `cudalab run --help`).
// cudalab: n = int32 65536
// cudalab: A = random float32[n]
// cudalab: B = random float32[n]
// cudalab: C = zeros float32[n]
// cudalab: launch vecAdd<<<256, 256>>>(A, B, C, n)
// cudalab: check np.array_equal(C, A + B)

__global__ void vecAdd(const float* A, const float* B, float* C, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;   // one thread per element
    if (i < n)                                       // the last block may hang over the end
        C[i] = A[i] + B[i];
}
