"""Occupancy for thread block clusters: ``cudaOccupancyMaxActiveClusters`` and
``cudaOccupancyMaxPotentialClusterSize``.

A cluster's blocks run at the same time on the SMs of one GPC (graphics processing cluster), so how
many clusters fit on the GPU depends on how many blocks one SM holds (the ordinary occupancy
calculator), on the cluster's size, and on how the GPU's SMs are split into GPCs, which NVIDIA does
not publish. For the H100 SXM the driver's answers were measured (tools/cluster_cdp_gpu.py,
docs/cluster_cdp_h100.json) for clusters of 1, 2, 3, 4, 6, 8 and 16 blocks at 1, 2, 4 and 8 blocks
per SM; that table is the model (the driver counts at most 8 blocks per SM toward clusters: 16 or
32 give what 8 gives). Elsewhere an idealised GPU is assumed: every block slot of every SM usable,
``SMs * min(blocks per SM, 8) // cluster size``, an upper bound, and the result says so.

    max_active_clusters(kernel, 128, (2, 1, 1))      # on the H100 profile: 528
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import CudaError
from . import current
from .occupancy import occupancy
from .profiles import get

PORTABLE = 8
NON_PORTABLE = 16           # H100, with cudaFuncAttributeNonPortableClusterSizeAllowed
BLOCKS_PER_SM_CAP = 8

# cuOccupancyMaxActiveClusters on an H100 SXM5 (132 SMs, driver 580): (blocks per SM, blocks per cluster)
H100_MEASURED = {
    (1, 1): 132, (1, 2): 66, (1, 3): 39, (1, 4): 30, (1, 6): 17, (1, 8): 15, (1, 16): 7,
    (2, 1): 264, (2, 2): 132, (2, 3): 79, (2, 4): 62, (2, 6): 39, (2, 8): 30, (2, 16): 14,
    (4, 1): 528, (4, 2): 264, (4, 3): 163, (4, 4): 124, (4, 6): 79, (4, 8): 62, (4, 16): 28,
    (8, 1): 1056, (8, 2): 528, (8, 3): 327, (8, 4): 248, (8, 6): 163, (8, 8): 124, (8, 16): 58,
}


@dataclass
class ClusterOccupancy:
    device: str
    block_size: int
    cluster: tuple
    blocks_per_sm: int
    max_active_clusters: int
    measured: bool               # from the H100 table (else the idealised upper bound)

    @property
    def cluster_size(self) -> int:
        return self.cluster[0] * self.cluster[1] * self.cluster[2]

    def summary(self) -> str:
        how = ("as the H100's driver answers" if self.measured else
               "an upper bound: how SMs split into GPCs is not modelled for this device")
        return (f"{self.max_active_clusters} clusters of {self.cluster_size} blocks ({self.cluster}) of "
                f"{self.block_size} threads can be resident on {self.device} at once ({self.blocks_per_sm} blocks "
                f"per SM; {how}).")

    def _repr_html_(self):
        import html
        return f"<p>{html.escape(self.summary())}</p>"


def _dims(cluster):
    t = (cluster,) if isinstance(cluster, int) else tuple(cluster)
    if not 1 <= len(t) <= 3 or any(int(x) < 1 for x in t):
        raise CudaError(f"a cluster size is 1 to 3 positive numbers, like (2, 1, 1); got {cluster!r}.",
                        "cudaErrorInvalidClusterSize")
    return tuple(int(x) for x in t) + (1,) * (3 - len(t))


def max_active_clusters(kernel, block_size, cluster, dynamic_smem: int = 0, device=None,
                        non_portable: bool = False, max_dynamic_smem=None) -> ClusterOccupancy:
    """How many clusters of ``cluster`` blocks can run at once (cudaOccupancyMaxActiveClusters).
    ``max_dynamic_smem``: the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize opt-in."""
    p = get(device) if device is not None else current()
    if p.cc < (9, 0):
        raise CudaError(f"{p.gpu or p.name} (compute capability {p.cc[0]}.{p.cc[1]}) has no thread block clusters; "
                        "they need 9.0 (an H100).", "cudaErrorNotSupported")
    dims = _dims(cluster)
    size = dims[0] * dims[1] * dims[2]
    limit = NON_PORTABLE if non_portable else PORTABLE
    if size > limit:
        raise CudaError(f"a cluster may have at most {limit} blocks"
                        + ("" if non_portable else " (16 with the non-portable opt-in)") + f"; {dims} has {size}.",
                        "cudaErrorInvalidClusterSize")
    occ = occupancy(kernel, block_size, dynamic_smem, device=p, max_dynamic_smem=max_dynamic_smem)
    b = min(occ.active_blocks, BLOCKS_PER_SM_CAP)
    measured = p.gpu is not None and p.name == "H100" and (b, size) in H100_MEASURED
    if measured:
        n = H100_MEASURED[(b, size)]
    else:
        n = (p.sms or 0) * b // size
    return ClusterOccupancy(p.gpu or p.name, occ.block_size, dims, occ.active_blocks, n, measured)


def max_potential_cluster_size(kernel=None, block_size: int = 0, device=None, non_portable: bool = False) -> int:
    """cudaOccupancyMaxPotentialClusterSize: 8 blocks, 16 with the non-portable opt-in (what the H100's
    driver answered for every block size and shared-memory size tried)."""
    p = get(device) if device is not None else current()
    if p.cc < (9, 0):
        return 0
    return NON_PORTABLE if non_portable else PORTABLE
