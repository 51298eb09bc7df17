"""What this machine can give a run: the memory available (used to refuse, in one line, arrays that
cannot fit, before numpy fails with a bare MemoryError)."""

from __future__ import annotations

import os


def available_memory() -> int | None:
    """Bytes this machine can still give (``MemAvailable`` of ``/proc/meminfo``, else the physical
    memory), or None when unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None
