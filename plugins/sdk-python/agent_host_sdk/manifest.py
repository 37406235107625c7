"""A plugin's version, read from its folder's ``pyproject.toml`` (``[project] version``), as a
Rust plugin reads its own from Cargo.toml: the manifest says it once.

Read when the plugin module is imported: in a component that is at build time, where
componentize-py runs the module once with the folder in view and keeps what it made, so the
running component needs no file.
"""

import pathlib
import tomllib


def project_version(module_file: str | None) -> str:
    """The ``[project] version`` of the nearest ``pyproject.toml`` at or above the folder of
    ``module_file`` (the working folder for a module without a file)."""
    start = pathlib.Path(module_file).resolve().parent if module_file else pathlib.Path.cwd()
    for folder in (start, *start.parents):
        manifest = folder / "pyproject.toml"
        if manifest.is_file():
            with manifest.open("rb") as file:
                version = tomllib.load(file).get("project", {}).get("version")
            if not isinstance(version, str):
                raise ValueError(f"{manifest} has no `[project] version`: give the plugin's version there, "
                                 "or to Plugin(name, version)")
            return version
    raise ValueError(f"no pyproject.toml at or above {start}: give the plugin's version to Plugin(name, version)")
