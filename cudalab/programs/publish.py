"""One way to put a folder into cudalab's cache when several processes may build it at once."""
from __future__ import annotations

import shutil
from pathlib import Path


def publish(tmp: Path, final: Path) -> None:
    """Move the folder ``tmp``, built whole, to ``final`` in one rename, so a process reading the cache
    sees all of it or nothing. Where another process published ``final`` first, ours is dropped: the
    two were built from the same inputs."""
    try:
        tmp.rename(final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
