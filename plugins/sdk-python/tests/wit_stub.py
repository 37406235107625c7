"""Stand-ins for the bindings componentize-py generates (``wit_world``,
``componentize_py_types``), so that the SDK's component edge (``component.py``, ``convert.py``,
``bindings.py``) imports natively; the rest of the SDK imports no binding. Every name a binding
module is asked for is a class made on first use: called with one positional argument it
keeps it as ``value`` (a variant's case), with keywords as attributes (a record); its own
attributes (an enum's or a flags' members) are strings naming them. Equal when of the same
class with the same fields. ``log.write`` keeps its lines in ``LOGGED``.

``install()`` puts them in ``sys.modules`` and returns the SDK's ``component`` module.
"""

import importlib
import pathlib
import sys
import types

LOGGED: list[tuple[str, str]] = []


class _Members(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return f"{cls.__name__}.{name}"


def _record(name: str) -> type:
    def __init__(self, *args, **kwargs):
        if len(args) > 1 or (args and kwargs):
            raise TypeError(f"{name}: one positional value, or keywords")
        if args:
            self.value = args[0]
        self.__dict__.update(kwargs)

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __repr__(self):
        fields = ", ".join(f"{key}={value!r}" for key, value in self.__dict__.items())
        return f"{name}({fields})"

    return _Members(name, (), {"__init__": __init__, "__eq__": __eq__, "__repr__": __repr__,
                               "__hash__": None})


class _Bindings(types.ModuleType):
    """A binding module whose every name is a record class, made once."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        made = _record(name)
        setattr(self, name, made)
        return made


class Err(Exception):
    def __init__(self, value):
        super().__init__(value)
        self.value = value


def _write(level, message):
    LOGGED.append((level, message))


def install():
    """Installs the stand-ins and imports ``agent_host_sdk.component`` against them."""
    runtime = types.ModuleType("componentize_py_types")
    runtime.Err = Err
    sys.modules["componentize_py_types"] = runtime
    world = _Bindings("wit_world")
    world.__path__ = []
    sys.modules["wit_world"] = world
    for package in ("exports", "imports"):
        module = _Bindings(f"wit_world.{package}")
        module.__path__ = []
        setattr(world, package, module)
        sys.modules[module.__name__] = module
    for name in ("compactor", "judge", "viewer", "guest"):
        _binding(world.exports, name)
    for name in ("types", "tools", "events", "log", "meter", "model", "process", "reuse", "state"):
        _binding(world.imports, name)
    world.imports.log.write = _write
    # The protocol classes the exports subclass.
    for name in ("Guest", "Compactor", "Viewer", "Judge"):
        setattr(world.exports, name, type(name, (), {}))
    root = str(pathlib.Path(__file__).parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    return importlib.import_module("agent_host_sdk.component")


def _binding(package: types.ModuleType, name: str) -> None:
    module = _Bindings(f"{package.__name__}.{name}")
    setattr(package, name, module)
    sys.modules[module.__name__] = module
