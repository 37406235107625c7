"""What front ends show of a plugin (contract 0.2.4, the ``viewer`` export): typed widgets a
front end draws without knowing the plugin, returned from the function given to
``Plugin.view``: a checklist as a plan, a choice with a command as a switcher, text.

The builders (``Choice``, ``Checklist``, ``Text``) make the widget records
(``ChoiceWidget``, ``ChecklistWidget``, ``TextWidget``) a test compares a view with.
"""

import enum
from dataclasses import dataclass, field


class EntryState(enum.Enum):
    """Where an entry of a checklist stands."""

    PENDING = "pending"
    IN_PROGRESS = "in-progress"
    COMPLETED = "completed"


PENDING = EntryState.PENDING
IN_PROGRESS = EntryState.IN_PROGRESS
COMPLETED = EntryState.COMPLETED


@dataclass
class ChoiceOption:
    value: str  # as the switch command takes it
    label: str
    description: str | None = None


@dataclass
class ChoiceWidget:
    """One value out of a few: a mode, a stage, a preset."""

    id: str
    label: str
    current: str | None = None
    options: list[ChoiceOption] = field(default_factory=list)
    command: str | None = None
    category: str | None = None


@dataclass
class ChecklistEntry:
    title: str
    state: EntryState
    active_form: str | None = None
    detail: str | None = None


@dataclass
class ChecklistWidget:
    """A list of things to do, each with where it stands: a plan."""

    id: str
    label: str
    entries: list[ChecklistEntry] = field(default_factory=list)


@dataclass
class TextWidget:
    """Anything else, as markdown."""

    id: str
    label: str
    markdown: str


Widget = ChoiceWidget | ChecklistWidget | TextWidget


def _non_blank(text: str | None) -> str | None:
    return text if text and text.strip() else None


class Choice:
    """One value out of a few (a mode, a stage). With ``command`` a front end offers a
    switcher that runs it with the chosen value appended; without, only the model moves it."""

    def __init__(self, id: str, label: str, current: str | None = None):
        self._choice = ChoiceWidget(id=id, label=label, current=current)

    def option(self, value: str, label: str, description: str | None = None) -> "Choice":
        self._choice.options.append(ChoiceOption(value, label, _non_blank(description)))
        return self

    def command(self, command: str) -> "Choice":
        self._choice.command = command
        return self

    def category(self, category: str) -> "Choice":
        """What kind of setting it is where a front end has a place for it: `mode`,
        `model`, `thought-level`."""
        self._choice.category = category
        return self

    def widget(self) -> ChoiceWidget:
        return self._choice


class Checklist:
    """A list of things to do, each with where it stands: a plan."""

    def __init__(self, id: str, label: str):
        self._checklist = ChecklistWidget(id=id, label=label)

    def entry(self, title: str, state: EntryState, active_form: str | None = None,
              detail: str | None = None) -> "Checklist":
        self._checklist.entries.append(ChecklistEntry(title, state, _non_blank(active_form), _non_blank(detail)))
        return self

    def widget(self) -> ChecklistWidget:
        return self._checklist


class Text:
    """Anything else, as markdown (front ends render it as text, never as markup)."""

    def __init__(self, id: str, label: str, markdown: str):
        self._text = TextWidget(id=id, label=label, markdown=markdown)

    def widget(self) -> TextWidget:
        return self._text


def widgets(items) -> list[Widget]:
    """The widgets a view function returned, each builder turned into its record; a
    TypeError names anything that is neither."""
    shown = [item.widget() if isinstance(item, (Choice, Checklist, Text)) else item for item in items]
    for item in shown:
        if not isinstance(item, (ChoiceWidget, ChecklistWidget, TextWidget)):
            raise TypeError(f"`view` returned {item!r}, which is not a Choice, Checklist or Text")
    return shown
