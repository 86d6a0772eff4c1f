"""A filter as a small tree of values: columns, literals, comparisons, ``IN``, ``IS NULL``,
``LIKE``, ``AND``/``OR``/``NOT`` and casts. SQL text and pyarrow expressions both become one;
engines render it in their own terms and file skipping reads it against the log's statistics.

Its meaning is SQL's, whoever evaluates it: a comparison with a null is unknown (the row is
left out), and NaN is equal to itself and greater than every other number, as in DuckDB, Spark
and polars. ``Opaque`` stands for a part the tree does not model (a function call, a
subquery-free expression of SQL text): the engine evaluates it from the text, and skipping
never uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
# ``a op b`` is ``b FLIPPED[op] a``; ``NOT (a op b)`` is ``a NEGATED[op] b`` (nulls stay unknown)
FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


@dataclass(frozen=True)
class Column:
    """A column, or a field inside struct columns (``("address", "city")``)."""

    path: tuple[str, ...]

    @property
    def name(self) -> str:
        """The top-level column it reads."""
        return self.path[0]


@dataclass(frozen=True)
class Literal:
    """A constant; ``type`` is its Arrow type once bound to a column (None: as written)."""

    value: Any
    type: pa.DataType | None = None


@dataclass(frozen=True)
class Compare:
    """``left op right``, ``op`` one of ``COMPARISONS``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class In:
    """``operand [NOT] IN (values)``."""

    operand: Expr
    values: tuple[Literal, ...]
    negated: bool = False


@dataclass(frozen=True)
class IsNull:
    """``operand IS [NOT] NULL``."""

    operand: Expr
    negated: bool = False


@dataclass(frozen=True)
class IsNaN:
    """``isnan(operand)`` (NOT for its negation): null for a null operand."""

    operand: Expr
    negated: bool = False


@dataclass(frozen=True)
class Like:
    """``operand [NOT] LIKE pattern`` (``ILIKE`` when ``case_insensitive``): ``%`` any text,
    ``_`` one character."""

    operand: Expr
    pattern: str
    negated: bool = False
    case_insensitive: bool = False

    @property
    def prefix(self) -> str | None:
        """The text every match starts with, when the pattern is that text then ``%``."""
        head = self.pattern[:-1]
        if not self.pattern.endswith("%") or any(c in head for c in "%_\\"):
            return None
        return head


@dataclass(frozen=True)
class Cast:
    """``CAST(operand AS type)``."""

    operand: Expr
    type: pa.DataType


@dataclass(frozen=True)
class And:
    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class Not:
    operand: Expr


@dataclass(frozen=True)
class Opaque:
    """A part the tree does not model, reading ``columns``: evaluated from the filter's text,
    never used to skip files."""

    columns: frozenset[str] = frozenset()


Expr = Column | Literal | Compare | In | IsNull | IsNaN | Like | Cast | And | Or | Not | Opaque


def columns_of(expr: Expr) -> set[str]:
    """The top-level columns ``expr`` reads."""
    if isinstance(expr, Column):
        return {expr.name}
    if isinstance(expr, Opaque):
        return set(expr.columns)
    return set().union(*(columns_of(child) for child in children(expr)))


def children(expr: Expr) -> tuple[Expr, ...]:
    """The expressions directly inside ``expr``."""
    if isinstance(expr, Compare):
        return (expr.left, expr.right)
    if isinstance(expr, (And, Or)):
        return expr.parts
    if isinstance(expr, (In, IsNull, IsNaN, Like, Cast, Not)):
        return (expr.operand,)
    return ()


def is_exact(expr: Expr) -> bool:
    """True when the tree holds the whole filter (no ``Opaque`` part), so any engine can run
    it from the tree alone."""
    return not isinstance(expr, Opaque) and all(is_exact(c) for c in children(expr))


def conjoin(parts: list[Expr]) -> Expr | None:
    """The ``AND`` of ``parts`` (None for none), nested ANDs flattened."""
    flat: list[Expr] = []
    for part in parts:
        flat += list(part.parts) if isinstance(part, And) else [part]
    if not flat:
        return None
    return flat[0] if len(flat) == 1 else And(tuple(flat))


def negation(expr: Expr) -> Expr:
    """``NOT expr`` with the NOT pushed down to the leaves (De Morgan, flipped comparisons),
    which keeps SQL's three-valued meaning: what was unknown stays unknown."""
    if isinstance(expr, Not):
        return expr.operand
    if isinstance(expr, And):
        return Or(tuple(negation(p) for p in expr.parts))
    if isinstance(expr, Or):
        return And(tuple(negation(p) for p in expr.parts))
    if isinstance(expr, Compare):
        return Compare(NEGATED[expr.op], expr.left, expr.right)
    if isinstance(expr, In):
        return In(expr.operand, expr.values, not expr.negated)
    if isinstance(expr, (IsNull, IsNaN, Like)):
        from dataclasses import replace

        return replace(expr, negated=not expr.negated)
    if isinstance(expr, Opaque):
        return expr
    return Not(expr)


def without_not(expr: Expr) -> Expr:
    """``expr`` with every NOT pushed down to the leaves (see ``negation``)."""
    if isinstance(expr, Not):
        return without_not(negation(without_not(expr.operand)))
    if isinstance(expr, And):
        return And(tuple(without_not(p) for p in expr.parts))
    if isinstance(expr, Or):
        return Or(tuple(without_not(p) for p in expr.parts))
    return expr


def nan_safe(expr: Expr) -> Expr:
    """``expr`` (NOTs pushed down) with each comparison that NaN satisfies in SQL (``>``, ``>=``,
    ``<>``, ``NOT IN`` on a float column) also asking ``isnan``: Parquet bounds leave NaN out,
    so readers that prune row groups by them (DuckDB's, Daft's) would lose NaN rows."""
    if isinstance(expr, (And, Or)):
        return type(expr)(tuple(nan_safe(p) for p in expr.parts))
    if isinstance(expr, Compare) and expr.op in (">", ">=", "!=") and _float_constant(expr.right):
        return Or((expr, IsNaN(expr.left)))
    if isinstance(expr, In) and expr.negated and any(_float_constant(v) for v in expr.values):
        return Or((expr, IsNaN(expr.operand)))
    return expr


def _float_constant(expr: Expr) -> bool:
    import math

    import pyarrow.types as t

    if not isinstance(expr, Literal) or expr.type is None or not t.is_floating(expr.type):
        return False
    return not (isinstance(expr.value, float) and math.isnan(expr.value))
