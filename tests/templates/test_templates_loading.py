"""Loading: every template is checked at start-up; a broken folder is refused, never read as ""."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillharness.errors import TemplateError
from skillharness.train.config import TrainConfig
from skillharness.train.roles.prompt_specs import TEMPLATE_SPECS
from skillharness.train.roles.templates import check_templates, load_templates, packaged_prompts

NAMES = sorted(TEMPLATE_SPECS)


def test_packaged_prompts_have_no_problem() -> None:
    assert check_templates() == []
    assert load_templates().names == tuple(NAMES)


def test_every_spec_has_a_packaged_file() -> None:
    files = {entry.name for entry in packaged_prompts().iterdir()}
    assert {f"{name}.md" for name in NAMES} <= files


@pytest.mark.parametrize("name", NAMES)
def test_p0_1_missing_template_raises_at_startup(prompt_copy: Path, name: str) -> None:
    (prompt_copy / f"{name}.md").unlink()
    with pytest.raises(TemplateError) as info:
        load_templates(prompt_copy)
    message = str(info.value)
    assert f"'{name}'" in message
    assert "missing" in message
    assert str(prompt_copy / f"{name}.md") in message


@pytest.mark.parametrize("content", ["", "   \n\t\n", "\n"])
def test_p0_1_empty_template_raises_at_startup(prompt_copy: Path, content: str) -> None:
    (prompt_copy / "evolve_skill.md").write_text(content)
    with pytest.raises(TemplateError) as info:
        load_templates(prompt_copy)
    assert "'evolve_skill'" in str(info.value)
    assert "empty" in str(info.value)
    assert str(prompt_copy / "evolve_skill.md") in str(info.value)


def test_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="does not exist"):
        load_templates(tmp_path / "nowhere")


@pytest.mark.parametrize("missing", ["system", "user"])
def test_missing_block_raises(prompt_copy: Path, missing: str) -> None:
    other = "user" if missing == "system" else "system"
    (prompt_copy / "consolidate_system.md").write_text(
        f"{{% block {other} %}}Compact {{{{ document }}}} to {{{{ max_chars }}}}.{{% endblock %}}\n"
    )
    with pytest.raises(TemplateError, match=rf"'consolidate_system'.*missing \{{% block {missing} %\}}"):
        load_templates(prompt_copy)


def test_empty_block_raises(prompt_copy: Path) -> None:
    (prompt_copy / "consolidate_system.md").write_text(
        "{% block system %}\n  \n{% endblock %}{% block user %}{{ document }} {{ max_chars }}{% endblock %}"
    )
    with pytest.raises(TemplateError, match=r"block system %\} is empty"):
        load_templates(prompt_copy)


def test_text_outside_blocks_is_refused(prompt_copy: Path) -> None:
    # Jinja renders only the blocks we ask for: this sentence would silently never be sent.
    source = (prompt_copy / "consolidate_system.md").read_text()
    (prompt_copy / "consolidate_system.md").write_text("Always keep the tool names.\n" + source)
    with pytest.raises(TemplateError, match="outside"):
        load_templates(prompt_copy)


def test_syntax_error_names_template_and_line(prompt_copy: Path) -> None:
    (prompt_copy / "judge.md").write_text("{% block system %}\nok\n{% if %}\n{% endblock %}")
    with pytest.raises(TemplateError, match=r"'judge'.*judge\.md.*line 3"):
        load_templates(prompt_copy)


def test_an_unknown_filter_is_a_problem_named_not_a_crash(prompt_copy: Path) -> None:
    """Parsing passes it; only compiling finds it, which the check once left to raise."""
    path = prompt_copy / "slow_momentum.md"
    path.write_text(path.read_text().replace("{{ epoch }}", "{{ epoch|nosuchfilter }}"))
    problems = check_templates(prompt_copy)
    assert len(problems) == 1
    assert "'slow_momentum'" in problems[0]
    assert "No filter named 'nosuchfilter'" in problems[0]


def test_an_expression_that_raises_when_rendered_is_a_template_error(prompt_copy: Path) -> None:
    path = prompt_copy / "slow_momentum.md"
    path.write_text(path.read_text().replace("{{ epoch }}", "{{ 1 / 0 }}"))
    with pytest.raises(TemplateError, match=r"'slow_momentum'.*raised ZeroDivisionError"):
        load_templates(prompt_copy)  # which renders the sample values: a crash then, not mid-run


def test_variable_the_loop_does_not_provide_is_refused(prompt_copy: Path) -> None:
    path = prompt_copy / "slow_momentum.md"
    path.write_text(path.read_text().replace("Epoch: {{ epoch }}", "Epoch: {{ epoch_number }}"))
    with pytest.raises(TemplateError, match=r"'slow_momentum'.*epoch_number"):
        load_templates(prompt_copy)


def test_missing_partial_is_refused(prompt_copy: Path) -> None:
    (prompt_copy / "_macros.md").unlink()
    with pytest.raises(TemplateError, match=r"_macros.md.*missing"):
        load_templates(prompt_copy)


def test_check_templates_reports_every_problem(prompt_copy: Path) -> None:
    (prompt_copy / "judge.md").unlink()
    (prompt_copy / "evolve_rank.md").unlink()
    (prompt_copy / "slow_momentum.md").write_text(" \n")
    problems = check_templates(prompt_copy)
    assert len(problems) == 3
    for name in ("judge", "evolve_rank", "slow_momentum"):
        assert sum(f"'{name}'" in p for p in problems) == 1
    with pytest.raises(TemplateError) as info:
        load_templates(prompt_copy)
    assert info.value.context["problems"] == problems


def test_a_user_folder_overrides_the_packaged_prompts(prompt_copy: Path) -> None:
    path = prompt_copy / "consolidate_system.md"
    path.write_text(
        "{% block system %}Shorten it.{% endblock %}\n"
        "{% block user %}{{ DOCUMENT_OPEN }}{{ document }}{{ DOCUMENT_CLOSE }}"
        " max {{ max_chars }}{% endblock %}\n"
    )
    rendered = load_templates(prompt_copy).render("consolidate_system", document="abc", max_chars=3)
    assert rendered.system == "Shorten it."
    assert rendered.user.endswith("max 3")


def test_template_hash_follows_the_text_and_its_partials(prompt_copy: Path) -> None:
    before = load_templates(prompt_copy)
    again = load_templates(prompt_copy)
    assert before.template_hash("judge") == again.template_hash("judge")
    path = prompt_copy / "_macros.md"
    path.write_text(path.read_text().replace("You diagnose", "You diagnose") + "\n{# edited #}\n")
    after = load_templates(prompt_copy)
    assert after.template_hash("judge") != before.template_hash("judge")
    judge = prompt_copy / "judge.md"
    judge.write_text(judge.read_text() + "\n{# edited #}\n")
    assert load_templates(prompt_copy).template_hash("judge") != after.template_hash("judge")
    assert load_templates(prompt_copy).template_hash("consolidate_system") != before.template_hash(
        "consolidate_system"
    )  # consolidate imports the partial too


def test_missing_folder_is_one_problem(tmp_path: Path) -> None:
    assert check_templates(tmp_path / "nowhere") == [f"prompt folder {tmp_path / 'nowhere'} does not exist"]


def test_train_config_names_the_prompt_folder(prompt_copy: Path) -> None:
    config = TrainConfig.model_validate({"prompts_dir": str(prompt_copy)})
    assert load_templates(config.prompts_dir).folder == str(prompt_copy)
    assert TrainConfig().prompts_dir is None


def test_undecodable_template_is_one_problem_and_a_bom_is_fine(prompt_copy: Path) -> None:
    judge = prompt_copy / "judge.md"
    judge.write_bytes(b"\xef\xbb\xbf" + judge.read_bytes())  # an editor's byte-order mark
    assert check_templates(prompt_copy) == []
    (prompt_copy / "evolve_tool.md").write_bytes(b"{% block system %}\xff\xfe{% endblock %}")
    problems = check_templates(prompt_copy)
    assert len(problems) == 1
    assert "evolve_tool.md cannot be read as UTF-8" in problems[0]
