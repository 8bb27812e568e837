"""Rendering: strict, exactly the declared variables, and the text matches each role's schema."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment, meta

from skillharness.errors import TemplateError
from skillharness.llm.roles import (
    DOCUMENT_CLOSE,
    DOCUMENT_OPEN,
    RANK_CANDIDATE_HEADING,
    RESPONSE_SCHEMAS,
    SCHEMA_NAMES,
    Role,
)
from skillharness.sim.prompt import extract_document
from skillharness.skills import EditSet, EditTarget, initial_bundle, parse_edit_set
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER
from skillharness.train.roles.prompt_specs import TEMPLATE_SPECS, CaseView, EditSetView
from skillharness.train.roles.templates import PromptTemplates, load_templates, packaged_prompts

NAMES = sorted(TEMPLATE_SPECS)


def _schema_terms(schema: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(every property name, every enum value) in a JSON schema, nested ones included."""
    fields: set[str] = set()
    values: set[str] = set()
    for name, sub in schema.get("properties", {}).items():
        fields.add(name)
        values.update(str(v) for v in sub.get("enum", ()))
        for nested in (sub, sub.get("items") or {}):
            if nested.get("properties"):
                more_fields, more_values = _schema_terms(nested)
                fields |= more_fields
                values |= more_values
    return fields, values


def _conforms(value: Any, schema: dict[str, Any]) -> bool:
    """Enough of JSON schema for our response schemas: type, enum, required, no extra keys."""
    types = schema.get("type")
    allowed = set(types) if isinstance(types, list) else {types} if types else None
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "null": lambda v: v is None,
    }
    if allowed and not any(checks[t](value) for t in allowed):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if not set(schema.get("required", ())) <= value.keys() or not value.keys() <= props.keys():
            return False
        return all(_conforms(v, props[k]) for k, v in value.items())
    if isinstance(value, list):
        return all(_conforms(v, schema.get("items", {})) for v in value)
    return True


@pytest.mark.parametrize("name", NAMES)
def test_every_template_renders_with_its_declared_variables(templates: PromptTemplates, name: str) -> None:
    spec = TEMPLATE_SPECS[name]
    rendered = templates.render(name, spec.sample())
    assert rendered.role is spec.role
    assert rendered.system.strip()
    assert rendered.user.strip()
    assert "Undefined" not in rendered.system + rendered.user
    assert rendered.messages()[0] == {"role": "system", "content": rendered.system}
    assert rendered.messages()[1] == {"role": "user", "content": rendered.user}
    assert rendered.response_format()["json_schema"]["name"] == SCHEMA_NAMES[spec.role]


@pytest.mark.parametrize("name", NAMES)
def test_packaged_templates_use_exactly_their_declared_variables(
    templates: PromptTemplates, name: str
) -> None:
    # A declared variable the packaged text never reads is dead weight or a forgotten section.
    assert templates.used_variables(name) == templates.required_variables(name)
    assert templates.required_variables(name) == set(TEMPLATE_SPECS[name].variables)
    source = (packaged_prompts() / f"{name}.md").read_text(encoding="utf-8")
    used = meta.find_undeclared_variables(Environment().parse(source))
    assert set(TEMPLATE_SPECS[name].variables) <= used


@pytest.mark.parametrize("name", NAMES)
def test_template_text_describes_every_field_and_value_of_its_schema(
    templates: PromptTemplates, name: str
) -> None:
    spec = TEMPLATE_SPECS[name]
    rendered = templates.render(name, spec.sample())
    text = rendered.system + "\n" + rendered.user
    fields, values = _schema_terms(RESPONSE_SCHEMAS[spec.role])
    assert fields, spec.role
    for field in fields:
        assert f"`{field}`" in text, f"{name}: field {field!r} of the {spec.role} schema is not described"
    for value in values:
        assert f'"{value}"' in text, f"{name}: value {value!r} of the {spec.role} schema is not described"


@pytest.mark.parametrize("name", NAMES)
def test_the_example_answer_in_each_template_fits_its_schema(templates: PromptTemplates, name: str) -> None:
    spec = TEMPLATE_SPECS[name]
    text = templates.render(name, spec.sample()).system
    examples = [
        json.loads(line[len("Example: ") :]) for line in text.splitlines() if line.startswith("Example: ")
    ]
    assert examples, f"{name} shows no example answer"
    for example in examples:
        assert _conforms(example, RESPONSE_SCHEMAS[spec.role]), (name, example)


def test_p0_6_slow_momentum_template_exists_and_renders(templates: PromptTemplates) -> None:
    assert (packaged_prompts() / "slow_momentum.md").is_file()
    bundle = initial_bundle()
    document = bundle.skill("OCR Problems").render()
    accepted = [EditSetView(rationale="Read signs twice.", edits_json='{"edits": []}')]
    rendered = templates.render(
        "slow_momentum",
        task_type="OCR Problems",
        document=document,
        accepted=accepted,
        epoch=2,
        max_chars=600,
    )
    assert rendered.role is Role.MOMENTUM
    assert extract_document(rendered.user) == document.strip("\n")
    assert "Read signs twice." in rendered.user
    assert "epoch 2" in rendered.system
    assert "`guidance`" in rendered.system
    assert "600 characters" in rendered.system


def test_p2_7_span_eval_user_template_exists_and_renders(templates: PromptTemplates) -> None:
    assert (packaged_prompts() / "span_eval_user.md").is_file()
    values = TEMPLATE_SPECS["span_eval_user"].sample()
    rendered = templates.render("span_eval_user", values)
    assert rendered.role is Role.JUDGE
    span = values["spans"][0]
    assert f"`{span.tool}` {span.start_s:.1f}–{span.end_s:.1f} s: {span.detail}" in rendered.user
    assert values["case"].question in rendered.user
    assert all(option in rendered.user for option in values["case"].options)
    no_spans = templates.render("span_eval_user", {**values, "spans": []})
    assert "initial uniformly sampled frames only" in no_spans.user


