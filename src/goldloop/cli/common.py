"""What every command shares: the consoles, the shared options (``Annotated`` style), the checks
of outputs before any work, and table helpers."""

from __future__ import annotations

import functools
import inspect
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from goldloop.errors import GoldloopError
from goldloop.files.atomic import output_problem, same_file
from goldloop.kb import KB, equivalences_beside, load_kb
from goldloop.sample.strata import ROLES
from goldloop.settings import BUNDLED_KB, Settings
from goldloop.text.parsing import Parsing

if TYPE_CHECKING:
    # The Label Studio client (and the HTTP stack under it) is imported by the commands that
    # reach Label Studio, when they do: every command's --help starts without it.
    from goldloop.formats.labelstudio.tasks import Campaign
    from goldloop.studio.connection import Studio

# Output to a file or a pipe has no width to fit: rich would otherwise cut table cells to 80
# columns ("0.7…"). An explicit COLUMNS still wins.
UNCUT_WIDTH = 10_000


def settings(ctx: typer.Context) -> Settings:
    """The environment's settings, read once by the root command for the command running."""
    read = ctx.find_root().obj
    assert isinstance(read, Settings)  # the root callback sets it before any command runs
    return read


def parsing(ctx: typer.Context) -> Parsing:
    """How the command parses: its settings' spaCy pipeline and parse cache."""
    return Parsing.from_settings(settings(ctx))


def option_group(
    name: str, build: Callable[..., object], options: Sequence[inspect.Parameter] | None = None
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A decorator: a command's parameter ``name`` becomes ``options`` (default: the parameters
    of ``build``), which typer reads as it reads the command's own, and receives
    ``build(**their values)``."""
    fields = list(
        inspect.signature(build, eval_str=True).parameters.values() if options is None else options
    )
    names = [field.name for field in fields]

    def add(command: Callable[..., None]) -> Callable[..., None]:
        own = list(inspect.signature(command, eval_str=True).parameters.values())
        at = [parameter.name for parameter in own].index(name)

        @functools.wraps(command)
        def run(**given: Any) -> None:
            built = build(**{option: given.pop(option) for option in names})
            command(**given, **{name: built})

        parameters = [*own[:at], *fields, *own[at + 1 :]]
        run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return add


class ReaderGone:
    """Standard output for a reader that may leave before the end (``goldloop score … | head``):
    a write or flush to a closed pipe ends the printing, not the run. What is left to print goes
    to the null device (so Python's own flush at exit fails no more), the run writes its files
    and exits as it would have. Everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._discard()
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._discard()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def _discard(self) -> None:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self.stream.fileno())  # a closed pipe has a descriptor: a real stdout
        finally:
            os.close(null)


# Made at import, fitted when a command starts (:func:`fit_consoles`): the commands' modules
# import these objects by name.
console = Console()
err_console = Console(stderr=True)


def fit_consoles(environ: Mapping[str, str]) -> None:
    """Fit the consoles to where this command prints: uncut into a file or a pipe, unless
    ``COLUMNS`` (rich's own variable, not a goldloop setting) is in ``environ``, the
    environment the entry point runs in."""
    for each in (console, err_console):
        uncut = not each.file.isatty() and "COLUMNS" not in environ
        # None: rich's own width, $COLUMNS or the terminal's, as a console made without one.
        each._width = UNCUT_WIDTH if uncut else None


def choice_option(
    *names: str, choices: Sequence[str], fold_case: bool = False, **attrs: Any
) -> Any:
    """``typer.Option(*names, **attrs)`` taking one of ``choices`` (in any case with
    ``fold_case``), shown as ``<a|b>``: anything else is refused as the command line is read
    (exit 2, naming the option)."""
    folded = {(choice.casefold() if fold_case else choice): choice for choice in choices}

    def pick(value: str) -> str:
        chosen = folded.get(value.casefold() if fold_case else value)
        if chosen is None:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}")
        return chosen

    return typer.Option(*names, parser=pick, metavar=f"<{'|'.join(choices)}>", **attrs)


