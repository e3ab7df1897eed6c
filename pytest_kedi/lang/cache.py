"""In-process cache of parsed modules keyed by (path, content hash)."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang import nodes as n

__all__ = ["MODULES", "ModuleCache"]


class ModuleCache:
    """A bounded LRU map ``(path, sha256(source)) -> Module``."""

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._entries: OrderedDict[tuple[str, str], n.Module] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(path: str, source: str) -> tuple[str, str]:
        return path, hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()

    def get_or_parse(
        self, path: str, source: str, parse: Callable[[str, str], n.Module]
    ) -> n.Module:
        key = self.key(path, source)
        module = self._entries.get(key)
        if module is not None:
            self.hits += 1
            self._entries.move_to_end(key)
            return module
        self.misses += 1
        module = parse(source, path)
        self._entries[key] = module
        if len(self._entries) > self.limit:
            self._entries.popitem(last=False)
        return module

    def clear(self) -> None:
        self._entries.clear()
        self.hits = self.misses = 0


#: The process's cache of parsed files (`pytest_kedi.lang.files.parse_file`).
MODULES = ModuleCache()
