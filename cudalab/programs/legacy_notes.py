"""What the student is told when cudalab built a file over one of its legacy headers (shim/legacy_*.h).

cudalab builds old course and book code that today's nvcc refuses (texture references, ``__any``,
``mul24``, cuFFT's dropped status codes) by compiling the unit again with a header that gives the old
names over today's API. The program then runs here, and the student would learn only on a GPU's machine,
from nvcc 12 or 13, that the file does not build there: a learn-gpgpu k-means with
``texture<float, 1> tex`` ran here and stopped an H200's nvcc 13 at four errors. Each note names what
the file uses, who refuses it, and what to write instead.
"""
from __future__ import annotations

# kind: (what the file uses, why a current nvcc refuses it, what to write instead)
LEGACY = {
    "textures": ("texture references (a file-scope texture<T, dim> bound with cudaBindTexture)",
                 "CUDA 12 removed them", "a texture object (cudaCreateTextureObject, read with tex1Dfetch<T>(obj, i) "
                 "or tex2D<T>(obj, x, y))"),
    "votes": ("__any, __all or __ballot without _sync (CUDA 8 and older)",
              "nvcc refuses them for compute capability 7.0 and up", "__any_sync(0xffffffff, p), __all_sync or "
              "__ballot_sync with the mask of the threads that vote"),
    "device functions": ("device functions by their CUDA 11 names (mul24, float_as_int, saturate, ...)",
                         "CUDA 12 dropped those names", "the intrinsics they stood for (__mul24, __float_as_int, "
                         "__saturatef, ...)"),
    "cufft codes": ("cuFFT status codes CUDA 13 dropped (CUFFT_INCOMPLETE_PARAMETER_LIST, CUFFT_PARSE_ERROR, "
                    "CUFFT_LICENSE_ERROR)", "CUDA 13's cufft.h lacks them", "a helper_cuda.h from CUDA 13's samples, "
                    "or a switch without those cases"),
}


def note(source: str, kind: str) -> str:
    """The note for ``source``, built over the legacy header of ``kind``."""
    what, why, instead = LEGACY[kind]
    return (f"cudalab: note: {source} uses {what}; {why}, so nvcc stops at them on a GPU's machine too. cudalab "
            f"built them over today's API; use {instead} to build the file with a current nvcc.\n")
