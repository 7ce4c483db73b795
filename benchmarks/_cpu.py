"""CPU seconds from the kernel (Linux): ours with our finished children, and a server's group."""

from __future__ import annotations

import os
import resource
from pathlib import Path


def own_cpu() -> float:
    """CPU seconds of this process and of its children that have ended and been reaped (the
    parse's worker processes)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


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
