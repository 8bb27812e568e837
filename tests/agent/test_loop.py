"""The agent loop over a scripted model, with real frames, a real bundle and a real SQLite store."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest
from agent_support import InvalidatingModel, ScriptedModel, answer_reply, question, text_reply, tool_reply

from skillharness.agent import (
    Agent,
    AgentConfig,
    Prediction,
    PredictionStatus,
    StepRole,
    TraceStep,
    answer_all,
)
from skillharness.agent.video import LocalVideos
from skillharness.errors import AuthError, StoreError, TransientLLMError
from skillharness.llm.roles import TOOL_PARAMETERS, Role, role_of_request
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse, SamplingParams
from skillharness.skills.bundle import Bundle
from skillharness.store import RunLog, RunReader
from skillharness.video import FrameSampler, FramesConfig


def _agent(model: ChatModel, default_bundle: Bundle, videos: LocalVideos, **config: object) -> Agent:
    settings = {"initial_frames": 4, "max_frames": 8, "max_steps": 4} | config
    return Agent(
        model=model,
        model_name="sim-vl",
        bundle=default_bundle,
        frames=videos,
        subtitles=videos,
        config=AgentConfig.model_validate(settings),
    )


async def test_p0_4_non_scalar_answer_is_normalized_and_batch_survives(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog, sqlite_url: str
) -> None:
    questions = [question("q1"), question("q2"), question("q3", answer="C"), question("q4")]
    model = ScriptedModel(
        {
            "q1": [answer_reply(["B"])],  # {"answer": ["B"]}: the shape that crashed the predecessor
            "q2": [RuntimeError("model server exploded")],
            "q3": [text_reply("The answer is C.")],
            "q4": [tool_reply("submit_answer", '{"answer": {"answer": ["B", "D"]}}')],
        }
    )
    agent = _agent(model, default_bundle, videos)
    results = await asyncio.gather(
        *(agent.answer(q, run_id="run-1", sample_idx=0, sink=run_log) for q in questions)
    )
    by_id = {p.question_id: p for p in results}
    assert (by_id["q1"].status, by_id["q1"].answer, by_id["q1"].correct) == (PredictionStatus.OK, "B", True)
    assert by_id["q2"].status is PredictionStatus.INFRA_ERROR
    assert (by_id["q2"].error_class, by_id["q2"].error_message) == ("RuntimeError", "model server exploded")
    assert by_id["q2"].correct is None  # never counted as wrong
    assert (by_id["q3"].answer, by_id["q3"].correct) == ("C", True)
    assert by_id["q4"].status is PredictionStatus.PARSE_ERROR
    assert by_id["q4"].correct is False
    assert "several different letters" in (by_id["q4"].error_message or "")
    await run_log.flush()
    with RunReader(sqlite_url) as reader:
        stored = {p.question_id: p for p in reader.predictions("run-1")}
    assert stored == by_id  # every question ended with its row, none aborted the batch


async def test_p0_2_traces_are_written_during_inference(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog, sqlite_url: str
) -> None:
    seen: list[list[TraceStep]] = []

    async def look_while_running(request: ChatRequest) -> ChatResponse:
        # Steps are queued and committed by the writer's next batch; wait for that batch (the
        # question itself is still running: its prediction is not written yet).
        await run_log.flush()
        with RunReader(sqlite_url) as reader:  # a separate, read-only connection to the file
            seen.append(reader.trace("run-1", "q1"))
            assert reader.predictions("run-1") == []  # the question is still running
        return answer_reply("B")

    model = ScriptedModel(
        {"q1": [tool_reply("get_frames", {"start_s": 1, "end_s": 3, "count": 2}), look_while_running]}
    )
    prediction = await _agent(model, default_bundle, videos).answer(
        question("q1"), run_id="run-1", sample_idx=0, sink=run_log
    )
    assert prediction.status is PredictionStatus.OK
    (mid_run,) = seen
    assert [s.role for s in mid_run] == [StepRole.USER, StepRole.ASSISTANT, StepRole.TOOL]
    assert mid_run[0].frames_shown == (0.5, 1.5, 2.5, 3.5)
    assert mid_run[2].tool_name == "get_frames"
    assert mid_run[2].frames_shown == (1.5, 2.5)
    with RunReader(sqlite_url) as reader:
        final = reader.trace("run-1", "q1")
    assert len(final) == prediction.n_steps == 5  # + the answering turn and the submit_answer call
    assert final[-1].tool_name == "submit_answer"
    assert final[-1].content == "answer B"


async def test_first_message_shows_question_options_duration_frames_and_subtitles(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    model = ScriptedModel({"q1": [answer_reply("B")]})
    agent = _agent(model, default_bundle, videos, sampling=SamplingParams(temperature=0.7, seed=3))
    await agent.answer(question("q1"), run_id="run-1", sample_idx=2, sink=run_log)
    (request,) = model.requests
    system, first = request.messages
    assert system["content"].startswith(default_bundle.system_prompt.strip())
    assert default_bundle.skill("Counting Problem").render().strip() in system["content"]
    text = first["content"][0]["text"]
    for option in question("q1").options:
        assert option in text
    assert "Video duration: 4.0s" in text
    assert "[0.5s] first line" in text
    assert "[2.0s] second line" in text
    images = [p for p in first["content"] if p["type"] == "image_url"]
    assert len(images) == 4
    assert all(p["image_url"]["url"].startswith("data:image/jpeg;base64,") for p in images)
    assert (request.role, request.sample_idx, request.sampling.seed) == (Role.AGENT, 2, 3)
    assert role_of_request({"tools": list(request.tools or ())}) is Role.AGENT
    specs = {t["function"]["name"]: t["function"] for t in request.tools or ()}
    assert specs["get_frames"]["description"] == default_bundle.tools["get_frames"]
    assert specs["get_frames"]["parameters"] == TOOL_PARAMETERS["get_frames"]


async def test_vision_off_sends_no_image_and_offers_no_frames_tool(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog, sqlite_url: str
) -> None:
    model = ScriptedModel(
        {"q1": [tool_reply("get_subtitles", {"start_s": 0, "end_s": 4}), answer_reply("b")]}
    )
    agent = _agent(model, default_bundle, videos, vision=False)
    prediction = await agent.answer(question("q1"), run_id="run-1", sample_idx=0, sink=run_log)
    assert prediction.answer == "B"
    dumped = json.dumps([r.messages for r in model.requests])
    assert "image_url" not in dumped
    assert {t["function"]["name"] for t in model.requests[0].tools or ()} == {
        "get_subtitles",
        "submit_answer",
    }
    tool_message = model.requests[1].messages[-1]
    assert tool_message["role"] == "tool"
    assert "first line" in tool_message["content"]
    await run_log.flush()
    reader = RunReader(sqlite_url)
    try:
        steps = reader.trace("run-1", "q1")
    finally:
        reader.close()
    assert steps, "the steps were traced"
    assert all(step.frames_shown == () for step in steps), "no frame was shown, so the trace names none"


async def test_tool_misuse_becomes_tool_messages_and_the_budgets_hold(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog, sqlite_url: str
) -> None:
    script = [
        tool_reply("get_frames", "{not json"),
        tool_reply("get_frames", {"start_s": 10, "end_s": 20, "count": 2}),  # past the end of a 4 s video
        tool_reply("get_frames", {"start_s": 0, "end_s": 4, "count": 50}),  # clamped to the 4 frames left
        answer_reply("B"),
    ]
    model = ScriptedModel({"q1": script})
    agent = _agent(model, default_bundle, videos, max_steps=6)
    prediction = await agent.answer(question("q1"), run_id="run-1", sample_idx=0, sink=run_log)
    assert prediction.status is PredictionStatus.OK
    tool_texts = [r.messages[-1]["content"] for r in model.requests[1:3]]
    assert "not valid JSON" in tool_texts[0]
    assert "empty time range" in tool_texts[1]
    with RunReader(sqlite_url) as reader:
        tools = [s for s in reader.trace("run-1", "q1") if s.role is StepRole.TOOL]
    assert [s.error is not None for s in tools] == [True, True, False, False]
    assert len(tools[2].frames_shown) == 4  # 4 initial + 4 = max_frames 8


async def test_frame_budget_exhausted_is_told_to_the_model(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    ask = tool_reply("get_frames", {"start_s": 0, "end_s": 4, "count": 2})
    model = ScriptedModel({"q1": [ask, answer_reply("A")]})
    agent = _agent(model, default_bundle, videos, initial_frames=4, max_frames=4)
    prediction = await agent.answer(question("q1"), run_id="run-1", sample_idx=0, sink=run_log)
    assert "frame budget exhausted" in model.requests[1].messages[-1]["content"]
    assert (prediction.answer, prediction.correct) == ("A", False)


async def test_step_budget_ends_in_a_parse_error_after_a_last_turn_warning(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    look = tool_reply("get_subtitles", {"start_s": 0, "end_s": 1})
    model = ScriptedModel({"q1": [look, look, look]})
    prediction = await _agent(model, default_bundle, videos, max_steps=3).answer(
        question("q1"), run_id="run-1", sample_idx=0, sink=run_log
    )
    assert (prediction.status, prediction.error_class) == (
        PredictionStatus.PARSE_ERROR,
        "StepBudgetExhausted",
    )
    assert model.requests[-1].tools == model.requests[0].tools  # the tool list never changes
    assert "last turn" in model.requests[-1].messages[-1]["content"]


async def test_only_an_infra_error_forgets_its_responses(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    model = InvalidatingModel(
        {
            "q1": [answer_reply("B")],
            "q2": [tool_reply("get_subtitles", {"start_s": 0, "end_s": 1}), answer_reply("Z")],
            "q3": [TransientLLMError("stream cut")],
        }
    )
    agent = _agent(model, default_bundle, videos)
    for qid in ("q1", "q2", "q3"):
        await agent.answer(question(qid), run_id="run-1", sample_idx=0, sink=run_log)
    by_question = [model.question_of(r) for r in model.invalidated]
    # q2's unparseable answer is model output and stays cached like q1's answer (test_replay.py).
    assert by_question == ["q3"]


class _FailingSink:
    def __init__(self) -> None:
        self.steps: list[TraceStep] = []

    async def write_step(self, step: TraceStep) -> None:
        self.steps.append(step)

    async def write_prediction(self, prediction: Prediction) -> None:
        raise StoreError("disk full")


async def test_a_failing_store_write_stays_inside_the_boundary(
    default_bundle: Bundle, videos: LocalVideos
) -> None:
    model = ScriptedModel({"q1": [answer_reply("B")]})
    prediction = await _agent(model, default_bundle, videos).answer(
        question("q1"), run_id="run-1", sample_idx=0, sink=_FailingSink()
    )
    assert (prediction.status, prediction.error_class) == (PredictionStatus.INFRA_ERROR, "StoreError")
    assert "recording it failed too" in (prediction.error_message or "")


async def test_a_missing_video_is_an_infra_error(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    model = ScriptedModel({"q9": [answer_reply("B")]})
    prediction = await _agent(model, default_bundle, videos).answer(
        question("q9", video="absent"), run_id="run-1", sample_idx=0, sink=run_log
    )
    assert (prediction.status, prediction.error_class) == (PredictionStatus.INFRA_ERROR, "DataError")
    assert model.requests == []


async def test_cancellation_is_not_swallowed(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    model = ScriptedModel({"q1": [asyncio.CancelledError()]})
    with pytest.raises(asyncio.CancelledError):
        await _agent(model, default_bundle, videos).answer(
            question("q1"), run_id="run-1", sample_idx=0, sink=run_log
        )


async def test_accounting_sums_the_turns(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    cached = answer_reply("B").model_copy(update={"cache_hit": True})
    model = ScriptedModel(
        {"q1": [tool_reply("get_subtitles", {"start_s": 0, "end_s": 1}, tokens=40), cached]}
    )
    prediction = await _agent(model, default_bundle, videos).answer(
        question("q1"), run_id="run-1", sample_idx=0, sink=run_log
    )
    assert (prediction.prompt_tokens, prediction.completion_tokens) == (50, 6)
    assert prediction.cache_hit is False  # only one of two turns came from the cache
    assert prediction.relevant_text_hash == default_bundle.relevant_hash("Counting Problem")


async def test_frames_that_fail_to_decode_mark_the_prediction_degraded(
    default_bundle: Bundle, media_dir: Path, tmp_path: Path, run_log: RunLog, sqlite_url: str
) -> None:
    cut_dir = tmp_path / "cut"
    cut_dir.mkdir()
    data = (media_dir / "videos" / "vid1.mp4").read_bytes()
    (cut_dir / "vid1.mp4").write_bytes(data[: int(len(data) * 0.7)])  # the later pictures are gone
    videos = LocalVideos(FrameSampler(FramesConfig(cache_enabled=False)), cut_dir)
    model = ScriptedModel(
        {"q1": [tool_reply("get_frames", {"start_s": 2, "end_s": 4, "count": 2}), answer_reply("B")]}
    )
    agent = Agent(model, "sim-vl", default_bundle, videos, None, AgentConfig(initial_frames=4, max_frames=8))
    prediction = await agent.answer(question("q1"), run_id="run-1", sample_idx=0, sink=run_log)
    assert prediction.status is PredictionStatus.OK
    assert prediction.degraded
    with RunReader(sqlite_url) as reader:
        steps = reader.trace("run-1", "q1")
    assert steps[0].degraded
    assert len(steps[0].frames_shown) < 4
    assert steps[2].degraded
    assert "decoded" in (steps[2].error or "")


async def test_answer_all_bounds_concurrency_and_survives_failures(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog, sqlite_url: str
) -> None:
    in_flight = peak = 0

    class SlowModel(ScriptedModel):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            return await super().complete(request)

    script: dict[str, list] = {f"q{i}": [answer_reply("B"), answer_reply("A")] for i in range(10)}
    script["q0"] = script["q5"] = [RuntimeError("boom"), RuntimeError("boom")]
    agent = _agent(SlowModel(script), default_bundle, videos, initial_frames=0, vision=False)
    work = [(question(f"q{i}"), s) for i in range(10) for s in range(2)]
    done: list[Prediction] = []
    results = await answer_all(agent, work, run_id="run-1", sink=run_log, concurrency=3, on_done=done.append)
    assert peak == 3
    assert sorted(p.key for p in results) == sorted(("run-1", q.question_id, s) for q, s in work)
    assert done == results
    with RunReader(sqlite_url) as reader:
        assert len(reader.predictions("run-1")) == 20
        assert reader.status_counts("run-1")[PredictionStatus.INFRA_ERROR] == 4  # both samples of q0, q5


async def test_answer_all_asks_the_next_question_while_a_prediction_is_being_committed(
    default_bundle: Bundle, videos: LocalVideos
) -> None:
    """The model's turns are bounded by ``concurrency``; a question waiting for its commit holds none."""
    talking = peak = 0
    events: list[str] = []

    class CountingModel(ScriptedModel):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            nonlocal talking, peak
            talking += 1
            peak = max(peak, talking)
            events.append("ask")
            await asyncio.sleep(0.005)
            talking -= 1
            return await super().complete(request)

    class SlowStore:
        async def write_step(self, step: object) -> None:
            return None

        async def write_prediction(self, prediction: Prediction) -> None:
            events.append("commit starts")
            await asyncio.sleep(0.05)
            events.append("committed")

    script: dict[str, list] = {f"q{i}": [answer_reply("B")] for i in range(6)}
    agent = _agent(CountingModel(script), default_bundle, videos, initial_frames=0, vision=False)
    work = [(question(f"q{i}"), 0) for i in range(6)]
    results = await answer_all(agent, work, run_id="run-1", sink=SlowStore(), concurrency=2)
    assert len(results) == 6
    assert peak <= 2  # never more conversations than turns
    first_commit_ends = events.index("committed")
    assert events[:first_commit_ends].count("ask") > 2  # asked on while the first two were committing