KbOption = Annotated[
    Path | None,
    typer.Option("--kb", help="Pairs KB CSV (default: the bundled KB).", show_default=False),
]
EquivalencesOption = Annotated[
    Path | None,
    typer.Option(
        "--equivalences",
        help="equivalences.csv for the second folding tier (default: equivalences.csv beside "
        "the KB, when there is one).",
        show_default=False,
    ),
]
UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="Label Studio URL (default: $LABEL_STUDIO_URL, else the embedded server); the API "
        "key comes from $LABEL_STUDIO_API_KEY.",
        show_default=False,
    ),
]
RolesOption = Annotated[
    str,
    typer.Option(
        "--roles",
        help=f"Comma-separated roles ({', '.join(ROLES)}); documents without a role are kept.",
    ),
]
DEFAULT_ROLES = "primary,double,blind"  # blind documents are pre-annotated for NAME


def open_kb(path: Path | None, equivalences: Path | None = None) -> KB:
    return load_kb(path, equivalences)


def parse_roles(value: str, option: str = "--roles") -> list[str]:
    """The roles of a comma-separated option value; an unknown role is refused, naming it."""
    roles = [r.strip() for r in value.split(",") if r.strip()]
    unknown = [r for r in roles if r not in ROLES]
    if unknown or not roles:
        raise GoldloopError(
            f"{option} {value!r}: "
            + (f"unknown role(s) {', '.join(unknown)}" if unknown else "no role given")
            + f" (known: {', '.join(ROLES)})"
        )
    return roles


Inputs = Mapping[str, Path | Sequence[Path] | None]


def check_outputs(
    outputs: Mapping[str, Path | None],
    inputs: Inputs | None = None,
    *,
    folders: Sequence[str] = (),
    receives: Mapping[str, Iterable[str]] | None = None,
) -> None:
    """Before any work: each output (by its option) can be written, is none of the inputs and
    none of the other outputs.

    ``outputs`` and ``inputs`` map an option (as the user typed it) to its path; an input may
    stand for several files (a sample dir's), and an input folder stands for every file in it.
    Options in ``folders`` name output folders; ``receives`` lists, per output folder, the names
    of the files it will receive, each checked as an output of its own.
    """
    given = {option: path for option, path in outputs.items() if path is not None}
    for option, path in given.items():
        problem = output_problem(path, folder=option in folders)
        if problem is not None:
            raise GoldloopError(f"{option} {path}: {problem}")
    written = dict(given)
    for option, names in (receives or {}).items():
        if given.get(option) is None:
            continue
        for name in names:
            target = given[option] / name
            if target.is_dir():
                raise GoldloopError(f"{option} {given[option]}: {name} in it is a folder")
            written[f"{option} (its {name})"] = target
    named = list(written.items())
    for at, (option, path) in enumerate(named):
        for other_option, other in named[at + 1 :]:
            if same_file(path, other):
                raise GoldloopError(
                    f"{option} {path} and {other_option} {other} are the same file: one would "
                    f"overwrite the other; choose another {other_option}"
                )
    for option, path in written.items():
        for input_option, sources in (inputs or {}).items():
            for source in [sources] if isinstance(sources, Path) else sources or ():
                _refuse_input(option, path, input_option, source)


def _refuse_input(option: str, path: Path, input_option: str, source: Path) -> None:
    """Refuse an output that is the input ``source`` or a file inside the input folder ``source``."""
    if same_file(path, source):
        raise GoldloopError(
            f"{option} {path} and {input_option} {source} are the same file "
            f"({path.resolve()}): an input is never overwritten; choose another {option}"
        )
    if source.is_dir() and path.is_file() and path.resolve().is_relative_to(source.resolve()):
        raise GoldloopError(
            f"{option} {path} is a file of {input_option} {source}: an input is never "
            f"overwritten; choose another {option}"
        )


def read_beside(path: Path | None, sidecar: Callable[[Path], Path]) -> Path | None:
    """The sidecar a command reads beside the input ``path`` (``sidecar(path)``), when there is
    one: an input too, for :func:`check_outputs`."""
    if path is None:
        return None
    beside = sidecar(path)
    return beside if beside.exists() else None


def kb_inputs(kb: Path | None, equivalences: Path | None = None) -> dict[str, Path | None]:
    """The files a command reads for ``--kb`` and ``--equivalences`` (the bundled KB, and the
    equivalences beside the KB, when not given), as inputs for :func:`check_outputs`."""
    return {
        "--kb": kb or BUNDLED_KB,
        "--equivalences": equivalences,
        "--kb (its equivalences)": None if equivalences else equivalences_beside(kb),
    }


