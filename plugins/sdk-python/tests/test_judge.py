"""The `judge` export (contract 0.2.7) of a declared plugin, natively against stand-ins for
the bindings (wit_stub.py): `python3 -m unittest discover -s plugins/sdk-python/tests`."""

import unittest
from dataclasses import dataclass

import wit_stub

sdk = wit_stub.install()
from wit_world.exports import judge as _judge  # noqa: E402  (the stand-in, once installed)
from wit_world.imports import types as _types  # noqa: E402


@dataclass
class Config:
    strict: bool = False


def context(config: str = "{}") -> "_types.CallContext":
    return _types.CallContext(session_id="s1", config=config, model_calls=2, turn_iteration=1)


def tool_use(name: str = "remember") -> "_types.ToolUse":
    return _types.ToolUse(call=_types.ToolCall(id="c1", name=name, arguments="{}"), plugin="p", mutates=True)


def judge_of(plugin) -> object:
    exported = sdk.export(plugin)
    assert len(exported) == 4, "Guest, Compactor, Viewer, Judge"
    return exported[3]()


def errors() -> list[str]:
    return [message for level, message in wit_stub.LOGGED if level == "Level.ERROR"]


class JudgeTests(unittest.TestCase):
    def setUp(self):
        wit_stub.LOGGED.clear()

    def test_spec_names_only_the_hooks_the_plugin_declares(self):
        plugin = sdk.Plugin("p", "0.1.0")
        self.assertEqual(judge_of(plugin).spec("{}"), _judge.JudgeSpec(turn_end=False, review=False, queued=False))

        @plugin.on_review
        def review(ctx, call, asked):
            return None

        self.assertEqual(judge_of(plugin).spec("{}"), _judge.JudgeSpec(turn_end=False, review=True, queued=False))

        @plugin.on_turn_end
        def turn_end(ctx, reply):
            return None

        @plugin.on_queued
        def queued(ctx):
            return None

        self.assertEqual(judge_of(plugin).spec("{}"), _judge.JudgeSpec(turn_end=True, review=True, queued=True))

    def test_turn_end_gets_the_typed_context_and_the_reply_and_returns_its_verdict(self):
        plugin = sdk.Plugin("p", "0.1.0", Config)
        seen = []

        @plugin.on_turn_end
        def turn_end(ctx, reply):
            seen.append((ctx, reply))
            if reply == "more":
                return sdk.continue_turn("Keep going.")
            if reply == "stuck":
                return sdk.stop_turn(sdk.BLOCKED, "no way forward")
            return None

        judge = judge_of(plugin)
        self.assertEqual(judge.turn_end(context('{"strict": true}'), "more"), _judge.TurnVerdict_Continue("Keep going."))
        self.assertEqual(
            judge.turn_end(context(), "stuck"),
            _judge.TurnVerdict_Stop(_judge.StopVerdict(reason=_judge.StopReason.BLOCKED, message="no way forward")),
        )
        self.assertEqual(judge.turn_end(context(), "done"), _judge.TurnVerdict_End())
        self.assertEqual(seen[0], (sdk.Context("s1", Config(strict=True), 2, 1), "more"))
        self.assertEqual(errors(), [])

    def test_a_turn_end_that_raises_ends_the_turn_and_is_logged(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.on_turn_end
        def turn_end(ctx, reply):
            raise RuntimeError("judge broke")

        self.assertEqual(judge_of(plugin).turn_end(context(), "hi"), _judge.TurnVerdict_End())
        self.assertEqual(len(errors()), 1)
        self.assertIn("Traceback", errors()[0])
        self.assertIn("RuntimeError: judge broke", errors()[0])
        self.assertTrue(errors()[0].startswith("p: `turn-end` failed"), errors()[0])

    def test_a_turn_end_that_returns_no_verdict_ends_the_turn_and_is_logged(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.on_turn_end
        def turn_end(ctx, reply):
            return "Keep going."  # a string, not continue_turn(...)

        self.assertEqual(judge_of(plugin).turn_end(context(), "hi"), _judge.TurnVerdict_End())
        self.assertIn("not one of its verdicts", errors()[0])

    def test_review_returns_the_hooks_verdict_and_none_abstains(self):
        plugin = sdk.Plugin("p", "0.1.0")
        seen = []

        @plugin.on_review
        def review(ctx, call, asked):
            seen.append((call.call.name, asked))
            return {"rm": sdk.refuse("it deletes files"), "make": sdk.approve(),
                    "odd": sdk.review_error("cannot tell")}.get(call.call.name)

        judge = judge_of(plugin)
        self.assertEqual(judge.review(context(), tool_use("rm"), "asks"), _judge.ReviewVerdict_Deny("it deletes files"))
        self.assertEqual(judge.review(context(), tool_use("make"), "asks"), _judge.ReviewVerdict_Allow())
        self.assertEqual(judge.review(context(), tool_use("odd"), "asks"), _judge.ReviewVerdict_Error("cannot tell"))
        self.assertEqual(judge.review(context(), tool_use("ls"), "asks"), _judge.ReviewVerdict_Abstain())
        self.assertEqual(seen[0], ("rm", "asks"))
        self.assertEqual(errors(), [])

    def test_a_review_that_raises_is_an_error_never_an_allow_or_a_deny(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.on_review
        def review(ctx, call, asked):
            raise sdk.PluginError("the policy model did not answer")

        verdict = judge_of(plugin).review(context(), tool_use(), "asks")
        self.assertEqual(verdict, _judge.ReviewVerdict_Error("the policy model did not answer"))
        self.assertIn("Traceback", errors()[0])

        plugin = sdk.Plugin("q", "0.1.0")

        @plugin.on_review
        def crash(ctx, call, asked):
            return {}["verdict"]

        self.assertEqual(judge_of(plugin).review(context(), tool_use(), "asks"),
                         _judge.ReviewVerdict_Error("KeyError: 'verdict'"))

    def test_a_review_that_returns_a_permission_outcome_is_an_error(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.on_review
        def review(ctx, call, asked):
            return sdk.allow()  # the pre-tool-use outcome, not approve()

        verdict = judge_of(plugin).review(context(), tool_use(), "asks")
        self.assertIsInstance(verdict, _judge.ReviewVerdict_Error)
        self.assertIn("not one of its verdicts", verdict.value)

    def test_a_review_under_a_configuration_that_does_not_fit_is_an_error(self):
        plugin = sdk.Plugin("p", "0.1.0", Config)
        called = []

        @plugin.on_review
        def review(ctx, call, asked):
            called.append(call)
            return sdk.approve()

        verdict = judge_of(plugin).review(context('{"strict": "yes"}'), tool_use(), "asks")
        self.assertIsInstance(verdict, _judge.ReviewVerdict_Error)
        self.assertTrue(verdict.value.startswith("p cannot read its configuration: "), verdict.value)
        self.assertEqual(called, [], "the hook is not run")

    def test_queued_returns_the_prompt_and_none_when_the_hook_raises(self):
        plugin = sdk.Plugin("p", "0.1.0")
        prompts = iter(["Work toward the goal", None])

        @plugin.on_queued
        def queued(ctx):
            prompt = next(prompts)  # StopIteration the third time
            return prompt

        judge = judge_of(plugin)
        self.assertEqual(judge.queued(context()), "Work toward the goal")
        self.assertIsNone(judge.queued(context()))
        self.assertEqual(errors(), [])
        self.assertIsNone(judge.queued(context()))
        self.assertIn("StopIteration", errors()[0])

    def test_hooks_the_plugin_does_not_declare_decide_nothing(self):
        judge = judge_of(sdk.Plugin("p", "0.1.0"))
        self.assertEqual(judge.turn_end(context(), "hi"), _judge.TurnVerdict_End())
        self.assertEqual(judge.review(context(), tool_use(), "asks"), _judge.ReviewVerdict_Abstain())
        self.assertIsNone(judge.queued(context()))


if __name__ == "__main__":
    unittest.main()
