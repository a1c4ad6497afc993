#pragma once
/* cudalab: NVRTC provides the CUDA math functions (sqrtf, expf, ...) itself. */