async def test_a_prediction_that_stops_the_batch_keeps_its_turn_so_nothing_more_is_asked(
    default_bundle: Bundle, videos: LocalVideos
) -> None:
    """A refused key stops the run at its first answer: while that answer is committed and checked,
    no other conversation may start (one did, and a loaded machine saw a fifth 401 at concurrency 4)."""
    asked = 0

    class RefusingModel(ScriptedModel):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            nonlocal asked
            asked += 1
            raise AuthError("401 from gpu-a", endpoint="gpu-a")

    class SlowStore:
        async def write_step(self, step: object) -> None:
            return None

        async def write_prediction(self, prediction: Prediction) -> None:
            await asyncio.sleep(0.05)  # a commit on a loaded machine

    def stop(prediction: Prediction) -> None:
        if prediction.error_class == "AuthError":
            raise AuthError("stopped the run", kind="auth_stop")

    agent = _agent(RefusingModel({}), default_bundle, videos, initial_frames=0, vision=False)
    work = [(question(f"q{i}"), 0) for i in range(6)]
    with pytest.raises(BaseExceptionGroup) as raised:
        await answer_all(
            agent,
            work,
            run_id="run-1",
            sink=SlowStore(),
            concurrency=1,
            on_done=stop,
            stops=lambda p: p.error_class == "AuthError",
        )
    assert raised.group_contains(AuthError)
    assert asked == 1


