"""A run session: what every rollout of a process shares, opened once.

The training loop asks thousands of rollouts in one process (a batch on train, each gate's
paired draws, the epoch-end val score). Each needs the same LLM stack (one cache salt per run),
the same local videos and the same store; building them per rollout would pay for connection
pools, engines and migrations every time. :class:`RunSession` owns them, and :meth:`rollout`
asks any list of ``(question, sample_idx)`` draws through the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from skillharness.agent import Agent, answer_all, check_questions
from skillharness.agent.config import AgentConfig
from skillharness.agent.records import Prediction
from skillharness.agent.video import LocalVideos
from skillharness.data.config import DataConfig
from skillharness.data.questions import Question
from skillharness.errors import ConfigError
from skillharness.infer.outcome import refused_credentials, single_error, stop_on_auth
from skillharness.llm import AttemptEvent, LLMEvent
from skillharness.llm.config import CacheConfig, LLMConfig
from skillharness.llm.stack import LLMStack, build_chat_model
from skillharness.skills import Bundle
from skillharness.store import LLMEventRow, RunLog, RunStore, StoreConfig
from skillharness.video import DecodePool
from skillharness.video.frames import FrameSampler

__all__ = ["Draw", "RunSession", "open_session"]

Draw = tuple[Question, int]  # (question, sample_idx): one independent sample of one question


@dataclass
class RunSession:
    """The LLM stack, local videos and store shared by every rollout of one process."""

    stack: LLMStack
    sources: LocalVideos
    store: RunStore
    agent_config: AgentConfig
    llm: LLMConfig
    cache: CacheConfig  # whose results the run may reuse (infer.cache_policy)
    benchmark: str | None = None  # data.benchmark, for a reference protocol's request
    _event_seq: int = field(default=0, init=False, repr=False)

    def agent(self, bundle: Bundle) -> Agent:
        """The agent for ``bundle`` (cheap: it holds references only)."""
        return Agent(
            model=self.stack,
            model_name=self.llm.model,
            bundle=bundle,
            frames=self.sources,
            subtitles=self.sources if self.agent_config.subtitles else None,
            config=self.agent_config,
            benchmark=self.benchmark,
            media=self.llm.media,
        )

    async def rollout(
        self,
        bundle: Bundle,
        draws: Sequence[Draw],
        log: RunLog,
        *,
        on_done: Callable[[Prediction], None] | None = None,
    ) -> list[Prediction]:
        """One prediction per draw, in the order of ``draws``.

        Draws already stored final (``ok`` or ``parse_error``) in ``log``'s run are read back, not
        asked again: a resumed rollout continues where it stopped. Infra errors are asked again.
        """
        agent = self.agent(bundle)  # refuses a reference protocol without the endpoints' transport
        check_questions((q for q, _ in draws), self.llm.media, self.agent_config.protocol, self.benchmark)
        stored = await asyncio.to_thread(self.store.final_predictions, log.run_id)
        wanted = {(q.question_id, s) for q, s in draws}
        done = {key: p for key, p in stored.items() if key in wanted}
        work = list({(q.question_id, s): (q, s) for q, s in draws if (q.question_id, s) not in done}.values())
        if work:
            async with _durations_ahead(self.sources, work):
                try:
                    fresh = await answer_all(
                        agent,
                        work,
                        run_id=log.run_id,
                        sink=log,
                        concurrency=self.agent_config.concurrency,
                        on_done=stop_on_auth(on_done or _ignore),
                        stops=refused_credentials,  # no request after a refused key
                    )
                except BaseExceptionGroup as group:  # the TaskGroup's wrapping of one worker's error
                    raise single_error(group) from None
            done.update({(p.question_id, p.sample_idx): p for p in fresh})
        return [done[(q.question_id, s)] for q, s in draws]

    def usage(self) -> dict[str, dict[str, float]]:
        """Calls, tokens and cost per role so far in this session."""
        return self.stack.accountant.summary()

    async def record_llm_events(self, run_id: str) -> int:
        """Store the failed attempts and breaker transitions since the last call under ``run_id``."""
        rows = []
        for event in self.stack.events.drain():
            rows.append(_event_row(run_id, self._event_seq, event))
            self._event_seq += 1
        if rows:
            await self.store.aupsert(rows)
        return len(rows)


def _event_row(run_id: str, seq: int, event: LLMEvent) -> LLMEventRow:
    """The stored row of a failed attempt (its error class, what followed, role and attempt) or of a
    breaker transition (the state it entered, the one it left; no role or attempt)."""
    if isinstance(event, AttemptEvent):
        what: dict[str, Any] = {
            "event": "attempt",
            "kind": event.kind,
            "detail": event.outcome.value,
            "role": event.role,
            "attempt": event.attempt,
        }
    else:
        what = {"event": "breaker", "kind": event.after, "detail": event.before}
    at = datetime.fromtimestamp(event.at, UTC).isoformat(timespec="microseconds")
    return LLMEventRow(run_id=run_id, at=at, seq=seq, endpoint=event.endpoint, **what)


def _ignore(_: Prediction) -> None:
    return None


@contextlib.asynccontextmanager
async def open_session(
    *,
    data: DataConfig,
    agent: AgentConfig,
    llm: LLMConfig,
    cache: CacheConfig,
    store: StoreConfig | RunStore,
    salt: str | None,
) -> AsyncIterator[RunSession]:
    """Open the stack, videos and store once; close them when the block ends.

    ``salt`` is the cache salt used when the config names none (a run passes its run id, so its
    samples are its own).
    """
    if data.videos_dir is None:
        raise ConfigError("data.videos_dir is not set: the folder holding <videoID>.mp4 files")
    pool = DecodePool(agent.frames)  # worker processes start on the first frame request only
    sources = LocalVideos(FrameSampler(agent.frames), data.videos_dir, data.subtitles_dir, pool=pool)
    owned = not isinstance(store, RunStore)
    run_store = await asyncio.to_thread(RunStore.open, store) if owned else store
    try:
        async with build_chat_model(llm, cache, default_salt=salt) as stack:
            yield RunSession(stack, sources, run_store, agent, llm, cache, benchmark=data.benchmark)
    finally:
        await asyncio.to_thread(pool.close)
        if owned:
            run_store.close()


@contextlib.asynccontextmanager
async def _durations_ahead(sources: LocalVideos, work: Sequence[Draw]) -> AsyncIterator[None]:
    """Probe video durations ahead of the workers: no question waits on a decoder thread for one."""
    prefetch = asyncio.create_task(sources.prefetch_durations(q for q, _ in work))  # noqa: RUF006 (awaited)
    try:
        yield
    finally:
        prefetch.cancel()
        await asyncio.gather(prefetch, return_exceptions=True)