def key_value_table(title: str, rows: list[tuple[str, Any]], legend: str = "") -> Group:
    """A two-column table under a bold title line (long paths in titles must not wrap the table).

    At any width nothing is cut: a long title, key or value wraps (a path folds); what a user
    must copy is printed whole besides (:func:`print_whole`). ``legend`` (what the keys mean)
    is printed under the table."""
    table = Table(show_header=False)
    table.add_column(style="bold", overflow="fold")
    table.add_column(justify="right", overflow="fold")
    for key, value in rows:
        table.add_row(key, str(value))
    parts: list[Table | Text] = [Text(title, style="bold", overflow="fold"), table]
    return Group(*parts, Text(legend, style="dim")) if legend else Group(*parts)


# A table's frame: one border per column and one more, and a space each side of every cell.
_BORDERS, _PADDING = 1, 2
# A name column narrower than this wraps too often to read; wider ones wrap to make room.
_NAME_MIN = 12


def figures_table(
    title: str,
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    names: int = 1,
    width: int | None = None,
    legend: str = "",
) -> Group:
    """Rows of figures under ``headers``, fitted to ``width`` (default: the console's).

    The first ``names`` columns name the row and wrap; every other cell is a figure and is
    never cut or wrapped. Figure columns that do not fit go to a further table under the same
    names (``title (continued)``), so each one reads whole at 80 columns. ``legend`` (what the
    column heads mean) is printed under the tables.
    """
    cells = [[str(cell) for cell in row] for row in rows]
    needed = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    room = (width or console.width) - _BORDERS
    name_room = sum(min(n, _NAME_MIN) + _PADDING + _BORDERS for n in needed[:names])
    groups: list[list[int]] = [[]]
    used = name_room
    for i in range(names, len(headers)):
        cost = needed[i] + _PADDING + _BORDERS
        if groups[-1] and used + cost > room:
            groups.append([])
            used = name_room
        groups[-1].append(i)
        used += cost
    tables: list[Table | Text] = []
    for k, columns in enumerate(groups):
        table = Table(title=title if k == 0 else f"{title} (continued)", title_justify="left")
        for i in range(names):
            table.add_column(headers[i], overflow="fold", min_width=min(needed[i], _NAME_MIN))
        for i in columns:
            table.add_column(headers[i], justify="right", no_wrap=True, min_width=needed[i])
        for row in cells:
            table.add_row(*row[:names], *(row[i] for i in columns))
        tables.append(table)
    if legend:
        tables.append(Text(legend, style="dim"))
    return Group(*tables)


def print_whole(label: str, value: object) -> None:
    """Something a user copies (a tag, a URL, a path) on a line of its own, never wrapped."""
    console.print(f"{label}: {value}", soft_wrap=True, highlight=False, markup=False)


@dataclass(frozen=True)
class StudioDoor:
    """A command that reads a campaign, past its prelude: the KB open, Label Studio connected."""

    kb: KB
    studio: Studio

    def export(self, project: str) -> Campaign:
        """The campaign's tasks as they are now (``status --watch`` asks again each refresh)."""
        from goldloop.studio.project import export_campaign

        return export_campaign(self.studio, project)


def open_studio(
    ctx: typer.Context, outputs: Mapping[str, Path | None], kb: Path | None, url: str | None
) -> StudioDoor:
    """The prelude of a command that reads a campaign: its outputs checked before any work (the
    ``--kb`` file among the inputs they must not overwrite), then the KB opened and Label Studio
    connected, in that order so a bad option fails before the server is asked anything."""
    from goldloop.studio.connection import connect, resolve_connection

    check_outputs(outputs, kb_inputs(kb))
    knowledge = open_kb(kb)
    return StudioDoor(knowledge, connect(resolve_connection(url, settings=settings(ctx))))


def invoked_as(argv0: str, path: str) -> str:
    """How the user runs goldloop, for commands printed to be run: ``goldloop`` when that name
    on ``path`` is this program, else this program's path (relative below the working
    directory: ``.venv/bin/goldloop``)."""
    program = Path(argv0)
    found = shutil.which("goldloop", path=path)
    if found and program.exists() and Path(found).resolve() == program.resolve():
        return "goldloop"
    if not program.exists():  # not a file (``python -m``): the environment's own script
        program = Path(sys.executable).with_name("goldloop")
    absolute = program.absolute()
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)
