"""The error a plugin raises for a message to go back as it is, and how any other error reads."""


class PluginError(Exception):
    """An error whose message goes back as it is: to the model from a tool, to the operator
    from a command or a configuration."""


def message_of(error: BaseException) -> str:
    """What the host reads of ``error``: a PluginError's message as it is, anything else
    prefixed with its type (``KeyError: 'x'``), so the model or the operator can tell a
    plugin's word from a bug."""
    if isinstance(error, PluginError):
        return str(error)
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
