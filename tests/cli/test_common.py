"""What every command shares: consoles that never cut numbers, roles, the output checks."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
import typer
from rich.console import Console
from rich.table import Table

from goldloop.cli import common
from goldloop.errors import GoldloopError
from goldloop.settings import BUNDLED_KB, DEMO_CORPUS, Settings
from tests.conftest import assert_fits, run_goldloop
from tests.sheets.test_review_sheet import ADDED, ADMIN, VERDICTS, _inputs, fill
from tests.studio.loop_data import TAG_B, write_inputs


def _table() -> Table:
    table = Table(title="score")
    for column in ("system", "precision", "recall", "f1", "entity accuracy", "coverage"):
        table.add_column(column, justify="right")
    table.add_row("a-system-with-a-long-name", "0.7512345", "0.9061234", "0.8212345", "0.61", "1.0")
    return table


def _fitted(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]) -> io.StringIO:
    """``common.console`` fitted as a command starting in ``environ`` fits it, printing into a
    file; the consoles' widths come back after the test."""
    for each in (common.console, common.err_console):
        monkeypatch.setattr(each, "_width", each._width)
    monkeypatch.setattr("sys.stdout", out := io.StringIO())  # as `goldloop score > f`
    for name, value in environ.items():
        monkeypatch.setenv(name, value)  # where rich reads it when a console has no width
    common.fit_consoles(environ)
    common.console.print(_table())
    return out


def test_a_table_printed_to_a_file_keeps_every_digit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    printed = _fitted(monkeypatch, {}).getvalue()
    assert "…" not in printed
    for number in ("0.7512345", "0.9061234", "0.8212345"):
        assert number in printed


def test_an_explicit_width_still_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "…" in _fitted(monkeypatch, {"COLUMNS": "40"}).getvalue()


def test_the_width_is_fitted_when_a_command_starts_not_at_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fitted for a narrow $COLUMNS first, then for a pipe: the second command's own environment.
    assert "…" in _fitted(monkeypatch, {"COLUMNS": "40"}).getvalue()
    monkeypatch.delenv("COLUMNS")
    assert "…" not in _fitted(monkeypatch, {}).getvalue()


def test_roles_are_checked() -> None:
    assert common.parse_roles(" primary, double ") == ["primary", "double"]
    with pytest.raises(GoldloopError, match=r"--roles 'primary,bogus': unknown role\(s\) bogus"):
        common.parse_roles("primary,bogus")
    with pytest.raises(GoldloopError, match="no role given"):
        common.parse_roles(" , ")


