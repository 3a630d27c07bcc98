"""Writing a benchmark's page: the exact command that made it, the Markdown, and a JSON beside it."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def command_line(module: str, argv: list[str] | None) -> str:
    """``python -m benchmarks.<module>`` and its arguments (``sys.argv``'s when ``argv`` is ``None``), quoted.

    Examples
    --------
    >>> command_line("studies.basins", ["--tag", "a b"])
    "python -m benchmarks.studies.basins --tag 'a b'"
    """
    return f"python -m benchmarks.{module} " + shlex.join(sys.argv[1:] if argv is None else argv)


def write_page(out: Path, page: list[str] | str, data: Any = None, *, data_path: Path | None = None,
               default: Callable[[Any], Any] | None = None, echo: bool = True) -> str:
    """Write the Markdown page ``out`` and ``data`` as the JSON beside it; print (``echo``) and return the text.

    The one writer of the benchmarks' pages. ``page`` is the page's lines (joined, with a final newline) or its
    whole text (written as it is). ``data`` (``None``: no JSON) goes through :func:`compact_json`, ``default``
    its fallback for values JSON has no type for, to ``data_path`` — by default ``out`` with ``.json``.
    """
    text = page if isinstance(page, str) else "\n".join(page) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    if data is not None:
        (data_path or out.with_suffix(".json")).write_text(compact_json(data, default=default))
    if echo:
        print(text)
    return text


#: The line above which a page's text is a person's and is kept when the tool writes the page again.
GENERATED_MARKER = "<!-- the tool writes the page from here down; the text above is kept -->"


def kept_head(page: Path) -> list[str]:
    r"""The hand-written lines above :data:`GENERATED_MARKER` in an existing page (none: no page, or no marker).

    Examples
    --------
    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "README.md"
    >>> _ = page.write_text("# Why\n\nOur findings.\n" + GENERATED_MARKER + "\n| old table |\n")
    >>> kept_head(page)
    ['# Why', '', 'Our findings.']
    """
    return _split_at(page, GENERATED_MARKER)[0]


#: The line below which a page's text (a person's reading of the tables above it) is kept when the tool writes
#: the page again.
READING_MARKER = "<!-- the tool writes the page above this line; the reading below is kept -->"


def kept_reading(page: Path) -> list[str]:
    r"""The hand-written lines below :data:`READING_MARKER` in an existing page (none: no page, or no marker).

    Examples
    --------
    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "README.md"
    >>> _ = page.write_text("| old table |\n" + READING_MARKER + "\nWhat it shows.\n")
    >>> kept_reading(page)
    ['What it shows.']
    """
    return _split_at(page, READING_MARKER)[1]


def _split_at(page: Path, marker: str) -> tuple[list[str], list[str]]:
    """A page's lines above and below the line ``marker`` (both empty: no page, or no such line)."""
    lines = page.read_text().splitlines() if page.exists() else []
    if marker not in lines:
        return [], []
    at = lines.index(marker)
    return lines[:at], lines[at + 1:]


def command_first(head: list[str], title: str, command: str) -> list[str]:
    r"""A written page's lines above :data:`GENERATED_MARKER`: its title, the command that made it (at the page's
    top, where ``benchmarks.page_commands`` reads it), then the text a person wrote under the title.

    ``head`` is :func:`kept_head`'s; its first line is the title where it is a ``# `` heading (``title`` otherwise),
    and a ``Command:`` line right under it is the tool's own from an earlier write, replaced by ``command``.

    Examples
    --------
    >>> command_first(["# Why", "", "Command: `old`", "", "Our findings."], "# T", "new")
    ['# Why', '', 'Command: `new`', '', 'Our findings.']
    >>> command_first([], "# T", "new")
    ['# T', '', 'Command: `new`', '']
    """
    if head and head[0].startswith("# "):
        title, head = head[0], head[1:]
    rest = list(head)
    while rest and not rest[0].strip():
        rest.pop(0)
    if rest and rest[0].startswith("Command: `"):
        rest.pop(0)
        while rest and not rest[0].strip():
            rest.pop(0)
    return [title, "", f"Command: `{command}`", "", *rest]


def compact_json(data: Any, default: Callable[[Any], Any] | None = None) -> str:
    """``data`` as JSON without spaces, one item of a top-level list (or one key of a top-level dict) per line:
    small enough for the tracked results tree's size limit (``tests/test_results_tree.py``), and a change to one
    experiment still shows as a change of one line. ``default`` is :func:`json.dumps`'s: what to write for a value
    JSON has no type for.

    >>> print(compact_json({"a": [1, 2], "b": {"c": 0.5}}), end="")
    {
    "a":[1,2],
    "b":{"c":0.5}
    }
    """
    def one(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), default=default)

    if isinstance(data, list):
        return "[\n" + ",\n".join(one(v) for v in data) + "\n]\n"
    if isinstance(data, dict):
        return "{\n" + ",\n".join(f"{json.dumps(k)}:{one(v)}" for k, v in data.items()) + "\n}\n"
    return one(data) + "\n"


def table_data(command: str, rows: list[dict[str, Any]], digits: int, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """A page's rows as one small table for its JSON: ``{"command", "columns", "rows"}``, every float (and every
    float in a list) rounded to ``digits`` — all a page reads — and the keys in ``drop`` left out.

    >>> table_data("cmd", [{"a": 0.123456, "b": [1.0, 0.98765], "c": "x"}], 2, drop=("c",))
    {'command': 'cmd', 'columns': ['a', 'b'], 'rows': [[0.12, [1.0, 0.99]]]}
    """
    def rounded(value: Any) -> Any:
        if isinstance(value, float):
            return round(value, digits)
        return [rounded(v) for v in value] if isinstance(value, list) else value

    columns = [c for c in rows[0] if c not in drop] if rows else []
    return {"command": command, "columns": columns, "rows": [[rounded(r[c]) for c in columns] for r in rows]}


def grouped(rows: list[dict[str, Any]], *keys: str) -> list[tuple[tuple[Any, ...], list[dict[str, Any]]]]:
    """A page's rows by their values of ``keys``: ``(values, rows)`` per group, the groups sorted by their values
    and the rows of each in their order, as a table of medians per group reads them.

    >>> grouped([{"e": "b", "v": 1}, {"e": "a", "v": 2}, {"e": "b", "v": 3}], "e")
    [(('a',), [{'e': 'a', 'v': 2}]), (('b',), [{'e': 'b', 'v': 1}, {'e': 'b', 'v': 3}])]
    """
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    return sorted(groups.items(), key=lambda group: group[0])


def table_rows(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """The command and the rows (as dicts) of a JSON that :func:`table_data` wrote."""
    data = json.loads(path.read_text())
    return data["command"], [dict(zip(data["columns"], values, strict=True)) for values in data["rows"]]
