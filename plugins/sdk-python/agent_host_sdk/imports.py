"""Where the SDK's host calls go: to the contract's imports in a component (``bindings.py``,
installed by ``export``), to a harness's stand-ins in a unit test (``testing``). Natively
nothing is installed until a harness is, so a host call outside both says what is missing
rather than failing on an import of bindings that exist only in a component.

A host is any object with these methods, in the SDK's own types; those that can fail raise
``PluginError`` with the host's message:

- ``state_get(key) -> str | None``, ``state_set(key, json)``, ``state_remove(key)``,
  ``state_read(namespace, key) -> str | None``
- ``emit(kind, payload_json, display)``, ``log(level, message)`` (level `trace` ... `error`)
- ``until_state_changes()``, ``declare(spec: ToolSpec)``
- ``meter_read() -> MeterReading``, ``meter_session() -> SessionReading``
- ``complete(messages: list[ChatMessage], max_output_tokens) -> Completion``
- ``run(request: RunRequest) -> RunOutput``
"""

_installed = None


def install(host):
    """Sends every later host call to ``host``; returns the host it replaces (or None)."""
    global _installed
    previous, _installed = _installed, host
    return previous


def host():
    """The installed host."""
    if _installed is None:
        raise RuntimeError(
            "no host to call: a plugin calls the host from inside a component, or in a unit test "
            "through agent_host_sdk.testing.Harness"
        )
    return _installed
