"""componentize-py's classes for the contract's ``judging-plugin`` world, for a declared
plugin: ``Guest, Compactor, Viewer, Judge = export(plugin)`` (the host's build writes that
line; a plugin module only defines ``plugin``). ``export`` sends the SDK's host calls to the
component's imports; each export converts what the host sends to the SDK's types, asks
``guest.Answers`` and converts its answer back. ``Failed`` becomes the contract's error and
``Trapped`` a trap (raising ``Err`` from an export that returns no result traps it).
"""

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import compactor as _compactor

from . import convert, imports
from .bindings import ComponentHost
from .guest import Answers, Failed, Trapped
from .plugin import Plugin


def _answer(run):
    try:
        return run()
    except (Failed, Trapped) as error:
        raise Err(error.message) from None


def export(plugin: Plugin):
    """The four classes componentize-py instantiates for the ``judging-plugin`` world."""

    imports.install(ComponentHost())
    guest = Answers(plugin)
    ctx = convert.call_context

    class Guest(exports.Guest):
        def manifest(self):
            return _answer(lambda: convert.manifest(guest.manifest()))

        def configure(self, config):
            return _answer(lambda: convert.configured(guest.configure(config)))

        def provide(self, raw):
            return _answer(lambda: convert.contribution(guest.provide(ctx(raw))))

        def call_tool(self, raw, call):
            return _answer(lambda: guest.call_tool(ctx(raw), convert.tool_call(call)))

        def session_start(self, raw):
            return _answer(lambda: guest.session_start(ctx(raw)))

        def user_prompt_submit(self, raw, prompt):
            return _answer(lambda: convert.prompt_outcome(guest.user_prompt_submit(ctx(raw), prompt)))

        def pre_tool_use(self, raw, call):
            return _answer(lambda: convert.pre_tool_outcome(guest.pre_tool_use(ctx(raw), convert.tool_use(call))))

        def post_tool_use(self, raw, call, outcome):
            def replace():
                return guest.post_tool_use(ctx(raw), convert.tool_use(call), convert.tool_result(outcome))

            return _answer(lambda: convert.post_tool_outcome(replace()))

        def stop(self, raw, reply):
            return _answer(lambda: convert.stop_outcome(guest.stop(ctx(raw), reply)))

        def command(self, raw, name, args):
            return _answer(lambda: guest.command(ctx(raw), name, args))

        def status(self, raw):
            return _answer(lambda: guest.status(ctx(raw)))

    class Compactor(exports.Compactor):
        """This SDK does not compact yet: a plugin that compacts is written in Rust."""

        def spec(self, config):
            return _compactor.CompactorSpec(hooks=_compactor.CompactionHooks(0), trigger_percent=None)

        def compact(self, raw, history, budget):
            raise Err(f"the {plugin.name} plugin does not compact")

        def pre_compact(self, raw, budget):
            return _compactor.PreCompactOutcome(veto=None, keep=[])

        def post_compact(self, raw, done):
            return None

    class Viewer(exports.Viewer):
        def shows(self, config):
            return guest.shows(config)

        def view(self, raw):
            return _answer(lambda: [convert.widget(each) for each in guest.view(ctx(raw))])

    class Judge(exports.Judge):
        def spec(self, config):
            return convert.judge_spec(guest.judge_spec(config))

        def turn_end(self, raw, reply):
            return convert.turn_verdict(guest.turn_end(ctx(raw), reply))

        def review(self, raw, call, asked):
            return convert.review_verdict(guest.review(ctx(raw), convert.tool_use(call), asked))

        def queued(self, raw):
            return guest.queued(ctx(raw))

    return Guest, Compactor, Viewer, Judge
