"""Every knob of the simulated model, in one strict, documented config.

The same :class:`SimConfig` drives the in-process server used by tests, the ``sim serve``
command (``--world FILE`` is a YAML or JSON dump of it) and the oracle, so the ground truth the
oracle reports is computed from exactly the numbers the server samples with.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from skillharness.llm.roles import Role
from skillharness.util.model import StrictModel

__all__ = [
    "AgentConfig",
    "AnswerShape",
    "EvolveConfig",
    "FaultConfig",
    "FaultKind",
    "JudgeConfig",
    "LatencyConfig",
    "PlainShape",
    "SimConfig",
    "WorldConfig",
]


class FaultKind(StrEnum):
    """A way the simulated server misbehaves (see docs/simulator.md for the exact bytes)."""

    TRUNCATE = "truncate"  # stream ends cleanly after some chunks, without data: [DONE]
    RESET = "reset"  # the connection is dropped mid-stream (incomplete chunked body)
    HTTP_429 = "http_429"  # 429 with a Retry-After header
    HTTP_500 = "http_500"
    HTTP_502 = "http_502"
    HTTP_503 = "http_503"
    VLLM_ERROR_FRAME = "vllm_error_frame"  # data: {"error": ...} then data: [DONE]
    LLAMACPP_ERROR_FRAME = "llamacpp_error_frame"  # data: {"error": ...} and the stream ends
    SLOW_FIRST_BYTE = "slow_first_byte"  # nothing is sent for slow_first_byte_s, then a normal reply
    MALFORMED_CHUNK = "malformed_chunk"  # one data: frame holds broken JSON, the rest is normal
    HTTP_401 = "http_401"  # 401 whose error body echoes the request's Authorization header
    ECHO_HEADERS = "echo_headers"  # 500 whose error body echoes every request header (a leaky proxy)
    TEXT_PLAIN_200 = "text_plain_200"  # a proxy's text/plain page with status 200 instead of the stream
    HTML_502 = "html_502"  # a gateway's HTML "502 Bad Gateway" page
    HTML_504 = "html_504"  # a gateway's HTML "504 Gateway Time-out" page
    UNPARSEABLE = "unparseable"  # a complete, well-formed reply whose text names no answer (model output)


class AnswerShape(StrEnum):
    """How the agent role writes the letter it intends to answer."""

    PLAIN = "plain"  # {"answer": "B"}
    PAREN = "paren"  # {"answer": "(b)"}
    SENTENCE = "sentence"  # {"answer": "The answer is B."}
    LIST = "list"  # {"answer": ["B"]}
    TWO_LETTERS = "two_letters"  # {"answer": "B, D"}: never correct
    NO_ANSWER = "no_answer"  # a text reply and no submit_answer call: never correct


class PlainShape(StrEnum):
    """How a model writes its answer to a plain request (no tools), e.g. a reference protocol's."""

    LETTER = "letter"  # "C"
    LETTER_DOT = "letter_dot"  # "C."
    BEST_ANSWER = "best_answer"  # "The best answer is C"
    OPTION_TEXT = "option_text"  # "Berries": the option's text without its letter
    NO_LETTER = "no_letter"  # a sentence that names no option


# Shapes that still carry exactly the intended letter; the oracle counts the other two as wrong.
LETTER_PRESERVING_SHAPES = frozenset(
    {AnswerShape.PLAIN, AnswerShape.PAREN, AnswerShape.SENTENCE, AnswerShape.LIST}
)


