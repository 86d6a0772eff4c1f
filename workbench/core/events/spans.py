"""A function wrapped so that each call is spanned by a begin and an end, whatever kind of
function it is: for a coroutine function the span lasts until the coroutine finishes, for a
generator (or async generator) function until its iteration ends, fails or is closed, so the
span covers the body's real execution, not the call that merely creates the coroutine or
generator. The span is current (``active``) only while the body runs: between two items of a
generator it is not, so the consumer's own work is not taken for the body's."""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

H = TypeVar("H")


class Spanner(Protocol[H]):
    """What spans a call: ``begin`` starts a span (its handle), ``active`` makes it current
    while the body runs, ``end`` closes it with the error that ended it (None: none)."""

    def begin(self) -> H: ...

    def active(self, handle: H) -> AbstractContextManager[Any]: ...

    def end(self, handle: H, error: BaseException | None) -> None: ...


def spanned(fn: Callable[..., Any], spanner: Spanner[Any]) -> Callable[..., Any]:
    """``fn`` with each call spanned by ``spanner`` (see the module)."""
    if inspect.isasyncgenfunction(fn):
        wrapper: Callable[..., Any] = _async_generator(fn, spanner)
    elif inspect.iscoroutinefunction(fn):
        wrapper = _coroutine(fn, spanner)
    elif inspect.isgeneratorfunction(fn):
        wrapper = _generator(fn, spanner)
    else:
        wrapper = _plain(fn, spanner)
    return functools.wraps(fn)(wrapper)


def _plain(fn: Callable[..., Any], spanner: Spanner[Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        handle = spanner.begin()
        try:
            with spanner.active(handle):
                result = fn(*args, **kwargs)
        except BaseException as e:
            spanner.end(handle, e)
            raise
        spanner.end(handle, None)
        return result

    return call


def _coroutine(fn: Callable[..., Any], spanner: Spanner[Any]) -> Callable[..., Any]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        handle = spanner.begin()
        try:
            with spanner.active(handle):
                result = await fn(*args, **kwargs)
        except BaseException as e:
            spanner.end(handle, e)
            raise
        spanner.end(handle, None)
        return result

    return call


def _generator(fn: Callable[..., Any], spanner: Spanner[Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        handle = spanner.begin()  # at the first next(): where the body starts
        try:
            result = yield from _stepped(fn(*args, **kwargs), lambda: spanner.active(handle))
        except BaseException as e:
            spanner.end(handle, e)
            raise
        spanner.end(handle, None)
        return result

    return call


def _stepped(
    inner: Generator[Any, Any, Any], active: Callable[[], AbstractContextManager[Any]]
) -> Generator[Any, Any, Any]:
    """``yield from inner`` with ``active`` around each step of ``inner`` and only then."""
    step: Callable[[Any], Any] = inner.send
    value: Any = None
    while True:
        with active():
            try:
                item = step(value)
            except StopIteration as stop:
                return stop.value
        try:
            value = yield item
        except GeneratorExit:
            with active():
                inner.close()
            raise
        except BaseException as e:  # thrown in by the consumer: the body gets it
            step, value = inner.throw, e
        else:
            step = inner.send


def _async_generator(fn: Callable[..., Any], spanner: Spanner[Any]) -> Callable[..., Any]:
    async def call(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, Any]:
        handle = spanner.begin()  # at the first step: where the body starts
        inner = fn(*args, **kwargs)
        step: Callable[[Any], Any] = inner.asend
        value: Any = None
        try:
            while True:
                with spanner.active(handle):
                    try:
                        item = await step(value)
                    except StopAsyncIteration:
                        break
                try:
                    value = yield item
                except GeneratorExit:
                    with spanner.active(handle):
                        await inner.aclose()
                    raise
                except BaseException as e:  # thrown in by the consumer: the body gets it
                    step, value = inner.athrow, e
                else:
                    step = inner.asend
        except BaseException as e:
            spanner.end(handle, e)
            raise
        spanner.end(handle, None)

    return call
