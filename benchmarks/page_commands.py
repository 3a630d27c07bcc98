"""The command at the top of a results page, read back and checked without running it.

*The top* of a page is the first line after its ``# `` title that is neither blank nor an HTML comment (the
marker line of a page a tool writes below a person's text). A page gives the command that made it there, in one
of two forms:

- a line ``Command: `python -m MODULE ARGS` `` — one command in one backtick span (what follows it on the
  line, such as the commit, is context);
- a fenced block (```` ``` ````, ```` ```bash ````, ```` ```sh ```` or ```` ```text ````) of shell lines:
  commands, ``NAME="value"`` assignments, ``for x in …; do …; done`` loops, ``&&`` and ``#`` comments.

Whatever explains the runs (the machine, the commit, the findings) comes after it. A page that names, anywhere,
a command writing the page itself (its ``--out`` is the page or, for a ``README.md``, the page's folder) must give
a command at its top. Every ``python -m`` command a page gives at its top is checked as it would run:
the module imports, its own argparse parser accepts the words, and the names it passes exist (suite
experiments, ablation variants, theory studies, our solvers, suite tags some page makes).

``python -m benchmarks.page_commands`` lists what the check finds in the tree (``tests/test_page_commands.py``
asserts it finds nothing).
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

from benchmarks.command_check import check, python_module, writes

ROOT = Path(__file__).resolve().parents[1]
#: The folders whose pages are checked, relative to the repository root.
PAGE_ROOTS = ("benchmarks/results", "docs")
_FENCE = re.compile(r"^```(bash|sh|text)?\s*$")
_COMMAND_LINE = re.compile(r"^Command: `([^`]+)`")
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_SEPARATORS = {";", "&&", "||", "|", "&"}


def pages(root: Path = ROOT) -> list[Path]:
    """Every Markdown page under :data:`PAGE_ROOTS`, sorted.

    Parameters
    ----------
    root : Path
        The repository root.

    Returns
    -------
    list of Path
    """
    return sorted(p for top in PAGE_ROOTS for p in (root / top).rglob("*.md") if ".venv" not in p.parts)


def top_lines(text: str) -> list[str] | None:
    """The command lines a page gives at its top, or ``None`` where its top is prose.

    Parameters
    ----------
    text : str
        The page's Markdown.

    Returns
    -------
    list of str or None
        The one command of a ``Command:`` line, or the lines of the fenced block.

    Examples
    --------
    >>> top_lines("# T\\n\\nCommand: `python -m benchmarks.overhead`\\n\\nprose\\n")
    ['python -m benchmarks.overhead']
    >>> top_lines("# T\\n\\n```bash\\nV=1\\npython -m x $V\\n```\\n") == ['V=1', 'python -m x $V']
    True
    >>> top_lines("# T\\n\\nMade by:\\n\\n`python -m x`\\n") is None
    True
    """
    lines = text.splitlines()
    rest = [line for line in lines[1:] if line.strip() and not line.lstrip().startswith("<!--")]
    if not lines or not lines[0].startswith("# ") or not rest:
        return None
    first = rest[0]
    if match := _COMMAND_LINE.match(first):
        return [match.group(1)]
    if _FENCE.match(first):
        block = rest[1:]
        end = next((i for i, line in enumerate(block) if line.startswith("```")), len(block))
        return block[:end]
    return None


def shell_commands(lines: list[str]) -> list[list[str]]:
    """The simple commands a few shell lines run, each as its words, variables and ``for`` loops expanded.

    Parameters
    ----------
    lines : list of str
        Shell lines: commands, ``NAME=value`` assignments (alone, or before a command as its environment),
        ``export``, ``for VAR in WORDS; do …; done`` (nested too), ``;``, ``&&``, ``||``, ``|``, ``#`` comments and
        lines continued by a trailing backslash.

    Returns
    -------
    list of list of str
        One word list per command run, in order (a loop's body once per value).

    Examples
    --------
    >>> shell_commands(['V="a b"', 'for s in 0 1; do echo "$V" --seed $s; done  # two runs'])
    [['echo', 'a b', '--seed', '0'], ['echo', 'a b', '--seed', '1']]
    """
    tokens: list[str] = []
    for line in "\n".join(lines).replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split, lexer.commentors = True, "#"
        tokens += [*lexer, ";"]
    out: list[list[str]] = []
    _run(tokens, {}, out)
    return out


def _expand(word: str, env: dict[str, str]) -> str:
    return _VARIABLE.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), word)


def _body_end(tokens: list[str], start: int) -> int:
    """The index of the ``done`` that closes the loop whose body starts at ``start``."""
    depth = 1
    for i in range(start, len(tokens)):
        depth += (tokens[i] == "do") - (tokens[i] == "done")
        if depth == 0:
            return i
    raise ValueError("a for loop without its done")


def _run(tokens: list[str], env: dict[str, str], out: list[list[str]]) -> None:
    i = 0
    while i < len(tokens):
        if tokens[i] in _SEPARATORS:
            i += 1
        elif tokens[i] == "for":
            var, j = tokens[i + 1], tokens.index("do", i)
            values = [_expand(w, env) for w in tokens[i + 3:j] if w not in _SEPARATORS]
            end = _body_end(tokens, j + 1)
            for value in values:
                _run(tokens[j + 1:end], {**env, var: value}, out)
            i = end + 1
        else:
            j = next((k for k in range(i, len(tokens)) if tokens[k] in _SEPARATORS), len(tokens))
            words = [_expand(w, env) for w in tokens[i:j]]
            if words and words[0] == "export":
                words = words[1:]
            while words and _ASSIGNMENT.match(words[0]):
                name, value = words.pop(0).split("=", 1)
                if not words:
                    env[name] = value
            if words:
                out.append(words)
            i = j


def named_commands(text: str) -> Iterator[list[str]]:
    """Every ``python -m`` command a page names anywhere: in a backtick span or in a fenced shell block.

    Commands the shell reading cannot take apart (an unclosed quote, a loop without its end) are skipped.

    Parameters
    ----------
    text : str
        The page's Markdown.

    Yields
    ------
    list of str
        One command's words.
    """
    blocks = [[span] for span in re.findall(r"`(python3? -m [^`]+)`", text)]
    blocks += [block.splitlines() for block in re.findall(r"^```(?:bash|sh|text)?\n(.*?)^```", text, flags=re.M | re.S)]
    for lines in blocks:
        try:
            yield from (w for w in shell_commands(lines) if python_module(w))
        except ValueError:
            continue


def problems(page: Path, root: Path = ROOT) -> list[str]:
    """What keeps ``page`` from running from the command at its top.

    Parameters
    ----------
    page : Path
        A Markdown page.
    root : Path
        The repository root (``--out`` paths are relative to it).

    Returns
    -------
    list of str
        What would stop the command at its top, or any other command the page names that writes the page, or
        the command writing the page named below something else. Empty for a page in order.
    """
    text = page.read_text()
    lines = top_lines(text)
    own = [words for words in named_commands(text) if page in writes(words, root)]
    if lines is None:
        return [f"its command is not at the top: {shlex.join(own[0])[:120]}"] if own else []
    try:
        top = shell_commands(lines)
    except ValueError as err:
        return [f"the command at the top does not read as shell: {err}"]
    # the command at the top, and every other command the page gives for itself (the runs it shows)
    found = [problem for words in [*top, *(w for w in own if w not in top)] for problem in check(words, root)]
    return list(dict.fromkeys(found))


def main(argv: list[str] | None = None) -> int:
    """List every page whose command at the top would not run; exit code 1 if any."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.parse_args(argv)
    found = [f"{page.relative_to(ROOT)}: {problem}" for page in pages() for problem in problems(page)]
    print("\n".join(found) or "every page's command would run")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
