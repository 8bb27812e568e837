"""Run one bundle over one pool: the ``infer`` command, the training baseline, the holdout eval.

A run is keyed in the store by ``(run_id, question_id, sample_idx)``. Resuming a run skips every
pair already stored as ``ok`` or ``parse_error`` and asks again only the ``infra_error`` ones and
the ones never reached, so a killed run continues exactly where it stopped, without duplicates.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from skillharness.agent import check_bundle_slot, check_questions
from skillharness.agent.config import AgentConfig
from skillharness.agent.records import Prediction
from skillharness.data.config import DataConfig
from skillharness.data.questions import Question
from skillharness.data.selection import load_pool_questions, read_questions
from skillharness.data.split import Pool
from skillharness.errors import ConfigError, DataError
from skillharness.infer.cache_policy import cache_scope
from skillharness.infer.config import InferConfig
from skillharness.infer.endpoints import probe_endpoints
from skillharness.infer.outcome import RunOutcome, decide_outcome
from skillharness.infer.progress import InferProgress
from skillharness.infer.provenance import inputs_hash, run_provenance
from skillharness.infer.session import open_session
from skillharness.infer.summary import Cell, Scored, summarize
from skillharness.llm.config import CacheConfig, LLMConfig
from skillharness.skills import Bundle
from skillharness.skills.workspace import Workspace
from skillharness.store import RunKind, RunReader, RunStatus, StoreConfig
from skillharness.video import question_subtitles, video_duration, whole_video_duration
from skillharness.video.locate import locate_video
from skillharness.video.subtitles import load_subtitles

__all__ = [
    "InferJob",
    "InferResult",
    "InferSettings",
    "check_agent_slot",
    "check_media",
    "default_run_id",
    "load_bundle",
    "load_job",
    "run_inference",
    "summarize_run",
]


class _Reporting(Protocol):
    @property
    def confidence(self) -> float: ...


class InferSettings(Protocol):
    """The sections of the one config that inference reads (``skillharness.config.Config`` is one).

    A protocol rather than the config class itself: the config composes every layer's section, the
    training ones included, and inference sits below training.
    """

    @property
    def data(self) -> DataConfig: ...
    @property
    def agent(self) -> AgentConfig: ...
    @property
    def llm(self) -> LLMConfig: ...
    @property
    def cache(self) -> CacheConfig: ...
    @property
    def store(self) -> StoreConfig: ...
    @property
    def eval(self) -> _Reporting: ...
    @property
    def infer(self) -> InferConfig: ...
    def fingerprint(self) -> str: ...
    def settings(self) -> dict[str, Any]: ...
    def for_run(self, run_id: str) -> InferSettings: ...


@dataclass(frozen=True)
class InferJob:
    """Everything one inference run needs, resolved and validated (see :func:`load_job`)."""

    data: DataConfig
    agent: AgentConfig
    llm: LLMConfig
    cache: CacheConfig
    store: StoreConfig
    config_hash: str
    bundle: Bundle
    questions: tuple[Question, ...]
    pool: Pool | None
    pools_sha256: str | None
    run_id: str
    resume: bool = False
    kind: RunKind = RunKind.INFER
    confidence: float = 0.95
    max_infra_share: float = InferConfig().max_infra_share
    max_refused_share: float = InferConfig().max_refused_share
    settings: Mapping[str, Any] | None = None  # what config_hash hashes, stored with the run


@dataclass(frozen=True)
class InferResult:
    run_id: str
    asked: int  # pairs asked in this invocation (a resume asks only what is missing)
    skipped: int  # pairs already final before this invocation
    summary: dict[str, list[Cell]]
    status_counts: dict[str, int]
    usage: dict[str, dict[str, float]]  # tokens, calls and cost per role in this invocation
    outcome: RunOutcome | None = None  # finished, finished with errors, or failed, and why
    cache_scope: str = ""  # whose cached responses this run could reuse


def default_run_id(pool: Pool | None) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"infer-{pool or 'adhoc'}-{stamp}-{secrets.token_hex(3)}"


def load_bundle(path: Path) -> Bundle:
    """A bundle folder, or a workspace (its current version)."""
    if (path / "manifest.json").is_file():
        return Workspace.read(path).current()
    return Bundle.load(path)


def load_job(config: InferSettings, *, pool: Pool | None, run_id: str | None, resume: bool) -> InferJob:
    """Resolve the bundle, questions and pool named by ``config`` into an :class:`InferJob`."""
    data = config.data
    if data.questions is None:
        raise ConfigError(
            "data.questions is not set: name the questions file in the config or with --questions"
        )
    if config.agent.bundle is None:
        raise ConfigError("agent.bundle is not set: name a bundle folder (see `skillharness bundle init`)")
    if resume and run_id is None:
        raise ConfigError("--resume needs --run-id: the run to continue")
    if pool is None:
        questions: Sequence[Question] = read_questions(data.questions, data.benchmark)
        pools_sha = None
    else:
        chosen, frozen = load_pool_questions(data, (pool,), purpose=f"--pool {pool}")
        questions, pools_sha = chosen[pool], frozen.sha256
        if not questions:
            raise ConfigError(f"--pool {pool}: {data.pools} has an empty {pool} pool: nothing to answer")
    check_media(data, questions, subtitles=config.agent.subtitles)
    check_questions(questions, config.llm.media, config.agent.protocol, data.benchmark)
    check_agent_slot(config.agent, data.benchmark)
    run_id = run_id or default_run_id(pool)
    config = config.for_run(run_id)  # the per-draw seed salt: the run's id unless pinned
    return InferJob(
        data=data,
        agent=config.agent,
        llm=config.llm,
        cache=config.cache,
        store=config.store,
        config_hash=inputs_hash(config.fingerprint(), data.questions),
        settings=config.settings(),
        bundle=load_bundle(config.agent.bundle),
        questions=tuple(questions),
        pool=pool,
        pools_sha256=pools_sha,
        run_id=run_id,
        resume=resume,
        confidence=config.eval.confidence,
        max_infra_share=config.infer.max_infra_share,
        max_refused_share=config.infer.max_refused_share,
    )


def _video_problem(videos_dir: Path, video_id: str) -> tuple[bool, str]:
    """(missing, why the video does not open) for one video."""
    try:
        path = locate_video(videos_dir, video_id)
    except DataError:
        return True, ""
    try:
        # The header (a 0-byte or non-video file fails) and the last packet (a file cut short fails).
        whole_video_duration(path)
    except DataError as exc:
        return False, str(exc)
    return False, ""


def _broken_subtitles(subtitles_dir: Path, questions: Sequence[Question]) -> list[str]:
    """Why each subtitle file the questions read does not parse: the file the agent reads (a
    question's own ``subtitle_path`` first), each file once."""
    files = {question_subtitles(subtitles_dir, q.subtitle_path, q.videoID) for q in questions}
    broken = []
    for path in sorted(p for p in files if p is not None):
        try:
            load_subtitles(path)
        except DataError as exc:
            broken.append(str(exc))
    return broken


def _check_subtitles_dir(subtitles_dir: Path, questions: Sequence[Question]) -> None:
    """A subtitles folder that is not there, or holds a file for none of the questions asked, is
    a mistyped path: every answer would be the no-subtitles condition under a config saying
    otherwise. One video without subtitles is normal; all of them is not."""
    fix = "fix data.subtitles_dir, or set agent.subtitles: false to answer without subtitles"
    if not subtitles_dir.is_dir():
        raise DataError(f"data.subtitles_dir {subtitles_dir}: not a folder; {fix}", file=str(subtitles_dir))
    if questions and all(
        question_subtitles(subtitles_dir, q.subtitle_path, q.videoID) is None for q in questions
    ):
        first = questions[0].subtitle_path or f"{questions[0].videoID}.srt"
        raise DataError(
            f"data.subtitles_dir {subtitles_dir} holds a subtitle file for none of the {len(questions)} "
            f"question(s) asked (e.g. {first}); {fix}",
            file=str(subtitles_dir),
        )


def check_agent_slot(agent: AgentConfig, benchmark: str | None) -> None:
    """A bundle slot the run's protocol lacks is refused before any question is asked."""
    check_bundle_slot(
        agent.protocol, agent.protocol_bundle_slot, subtitles=agent.subtitles, benchmark=benchmark
    )


def check_media(data: DataConfig, questions: Sequence[Question], *, subtitles: bool = True) -> None:
    """Refuse to start on inputs that would only turn questions into infra errors.

    A missing video, a video file that does not open (0 bytes, not a video) or is cut short (its
    last packet missing), or a subtitle file that does not parse fails every question of its video
    on every resume; it is the user's data to fix, so it is named now, before anything is spent.
    Subtitle files are parsed only when the agent reads them (``subtitles``). Files are read one at
    a time: FFmpeg logging a broken file from several threads at once can deadlock PyAV's log
    callback.
    """
    if data.videos_dir is None:
        raise ConfigError("data.videos_dir is not set: the folder holding <videoID>.mp4 files")
    videos = list(dict.fromkeys(q.videoID for q in questions))
    videos_dir, subtitles_dir = data.videos_dir, data.subtitles_dir if subtitles else None
    for question in questions:  # a folder of frames is refused by name, with its task and the fix
        if (videos_dir / question.videoID).is_dir():
            locate_video(videos_dir, question.videoID, task=question.task_type)
    if subtitles_dir is not None:
        _check_subtitles_dir(subtitles_dir, questions)
    found = [_video_problem(videos_dir, video) for video in videos]
    missing = [video_id for video_id, (absent, _) in zip(videos, found, strict=True) if absent]
    unreadable = [problem for _, problem in found if problem]
    broken = _broken_subtitles(subtitles_dir, questions) if subtitles_dir is not None else []
    if missing:
        names = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise DataError(
            f"{len(missing)} video(s) of the chosen questions are not in {data.videos_dir}: {names}",
            file=str(data.videos_dir),
            missing=missing,
        )
    if unreadable:
        raise DataError(
            f"{len(unreadable)} video file(s) cannot be read:\n  " + "\n  ".join(unreadable[:10]),
            file=str(data.videos_dir),
            problems=unreadable,
        )
    if broken:
        raise DataError(
            f"{len(broken)} subtitle file(s) do not parse:\n  " + "\n  ".join(broken[:10]),
            file=str(data.subtitles_dir),
            problems=broken,
        )
    past_end = _windows_past_end(videos_dir, questions)
    if past_end:
        raise DataError(
            f"{len(past_end)} question(s) have a clip window past their video's end:\n  "
            + "\n  ".join(past_end[:10]),
            file=str(data.videos_dir),
            problems=past_end,
        )


def _windows_past_end(videos_dir: Path, questions: Sequence[Question]) -> list[str]:
    """Questions whose clip window starts at or after their video's end: every draw of them would
    fail alike, so they are the data's to fix (headers were read above, so this reads none)."""
    problems = []
    for question in questions:
        if question.clip_start is None:
            continue
        try:
            duration = video_duration(locate_video(videos_dir, question.videoID))
        except DataError:
            continue  # named above as missing or unreadable
        if question.clip_start >= duration:
            problems.append(
                f"{question.question_id}: clip [{question.clip_start:g}s, {question.clip_end:g}s] of "
                f"{question.videoID} starts after its end ({duration:.1f} s)"
            )
    return problems


async def run_inference(job: InferJob, progress: InferProgress | None = None) -> InferResult:
    """Ask every not-yet-final ``(question, sample)`` pair of ``job`` and summarize the run.

    ``progress`` is told the totals once and then every stored prediction.
    """
    progress = progress or InferProgress()
    total = len(job.questions) * job.agent.samples
    draws = [(q, s) for q in job.questions for s in range(job.agent.samples)]
    # A missing key, a dead endpoint or a model it does not serve stops us before any spending.
    await probe_endpoints(job.llm, {job.llm.model: "llm.model"})
    scope = cache_scope(job.cache, job.run_id, job.agent.sampling.temperature)
    async with open_session(
        data=job.data, agent=job.agent, llm=job.llm, cache=job.cache, store=job.store, salt=scope.salt
    ) as session:
        provenance = run_provenance(
            run_id=job.run_id,
            kind=job.kind,
            config_hash=job.config_hash,
            bundle_hash=job.bundle.bundle_hash,
            pool=job.pool,
            pools_sha256=job.pools_sha256,
            llm=job.llm,
            agent=job.agent,
        )
        log = await session.store.open_run(provenance, resume=job.resume, settings=job.settings)
        status = RunStatus.FAILED
        try:
            done = await log.completed_keys()
            asked = sum(1 for q, s in draws if (q.question_id, s) not in done)
            progress.start(total, total - asked)
            lanes = session.stack.router.lanes
            progress.breakers = lambda: " · ".join(lane.breaker.describe() for lane in lanes)
            await session.rollout(job.bundle, draws, log, on_done=progress.advance)
            usage = session.usage()
            await log.flush()
            outcome = decide_outcome(
                await asyncio.to_thread(_stored, job), total, job.max_infra_share, job.max_refused_share
            )
            status = outcome.status
        except BaseException as exc:
            # Ctrl-C reaches this coroutine as CancelledError (asyncio.run cancels the main task and
            # raises KeyboardInterrupt itself afterwards): a stopped run is interrupted, not failed.
            stopped = isinstance(exc, KeyboardInterrupt | SystemExit | asyncio.CancelledError)
            status = RunStatus.INTERRUPTED if stopped else RunStatus.FAILED
            raise
        finally:
            await log.close(status)
    return InferResult(
        job.run_id,
        asked,
        total - asked,
        *summarize_run(job.store, job.run_id, job.questions, job.confidence),
        usage,
        outcome,
        scope.description,
    )


def _stored(job: InferJob) -> list[Prediction]:
    """The run's stored predictions of ``job``'s questions (read-only access)."""
    wanted = {q.question_id for q in job.questions}
    reader = RunReader(job.store)
    try:
        return [p for p in reader.predictions(job.run_id) if p.question_id in wanted]
    finally:
        reader.close()


def summarize_run(
    store: StoreConfig, run_id: str, questions: Sequence[Question], confidence: float = 0.95
) -> tuple[dict[str, list[Cell]], dict[str, int]]:
    """The accuracy summary and status counts of a stored run (read-only access)."""
    by_id = {q.question_id: q for q in questions}
    reader = RunReader(store)
    try:
        stored = reader.predictions(run_id)
        counts = {status.value: n for status, n in reader.status_counts(run_id).items()}
    finally:
        reader.close()
    rows = [
        Scored(
            by_id[p.question_id].task_type,
            by_id[p.question_id].duration,
            p.status.value,
            p.correct is True,  # decided once, by the agent, when it answered
        )
        for p in stored
        if p.question_id in by_id
    ]
    return summarize(rows, confidence), counts
