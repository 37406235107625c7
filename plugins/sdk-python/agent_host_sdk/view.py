"""What front ends show of a plugin (contract 0.2.4, the ``viewer`` export): typed widgets a
front end draws without knowing the plugin, returned from the function given to
``Plugin.view``: a checklist as a plan, a choice with a command as a switcher, text.
"""

from wit_world.exports import viewer as _viewer

PENDING = _viewer.EntryState.PENDING
IN_PROGRESS = _viewer.EntryState.IN_PROGRESS
COMPLETED = _viewer.EntryState.COMPLETED


def _non_blank(text: str | None) -> str | None:
    return text if text and text.strip() else None


class Choice:
    """One value out of a few (a mode, a stage). With ``command`` a front end offers a
    switcher that runs it with the chosen value appended; without, only the model moves it."""

    def __init__(self, id: str, label: str, current: str | None = None):
        self._choice = _viewer.Choice(id=id, label=label, current=current, options=[], command=None, category=None)

    def option(self, value: str, label: str, description: str | None = None) -> "Choice":
        self._choice.options.append(_viewer.ChoiceOption(value=value, label=label, description=_non_blank(description)))
        return self

    def command(self, command: str) -> "Choice":
        self._choice.command = command
        return self

    def category(self, category: str) -> "Choice":
        """What kind of setting it is where a front end has a place for it: `mode`,
        `model`, `thought-level`."""
        self._choice.category = category
        return self

    def widget(self) -> "_viewer.Widget":
        return _viewer.Widget_Choice(self._choice)


class Checklist:
    """A list of things to do, each with where it stands: a plan."""

    def __init__(self, id: str, label: str):
        self._checklist = _viewer.Checklist(id=id, label=label, entries=[])

    def entry(self, title: str, state: "_viewer.EntryState", active_form: str | None = None,
              detail: str | None = None) -> "Checklist":
        self._checklist.entries.append(_viewer.ChecklistEntry(
            title=title, state=state, active_form=_non_blank(active_form), detail=_non_blank(detail)))
        return self

    def widget(self) -> "_viewer.Widget":
        return _viewer.Widget_Checklist(self._checklist)


class Text:
    """Anything else, as markdown (front ends render it as text, never as markup)."""

    def __init__(self, id: str, label: str, markdown: str):
        self._text = _viewer.TextSection(id=id, label=label, markdown=markdown)

    def widget(self) -> "_viewer.Widget":
        return _viewer.Widget_Text(self._text)


def widgets(items) -> list:
    """The widgets a view function returned, each builder turned into the contract's type."""
    return [item.widget() if hasattr(item, "widget") else item for item in items]
