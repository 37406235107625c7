"""Typed arguments and configuration from one declaration: a dataclass (or TypedDict) gives
both the JSON Schema the model sees and the parser that turns a call's JSON into an instance.

Supported field types: str, int, float, bool, list[T], dict[str, T], Optional[T] (or
``T | None``), Literal[...] of strings or numbers, nested dataclasses and TypedDicts. A field
with a default (or ``Optional``/``NotRequired``) is not required. ``Annotated[T, "text"]``
describes a field to the model. Unknown keys are refused, as the Rust SDK's
``deny_unknown_fields`` does, and every error names the field's path.

Pure Python, with no import from the contract's bindings, so it is tested natively.
"""

import dataclasses
import functools
import types
import typing
from typing import Any, Annotated, Literal, Union, get_args, get_origin, get_type_hints


class ArgumentError(ValueError):
    """A value that does not fit its declared type; the message names the field."""


def schema_of(declared: type) -> dict:
    """The JSON Schema of ``declared`` (a dataclass or TypedDict): one self-contained object."""
    return _schema(declared)


def parse(declared: type, value: Any, where: str = "") -> Any:
    """``value`` (parsed JSON) as an instance of ``declared``, or ArgumentError naming the path."""
    return _parse(declared, value, where)


def to_json(value: Any) -> Any:
    """An instance built by ``parse`` back as plain JSON values (for the host to keep)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: to_json(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    return value


@functools.cache
def _fields(declared: type) -> tuple[tuple[str, Any, bool], ...]:
    """(name, type, required) for each field of a dataclass or TypedDict; kept per type, since
    resolving the hints is most of what parsing a call's arguments costs."""
    hints = get_type_hints(declared, include_extras=True)
    if dataclasses.is_dataclass(declared):
        fields = []
        for field in dataclasses.fields(declared):
            has_default = (
                field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
            )
            fields.append((field.name, hints[field.name], not has_default))
        return tuple(fields)
    if typing.is_typeddict(declared):
        required = getattr(declared, "__required_keys__", frozenset(hints))
        return tuple((name, hint, name in required) for name, hint in hints.items())
    raise TypeError(f"{declared!r} is not a dataclass or TypedDict")


def _unwrap(hint: Any) -> tuple[Any, str | None]:
    """The type inside ``Annotated``/``Required``/``NotRequired``, and its description."""
    description = None
    while True:
        origin = get_origin(hint)
        if origin is Annotated:
            hint, *extras = get_args(hint)
            description = next((extra for extra in extras if isinstance(extra, str)), description)
        elif origin in (typing.Required, typing.NotRequired):
            hint = get_args(hint)[0]
        else:
            return hint, description


def _optional_inner(hint: Any) -> Any | None:
    """``T`` for ``Optional[T]`` / ``T | None``; None for any other type."""
    if get_origin(hint) in (Union, types.UnionType):
        members = [member for member in get_args(hint) if member is not type(None)]
        if len(members) == 1 and len(get_args(hint)) == 2:
            return members[0]
    return None


def _is_record(hint: Any) -> bool:
    return isinstance(hint, type) and (dataclasses.is_dataclass(hint) or typing.is_typeddict(hint))


def _schema(hint: Any) -> dict:
    hint, description = _unwrap(hint)
    schema = _schema_of_type(hint)
    if description:
        schema["description"] = description
    return schema


def _schema_of_type(hint: Any) -> dict:
    inner = _optional_inner(hint)
    if inner is not None:
        schema = _schema(inner)
        return {"anyOf": [schema, {"type": "null"}]}
    if _is_record(hint):
        properties, required = {}, []
        for name, field_hint, is_required in _fields(hint):
            properties[name] = _schema(field_hint)
            if is_required and _optional_inner(_unwrap(field_hint)[0]) is None:
                required.append(name)
        schema = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            schema["required"] = required
        return schema
    origin = get_origin(hint)
    if origin is Literal:
        return {"enum": list(get_args(hint))}
    if origin in (list, typing.List):
        (item,) = get_args(hint) or (Any,)
        return {"type": "array", "items": _schema(item)}
    if origin in (dict, typing.Dict):
        _, value = get_args(hint) or (str, Any)
        return {"type": "object", "additionalProperties": _schema(value)}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if hint in simple:
        return {"type": simple[hint]}
    if hint is Any:
        return {}
    raise TypeError(f"no JSON Schema for the type {hint!r}")


def _describe(value: Any) -> str:
    kinds = {str: "a string", bool: "a boolean", int: "an integer", float: "a number"}
    if value is None:
        return "null"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return kinds.get(type(value), type(value).__name__)


def _fail(where: str, message: str) -> ArgumentError:
    return ArgumentError(f"`{where}`: {message}" if where else message)


def _parse(hint: Any, value: Any, where: str) -> Any:
    hint, _ = _unwrap(hint)
    inner = _optional_inner(hint)
    if inner is not None:
        return None if value is None else _parse(inner, value, where)
    if _is_record(hint):
        return _parse_record(hint, value, where)
    origin = get_origin(hint)
    if origin is Literal:
        allowed = get_args(hint)
        if value not in allowed or isinstance(value, bool) != any(isinstance(a, bool) for a in allowed):
            listed = ", ".join(f"`{option}`" for option in allowed)
            raise _fail(where, f"expected one of {listed}, found `{value}`")
        return value
    if origin in (list, typing.List):
        if not isinstance(value, list):
            raise _fail(where, f"expected an array, found {_describe(value)}")
        (item,) = get_args(hint) or (Any,)
        return [_parse(item, element, f"{where}[{index}]") for index, element in enumerate(value)]
    if origin in (dict, typing.Dict):
        if not isinstance(value, dict):
            raise _fail(where, f"expected an object, found {_describe(value)}")
        _, item = get_args(hint) or (str, Any)
        return {key: _parse(item, element, _join(where, key)) for key, element in value.items()}
    if hint is Any:
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    # bool is an int in Python; JSON keeps them apart.
    if hint in (str, int, float, bool) and type(value) is hint:
        return value
    if hint in (str, int, float, bool):
        raise _fail(where, f"expected {_describe(hint())}, found {_describe(value)}")
    raise TypeError(f"cannot parse the type {hint!r}")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _parse_record(declared: type, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise _fail(where, f"expected an object, found {_describe(value)}")
    fields = _fields(declared)
    known = {name for name, _, _ in fields}
    unknown = [key for key in value if key not in known]
    if unknown:
        expected = ", ".join(f"`{name}`" for name in sorted(known)) or "none"
        raise _fail(where, f"unknown field `{unknown[0]}`, expected {expected}")
    parsed = {}
    for name, hint, required in fields:
        if name in value:
            parsed[name] = _parse(hint, value[name], _join(where, name))
        elif required and _optional_inner(_unwrap(hint)[0]) is None:
            raise _fail(where, f"missing field `{name}`")
        elif required and dataclasses.is_dataclass(declared):
            # An Optional dataclass field without a default: absent is None.
            parsed[name] = None
    return declared(**parsed)
