# 10-occupancy: staged (8 KiB of shared memory per block) on the A100. Shared memory allows
# 167936 // (8192 + 1024) = 18 blocks per SM; 64 warps need 4 warps per block: 128 threads.
block_size = 128