class FaultConfig(StrictModel):
    """Random faults: each request draws at most one fault, seeded by the request number."""

    rates: dict[FaultKind, float] = Field(
        default_factory=dict, description="Probability of each fault per eligible request (sum <= 1)."
    )
    roles: tuple[Role, ...] | None = Field(
        None, description="Only requests of these roles are eligible; None = every request."
    )
    every_k: int | None = Field(
        None, ge=1, description="Only every k-th eligible request (1-based count) may fault."
    )
    retry_after_s: float = Field(1.0, ge=0, description="Retry-After header value sent with 429.")
    slow_first_byte_s: float = Field(5.0, ge=0, description="Delay before the first byte of a slow reply.")
    cut_after_chunks: int = Field(2, ge=0, description="Chunks sent before a truncate/reset/error frame.")
    echo_pad_chars: int = Field(
        0, ge=0, description="Filler characters before the echoed headers of http_401 / echo_headers."
    )
    refuse_body_over: int | None = Field(
        None,
        ge=1,
        description=(
            "A misconfigured server: every agent request whose body is larger than this many bytes gets "
            "nginx's 413 page (a body limit in front of a multimodal server). Other roles pass. None: off."
        ),
    )
    refuse_images_over: int | None = Field(
        None,
        ge=0,
        description=(
            "A misconfigured server: every agent request with more image parts than this gets vLLM's 400 "
            "'At most K image(s) may be provided in one prompt' (--limit-mm-per-prompt below "
            "agent.max_frames). Other roles pass. None: off."
        ),
    )

    @model_validator(mode="after")
    def _rates_are_probabilities(self) -> FaultConfig:
        if any(not 0.0 <= rate <= 1.0 for rate in self.rates.values()):
            raise ValueError("every fault rate must be within [0, 1]")
        if sum(self.rates.values()) > 1.0 + 1e-9:
            raise ValueError(f"fault rates sum to {sum(self.rates.values()):.3f} > 1")
        return self


class LatencyConfig(StrictModel):
    """Time the server takes, like a GPU server under no load."""

    ttft_s: float = Field(0.0, ge=0, description="Time to first token, seconds.")
    per_token_s: float = Field(0.0, ge=0, description="Time per generated token, seconds.")
    jitter_s: float = Field(0.0, ge=0, description="Uniform extra delay in [0, jitter_s] added to ttft.")


class WorldConfig(StrictModel):
    """The hidden ground truth: how questions depend on insights and harmful rules."""

    insights_per_task: int = Field(
        3, ge=1, le=3, description="Hidden insights per task type (the banks hold 3)."
    )
    needed_min: int = Field(1, ge=1, description="Fewest insights a question needs.")
    needed_max: int = Field(2, ge=1, description="Most insights a question needs.")
    base_min: float = Field(0.30, ge=0, le=1, description="Lowest base accuracy (no insight present).")
    base_max: float = Field(0.60, ge=0, le=1, description="Highest base accuracy.")
    gain_min: float = Field(
        0.20, ge=0, le=1, description="Smallest gain when all needed insights are present."
    )
    gain_max: float = Field(0.40, ge=0, le=1, description="Largest such gain.")
    harm_per_rule: float = Field(0.15, ge=0, le=1, description="Accuracy lost per harmful rule present.")
    floor: float = Field(0.02, ge=0, le=1, description="Lowest probability of intending the right letter.")
    ceiling: float = Field(0.97, ge=0, le=1, description="Highest probability of intending the right letter.")
    video_correlation: float = Field(
        0.0,
        ge=0,
        lt=1,
        description=(
            "Correlation of the draws that decide correctness among one video's questions in one sample "
            "(a Gaussian copula: a latent shared by the video's questions at one sample index, whatever "
            "the bundle; each question's accuracy is unchanged). 0: questions are independent."
        ),
    )

    seed_coupling: float = Field(
        0.31,
        ge=0,
        le=1,
        description=(
            "rho: when an agent request samples with a seed, the uniform that decides correctness is, with "
            "probability rho, one shared by every instruction text asked with that seed on that question "
            "(common random numbers), and the text's own otherwise; accuracy is unchanged. 0.31 fits our "
            "llama.cpp measurement, 95 % interval about 0 to 0.57 (docs/simulator.md, 'Seed coupling'). "
            "No seed: no coupling."
        ),
    )
    filler_effect_sd: float = Field(
        0.015,
        ge=0,
        le=0.2,
        description=(
            "Each filler wording (the 'useless' lines of sim/insights.py) present in a text shifts the "
            "accuracy of its task type's questions by a fixed amount drawn once from Normal(0, sd), keyed "
            "on the world seed, the wording and the task type. 0: filler changes nothing."
        ),
    )
    insight_overlap: float = Field(
        0.0,
        ge=0,
        le=1,
        description=(
            "Sub-additivity of one question's insights: with k of its n needed insights present it gains "
            "gain * (k/n) * (1 + overlap * (n - k) / n). All n still give the whole gain, but the first "
            "are worth more and the last less, so insights tested together gain less than the sum of "
            "their single effects. 0: additive."
        ),
    )
    restate_gain: float = Field(
        0.25,
        ge=0,
        le=1,
        description=(
            "A needed insight restated in the clear form (what slow momentum writes, see "
            "evolve.momentum_clear_rate) adds this share of the insight's worth (gain / needed) to the "
            "question; the muddled form takes the same share away. 0: restating changes nothing."
        ),
    )

    side_effect_share: float = Field(
        0.3,
        ge=0,
        le=1,
        description=(
            "Side effects: each insight lowers each question of its class that does not need it with this "
            "probability (a per-question draw fixed by the world seed), by a size drawn from "
            "Uniform(side_effect_min, side_effect_max). 0: an insight never lowers a question (no overfit "
            "is possible). Reasoned, not measured (docs/simulator.md, 'Side effects')."
        ),
    )
    side_effect_min: float = Field(0.02, ge=0, le=1, description="Smallest side effect (accuracy lost).")
    side_effect_max: float = Field(0.10, ge=0, le=1, description="Largest side effect (accuracy lost).")

    @model_validator(mode="after")
    def _ranges(self) -> WorldConfig:
        if self.needed_min > self.needed_max or self.needed_max > self.insights_per_task:
            raise ValueError("need needed_min <= needed_max <= insights_per_task")
        if self.base_min > self.base_max or self.gain_min > self.gain_max or self.floor > self.ceiling:
            raise ValueError("each *_min must be <= its *_max and floor <= ceiling")
        if self.side_effect_min > self.side_effect_max:
            raise ValueError("need side_effect_min <= side_effect_max")
        return self


