"""compute-sanitizer's checks on the emulator: racecheck and initcheck observers, ``cudalab.check``."""
from .check import CHECKS, active, check, observers_for
from .initcheck import InitcheckObserver
from .racecheck import RacecheckObserver

__all__ = ["CHECKS", "InitcheckObserver", "RacecheckObserver", "active", "check", "observers_for"]
