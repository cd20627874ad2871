"""MkDocs hooks (``hooks:`` in mkdocs.yml): the changelog page and graphs drawn at build time.

- ``changelog.md`` is generated from the repository's CHANGELOG.md (one source, no copy to drift).
- A page may contain ``<!-- make_dot: ARGS -->`` markers. The page's ``python`` code blocks before
  the marker are run (in order, in one namespace; blocks marked ``<!-- docs: skip -->`` are not),
  then ``jitgrad.viz.make_dot(ARGS)`` draws the graph. With the Graphviz ``dot`` program installed
  the SVG is written next to the page and shown as an image; without it the page shows a note
  and the DOT text instead. The graphs are therefore always those of the page's own code.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import sys

from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.jitgrad")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))



def _load_examples():
    """docs/examples.py, the block reader tests/test_docs.py uses (loaded by path: no name clash)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples.py")
    spec = importlib.util.spec_from_file_location("jitgrad_docs_examples", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


_examples = _load_examples()
code_blocks, run_blocks = _examples.code_blocks, _examples.run_blocks

CHART = "<!-- bench_chart -->"
CHART_PNG = os.path.join(ROOT, "asv_bench", "results", "compare", "bench.png")
MARKER = re.compile(r"^<!-- make_dot: (.*?) -->[ \t]*$", re.M)

_svgs: dict = {}  # absolute destination path -> SVG text, written after the build
_copies: dict = {}  # absolute destination path -> source file, copied after the build


def on_files(files, config):
    with open(os.path.join(ROOT, "CHANGELOG.md"), encoding="utf-8") as f:
        files.append(File.generated(config, "changelog.md", content=f.read()))
    return files


def _graph_markdown(name: str, source: str, svg: str | None) -> str:
    if svg is not None:
        return f'<figure class="jitgrad-graph" markdown>\n<img src="{name}.svg" alt="backward graph: {name}">\n</figure>\n'
    return (
        '!!! note "Graph not rendered"\n'
        "    The Graphviz `dot` program was not installed when this site was built, so this is the\n"
        "    DOT text `make_dot` produced. Install Graphviz and rebuild to see it drawn, or paste it\n"
        "    into any Graphviz viewer.\n\n"
        "```dot\n" + source + "```\n")


def _chart(markdown, page):
    """Show compare.py's bench.png where the page asks for it, if a comparison was run here."""
    if CHART not in markdown:
        return markdown
    if os.path.exists(CHART_PNG):
        _copies[os.path.join(os.path.dirname(page.file.abs_dest_path), "bench.png")] = CHART_PNG
        text = ('<figure markdown>\n<img src="bench.png" alt="compare.py: jitgrad / peer time ratios">\n'
                "<figcaption>The chart from the last <code>compare.py</code> run on the machine that "
                "built this site.</figcaption>\n</figure>\n")
    else:
        text = ('!!! note "No chart in this build"\n'
                "    The chart is made by running `python asv_bench/compare.py` (it writes\n"
                "    `asv_bench/results/compare/bench.png`); no comparison had been run on the machine\n"
                "    that built this site. Run it, then rebuild the docs to show the chart here.\n")
    return markdown.replace(CHART, text)


def on_page_markdown(markdown, page, config, files):
    markdown = _chart(markdown, page)
    if not MARKER.search(markdown):
        return markdown
    if ROOT not in sys.path:  # building from a checkout without installing jitgrad (appended:
        sys.path.append(ROOT)  # an installed jitgrad comes first); mkdocs restores sys.path
    from jitgrad.viz import make_dot                    # after loading hooks, so not at import

    have_dot = shutil.which("dot") is not None
    namespace: dict = {"__name__": "__docs__"}
    blocks = iter(code_blocks(markdown))
    out, pos, count = [], 0, 0
    for m in MARKER.finditer(markdown):
        for block in blocks:  # run the page's code up to the marker
            if block.start > m.start():
                blocks = iter([block, *blocks])
                break
            run_blocks([block], namespace, page.file.src_uri)
        count += 1
        name = f"{os.path.splitext(os.path.basename(page.file.src_uri))[0]}-graph-{count}"
        dot = eval(f"_make_dot({m[1]})", {**namespace, "_make_dot": make_dot})
        svg = None
        if have_dot:
            svg = dot.pipe(format="svg").decode("utf-8")
            dest = os.path.join(os.path.dirname(page.file.abs_dest_path), name + ".svg")
            _svgs[dest] = svg
        out.append(markdown[pos:m.start()])
        out.append(_graph_markdown(name, dot.source, svg))
        pos = m.end()
    out.append(markdown[pos:])
    if not have_dot:
        log.info("%s: Graphviz 'dot' not found; showing DOT text for %d graph(s)", page.file.src_uri, count)
    return "".join(out)


def on_post_build(config):
    for dest, svg in _svgs.items():
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(svg)
    _svgs.clear()
    for dest, src in _copies.items():
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(src, dest)
    _copies.clear()


__all__ = ["on_files", "on_page_markdown", "on_post_build"]
