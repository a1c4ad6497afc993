# 09-overlap: cut the work into chunks; each chunk's copy in, kernel and copy out go to its own
# stream, from pinned memory, so copies and kernels of different chunks overlap.
from cudalab.device.timeline import Timeline
from cudalab.exercise import OVERLAP_BYTES, OVERLAP_KERNEL_US

chunks = 8
tl = Timeline("A100")
for c in range(chunks):
    stream = 1 + c
    tl.copy(OVERLAP_BYTES // chunks, "H2D", stream=stream, pinned=True)
    tl.kernel(f"chunk {c}", OVERLAP_KERNEL_US / chunks, stream=stream)
    tl.copy(OVERLAP_BYTES // chunks, "D2H", stream=stream, pinned=True)
tl.synchronize()
