"""The device model: compute-capability profiles, the occupancy calculator, a timing model and a
stream/engine timeline for the emulated device.

``set_device("A100")`` chooses the profile whose limits the emulator enforces and whose size the
occupancy calculator and the timing model use; ``current()`` returns it (an A100, compute
capability 8.0, until set, matching NVRTC's default ``compute_80``).
"""
from __future__ import annotations

from . import profiles
from .profiles import Profile

_CURRENT = [profiles.get("A100")]


def set_device(name) -> Profile:
    """Select the device profile by name ("A100", "sm_75", ...); returns it."""
    _CURRENT[0] = profiles.get(name)
    return _CURRENT[0]


def current() -> Profile:
    """The selected device profile."""
    return _CURRENT[0]


__all__ = ["Profile", "current", "profiles", "set_device"]
