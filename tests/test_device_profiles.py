"""Device profiles: the Programming Guide's per-compute-capability limits, named GPUs, features."""
import json
import pathlib

import pytest

from cudalab import device
from cudalab.device import profiles
from cudalab.runtime.launch import Limits

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("arch, blocks, warps, shared_kb, optin_kb", [
    ("sm_35", 16, 64, 48, 48), ("sm_52", 32, 64, 96, 48), ("sm_70", 32, 64, 96, 96), ("sm_75", 16, 32, 64, 64),
    ("sm_80", 32, 64, 164, 163), ("sm_86", 16, 48, 100, 99), ("sm_87", 16, 48, 164, 163), ("sm_89", 24, 48, 100, 99),
    ("sm_90", 32, 64, 228, 227),
])
def test_per_sm_limits_follow_the_guide(arch, blocks, warps, shared_kb, optin_kb):
    p = profiles.get(arch)
    assert (p.max_blocks_per_sm, p.max_warps_per_sm) == (blocks, warps)
    assert (p.shared_per_sm, p.shared_per_block_optin) == (shared_kb * 1024, optin_kb * 1024)
    assert p.max_threads_per_sm == warps * 32 and p.max_registers_per_thread == 255


def test_every_compute_capability_of_the_table_has_a_profile():
    ccs = ["3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0"]
    assert [profiles.get(c).arch for c in ccs] == [f"sm_{c.replace('.', '')}" for c in ccs]


def test_allocation_rules_change_at_ampere():
    assert profiles.get("sm_75").shared_allocation_unit == 256 and profiles.get("sm_75").shared_reserved_per_block == 0
    assert profiles.get("sm_80").shared_allocation_unit == 128 and profiles.get("sm_80").shared_reserved_per_block == 1024
    assert profiles.get("sm_60").sub_partitions == 2 and profiles.get("sm_61").sub_partitions == 4


def test_named_gpus_and_aliases():
    a100 = profiles.get("A100")
    assert (a100.arch, a100.sms, a100.memory_bandwidth_gbs) == ("sm_80", 108, 1555.0)
    assert profiles.get("rtx4090").arch == "sm_89" and profiles.get("RTX 3090").sms == 82
    assert profiles.get("compute_90") is profiles.get("sm_90") is profiles.get("9.0")
    assert {"T4", "V100", "A100", "RTX 3090", "RTX 4090", "L4", "H100", "sm_80"} <= set(profiles.list())
    with pytest.raises(KeyError, match="Known GPUs: T4"):
        profiles.get("GTX 9999")


def test_h100_profile_equals_what_the_h100_driver_reported():
    """docs/occupancy_h100.json holds the attributes tools/occupancy_gpu.py read from a real H100."""
    dev = json.loads((DOCS / "occupancy_h100.json").read_text())["device"]
    p = profiles.get("H100")
    assert (p.sms, p.clock_mhz * 1000, p.l2_bytes, p.copy_engines) == (dev["sms"], dev["clock_khz"], dev["l2_bytes"],
                                                                       dev["async_engines"])
    assert (p.shared_per_sm, p.shared_per_block, p.shared_per_block_optin, p.shared_reserved_per_block) == (
        dev["shared_per_sm"], dev["shared_per_block"], dev["shared_per_block_optin"], dev["shared_reserved_per_block"])
    assert (p.registers_per_sm, p.registers_per_block, p.max_blocks_per_sm, p.max_threads_per_sm) == (
        dev["registers_per_sm"], dev["registers_per_block"], dev["max_blocks_per_sm"], dev["max_threads_per_sm"])
    # DRAM bandwidth: memory clock x 2 (double data rate) x bus width
    assert abs(dev["memory_clock_khz"] * 1e3 * 2 * dev["memory_bus_bits"] / 8 / 1e9 - p.memory_bandwidth_gbs) < 5
    assert (p.memory_clock_khz, p.memory_bus_bits) == (dev["memory_clock_khz"], dev["memory_bus_bits"])


def test_library_products_run_at_their_precisions_rate():
    """A GEMM's rate is a multiple of the FP32 peak by the precision it computes in; the A100's data
    sheet gives 312 TFLOPS FP16 tensor against 19.5 FP32, and a DGEMM on its tensor cores runs at the
    FP32 rate, although its CUDA cores do FP64 at half the FP32 rate (the attribute a program reads)."""
    a100 = profiles.get("A100")
    assert a100.math_rate("half") == 16 and a100.math_rate("single") == 1
    assert a100.math_rate("double") == 1 and a100.fp64_ratio == 2
    assert profiles.get("T4").math_rate("double") == 1 / 32
    # a bare compute capability is sized like SIZED_LIKE, its rates too
    assert profiles.get("sm_86").math_rate("half") == profiles.get(profiles.SIZED_LIKE).math_rate("half")


@pytest.mark.parametrize("arch, has_redux, has_bf16, has_clusters", [
    ("sm_75", False, False, False), ("sm_80", True, True, False), ("sm_90", True, True, True)])
def test_features(arch, has_redux, has_bf16, has_clusters):
    p = profiles.get(arch)
    assert p.has("redux.sync") is has_redux and p.has("redux_sync") is has_redux
    assert p.has("bf16") is has_bf16 and p.has("clusters") is has_clusters


def test_limits_are_the_runtimes_dataclass():
    assert profiles.get("sm_80").limits() == Limits(max_threads_per_block=1024, max_block=(1024, 1024, 64),
                                                    max_grid=(2**31 - 1, 65535, 65535), shared_per_block=48 * 1024,
                                                    shared_per_block_optin=163 * 1024)
    t4 = profiles.get("T4").limits()
    assert isinstance(t4, Limits) and t4.shared_per_block_optin == 64 * 1024


def test_set_device_selects_the_profile():
    before = device.current()
    try:
        assert device.set_device("T4").name == "T4" and device.current().arch == "sm_75"
    finally:
        device.set_device(before)
    assert device.current() is before


def test_describe_rows_for_a_student():
    rows = dict(profiles.get("H100").describe())
    assert rows["SMs"] == 132 and rows["compute capability"] == "9.0 (sm_90)"
    assert "<table" in profiles.get("sm_80")._repr_html_()