def test_p2_7_undefined_variable_is_an_error_not_empty(templates: PromptTemplates, prompt_copy: Path) -> None:
    values = TEMPLATE_SPECS["evolve_skill"].sample()
    del values["rejected"]
    with pytest.raises(TemplateError, match=r"'evolve_skill'.*missing variable\(s\) rejected") as info:
        templates.render("evolve_skill", values)
    assert info.value.context["variable"] == "rejected"
    # A value lacking an attribute the template reads is an error too, never an empty string.
    case = {"question": "Q?", "options": ["A. x", "B. y"]}
    with pytest.raises(TemplateError, match=r"'judge'.*undefined"):
        templates.render("judge", {**TEMPLATE_SPECS["judge"].sample(), "case": case})
    # And a template that reads a name nobody defines fails at load time, not at run time.
    path = prompt_copy / "judge.md"
    path.write_text(path.read_text().replace("{{ m.case_block(case, 0) }}", "{{ case.verdict_hint }}"))
    with pytest.raises(TemplateError, match=r"'judge'.*verdict_hint"):
        load_templates(prompt_copy)


def test_unknown_and_none_variables_are_refused(templates: PromptTemplates) -> None:
    values = TEMPLATE_SPECS["consolidate_system"].sample()
    with pytest.raises(TemplateError, match=r"unknown variable.*budget"):
        templates.render("consolidate_system", {**values, "budget": 3})
    with pytest.raises(TemplateError, match="document are None"):
        templates.render("consolidate_system", {**values, "document": None})
    with pytest.raises(TemplateError, match="no prompt template 'evolve'"):
        templates.render("evolve", values)


def test_a_part_that_renders_empty_is_an_error(prompt_copy: Path) -> None:
    (prompt_copy / "consolidate_system.md").write_text(
        "{% block system %}{{ document if max_chars > 10 else '' }}{% endblock %}"
        "{% block user %}{{ max_chars }}{% endblock %}"
    )
    loaded = load_templates(prompt_copy)  # the sample's budget is over 10
    with pytest.raises(TemplateError, match=r"block 'system'.*rendered empty"):
        loaded.render("consolidate_system", document="x", max_chars=5)


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("evolve_skill", EditTarget.skill("OCR Problems")),
        ("evolve_system", EditTarget.system()),
        ("evolve_tool", EditTarget.tool("get_frames")),
    ],
)
def test_evolve_prompt_wraps_the_current_document(
    templates: PromptTemplates, name: str, target: EditTarget
) -> None:
    bundle = initial_bundle()
    document = {
        "skill": lambda: bundle.skill("OCR Problems").render(),
        "system": lambda: bundle.system_prompt,
        "tools": lambda: bundle.tools["get_frames"],
    }[target.kind]()
    values = {**TEMPLATE_SPECS[name].sample(), "document": document}
    rendered = templates.render(name, values)
    assert f"{DOCUMENT_OPEN}\n{document}\n{DOCUMENT_CLOSE}" in rendered.user
    # The document is the last wrapped text of the whole conversation (where servers look for it).
    assert extract_document(rendered.system + "\n" + rendered.user) == document.strip("\n")
    assert values["rejected"][0].edits_json in rendered.user
    assert values["rejected"][0].outcome in rendered.user


def test_evolve_skill_says_which_regions_are_not_editable(templates: PromptTemplates) -> None:
    rendered = templates.render("evolve_skill", TEMPLATE_SPECS["evolve_skill"].sample())
    assert MOMENTUM_MARKER in rendered.system
    assert APPENDIX_MARKER in rendered.system
    assert "Neither is editable" in rendered.system


def test_rewrite_mode_shows_a_rewrite_example(templates: PromptTemplates) -> None:
    values = {**TEMPLATE_SPECS["evolve_skill"].sample(), "skill_update_mode": "rewrite"}
    rendered = templates.render("evolve_skill", values)
    example = next(line for line in rendered.system.splitlines() if line.startswith("Example: "))
    parsed = parse_edit_set(example[len("Example: ") :])
    assert isinstance(parsed, EditSet)
    assert parsed.skill_update_mode == "rewrite"
    assert "Mode: rewrite" in rendered.user


def test_rank_prompt_introduces_candidates_by_zero_based_heading(templates: PromptTemplates) -> None:
    values = TEMPLATE_SPECS["evolve_rank"].sample()
    candidates = [replace(values["candidates"][0], rationale=f"idea {i}") for i in range(3)]
    rendered = templates.render("evolve_rank", {**values, "candidates": candidates})
    headings = [line for line in rendered.user.splitlines() if line.startswith("### Candidate")]
    assert headings == [RANK_CANDIDATE_HEADING.format(index=i) for i in range(3)]
    positions = [rendered.user.index(f"idea {i}") for i in range(3)]
    assert positions == sorted(positions)
    # Only real candidates start a line with a candidate heading (a server counts them).
    assert not re.search(r"(?im)^\W*candidate\s*#?\s*\[?\d", rendered.system)


def test_case_without_an_answer_is_shown_as_none(templates: PromptTemplates) -> None:
    values = TEMPLATE_SPECS["judge"].sample()
    case: CaseView = replace(values["case"], agent_answer=None)
    rendered = templates.render("judge", {**values, "case": case})
    assert "Agent's answer: none (no valid letter submitted)" in rendered.user
