"""Code blocks of the docs pages, for running them (tests/test_docs.py) and for drawing graphs at
build time (docs/hooks.py). No dependencies.

Convention: every fenced block tagged ``python`` is run, and every ``pycon`` block (``>>>``
prompts with expected output) is checked with doctest; the blocks of one page share a
namespace and run top to bottom. A block that cannot run as-is (it needs a network, a GPU, an
optional package, or shows a fragment) is preceded by the line ``<!-- docs: skip -->``. Other
languages (``sh``, ``text``, ``dot``, untagged) are never run.
"""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

SKIP = "<!-- docs: skip -->"
RUNNABLE_LANGS = ("python", "pycon")

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)[ \t]*(?P<info>[^\n`]*)$", re.M)


@dataclass
class Block:
    start: int  # character offset of the opening fence
    line: int  # 1-based line number of the first code line
    lang: str
    code: str
    skipped: bool

    @property
    def runnable(self) -> bool:
        return self.lang in RUNNABLE_LANGS and not self.skipped


def code_blocks(markdown: str) -> list:
    """The fenced code blocks of a Markdown text, in order."""
    blocks = []
    pos = 0
    while (m := _FENCE.search(markdown, pos)) is not None:
        indent, fence = m["indent"], m["fence"]
        close = re.compile(rf"^{re.escape(indent)}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        end = close.search(markdown, m.end() + 1)
        if end is None:
            break
        body = markdown[m.end() + 1:end.start()]
        before = markdown[:m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        lang = (m["info"].split() or [""])[0].lstrip(".").split("{")[0].lower()
        blocks.append(Block(start=m.start(), line=markdown.count("\n", 0, m.end()) + 2, lang=lang,
                            code=textwrap.dedent(body), skipped=before == SKIP))
        pos = end.end()
    return blocks


def run_blocks(blocks, namespace: dict, filename: str) -> None:
    """Run the runnable blocks in ``namespace``: ``python`` with exec, ``pycon`` with doctest
    (its output must match). Raises AssertionError naming the file and line of a failure."""
    import doctest
    import io

    for block in blocks:
        if not block.runnable:
            continue
        where = f"{filename}:{block.line}"
        if block.lang == "python":
            try:
                exec(compile(block.code, where, "exec"), namespace)
            except Exception as e:
                raise AssertionError(f"docs example at {where} raised {type(e).__name__}: {e}") from e
            continue
        test = doctest.DocTestParser().get_doctest(block.code, namespace, where, filename, block.line - 1)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        report = io.StringIO()
        runner.run(test, out=report.write, clear_globs=False)
        if runner.failures:
            raise AssertionError(f"docs example at {where} failed:\n{report.getvalue()}")
