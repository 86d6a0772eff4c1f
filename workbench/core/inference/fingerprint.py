"""The default version of a ``dc.model``: a hash of what decides its behaviour. That is the
function's code (its bytecode and constants, so comments and formatting do not count), its
default arguments, the values its closure holds and the globals it reads; functions and
classes it reaches that are not part of an installed package (the user's own code) are
followed the same way, library ones count by name.

Values are hashed by their contents: plain values directly, NumPy arrays by their bytes,
other objects by their class and their pickled state. A value that cannot be hashed stably (an
open session, a lock: it does not pickle) gets a new random part each time, so the version
changes on every call and reruns recompute rather than keep predictions it may have made
differently; ``dc.model(..., version=...)`` pins a version instead."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import secrets
import sys
import sysconfig
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# class attributes that describe the class rather than its behaviour
_CLASS_NOISE = {"__dict__", "__weakref__", "__module__", "__doc__", "__qualname__", "_abc_impl"}


@dataclass
class Fingerprint:
    """A behaviour hash of a callable, and where it met values it could not hash stably."""

    digest: str
    unstable: list[str] = field(default_factory=list)


def fingerprint(fn: Callable[..., Any] | type, *values: Any) -> Fingerprint:
    """The behaviour hash of a function, class or callable object and of ``values`` (its
    parameters, say), as the module notes describe."""
    hasher = _Hasher()
    hasher.feed(fn, getattr(fn, "__qualname__", type(fn).__name__))
    for i, value in enumerate(values):
        hasher.feed(value, f"argument {i}")
    return Fingerprint(hasher.digest.hexdigest(), hasher.unstable)


@functools.cache
def _installed_roots() -> tuple[str, ...]:
    """Folders of installed code: the standard library and site-packages."""
    paths = sysconfig.get_paths()
    found = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return tuple(os.path.realpath(p) + os.sep for p in found)


def _is_users(thing: Any) -> bool:
    """True for a function or class defined outside installed packages (the user's code)."""
    module = sys.modules.get(getattr(thing, "__module__", None) or "")
    if module is None or module.__name__ == "__main__":
        return True
    file = getattr(module, "__file__", None)
    if not file:
        return module.__name__ not in sys.builtin_module_names
    return not os.path.realpath(file).startswith(_installed_roots())


def _global_names(code: types.CodeType) -> set[str]:
    """The names a code object (and the code nested in it: lambdas, comprehensions) loads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


class _Hasher:
    """Feeds values into one SHA-256 in a fixed order, each tagged with its kind."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.unstable: list[str] = []
        self._seen: set[int] = set()  # functions, classes and containers already fed

    def _put(self, tag: str, data: bytes | str = b"") -> None:
        raw = data.encode() if isinstance(data, str) else data
        self.digest.update(f"{tag}:{len(raw)}:".encode() + raw)

    def feed(self, value: Any, where: str) -> None:
        """Add ``value`` (reached through ``where``, for the unstable list) to the hash."""
        if value is None or isinstance(value, (bool, int, float, complex, str)):
            self._put(type(value).__name__, repr(value))
        elif isinstance(value, (bytes, bytearray)):
            self._put("bytes", bytes(value))
        elif isinstance(value, types.ModuleType):
            self._put("module", value.__name__)
        elif isinstance(value, types.CodeType):
            self._code(value, where)
        elif id(value) in self._seen:
            self._put("again", getattr(value, "__qualname__", type(value).__qualname__))
        else:
            self._seen.add(id(value))
            self._compound(value, where)

    def _compound(self, value: Any, where: str) -> None:
        """Values that may hold others (fed once each, so cycles end)."""
        if isinstance(value, (list, tuple)):
            self._put(type(value).__name__, str(len(value)))
            for i, item in enumerate(value):
                self.feed(item, f"{where}[{i}]")
        elif isinstance(value, dict):
            self._put("dict", str(len(value)))
            for key, item in value.items():
                self.feed(key, where)
                self.feed(item, f"{where}[{key!r}]")
        elif isinstance(value, (set, frozenset)):
            self._put(type(value).__name__, ",".join(sorted(self._alone(v, where) for v in value)))
        elif isinstance(value, types.FunctionType):
            self._function(value)
        elif isinstance(value, type):
            self._class(value)
        elif isinstance(value, types.MethodType):
            self.feed(value.__func__, where)
            self.feed(value.__self__, f"{where}.__self__")
        elif isinstance(value, functools.partial):
            self.feed((value.func, value.args, value.keywords), where)
        elif isinstance(value, (staticmethod, classmethod)):
            self.feed(value.__func__, where)
        elif isinstance(value, property):
            self.feed((value.fget, value.fset, value.fdel), where)
        elif isinstance(value, types.BuiltinFunctionType):
            self._put("builtin", f"{value.__module__}.{value.__qualname__}")
        else:
            self._object(value, where)

    def _alone(self, value: Any, where: str) -> str:
        """The hash of one value by itself (a set's members are ordered by theirs)."""
        alone = _Hasher()
        alone.feed(value, where)
        self.unstable += alone.unstable
        return alone.digest.hexdigest()

    def _code(self, code: types.CodeType, where: str) -> None:
        self._put("code", code.co_code)
        self.feed(code.co_names, where)
        for const in code.co_consts:
            self.feed(const, where)

    def _function(self, fn: types.FunctionType) -> None:
        name = f"{fn.__module__}.{fn.__qualname__}"
        if not _is_users(fn):
            self._put("library function", name)
            return
        self._put("function", name)
        self._code(fn.__code__, name)
        self.feed((fn.__defaults__, fn.__kwdefaults__), f"{name} defaults")
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
            try:
                contents = cell.cell_contents
            except ValueError:  # a cell not yet filled
                self._put("empty cell", var)
                continue
            self._put("cell", var)
            self.feed(contents, f"{name}: closure {var!r}")
        namespace = fn.__globals__
        for read in sorted(_global_names(fn.__code__)):
            if read in namespace:
                self._put("global", read)
                self.feed(namespace[read], f"{name}: global {read!r}")

    def _class(self, cls: type) -> None:
        name = f"{cls.__module__}.{cls.__qualname__}"
        if not _is_users(cls):
            self._put("library class", name)
            return
        self._put("class", name)
        for base in cls.__bases__:
            self.feed(base, name)
        for attribute, value in sorted(vars(cls).items()):
            if attribute not in _CLASS_NOISE:
                self._put("attribute", attribute)
                self.feed(value, f"{name}.{attribute}")

    def _object(self, value: Any, where: str) -> None:
        """Any other value: its class, then its bytes (NumPy) or its pickled state."""
        self.feed(type(value), where)
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(value, numpy.ndarray) and value.dtype != object:
            self._put("ndarray", f"{value.dtype.str}{value.shape}")
            self._put("data", numpy.ascontiguousarray(value).tobytes())
            return
        try:
            pickle.Pickler(_Into(self.digest), protocol=4).dump(value)
        except Exception:  # it does not pickle: its state cannot be told apart
            self.unstable.append(f"{where} ({type(value).__qualname__})")
            self._put("unstable", secrets.token_hex(16))


class _Into:
    """A file-like target that feeds what pickle writes into a hash."""

    def __init__(self, digest: Any):
        self.write = digest.update
