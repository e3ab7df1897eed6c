"""Kedi errors that are also the user's exception class (docs/language.md#errors): an
exception raised in a procedure reaches the calling Python as a `KediExecutionError` that
``except ZeroDivisionError`` (or ``pytest.raises(MyError)``) around the call still catches.

Standard library only, like `pytest_kedi.errors`, which makes the classes again when an error
is unpickled.
"""

from __future__ import annotations

import weakref

from pytest_kedi.errors import KediError, KediExecutionError

__all__ = ["catchable"]

#: `catchable` classes by (id of the Kedi class, id of the user's class). Weak values: a
#: class made for a program's exception class is freed with the program (while it lives,
#: it holds both classes, so their ids name them).
_CATCHABLE: weakref.WeakValueDictionary[tuple[int, int], type[KediExecutionError]] = (
    weakref.WeakValueDictionary()
)


def catchable(
    kedi_class: type[KediExecutionError], raised: type[BaseException]
) -> type[KediExecutionError]:
    """``kedi_class``, or a subclass of it and of ``raised``: an error raised in a procedure
    reaches the calling Python as a Kedi error that ``except ZeroDivisionError`` (or
    ``pytest.raises(MyError)``) still catches, as it would around a Python function.

    ``kedi_class`` itself when it already is a ``raised``, for exceptions that are not an
    `Exception` (``SystemExit`` ...) or are pytest-kedi's own, and where Python cannot make
    the class or its instance (layouts that conflict, a final class, a ``__new__`` of
    its own that wants other arguments)."""
    if issubclass(kedi_class, raised) or not issubclass(raised, Exception):
        return kedi_class
    if issubclass(raised, KediError):
        return kedi_class
    key = (id(kedi_class), id(raised))
    made = _CATCHABLE.get(key)
    if made is not None:
        return made
    name = f"{kedi_class.__name__}[{raised.__qualname__}]"
    namespace = {"__module__": __name__, "__qualname__": name, "_kedi_class": kedi_class}
    # attribute lookup is a Kedi error's (the user's own attributes are copied onto it): a
    # class's `__getattribute__` that raises would fail pytest-kedi's reads (its
    # `__getattr__` still answers for names neither has)
    namespace["__getattribute__"] = Exception.__getattribute__
    try:
        made = type(name, (kedi_class, raised), namespace)
        made("probe", original=None)  # a class whose __new__ wants more (ExceptionGroup)
    except Exception:
        return kedi_class
    _CATCHABLE[key] = made
    return made
