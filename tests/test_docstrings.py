"""Public functions and classes say why they exist: at least 90 % of them carry a docstring.

Public: a function or class whose name has no leading underscore, in a module whose dotted path has no
part with one, defined in that module (not imported into it), and the public methods and properties
of such classes. A method that overrides one documented on a base class (a Textual hook, a transport's
``send``, a protocol's method) counts as documented: :func:`inspect.getdoc` reads it from there, as
``help()`` and the docs do.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import Counter

import mcpreel

FLOOR = 0.90


def _inherited(cls: type, name: str) -> bool:
    return any(name in vars(base) and getattr(vars(base)[name], "__doc__", None) for base in cls.__mro__[1:])


def public_objects() -> list[tuple[str, str, bool]]:
    """(module, qualified name, documented) for every public function, class, method and property."""
    found = []
    for info in pkgutil.walk_packages(mcpreel.__path__, "mcpreel."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if getattr(obj, "__module__", None) != info.name or obj.__qualname__ != name:
                continue  # imported here, or an alias
            doc = inspect.getdoc(obj) if inspect.isfunction(obj) else obj.__dict__.get("__doc__")
            found.append((info.name, name, bool(doc)))
            if not inspect.isclass(obj):
                continue
            for attr, value in vars(obj).items():
                if attr.startswith("_"):
                    continue
                func = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                if not inspect.isfunction(func) or func.__qualname__ != f"{name}.{attr}":
                    continue
                if isinstance(value, property):
                    documented = bool(value.__doc__) or _inherited(obj, attr)
                else:
                    documented = bool(inspect.getdoc(getattr(obj, attr)))
                found.append((info.name, f"{name}.{attr}", documented))
    return found


def test_the_measure_sees_classes_methods_and_properties():
    seen = {(m, q) for m, q, _ in public_objects()}
    assert ("mcpreel.mock.engine", "Mock") in seen
    assert ("mcpreel.mock.engine", "Mock.connection") in seen
    assert ("mcpreel.mock.engine", "Mock.compact") in seen  # a property
    assert not any(q.startswith("_") or ".__" in q for _, q, _ in public_objects())
    assert not any(m == "mcpreel.formats._source" for m, _, _ in public_objects())  # a private module


def test_at_least_nine_in_ten_public_functions_and_classes_are_documented():
    objects = public_objects()
    assert len(objects) > 1000  # the whole package was read
    documented = sum(1 for *_, ok in objects if ok)
    share = documented / len(objects)
    missing = Counter(m.split(".")[1] for m, _, ok in objects if not ok)
    worst = ", ".join(f"{pkg} {n}" for pkg, n in missing.most_common(6))
    assert share >= FLOOR, f"{share:.1%} of {len(objects)} public objects documented (most missing: {worst})"