class AgentConfig(StrictModel):
    """How the agent role behaves besides being right or wrong."""

    awkward_rate: float = Field(0.10, ge=0, le=1, description="Share of answers in a non-plain shape.")
    awkward_shapes: dict[AnswerShape, float] = Field(
        default_factory=lambda: {
            AnswerShape.PAREN: 1.0,
            AnswerShape.SENTENCE: 1.0,
            AnswerShape.LIST: 1.0,
            AnswerShape.TWO_LETTERS: 1.0,
            AnswerShape.NO_ANSWER: 1.0,
        },
        description="Relative weights of the awkward shapes (PLAIN here is ignored).",
    )
    plain_shapes: dict[PlainShape, float] = Field(
        default_factory=lambda: {
            PlainShape.LETTER: 0.60,
            PlainShape.LETTER_DOT: 0.15,
            PlainShape.BEST_ANSWER: 0.10,
            PlainShape.OPTION_TEXT: 0.10,
            PlainShape.NO_LETTER: 0.05,
        },
        description="Relative weights of the shapes of a plain-text answer (a request without tools).",
    )
    subtitles_rate: float = Field(0.5, ge=0, le=1, description="Episodes that call get_subtitles.")
    extra_frames_rate: float = Field(0.3, ge=0, le=1, description="Episodes that call get_frames twice.")

    @model_validator(mode="after")
    def _weights(self) -> AgentConfig:
        weights = {k: v for k, v in self.awkward_shapes.items() if k != AnswerShape.PLAIN}
        if any(v < 0 for v in weights.values()) or (self.awkward_rate > 0 and sum(weights.values()) <= 0):
            raise ValueError("awkward_shapes weights must be >= 0 with a positive sum")
        plain = self.plain_shapes.values()
        if any(v < 0 for v in plain) or sum(plain) <= 0:
            raise ValueError("plain_shapes weights must be >= 0 with a positive sum")
        return self


class JudgeConfig(StrictModel):
    """The diagnosis judge: right most of the time, sometimes flipped or unsure."""

    noise: float = Field(0.10, ge=0, le=1, description="Probability of flipping defect <-> lapse.")
    uncertain_rate: float = Field(0.05, ge=0, le=1, description="Probability of answering 'uncertain'.")