def test_check_outputs_names_both_options(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("{}\n")
    with pytest.raises(GoldloopError) as err:
        common.check_outputs({"--out": tmp_path / "x" / ".." / "in.jsonl"}, {"--documents": source})
    message = str(err.value)
    assert message.startswith(
        f"--out {tmp_path / 'x' / '..' / 'in.jsonl'} and --documents {source}"
    )
    assert f"({source.resolve()})" in message
    common.check_outputs(
        {"--out": tmp_path / "out.json", "--report": None}, {"--documents": source}
    )


def _printed(group: object, width: int) -> str:
    console = Console(file=io.StringIO(), width=width)
    console.print(group)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_a_wide_table_goes_on_under_the_same_names_and_cuts_nothing() -> None:
    headers = ["system", "gold", "pred", "match", "P", "R", "F1", "F1 95%", "ent acc",
               "strict F1", "dir acc", "skipped"]  # fmt: skip
    rows = [["a-system-with-a-rather-long-name", 1234, 1200, 1000, "0.833", "0.810", "0.821",
             "0.712–0.845", "0.900", "0.700", "0.950", 3]]  # fmt: skip
    printed = _printed(common.figures_table("score", headers, rows, width=80, legend="P: ..."), 80)
    assert_fits(printed, [str(cell) for cell in rows[0][1:]])
    assert "score (continued)" in printed and printed.rstrip().endswith("P: ...")
    # The name wraps in the first table, and every table repeats it.
    assert printed.count("┃ system") == 2
    wide = _printed(common.figures_table("score", headers, rows, width=200), 200)
    assert "continued" not in wide and rows[0][0] in wide


def test_each_offline_commands_table_reads_whole_at_80_columns(
    tmp_path: Path, terminal: int
) -> None:
    documents, gold_a, gold_b = write_inputs(tmp_path)
    score = run_goldloop(["score", "--gold", gold_a, "--system", f"{TAG_B}-with-a-long-name={gold_b}",
                          "--bootstrap", 50, "--report-dir", tmp_path / "score"])  # fmt: skip
    assert score.returncode == 0, score.stderr
    (result,) = json.loads((tmp_path / "score" / "score_results.json").read_text())["results"]
    detection = result["detection"]
    figures = [f"{detection[k]:.3f}" for k in ("precision", "recall", "f1")]
    low, high = result["intervals"]["f1"]
    assert_fits(score.stdout, [*figures, f"{low:.3f}–{high:.3f}", "strict F1", "dir acc"])
    pool = run_goldloop(["pool", f"a={gold_a}", f"b={gold_b}", "--documents", documents,
                         "-o", tmp_path / "pool.json", "--bootstrap", 50])  # fmt: skip
    assert pool.returncode == 0, pool.stderr
    runs = json.loads((tmp_path / "pool.json").read_text())["runs"]
    assert_fits(pool.stdout, [run["n_found"] for run in runs])
    agree = run_goldloop(["agree", "--gold", gold_a, "--other", gold_b,
                          "--out", tmp_path / "agree.json"])  # fmt: skip
    assert agree.returncode == 0, agree.stderr
    assert_fits(agree.stdout)
    sample = run_goldloop(["sample", "--corpus", DEMO_CORPUS, "--out", tmp_path / "sample",
                           "--n-primary", 6, "--n-double", 2, "--n-reserve", 2])  # fmt: skip
    assert sample.returncode == 0, sample.stderr
    report = json.loads((tmp_path / "sample" / "sampling_report.batch0.json").read_text())
    assert_fits(sample.stdout, [f"{s['p_incl']:.4f}" for s in report["strata"].values()])
    audit = run_goldloop(["audit", "--sample", tmp_path / "sample"])
    assert audit.returncode == 0, audit.stderr
    curve = json.loads((tmp_path / "sample" / "audit.json").read_text())["coverage"]["curve"]
    assert_fits(audit.stdout, [point["coverage"] for point in curve])
    annotate = run_goldloop(["annotate", "--documents", documents, "--out", tmp_path / "lex.json",
                             "--provider", "lexical"])  # fmt: skip
    assert annotate.returncode == 0, annotate.stderr
    counts = json.loads((tmp_path / "lex.json.report.json").read_text())["counts"]
    assert_fits(annotate.stdout, [counts["hits"], counts["rejections"]])
    for command in (["gold", "check", gold_a], ["kb", "check"]):
        checked = run_goldloop(command)
        assert checked.returncode == 0, checked.stderr
        assert_fits(checked.stdout)


def test_the_root_command_reads_the_environment_once_and_passes_it_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sheet import` takes REDIS_URL from the Settings the root callback read, not from the
    environment later: the variable is changed after the callback and the lock still uses Redis."""
    _, gold_a, gold_b = _inputs(tmp_path)
    sheet = tmp_path / "review.tsv"
    exported = run_goldloop(
        ["sheet", "export", "--gold", gold_a, "--other", gold_b, "--output", sheet]
    )
    assert exported.returncode == 0, exported.err
    fill(sheet, VERDICTS, [ADDED])
    args = ["sheet", "import", "--sheet", sheet, "--gold", gold_a, "--other", gold_b,
            "--verified-by", ADMIN]  # fmt: skip
    real_settings = common.settings
    seen: list[Settings] = []

    def settings_then_unset(ctx: typer.Context) -> Settings:
        read = real_settings(ctx)
        seen.append(read)
        # Too late: the command holds its Settings already (run_goldloop restores the variable).
        os.environ.pop("REDIS_URL", None)
        return read

    monkeypatch.setattr("goldloop.cli.sheet.settings", settings_then_unset)
    closed = "redis://:hunter2@127.0.0.1:1/0"  # nothing listens on port 1
    failed = run_goldloop([*args, "--output", tmp_path / "a.json"], {"REDIS_URL": closed})
    assert failed.returncode == 4, failed.err
    assert "cannot reach Redis (REDIS_URL)" in failed.err and "hunter2" not in failed.err
    assert not (tmp_path / "a.json").exists()
    assert [s.redis_url for s in seen] == [closed]

    served = run_goldloop(
        [*args, "--output", tmp_path / "b.json"], {"REDIS_URL": "redis://127.0.0.1:6379/0"}
    )
    assert served.returncode == 0, served.err
    assert (tmp_path / "b.json").is_file()


def test_printed_commands_name_goldloop_as_the_user_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`demo` prints commands to run: `goldloop` only when that name on the PATH is this
    program, else its path (relative below the working directory)."""
    from goldloop.cli.common import invoked_as

    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "goldloop"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    assert invoked_as(str(script), f"{bin_dir}:/usr/bin") == "goldloop"
    assert invoked_as(str(script), "/usr/bin:/bin") == ".venv/bin/goldloop"
    assert invoked_as(".venv/bin/goldloop", "/usr/bin") == ".venv/bin/goldloop"
    # Another goldloop on the PATH is not this one: the path, whole when outside the folder.
    other = tmp_path / "other"
    other.mkdir()
    (other / "goldloop").write_text("#!/bin/sh\n")
    (other / "goldloop").chmod(0o755)
    monkeypatch.chdir(other)
    assert invoked_as(str(script), str(other)) == str(script)


def test_check_outputs_counts_files_in_an_input_folder_and_those_a_folder_receives(
    tmp_path: Path,
) -> None:
    """Issue 44, item 1: a file of an input folder, and a file an output folder receives, go
    through the one check."""
    corpus = tmp_path / "corp"
    corpus.mkdir()
    (corpus / "x.txt").write_text("text")
    with pytest.raises(GoldloopError, match=r"--out .*x.txt is a file of --in"):
        common.check_outputs({"--out": corpus / "x.txt"}, {"--in": corpus})
    common.check_outputs({"--out": corpus / "new.json"}, {"--in": corpus})  # nothing read there
    gold = corpus / "goldloop.json"
    gold.write_text("[]")
    with pytest.raises(GoldloopError, match=r"--out \(its goldloop.json\) .* and --gold"):
        common.check_outputs(
            {"--out": corpus}, {"--gold": gold}, folders=("--out",),
            receives={"--out": ["a.txt", "goldloop.json"]},
        )  # fmt: skip


def test_the_kb_inputs_are_the_files_the_kb_is_read_from(tmp_path: Path) -> None:
    kb = tmp_path / "kb.csv"
    assert common.kb_inputs(kb)["--kb (its equivalences)"] is None
    beside = tmp_path / "equivalences.csv"
    beside.write_text("entity_id,equivalent_to,tier\n")
    assert common.kb_inputs(kb)["--kb (its equivalences)"] == beside
    assert common.kb_inputs(kb, tmp_path / "e.csv")["--kb (its equivalences)"] is None
    assert common.kb_inputs(None)["--kb"] == BUNDLED_KB
    assert common.read_beside(kb, lambda p: p.with_name("equivalences.csv")) == beside
    assert common.read_beside(kb, lambda p: p.with_name("absent.csv")) is None


def test_a_reader_gone_ends_the_printing_not_the_run() -> None:
    """Issue 44, item 11: a write or flush to a pipe whose reader has gone raises nothing; what
    follows goes to the null device (so Python's own flush at exit fails no more)."""
    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "w") as stream:
        guarded = common.ReaderGone(stream)
        guarded.write("a table line\n" * 10_000)  # more than a pipe's buffer
        guarded.flush()
        guarded.write("the next line\n")
        guarded.flush()
        null, now = os.stat(os.devnull), os.fstat(stream.fileno())
        assert (now.st_dev, now.st_ino) == (null.st_dev, null.st_ino)
        assert guarded.isatty() is False  # the rest is the stream's
