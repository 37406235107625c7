"""The SDK's schema and argument parsing, natively (schema.py imports nothing of the
contract's bindings): `python3 -m unittest discover -s plugins/sdk-python/tests`."""

import importlib.util
import pathlib
import typing
import unittest
from dataclasses import dataclass, field
from typing import Annotated, Literal, NotRequired, Optional, TypedDict

_path = pathlib.Path(__file__).parent.parent / "agent_host_sdk" / "schema.py"
_spec = importlib.util.spec_from_file_location("schema", _path)
schema = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(schema)


@dataclass
class Step:
    title: str
    done: bool = False


@dataclass
class Plan:
    goal: Annotated[str, "What the plan is for."]
    steps: list[Step]
    priority: Literal["low", "high"] = "low"
    owner: Optional[str] = None
    weight: float = 1.0
    tags: dict[str, int] = field(default_factory=dict)


class Filter(TypedDict):
    pattern: str
    limit: NotRequired[int]


class SchemaTests(unittest.TestCase):
    def test_a_dataclass_gives_a_closed_object_with_its_required_fields(self):
        self.assertEqual(
            schema.schema_of(Plan),
            {
                "type": "object",
                "properties": {
                    "goal": {"type": "string", "description": "What the plan is for."},
                    "steps": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"title": {"type": "string"}, "done": {"type": "boolean"}},
                            "additionalProperties": False,
                            "required": ["title"],
                        },
                    },
                    "priority": {"enum": ["low", "high"]},
                    "owner": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "weight": {"type": "number"},
                    "tags": {"type": "object", "additionalProperties": {"type": "integer"}},
                },
                "additionalProperties": False,
                "required": ["goal", "steps"],
            },
        )

    def test_a_typeddict_marks_not_required_keys(self):
        self.assertEqual(schema.schema_of(Filter)["required"], ["pattern"])

    def test_parsing_fills_defaults_and_builds_nested_records(self):
        plan = schema.parse(Plan, {"goal": "ship", "steps": [{"title": "test"}], "weight": 2})
        self.assertEqual(plan, Plan("ship", [Step("test")], weight=2.0))
        self.assertIsInstance(plan.weight, float)
        self.assertEqual(schema.parse(Filter, {"pattern": "*.rs"}), {"pattern": "*.rs"})

    def test_errors_name_the_field_by_its_path(self):
        cases = [
            ({"steps": []}, "missing field `goal`"),
            ({"goal": "a", "steps": [], "extra": 1}, "unknown field `extra`, expected `goal`, `owner`"),
            ({"goal": "a", "steps": [{"title": 3}]}, "`steps[0].title`: expected a string, found an integer"),
            ({"goal": "a", "steps": [], "priority": "urgent"}, "`priority`: expected one of `low`, `high`"),
            ({"goal": "a", "steps": [], "tags": {"x": "1"}}, "`tags.x`: expected an integer, found a string"),
            ({"goal": True, "steps": []}, "`goal`: expected a string, found a boolean"),
            ("text", "expected an object, found a string"),
        ]
        for value, message in cases:
            with self.subTest(value=value):
                with self.assertRaises(schema.ArgumentError) as raised:
                    schema.parse(Plan, value)
                self.assertIn(message, str(raised.exception))

    def test_a_boolean_is_not_an_integer(self):
        @dataclass
        class Count:
            n: int

        with self.assertRaises(schema.ArgumentError):
            schema.parse(Count, {"n": True})

    def test_an_unsupported_type_is_named(self):
        @dataclass
        class Odd:
            when: typing.Callable

        with self.assertRaises(TypeError):
            schema.schema_of(Odd)


if __name__ == "__main__":
    unittest.main()
