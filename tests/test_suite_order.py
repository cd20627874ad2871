"""Note [slowest files first] (tests/conftest.py): the files scheduled first exist (a renamed
file would silently fall back to the end of the run), and the collection puts them first."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# by path: the module name ``conftest`` may be any of the suite's conftest files
_spec = importlib.util.spec_from_file_location("jitgrad_tests_root_conftest",
                                               ROOT / "tests" / "conftest.py")
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)
SLOWEST_FIRST = conftest.SLOWEST_FIRST


def test_the_slowest_files_exist():
    missing = [path for path in SLOWEST_FIRST if not (ROOT / path).is_file()]
    assert not missing, f"SLOWEST_FIRST names files that are gone: {missing}"


def test_collection_puts_them_first():
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
