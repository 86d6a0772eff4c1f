"""A notebook's parameters: what its ``parameters`` cell declares (names, and types from an
annotation or the default's type), and the values a report passes checked against it before
any kernel starts: an unknown name is refused with the list of known ones, a value of another
type than annotated is refused, text from a command line takes the declared type, and times
become ns since the epoch, which every ``since``/``as_of`` of the API takes."""

from __future__ import annotations

import ast
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.core.base.errors import InvalidArgumentError

PARAMETERS_TAG = "parameters"
SET_BY_REPORT = ("as_of", "catalog")  # dc.report sets these itself, for the state it pins
_TYPE_NAMES: dict[str, type] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "list": list,
    "dict": dict,
    "None": type(None),
    "NoneType": type(None),
}


@dataclass(frozen=True)
class Declared:
    """One parameter of a notebook: its name, the types its annotation allows (None: not
    annotated) and the type of its default (None when the default is None or not a literal)."""

    name: str
    annotated: tuple[type, ...] | None
    default_type: type | None

    @property
    def types(self) -> tuple[type, ...] | None:
        """The types a value may have: the annotation's, else the default's (None: any)."""
        if self.annotated is not None:
            return self.annotated
        return None if self.default_type is None else (self.default_type,)


def declared_parameters(notebook: Any) -> dict[str, Declared] | None:
    """The parameters the notebook's first ``parameters`` cell assigns (None: it has none)."""
    for cell in notebook.cells:
        if cell.cell_type == "code" and PARAMETERS_TAG in cell.metadata.get("tags", []):
            return _assignments(cell.source)
    return None


def _assignments(source: str) -> dict[str, Declared]:
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise InvalidArgumentError(
            f"The notebook's 'parameters' cell is not valid Python ({e}); fix the cell."
        ) from e
    found: dict[str, Declared] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            annotated = _annotation_types(node.annotation)
            found[node.target.id] = Declared(node.target.id, annotated, _literal_type(node.value))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = Declared(target.id, None, _literal_type(node.value))
    return found


def _annotation_types(annotation: ast.expr) -> tuple[type, ...] | None:
    """The types an annotation names (``str | None``, ``Optional[int]``); None when it names
    one this check does not know (any value is then taken)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return _annotation_types(ast.parse(annotation.value, mode="eval").body)
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return (type(None),)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        left, right = _annotation_types(annotation.left), _annotation_types(annotation.right)
        return None if left is None or right is None else left + right
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        if annotation.value.id in ("Optional", "Union"):  # Union[a, b]; Optional[a]: a | None
            members = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
            found = [_annotation_types(m) for m in members or [annotation.slice]]
            if annotation.value.id == "Optional":
                found.append((type(None),))
            return None if None in found else tuple(t for ts in found if ts for t in ts)
        return _annotation_types(annotation.value)  # list[str]: a list
    if isinstance(annotation, ast.Name) and annotation.id in _TYPE_NAMES:
        return (_TYPE_NAMES[annotation.id],)
    return None


def _literal_type(value: ast.expr | None) -> type | None:
    try:
        literal = ast.literal_eval(value) if value is not None else None
    except ValueError:
        return None
    return None if literal is None else type(literal)


def checked_values(
    declared: dict[str, Declared] | None, values: Mapping[str, Any], notebook: Path
) -> dict[str, Any]:
    """``values`` as the notebook can be given them: names it declares, values of the types it
    annotates (times as ns since the epoch)."""
    if values and declared is None:
        raise InvalidArgumentError(
            f"parameters={sorted(values)}, but {notebook.name} has no cell tagged "
            "'parameters' to set; add one assigning their defaults, or pass no parameters."
        )
    known = declared or {}
    unknown = sorted(set(values) - set(known))
    if unknown:
        settable = sorted(set(known) - set(SET_BY_REPORT))
        raise InvalidArgumentError(
            f"Unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} for "
            f"{notebook.name}; its parameters are: {', '.join(settable) or 'none'}."
        )
    checked = {}
    for name, value in values.items():
        plain = notebook_value(value, name)
        types = known[name].annotated
        if types is not None and not _fits(plain, types):
            raise InvalidArgumentError(
                f"{name}={value!r}: {notebook.name} declares {name} as "
                f"{' | '.join(_type_name(t) for t in types)}; pass a value of that type."
            )
        checked[name] = plain
    return checked


def _fits(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    return isinstance(value, types)


def _type_name(t: type) -> str:
    return "None" if t is type(None) else t.__name__


def notebook_value(value: Any, name: str) -> Any:
    """``value`` as papermill passes it into a notebook (a literal: None, bool, int, float,
    str, list, dict); NumPy scalars as Python's, times (datetime, pandas Timestamp, NumPy
    datetime64) as ns since the epoch; anything else is refused."""
    from workbench.core.transactions.time_travel import instant_ns

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, datetime) or type(value).__name__ == "datetime64":
        return instant_ns(value, name)
    if isinstance(value, (list, tuple)):
        return [notebook_value(v, f"{name}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return {k: notebook_value(v, f"{name}[{k!r}]") for k, v in value.items()}
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return notebook_value(value.tolist(), name)  # a NumPy scalar or array
    if isinstance(value, numbers.Real):
        return float(value)
    raise InvalidArgumentError(
        f"{name}={value!r} cannot be passed to a notebook: give None, a bool, a number, a "
        "string, a time (datetime, pandas Timestamp, NumPy datetime64), or a list or dict "
        "(with string keys) of these."
    )


def typed_text(declared: Declared | None, name: str, text: str) -> Any:
    """A command line's text for parameter ``name`` as the type the notebook declares: a
    literal (``1``, ``2.5``, ``True``, ``None``, ``[1, 2]``) when that type allows it, else the
    text itself; refused when the type allows neither."""
    try:
        literal = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        literal = text
    types = declared.types if declared is not None else None
    if types is None or _fits(literal, types):
        return literal
    if str in types:
        return text
    if literal is None and declared is not None and declared.annotated is None:
        return None  # a default of some type can still be unset
    raise InvalidArgumentError(
        f"-p {name} {text!r}: the notebook declares {name} as "
        f"{' | '.join(_type_name(t) for t in types)}; give a value of that type."
    )