async def test_issue_29_2_every_request_of_a_draw_carries_its_draw_as_routing_key(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    """Two bundles (a gate's two arms) asking one draw share its key; another draw has another."""
    other = dataclasses.replace(default_bundle, system_prompt=default_bundle.system_prompt + "\nThink twice.")
    model = ScriptedModel(
        {"q1": [tool_reply("get_frames", {"timestamps": [1.0]}), answer_reply("B")] * 2 + [answer_reply("B")]}
    )
    for bundle, sample_idx in ((default_bundle, 2), (other, 2), (default_bundle, 3)):
        await _agent(model, bundle, videos).answer(
            question("q1"), run_id="run-1", sample_idx=sample_idx, sink=run_log
        )
    keys = [request.affinity for request in model.requests]
    assert keys == ["q1#2", "q1#2", "q1#2", "q1#2", "q1#3"]
    assert model.requests[0].messages[0] != model.requests[2].messages[0], "the two arms really differ"


async def test_issue_29_both_arms_of_a_per_draw_draw_send_one_seed(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    # The incumbent and a candidate differ in their system prompt; a per_draw seed depends on the
    # (question, sample index, salt) only, so a paired draw carries one seed on both sides.
    candidate = Bundle(
        default_bundle.system_prompt + "\nCount the objects twice.",
        dict(default_bundle.skills),
        dict(default_bundle.tools),
    )
    sampling = {"temperature": 0.8, "seed": "per_draw"}
    model = ScriptedModel({"q1": [answer_reply("B")] * 8, "q2": [answer_reply("B")] * 8})
    for bundle in (default_bundle, candidate):
        for qid, sample in (("q1", 0), ("q1", 1), ("q2", 0)):
            agent = _agent(model, bundle, videos, sampling=sampling, seed_salt="run-a")
            answered = await agent.answer(question(qid), run_id="run-1", sample_idx=sample, sink=run_log)
            assert answered.status is PredictionStatus.OK
    salted = _agent(model, default_bundle, videos, sampling=sampling, seed_salt="run-b")
    await salted.answer(question("q1"), run_id="run-1", sample_idx=0, sink=run_log)
    seeds = [r.sampling.seed for r in model.requests]
    systems = [r.messages[0]["content"] for r in model.requests]
    assert seeds[:3] == seeds[3:6]  # incumbent and candidate: one seed per draw
    assert systems[0] != systems[3]  # ... though their prompts differ
    assert len(set(seeds[:3])) == 3  # another sample index or question: another seed
    assert seeds[6] not in seeds[:6]  # another salt: another set of seeds
    assert all(isinstance(s, int) for s in seeds)
