"""Evolution against the simulator: proposals change the bundle, refusals carry reasons (P0-1, P1-6)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from evolve_support import (
    Env,
    RecordingModel,
    ScriptedModel,
    user_text,
    with_evolve,
    with_model,
)

from skillharness.data import slugify
from skillharness.llm.roles import RANK_DECLINE_OFFER, Role
from skillharness.sim.insights import normalize_text
from skillharness.skills import Bundle, EditSet, EditTarget, MomentumUpdate, RefusalReason, initial_bundle
from skillharness.train.config import RoleSettings
from skillharness.train.evolve.prompts import render_evolve_prompts
from skillharness.train.evolve.proposer import (
    EvolveRefusal,
    evolve,
    evolve_all,
    remember,
    remember_refusal,
    remember_rejection,
)
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import (
    Candidate,
    CasePack,
    GateOutcome,
    GateReason,
    Refused,
    RejectedEdit,
)


def scripted(
    env: Env, evolve_reply: str | None, rank_reply: str | None = None, **config: object
) -> TrainContext:
    scripts = {Role.EVOLVE: lambda _request: evolve_reply}
    if rank_reply is not None:
        scripts[Role.RANK] = lambda _request: rank_reply
    return with_model(env.ctx, ScriptedModel(env.ctx.caller.model, scripts), **config)


def patch_reply(anchor: str, text: str, op: str = "insert_after") -> str:
    edit = {"op": op, "anchor": anchor, "text": text}
    return json.dumps({"skill_update_mode": "patch", "edits": [edit], "body": None, "rationale": "r"})


def last_body_line(bundle: Bundle, task_type: str) -> str:
    return [line for line in bundle.skill(task_type).body.split("\n") if line.strip()][-1]


def test_p0_1_evolution_changes_the_bundle(env: Env) -> None:
    assert env.pack.cases, "the rollout left no wrong case that needs a missing insight"
    recorder = RecordingModel(env.ctx.caller.model)
    ctx = with_model(env.ctx, recorder)
    result = env.runner.run(evolve(ctx, env.bundle, env.pack, ()))

    assert isinstance(result, Candidate), result
    assert result.document_after != result.document_before
    assert result.bundle.bundle_hash != env.bundle.bundle_hash
    slug = slugify(env.task_type)
    assert [s for s in env.bundle.skills if result.bundle.skills[s] != env.bundle.skills[s]] == [slug]
    assert result.bundle.system_prompt == env.bundle.system_prompt
    assert dict(result.bundle.tools) == dict(env.bundle.tools)
    before, after = env.bundle.skill(env.task_type), result.bundle.skill(env.task_type)
    assert (after.momentum, after.appendix) == (before.momentum, before.appendix)
    assert result.evidence_ids == env.pack.evidence_ids
    asked = recorder.of_role(Role.EVOLVE)
    assert sorted(r.sample_idx for r in asked) == [0, 1, 2]
    assert all(f"Task type: {env.task_type}" in user_text(r) for r in asked)
    ranked = recorder.of_role(Role.RANK)
    assert result.choice == ("rank" if ranked else "only")

    # The oracle knows the candidate's worth: with insight_rate=1 the edit states an insight of
    # this task type that the skill lacked, so the questions of the type that need it gain (the
    # simulated model sometimes picks an insight none of them needs: then nothing changes).
    world = env.sim.world
    added = [
        r.id
        for r in world.insights_for(env.task_type)
        if r.present_in(normalize_text(result.document_after))
        and not r.present_in(normalize_text(result.document_before))
    ]
    assert added, result.edit_set
    questions = [q for q in world.questions.values() if q.task_type == env.task_type]
    needed = {i for q in questions for i in world.truth(q).needed}
    ids = [q.question_id for q in questions]
    effect = env.sim.oracle.edit_effect(env.bundle, result.bundle, ids)
    assert effect.delta >= 0
    assert (effect.delta > 0) == bool(needed & set(added)), (added, needed, effect)
    on_evidence = env.sim.oracle.edit_effect(env.bundle, result.bundle, sorted(result.evidence_ids))
    assert on_evidence.delta >= 0
    assert env.ctx.session.usage()["evolve"]["calls"] >= 3


@pytest.mark.parametrize(
    ("settings", "calls"),
    [({}, 3), ({"temperature": 0.0}, 1), ({"temperature": 0.7, "seed": 5}, 1), ({"temperature": 0.7}, 3)],
)
def test_7e_evolve_pays_for_several_candidates_only_when_they_can_differ(
    env: Env, settings: dict[str, float], calls: int
) -> None:
    """At temperature 0 or with a fixed seed a server answers one prompt alike; the role's default
    (temperature 0.7, no seed) samples, so every candidate is asked."""
    recorder = RecordingModel(env.ctx.caller.model)
    caller = dataclasses.replace(env.ctx.caller, model=recorder, roles={"evolve": RoleSettings(**settings)})
    ctx = dataclasses.replace(env.ctx, caller=caller)
    assert ctx.config.evolve.candidates == 3
    result = env.runner.run(evolve(ctx, env.bundle, env.pack, ()))
    assert [r.sample_idx for r in recorder.of_role(Role.EVOLVE)] == list(range(calls))
    if calls == 1:  # one candidate is still shown to the rank role, which may decline it
        assert len(recorder.of_role(Role.RANK)) == 1
        assert (result.choice if isinstance(result, Candidate) else result.reason) in {
            "rank",
            EvolveRefusal.RANK_DECLINED,
        }


@pytest.mark.parametrize("where", ["crossing_the_momentum_marker", "inside_the_appendix"])
def test_p1_6_evolve_edit_reaching_the_appendix_is_refused_with_reason(env: Env, where: str) -> None:
    document = env.bundle.skill(env.task_type)
    if where == "crossing_the_momentum_marker":
        cut = document.body_end  # the anchor starts in the body and runs into the marker line
        anchor = document.render()[cut - 12 : cut + 12]
    else:
        anchor = next(line for line in document.appendix.split("\n") if line.strip())
        assert document.render().count(anchor) == 1
    ctx = scripted(env, patch_reply(anchor, "\n- Appended past the body."))
    result = env.runner.run(evolve(ctx, env.bundle, env.pack, ()))

    assert isinstance(result, Refused), result
    assert result.reason == RefusalReason.SPAN_OUTSIDE_BODY
    assert result.calls == ctx.config.evolve.candidates  # every proposal asked, each refused
    assert result.document_before == document.render()
    assert env.bundle.skill(env.task_type).render() == document.render()  # nothing was changed
    assert result.edit_set is not None
    assert result.edit_set.edits[0].anchor == anchor
    memory = remember_refusal(result)
    assert memory.outcome.startswith("reject_invalid: span_outside_body: ")
    assert not [r for r in ctx.caller.model.requests if r.role is Role.RANK]


def test_rewrite_mode_keeps_momentum_and_appendix_byte_identical(env: Env) -> None:
    incumbent = env.bundle.with_momentum(env.task_type, MomentumUpdate(text="- Keep in mind: look twice."))
    before = incumbent.skill(env.task_type)
    body = "# Rewritten\n\n- Read every frame's caption before answering.\n"
    reply = json.dumps({"skill_update_mode": "rewrite", "edits": [], "body": body, "rationale": "r"})
    # The rank role would weigh a made-up rule; this test is about the rewrite alone.
    ctx = with_evolve(scripted(env, reply, skill_update_mode="rewrite"), rank_may_decline=False)
    result = env.runner.run(evolve(ctx, incumbent, env.pack, ()))

    assert isinstance(result, Candidate), result
    after = result.bundle.skill(env.task_type)
    assert after.body == body
    old, new = before.render(), after.render()
    assert new[len(after.body) :] == old[len(before.body) :]  # markers, momentum, appendix: same bytes
    assert after.momentum == "- Keep in mind: look twice.\n"
    prompts = [user_text(r) for r in ctx.caller.model.requests if r.role is Role.EVOLVE]
    assert prompts
    assert all("Mode: rewrite" in p for p in prompts)


def test_rejected_memory_is_shown_to_the_next_proposal(env: Env) -> None:
    anchor = next(line for line in env.bundle.skill(env.task_type).appendix.split("\n") if line.strip())
    first_ctx = scripted(env, patch_reply(anchor, "\n- x"))
    first = env.runner.run(evolve(first_ctx, env.bundle, env.pack, ()))
    assert isinstance(first, Refused)
    first_prompt = user_text(first_ctx.caller.model.requests[0])
    assert "span_outside_body" not in first_prompt

    recorder = RecordingModel(env.ctx.caller.model)
    second = env.runner.run(
        evolve(with_model(env.ctx, recorder), env.bundle, env.pack, [remember_refusal(first)])
    )
    assert isinstance(second, Candidate | Refused)
    asked = recorder.of_role(Role.EVOLVE)
    assert len(asked) == 3
    for request in asked:  # what the simulator received
        text = user_text(request)
        assert "### Rejected attempt 1" in text
        assert "reject_invalid: span_outside_body" in text


def test_only_the_last_rejections_are_shown(env: Env) -> None:
    rejected = [
        RejectedEdit(rationale=f"idea number {i}", edits_json="null", outcome="reject_inertia: x")
        for i in range(7)
    ]
    ctx = with_evolve(env.ctx, rejected_memory=5)
    prompt = env.runner.run(
        render_evolve_prompts(ctx, env.bundle, [env.pack], {env.pack.target.label(): rejected})
    )[0]
    assert "idea number 1\n" not in prompt.user
    assert "idea number 2" in prompt.user
    assert "### Rejected attempt 5" in prompt.user
    assert "### Rejected attempt 6" not in prompt.user


def three_inserts(env: Env) -> tuple[ScriptedModel, list[str]]:
    anchor = last_body_line(env.bundle, env.task_type)
    lines = [f"\n- Distinct rule number {i}." for i in range(3)]

    def reply(request: object) -> str:
        return patch_reply(anchor, lines[request.sample_idx])  # type: ignore[attr-defined]

    return ScriptedModel(env.ctx.caller.model, {Role.EVOLVE: reply}), lines


@pytest.mark.parametrize("rank_reply", ["not json at all", '{"choice": 7, "reason": "x"}', None])
def test_a_failed_rank_falls_back_to_the_first_valid_candidate_and_says_so(
    env: Env, rank_reply: str | None
) -> None:
    model, lines = three_inserts(env)
    model.scripts[Role.RANK] = lambda _request: rank_reply
    result = env.runner.run(evolve(with_model(env.ctx, model), env.bundle, env.pack, ()))
    assert isinstance(result, Candidate)
    assert result.choice == "rank_fallback"
    assert result.choice_detail
    assert lines[0].strip() in result.document_after
    assert lines[1].strip() not in result.document_after


def test_rank_chooses_among_valid_candidates(env: Env) -> None:
    model, lines = three_inserts(env)
    model.scripts[Role.RANK] = lambda _request: '{"choice": 2, "reason": "the clearest rule"}'
    result = env.runner.run(evolve(with_model(env.ctx, model), env.bundle, env.pack, ()))
    assert isinstance(result, Candidate)
    assert (result.choice, result.choice_detail) == ("rank", "the clearest rule")
    assert lines[2].strip() in result.document_after
    rank_prompt = user_text(next(r for r in model.requests if r.role is Role.RANK))
    assert all(line.strip() in rank_prompt for line in lines)

    off = with_evolve(with_model(env.ctx, model), rank=False)
    first = env.runner.run(evolve(off, env.bundle, env.pack, ()))
    assert isinstance(first, Candidate)
    assert first.choice == "first"


def test_a_declining_rank_opens_no_test_and_the_next_proposal_is_told_why(env: Env) -> None:
    model, lines = three_inserts(env)
    model.scripts[Role.RANK] = lambda _request: '{"choice": -1, "reason": "only generic advice"}'
    result = env.runner.run(evolve(with_model(env.ctx, model), env.bundle, env.pack, ()))
    assert isinstance(result, Refused), result
    assert (result.reason, result.detail) == (EvolveRefusal.RANK_DECLINED, "only generic advice")
    # What the decline cost, counted beside the decisions: every proposal and the rank call.
    assert result.calls == len(model.requests) == 3 + 1
    assert result.edit_set is not None
    assert lines[0].strip() in result.edit_set.edits[0].text
    assert remember_refusal(result).outcome == "reject_invalid: rank_declined: only generic advice"
    assert RANK_DECLINE_OFFER in user_text(next(r for r in model.requests if r.role is Role.RANK))

    # Without the offer -1 is no choice: the rank reply is unusable and the first candidate is tested.
    model.requests.clear()
    off = env.runner.run(
        evolve(with_evolve(with_model(env.ctx, model), rank_may_decline=False), env.bundle, env.pack, ())
    )
    assert isinstance(off, Candidate)
    assert off.choice == "rank_fallback"
    assert RANK_DECLINE_OFFER not in user_text(next(r for r in model.requests if r.role is Role.RANK))


def test_a_single_candidate_is_shown_to_the_rank_role_only_when_it_may_decline(env: Env) -> None:
    anchor = last_body_line(env.bundle, env.task_type)
    reply = patch_reply(anchor, "\n- One rule only.")
    declining = scripted(env, reply, '{"choice": -1, "reason": "nothing the cases need"}')
    result = env.runner.run(evolve(declining, env.bundle, env.pack, ()))
    assert isinstance(result, Refused)
    assert result.reason == EvolveRefusal.RANK_DECLINED
    assert len([r for r in declining.caller.model.requests if r.role is Role.RANK]) == 1

    trusting = with_evolve(scripted(env, reply, '{"choice": -1, "reason": "x"}'), rank_may_decline=False)
    result = env.runner.run(evolve(trusting, env.bundle, env.pack, ()))
    assert isinstance(result, Candidate)
    assert result.choice == "only"
    assert not [r for r in trusting.caller.model.requests if r.role is Role.RANK]


def test_unusable_proposals_end_as_a_refusal_naming_each_reason(env: Env) -> None:
    anchor = last_body_line(env.bundle, env.task_type)
    replies = [patch_reply(anchor, anchor, op="replace"), None, "{not json"]
    model = ScriptedModel(env.ctx.caller.model, {Role.EVOLVE: lambda request: replies[request.sample_idx]})
    result = env.runner.run(evolve(with_model(env.ctx, model), env.bundle, env.pack, ()))
    assert isinstance(result, Refused)
    assert result.reason == RefusalReason.MALFORMED_JSON  # all tie at one: the latest wins
    for reason in (EvolveRefusal.NO_CHANGE, EvolveRefusal.CALL_FAILED, RefusalReason.MALFORMED_JSON):
        assert f" {reason.value}: " in f" {result.detail}"


def test_dry_run_renders_every_pack_without_a_call_and_evolve_all_keeps_pack_order(env: Env) -> None:
    packs = [
        env.pack,
        CasePack(target=EditTarget.system(), cases=env.pack.cases),
        CasePack(target=EditTarget.tool("get_frames"), cases=env.pack.cases),
    ]
    recorder = RecordingModel(env.ctx.caller.model)
    ctx = with_model(env.ctx, recorder)
    prompts = env.runner.run(render_evolve_prompts(ctx, env.bundle, packs))
    assert recorder.requests == []
    assert [p.name for p in prompts] == ["evolve_skill", "evolve_system", "evolve_tool"]
    assert f"Task type: {env.task_type}" in prompts[0].user
    assert all(env.pack.cases[0].case.question.question in p.user for p in prompts)
    assert '"start_s"' in prompts[2].user

    results = env.runner.run(evolve_all(ctx, env.bundle, packs))
    assert [r.target for r in results] == [p.target for p in packs]
    assert len(recorder.of_role(Role.EVOLVE)) == 9


def test_gate_rejections_are_remembered_with_their_reason_and_memory_is_capped() -> None:
    edit_set = EditSet(skill_update_mode="rewrite", edits=(), body="- A rule.\n", rationale="why")
    bundle = initial_bundle()
    target = EditTarget.system()
    candidate = Candidate(target, edit_set, bundle, "before", "after", "only")
    outcome = GateOutcome(reason=GateReason.REJECT_INERTIA, detail="no evidence\neither way after 24 draws")
    entry = remember_rejection(candidate, outcome)
    assert entry.outcome == "reject_inertia: no evidence either way after 24 draws"
    assert EditSet.model_validate_json(entry.edits_json) == edit_set
    memory: tuple[RejectedEdit, ...] = ()
    for i in range(7):
        memory = remember(memory, entry.model_copy(update={"rationale": str(i)}), 5)
    assert [m.rationale for m in memory] == ["2", "3", "4", "5", "6"]
    assert remember(memory, entry, 0) == ()
