"""The public API: one import, the names listed in ``mcpreel.__all__``, each documented, loaded lazily."""

from __future__ import annotations

import inspect
import subprocess
import sys

import mcpreel
from mcpreel import errors


def test_every_public_name_resolves_and_says_what_it_is_for():
    for name in mcpreel.__all__:
        value = getattr(mcpreel, name)
        if name == "__version__":
            assert isinstance(value, str)
            continue
        assert inspect.getdoc(value), f"mcpreel.{name} has no docstring"


def test_every_error_of_the_tree_is_exported():
    tree = {n for n, c in vars(errors).items() if isinstance(c, type) and issubclass(c, Exception)}
    assert tree <= set(mcpreel.__all__)
    assert mcpreel.DifferenceFound is errors.DifferenceFound
    assert mcpreel.DifferenceFound.exit_code == 1


def test_the_exported_functions_are_the_modules_own():
    from mcpreel.compare import diff_files
    from mcpreel.formats import open_session
    from mcpreel.mock import serve_file

    assert mcpreel.open_session is open_session
    assert mcpreel.diff_files is diff_files
    assert mcpreel.serve_file is serve_file


def test_importing_the_package_loads_none_of_the_heavy_layers():
    code = ("import sys, mcpreel; heavy = [m for m in ('mcpreel.formats', 'mcpreel.mock', 'mcpreel.compare', "
            "'mcpreel.clients', 'asyncio') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error():
    try:
        mcpreel.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("mcpreel.no_such_thing resolved")


def test_all_is_sorted_and_names_exactly_what_the_package_hands_out():
    """``__all__`` is the one list (the httpx way): sorted, and equal to the names that resolve lazily."""
    assert list(mcpreel.__all__) == sorted(mcpreel.__all__)
    assert set(mcpreel.__all__) == set(mcpreel._HOMES) | {"__version__"}
    assert len(set(mcpreel.__all__)) == len(mcpreel.__all__)


def test_recording_is_part_of_the_public_api():
    """``mcpreel.record`` is the one entry point of a recording (a fresh interpreter: a submodule imported
    first would stand in the package's namespace under the same name, as ``mcpreel.convert``'s would)."""
    code = ("import mcpreel; f, o = mcpreel.record, mcpreel.RecordOptions; "
            "from mcpreel.record.recording import record; from mcpreel.record.options import RecordOptions; "
            "print(f is record, o is RecordOptions)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]
