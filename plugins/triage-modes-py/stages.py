"""The three stages, in order, and what the model does in each."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    name: str  # as stored under `mode` and used by `advance_stage`
    label: str  # how a person sees it
    summary: str  # one line on what happens in it (the view's option)
    instructions: str  # the stage's own system-prompt instructions


STAGES = [
    Stage(
        "triage",
        "Triage",
        "Work out what the report is about and write the open questions down",
        "You are triaging. Work out what the report is really about, how severe it is and what is "
        "still unknown. Write each open question down as a todo. Do not try to fix anything yet. "
        "When the questions are written down, call `advance_stage` with `research`.",
    ),
    Stage(
        "research",
        "Research",
        "Answer the open questions; review opens when every todo is done",
        "You are researching. Answer the open questions one by one with the tools you have, and mark "
        "each todo complete as soon as it is answered. The review stage stays closed while any todo "
        "is open. When every todo is done, call `advance_stage` with `review`.",
    ),
    Stage(
        "review",
        "Review",
        "Summarise the findings and recommend what comes next",
        "You are reviewing. Summarise what was found, how confident you are in each finding and what "
        "you recommend next. This is the last stage.",
    ),
]


def position(name: str) -> int | None:
    """The position of `name` in STAGES."""
    return next((index for index, stage in enumerate(STAGES) if stage.name == name), None)


def names() -> str:
    """The stage names, for error messages: "`triage`, `research`, `review`"."""
    return ", ".join(f"`{stage.name}`" for stage in STAGES)
