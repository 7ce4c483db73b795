"""CPU seconds of a process group, read from /proc (Linux): a server's share of a measured run."""

from __future__ import annotations

import os
from pathlib import Path


def group_cpu(pgid: int) -> float:
    """CPU seconds the processes of group ``pgid`` (and their reaped children) have used so far."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended while we looked
        if int(fields[2]) == pgid:  # pgrp; then utime, stime, cutime, cstime
            ticks += sum(int(x) for x in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")
