"""Benchmark: how long a ``goldloop`` command takes to start, as a shell starts it.

Times, in one run and alternately, each as a fresh process (the ``goldloop`` console script next
to this interpreter):

- ``python -c pass``: the interpreter's own start, the baseline;
- a two-option typer command's ``--help``: the CLI framework's own floor (typer builds each
  option with pydantic and renders the help with rich), for scale;
- ``goldloop --version`` and ``goldloop status --help``: target ≤ 0.3 s wall on a quiet machine,
  reported as a ratio to the baseline too;
- every command's and sub-command's ``--help``: target each < 0.5 s.

Each figure is the median of ``--repeat`` runs (wall seconds; the CPU seconds of the same runs
beside them, which a busy machine inflates less).

Run: ``.venv/bin/python benchmarks/startup.py [--repeat R]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import typer

from goldloop.cli.commands import COMMANDS, load

GOLDLOOP = str(Path(sys.executable).with_name("goldloop"))
FRAMEWORK = """
import typer
app = typer.Typer()
@app.command()
def status(project: str = typer.Option(..., help="A."), out: str = typer.Option("", help="B.")):
    \"\"\"One command.\"\"\"
app()
"""
TARGET_LIGHT_S = 0.3
TARGET_HELP_S = 0.5


def run_once(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh process running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def medians(argvs: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Each argv's median wall and CPU seconds, the argvs taken in turn ``repeat`` times."""
    walls: dict[str, list[float]] = {name: [] for name in argvs}
    cpus: dict[str, list[float]] = {name: [] for name in argvs}
    for _ in range(repeat):
        for name, argv in argvs.items():
            wall, cpu = run_once(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in argvs}


def help_commands() -> list[list[str]]:
    """Every command's argv for its ``--help``: the table's, and each group's sub-commands."""
    argvs = [["--help"]]
    for entry in COMMANDS:
        argvs.append([entry.name, "--help"])
        command = load(entry)
        if isinstance(command, typer.core.TyperGroup):
            for sub in command.list_commands(typer.Context(command)):
                argvs.append([entry.name, sub, "--help"])
    return argvs


def bytecode() -> str:
    """Whether the modules a start imports load from compiled bytecode: where
    PYTHONDONTWRITEBYTECODE is set and the install compiled none, every start compiles them from
    source (about 3x the work of ``status --help``), so a figure says which it measured."""
    import goldloop.cli.common

    compiled = all(
        Path(importlib.util.cache_from_source(module.__file__)).is_file()
        for module in (typer, goldloop.cli.common)
        if module.__file__
    )
    writes = "not written by Python" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "written"
    return f"bytecode: {'compiled' if compiled else 'NOT compiled'} ({writes} at run time)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per command (median)")
    args = parser.parse_args()

    light = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "typer command --help": [sys.executable, "-c", FRAMEWORK, "--help"],
        "goldloop --version": [GOLDLOOP, "--version"],
        "goldloop status --help": [GOLDLOOP, "status", "--help"],
    }
    print(bytecode())
    figures = medians(light, args.repeat)
    base_wall, base_cpu = figures["python -c pass"]
    print(f"{'command':<28} {'wall s':>7} {'ratio':>6} {'cpu s':>7} {'ratio':>6}")
    for name, (wall, cpu) in figures.items():
        print(f"{name:<28} {wall:7.3f} {wall / base_wall:5.1f}x {cpu:7.3f} {cpu / base_cpu:5.1f}x")
    slowest_light = max(figures["goldloop --version"][0], figures["goldloop status --help"][0])
    verdict = "met" if slowest_light <= TARGET_LIGHT_S else "not met"
    print(f"target --version and status --help <= {TARGET_LIGHT_S} s wall: {verdict}")

    helps = {" ".join(argv): [GOLDLOOP, *argv] for argv in help_commands()}
    help_figures = medians(helps, max(1, args.repeat // 2))
    print(f"\n{'goldloop ... --help':<36} {'wall s':>7} {'cpu s':>7}")
    for name, (wall, cpu) in sorted(help_figures.items(), key=lambda item: -item[1][0]):
        print(f"{name:<36} {wall:7.3f} {cpu:7.3f}")
    slowest = max(help_figures.items(), key=lambda item: item[1][0])
    verdict = "met" if slowest[1][0] < TARGET_HELP_S else "not met"
    print(
        f"target every --help < {TARGET_HELP_S} s: {verdict} "
        f"(slowest: {slowest[0]}, {slowest[1][0]:.3f} s; {len(helps)} commands)"
    )


if __name__ == "__main__":
    main()