class EvolveConfig(StrictModel):
    """What an evolve call proposes; the rest of each edit's probability mass is 'useless'."""

    insight_rate: float = Field(
        0.5,
        ge=0,
        le=1,
        description=(
            "An edit is useful (states a missing insight, reworded, or deletes a harmful line) when the "
            "document's gaps explain every case of the pack; less support lowers it (see the next knob)."
        ),
    )
    insight_unexplained_factor: float = Field(
        0.2,
        ge=0,
        le=1,
        description=(
            "The share of insight_rate left for a pack none of whose cases the document's gaps explain "
            "(lapses, noise): P(useful) = insight_rate * (f + (1 - f) * support), support being the "
            "share of the pack's cases explained. 1: the pack does not matter."
        ),
    )
    harmful_rate: float = Field(0.2, ge=0, le=1, description="An edit states a harmful rule.")
    edits_per_call: int = Field(1, ge=1, le=5, description="Edits per proposal.")
    rank_informativeness: float = Field(
        0.6,
        ge=0,
        le=1,
        description=(
            "r: the rank role scores each option (every candidate, and declining when offered) as "
            "r * what its text shows + sqrt(1 - r^2) * Normal(0, 1) noise, and returns the highest. What the "
            "text shows is the concrete rules it states (insights and decoys alike: the text cannot tell "
            "them apart) minus twice its harmful rules; declining shows 0. 0: chance, the truth unread; "
            "1: the best-looking candidate. Reasoned, not measured (docs/simulator.md, 'The rank role')."
        ),
    )
    decoy_rate: float = Field(
        0.5,
        ge=0,
        le=1,
        description=(
            "Share of the useless edits that state a decoy (a concrete, plausible rule of the class worth "
            "exactly nothing) rather than a filler line."
        ),
    )
    sample_alike: float = Field(
        0.5,
        ge=0,
        le=1,
        description=(
            "Correlation of sampled evolve replies to one prompt: each sampled reply is, with this "
            "probability, the prompt's shared draw (the same reply as every other sample that takes it), "
            "else its own. Two samples are the same reply with probability about alike^2. 0: independent "
            "samples; 1: every sample alike."
        ),
    )
    consolidate_drop_rate: float = Field(
        0.1, ge=0, le=1, description="Consolidation drops one instruction line it should have kept."
    )
    proposer_compliance: float = Field(
        0.7,
        ge=0,
        le=1,
        description=(
            "Share of evolve replies that heed the prompt's edit sets under test (UNDER_TEST_OPEN/CLOSE): "
            "one that does treats their insights as present and states another; one that does not "
            "ignores the block and may repeat an open insight. 1: every proposal heeds it."
        ),
    )
    momentum_clear_rate: float = Field(
        0.5,
        ge=0,
        le=1,
        description=(
            "Slow momentum restates each insight the body holds in the clear form with this probability "
            "(worth world.restate_gain), in the muddled form with momentum_muddled_rate (worth as much "
            "less), and plainly otherwise (worth nothing)."
        ),
    )
    momentum_muddled_rate: float = Field(
        0.2, ge=0, le=1, description="Slow momentum restates an insight in the muddled form (see above)."
    )

    @model_validator(mode="after")
    def _sum(self) -> EvolveConfig:
        if self.insight_rate + self.harmful_rate > 1.0 + 1e-9:
            raise ValueError("insight_rate + harmful_rate must be <= 1")
        if self.momentum_clear_rate + self.momentum_muddled_rate > 1.0 + 1e-9:
            raise ValueError("momentum_clear_rate + momentum_muddled_rate must be <= 1")
        return self


class SimConfig(StrictModel):
    """Everything the simulated model does, seeded."""

    seed: int = Field(0, description="World and sampling seed: same seed, same world, same answers.")
    model_names: tuple[str, ...] = Field(("sim-vl",), min_length=1, description="Served model names.")
    max_body_bytes: int = Field(32 * 1024 * 1024, ge=1024, description="Larger request bodies get 413.")
    max_concurrency: int | None = Field(
        None, ge=1, description="Requests processed at once; the rest queue (None = unlimited)."
    )
    record_requests: bool = Field(
        False, description="Keep every chat request body in memory (tests read what a client sent)."
    )
    latency: LatencyConfig = Field(default_factory=LatencyConfig)
    faults: FaultConfig = Field(default_factory=FaultConfig)
    world: WorldConfig = Field(default_factory=WorldConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    evolve: EvolveConfig = Field(default_factory=EvolveConfig)
