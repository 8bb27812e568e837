"""The agent loop: one question, one sample, inside one error boundary (audit P0-2, P0-4).

``Agent.answer`` asks the model with the first message, runs the tools it calls under the step
and frame budgets, normalizes the submitted answer, writes every step to the sink as it happens,
and writes the prediction. Whatever goes wrong inside (the model, the video, the sink, a bug)
ends as an ``infra_error`` prediction that names the exception: one question never aborts the
batch it is in. A request the server refuses for what it carries (a 400, 413 or 422 of
:func:`~skillharness.llm.errors.refuses_request`: a body, image or token limit) ends as
``infra_error`` with error class ``RequestRefused`` (:mod:`skillharness.agent.refusal`): no answer,
never scored wrong, so a server set up below the run's requests can neither pass for a wrong
bundle nor teach training to fetch fewer frames. Higher layers count these apart and stop a run
that has too many.

Cache policy per outcome: a complete response is model output whether or not its answer parses,
so an ``ok`` and a ``parse_error`` episode both keep their cached responses, and a replay of the
episode replays both alike. Forgetting only the unparseable ones would re-sample exactly those
and bias every replayed comparison towards answers that parse. Only a transport ``infra_error``
asks the model wrapper to forget the episode's responses: the question was not asked fairly, and a
resume asks it again from the start. A refusal keeps the complete turns before it (model output,
like any other) and is itself never stored: a resume replays the same conversation up to the
refused request and asks that again, so a fixed server answers the conversation that was refused,
not a re-sampled shorter one. (A stream cut short or carrying an error frame never reaches the
cache at all: the client raises, audit P1-2.)
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from skillharness.agent.config import AgentConfig
from skillharness.agent.episode import Episode, Verdict
from skillharness.agent.normalize import normalize_answer
from skillharness.agent.opening import first_message
from skillharness.agent.ports import BundleView, FrameSource, InvalidatingChatModel, SubtitleSource, TraceSink
from skillharness.agent.prompt import system_message
from skillharness.agent.protocols import ProtocolName, ReferenceMedia, ReferenceOptions, build_turn
from skillharness.agent.records import Prediction
from skillharness.agent.tools import ToolBox, available_tools, tool_specs
from skillharness.agent.transport import check_protocol
from skillharness.data.questions import Question
from skillharness.errors import ConfigError
from skillharness.llm import FrameTransport, MediaConfig, refuses_request
from skillharness.llm.roles import TOOL_SUBMIT_ANSWER, Role
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse, SamplingParams, ToolCall

__all__ = ["Agent"]

_LAST_TURN = "This is your last turn: call submit_answer now with one option letter."


@dataclass(frozen=True)
class Agent:
    """Everything needed to answer questions with one bundle against one model.

    Attributes:
        model: the chat model (usually the cached, retrying, breaker-guarded client).
        model_name: the model name sent in every request.
        bundle: the system prompt, skills and tool descriptions.
        benchmark: the questions' benchmark (``data.benchmark``), read by reference protocols.
        frames: the frame source of the questions' videos.
        subtitles: the subtitle source, or None when the run has none.
        config: budgets, vision/subtitle switches and sampling parameters.
        media: how the first message's frames reach the model (the endpoints' ``media``).
    """

    model: ChatModel
    model_name: str
    bundle: BundleView
    frames: FrameSource
    subtitles: SubtitleSource | None
    config: AgentConfig
    # data.benchmark: under a reference protocol, whose request the questions are asked with
    # (a benchmark's adapter may describe its own lmms-eval task; None: Video-MME's).
    benchmark: str | None = None
    media: MediaConfig = field(default_factory=MediaConfig)

    def __post_init__(self) -> None:
        check_protocol(self.config.protocol, self.media)  # a reference without this transport

    async def answer(
        self, question: Question, *, run_id: str, sample_idx: int, sink: TraceSink
    ) -> Prediction:
        """Answer one question once; never raises except on cancellation.

        Returns the prediction that was written to ``sink`` (or, if even writing the failure
        failed, the ``infra_error`` prediction that could not be written: a resume retries it).
        """
        episode = Episode(
            question=question,
            run_id=run_id,
            sample_idx=sample_idx,
            sink=sink,
            trace_chars=self.config.trace_chars,
            started=time.monotonic(),
        )
        try:
            episode.relevant_text_hash = self.bundle.relevant_hash(question.task_type)
            verdict = await self._converse(question, episode)
            prediction = episode.prediction(verdict)
            await sink.write_prediction(prediction)
            return prediction
        except Exception as exc:  # the per-question error boundary (audit P0-4)
            if refuses_request(exc):  # the server's limit, not the bundle's answer: counted apart
                return await self._record_refusal(episode, exc)
            return await self._record_failure(episode, exc)

    async def _record_refusal(self, episode: Episode, exc: Exception) -> Prediction:
        prediction = episode.prediction(Verdict.refused(exc))
        try:
            await episode.sink.write_prediction(prediction)
        except Exception as second:  # not written: an infra error, which a resume asks again
            return await self._record_failure(episode, second)
        return prediction

    async def _record_failure(self, episode: Episode, exc: Exception) -> Prediction:
        prediction = episode.prediction(Verdict.infra(exc))
        try:
            await self._invalidate(episode)
            await episode.sink.write_prediction(prediction)
        except Exception as second:
            note = f"; recording it failed too: {type(second).__name__}: {second}"
            prediction = prediction.model_copy(
                update={"error_message": (prediction.error_message or "") + note}
            )
        return prediction

    async def _invalidate(self, episode: Episode) -> None:
        if isinstance(self.model, InvalidatingChatModel):
            for request in episode.requests:
                await self.model.invalidate(request)

    async def _converse(self, question: Question, episode: Episode) -> Verdict:
        if self.config.protocol is not ProtocolName.SKILLHARNESS:
            return await self._reference_turn(question, episode)
        messages = [
            system_message(self.bundle.system_prompt, self.bundle.skill(question.task_type).render()),
            await self._first_message(question, episode),
        ]
        offered = available_tools(self.config, has_subtitles=self.subtitles is not None)
        # The same tools on every turn: a changing tool list would change the prompt prefix
        # (defeating the server's prefix cache) and what the model was told it can do.
        specs = tool_specs(self.bundle, offered)
        toolbox = ToolBox(
            question,
            config=self.config,
            offered=offered,
            duration_s=episode.duration_s,
            frames=self.frames,
            subtitles=self.subtitles,
            frames_used=episode.frames_used,
        )
        for turn in range(self.config.max_steps):
            last = turn == self.config.max_steps - 1
            if last and turn > 0:
                messages.append({"role": "user", "content": _LAST_TURN})
            response = await self._ask(messages, specs, episode)
            messages.append(_assistant_message(response))
            if not response.tool_calls:  # a plain-text answer: judge the text
                return self._verdict(response.content, question)
            answers = [call for call in response.tool_calls if call.name == TOOL_SUBMIT_ANSWER]
            if answers:
                return await self._submit(answers, question, episode)
            if last:
                break
            outcomes = [await toolbox.run(call) for call in response.tool_calls]
            for outcome in outcomes:
                await episode.tool_step(outcome)
            messages.extend(outcome.message() for outcome in outcomes)
            images = [part for outcome in outcomes for part in outcome.image_parts]
            if images:
                messages.append({"role": "user", "content": images})
        return Verdict.parse(
            "StepBudgetExhausted", f"no answer submitted within {self.config.max_steps} turns"
        )

    async def _reference_turn(self, question: Question, episode: Episode) -> Verdict:
        """A reference protocol's one request (agent/protocols), judged by our strict normalizer."""
        if not isinstance(self.frames, ReferenceMedia):
            raise ConfigError(
                f"agent.protocol {self.config.protocol} needs frames by index from local videos"
            )
        bundle = system_message(self.bundle.system_prompt, self.bundle.skill(question.task_type).render())
        options = ReferenceOptions(
            protocol=self.config.protocol,
            frames=self.config.protocol_frames,
            vision=self.config.vision,
            subtitles=self.config.subtitles and self.subtitles is not None,
            frames_config=self.config.frames,
            bundle_text=bundle["content"],
            bundle_slot=self.config.protocol_bundle_slot,
            benchmark=self.benchmark,
            pass_video_url=self.media.transport is FrameTransport.VIDEO_URL,
        )
        turn = await build_turn(question, self.frames, options)
        episode.duration_s = turn.duration_s
        episode.frames_used = len(turn.frame_indices) + turn.server_frames
        episode.media_io_kwargs = turn.media_io_kwargs
        await episode.first_step(
            {"content": turn.text}, frames_shown=turn.frame_times, subtitles=turn.subtitles
        )
        response = await self._ask(list(turn.messages), (), episode, sampling=turn.sampling)
        return self._verdict(response.content, question)

    async def _first_message(self, question: Question, episode: Episode) -> dict[str, Any]:
        return await first_message(
            question,
            episode,
            config=self.config,
            media=self.media,
            frames=self.frames,
            subtitles=self.subtitles,
        )

    async def _ask(
        self,
        messages: list[dict[str, Any]],
        specs: tuple[dict[str, Any], ...],
        episode: Episode,
        sampling: SamplingParams | None = None,
    ) -> ChatResponse:
        request = ChatRequest(
            model=self.model_name,
            messages=tuple(messages),
            role=Role.AGENT,
            tools=specs or None,  # a reference turn offers no tools at all
            tool_choice="auto" if specs else None,
            # per_draw: the seed of this (question, sample), the same whatever the bundle says.
            sampling=(sampling or self.config.sampling).for_draw(
                episode.question.question_id, episode.sample_idx, self.config.seed_salt or ""
            ),
            sample_idx=episode.sample_idx,
            media_io_kwargs=episode.media_io_kwargs,
            # One draw (question, sample index) stays on one replica: every turn of its episode, and
            # both arms of a paired gate draw, which ask the same draw under two bundles.
            affinity=f"{episode.question.question_id}#{episode.sample_idx}",
        )
        episode.requests.append(request)  # before the call: a failed call may still have cached
        started = time.monotonic()
        response = await self.model.complete(request)
        await episode.model_step(response, time.monotonic() - started)
        return response

    def _verdict(self, raw: object, question: Question) -> Verdict:
        normalized = normalize_answer(raw, question.letters, question.options)
        if normalized.letter is None:
            return Verdict.parse("AnswerParseError", normalized.error or "unparseable answer")
        return Verdict.answered(normalized.letter)

    async def _submit(self, calls: list[ToolCall], question: Question, episode: Episode) -> Verdict:
        raws = [_submitted_value(call.arguments) for call in calls]
        verdict = self._verdict(raws[0] if len(raws) == 1 else raws, question)
        for call in calls:
            await episode.answer_step(call, verdict)
        return verdict


def _submitted_value(arguments: str) -> object:
    """The ``answer`` field of submit_answer's JSON arguments, or the raw text when it is not JSON."""
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return arguments
    if isinstance(value, dict) and "answer" in value:
        return value["answer"]
    return value


def _assistant_message(response: ChatResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in response.tool_calls
        ]
    return message
