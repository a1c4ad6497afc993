"""Observers and reports over emulator events: bank conflicts, coalescing, divergence, in ncu's words."""
from .divergence import BranchOutcome, active_lane_histogram, branch_outcome
from .global_sectors import GlobalSectors, SectorMap, global_sectors, local_sectors, sector_map
from .metrics import MetricsObserver, empty_metrics
from .shared_banks import BankMap, SharedWavefronts, bank_map, shared_wavefronts

__all__ = ["BankMap", "BranchOutcome", "GlobalSectors", "MetricsObserver", "SectorMap", "SharedWavefronts",
           "active_lane_histogram", "bank_map", "branch_outcome", "empty_metrics", "global_sectors",
           "local_sectors", "sector_map", "shared_wavefronts"]
