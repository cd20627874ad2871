"""Note [slowest files first] (tests/conftest.py): the files scheduled first exist (a renamed
file would silently fall back to the end of the run), and the collection puts them first."""
from pathlib import Path

from conftest import SLOWEST_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_the_slowest_files_exist():
    missing = [path for path in SLOWEST_FIRST if not (ROOT / path).is_file()]
    assert not missing, f"SLOWEST_FIRST names files that are gone: {missing}"


def test_collection_puts_them_first():
    import conftest

    class Item:
        def __init__(self, nodeid):
            self.nodeid = nodeid
    items = [Item("tests/a/test_x.py::t1"), Item(f"{SLOWEST_FIRST[1]}::t"),
             Item("tests/a/test_x.py::t2"), Item(f"{SLOWEST_FIRST[0]}::t[1]"),
             Item(f"{SLOWEST_FIRST[0]}::t[0]")]
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == [
        f"{SLOWEST_FIRST[0]}::t[1]", f"{SLOWEST_FIRST[0]}::t[0]", f"{SLOWEST_FIRST[1]}::t",
        "tests/a/test_x.py::t1", "tests/a/test_x.py::t2"]
