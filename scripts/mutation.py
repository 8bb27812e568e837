#!/usr/bin/env python3
"""Mutation testing of the safety-critical modules (``make mutation``; not part of CI).

A small AST mutator of our own: general tools skip decorated functions (``@property``,
``@contextmanager``), which is where the breaker's ``accepting`` and ``atomic_open`` live. Each
mutant is one small change (a comparison flipped, ``and``/``or`` swapped, a constant moved by
one, a return or a raise dropped, a condition negated), written into a private copy of the tree
and run against the tests of its module only (scripts/mutation.toml). The working tree is never
modified. A mutant is *killed* when the tests fail or time out, and *survives* when they pass.

Surviving mutants judged equivalent (no test could tell them apart) go in
scripts/mutation_equivalent.txt, one a line: the mutant's id, then a one-line reason.

    python scripts/mutation.py                      # every module, 1 worker
    python scripts/mutation.py --module breaker --workers 2
    python scripts/mutation.py --list --module retry    # the mutants, without running them
    python scripts/mutation.py --report             # the last saved results, without running
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "scripts/mutation.toml"
EQUIVALENTS = REPO / "scripts/mutation_equivalent.txt"
RESULTS = REPO / ".mutation"
MAX_WORKERS = 2  # the machine is shared: never more
COPIED = ("src", "tests", "examples", "pyproject.toml")

_FLIP_CMP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_FLIP_BIN: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}
# Conditions whose negation is already a flip of the comparison (no duplicate mutants).
_NEGATED_BY_FLIP = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)
_LOGGERS = {"log", "logger", "logging"}


@dataclass(frozen=True)
class Mutant:
    """One change to one file: replace ``[start, end)`` (line, byte column) with ``text``."""

    id: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    text: str
    description: str


@dataclass(frozen=True)
class Outcome:
    id: str
    status: str  # killed | timeout | survived | invalid
    seconds: float
    description: str


class _Collector(ast.NodeVisitor):
    """Walks one module and yields the mutants of every node it may change."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.found: list[Mutant] = []

    def _add(self, node: ast.AST, text: str, op: str, description: str, *, expr: bool = True) -> None:
        if node.end_lineno is None or node.end_col_offset is None:
            raise ValueError(f"{self.path}:{node.lineno}: node without an end position")
        mutant_id = f"{self.path}:{node.lineno}:{node.col_offset}:{op}"
        self.found.append(
            Mutant(
                id=mutant_id,
                path=self.path,
                line=node.lineno,
                col=node.col_offset,
                end_line=node.end_lineno,
                end_col=node.end_col_offset,
                text=f"({text})" if expr else text,
                description=description,
            )
        )

    # Places where a change is noise, not a mutant: docstrings, __all__, log calls, f-strings,
    # annotations and decorators.
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in _LOGGERS:
            return
        if isinstance(func, ast.Name) and func.id in ("min", "max"):
            swapped = ast.Call(ast.Name("max" if func.id == "min" else "min"), node.args, node.keywords)
            self._add(node, ast.unparse(swapped), f"{func.id}>swap", f"{func.id}() -> the other")
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            self.visit(default)
        for statement in node.body:
            self.visit(statement)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._visit_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._visit_function(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for statement in node.body:
            self.visit(statement)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        self.generic_visit(node)

    # The mutations.
    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            new = _FLIP_CMP.get(type(op))
            if new is None:
                continue
            ops = [*node.ops[:i], new(), *node.ops[i + 1 :]]
            text = ast.unparse(ast.Compare(node.left, ops, node.comparators))
            name = f"{type(op).__name__}>{new.__name__}" + (f"#{i}" if i else "")
            self._add(node, text, name, f"{type(op).__name__} -> {new.__name__}")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        new: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        old_name, new_name = type(node.op).__name__.lower(), type(new).__name__.lower()
        self._add(
            node,
            ast.unparse(ast.BoolOp(new, node.values)),
            f"{old_name}>{new_name}",
            f"{old_name} -> {new_name}",
        )
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._add(node, ast.unparse(node.operand), "not>drop", "`not` dropped")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        new = _FLIP_BIN.get(type(node.op))
        if new is not None:
            text = ast.unparse(ast.BinOp(node.left, new(), node.right))
            self._add(
                node,
                text,
                f"{type(node.op).__name__}>{new.__name__}",
                f"{type(node.op).__name__} -> {new.__name__}",
            )
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        new = _FLIP_BIN.get(type(node.op))
        if new is not None:
            text = ast.unparse(ast.AugAssign(node.target, new(), node.value))
            name = f"{type(node.op).__name__}={new.__name__}"
            self._add(node, text, name, f"{type(node.op).__name__}= -> {new.__name__}=", expr=False)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self._add(node, repr(not value), f"{value}>{not value}", f"{value} -> {not value}")
        elif isinstance(value, int | float):
            self._add(node, repr(value + 1), "const+1", f"{value!r} -> {value + 1!r}")

    def _negate_test(self, node: ast.If | ast.While | ast.IfExp) -> None:
        test = node.test
        flips_already = (
            isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], _NEGATED_BY_FLIP)
        )
        if not flips_already and not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            self._add(test, f"not ({ast.unparse(test)})", "negate", "condition negated")

    def visit_If(self, node: ast.If) -> None:
        self._negate_test(node)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._negate_test(node)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._negate_test(node)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            self._add(node, "return None", "return>None", "returns None instead", expr=False)
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        self._add(node, "pass", "raise>pass", "raise removed", expr=False)
        self.generic_visit(node)

    def visit_Break(self, node: ast.Break) -> None:
        self._add(node, "continue", "break>continue", "break -> continue", expr=False)

    def visit_Continue(self, node: ast.Continue) -> None:
        self._add(node, "break", "continue>break", "continue -> break", expr=False)


def mutants_of(path: str) -> list[Mutant]:
    """Every mutant of one source file (path relative to the repository)."""
    source = (REPO / path).read_text(encoding="utf-8")
    collector = _Collector(path)
    collector.visit(ast.parse(source))
    seen: dict[str, int] = {}
    unique = []
    for mutant in collector.found:
        count = seen.get(mutant.id, 0)
        seen[mutant.id] = count + 1
        unique.append(mutant if count == 0 else Mutant(**{**asdict(mutant), "id": f"{mutant.id}~{count}"}))
    return unique


def apply(source: str, mutant: Mutant) -> str:
    """``source`` with the mutant's change (AST columns are UTF-8 byte offsets)."""
    lines = source.encode("utf-8").splitlines(keepends=True)
    head = b"".join(lines[: mutant.line - 1]) + lines[mutant.line - 1][: mutant.col]
    tail = lines[mutant.end_line - 1][mutant.end_col :] + b"".join(lines[mutant.end_line :])
    return (head + mutant.text.encode("utf-8") + tail).decode("utf-8")


# Runs in each workspace as a long-lived process: it imports the heavy third-party libraries once,
# then forks one child per test run, so a mutant does not pay for interpreter start-up and
# imports (the bulk of a run's CPU). It never imports skillharness itself: every child imports
# the mutated tree afresh.
_SERVER = r"""
import json, os, signal, sys, time
import importlib
for name in PRELOAD:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
import pytest
assert "skillharness" not in sys.modules
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        args = ["-x", "-q", "-p", "no:cacheprovider", "-o", f"timeout={request['test_timeout']}"]
        os._exit(int(pytest.main([*args, *request["tests"]])))
    deadline = time.monotonic() + request["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            result = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            result = "timeout"
            break
        time.sleep(0.02)
    print(json.dumps(result), flush=True)
"""


# Third-party modules the package and its tests import (scipy.stats alone takes seconds).
_PRELOAD = (
    "numpy", "scipy.stats", "pydantic", "pydantic_settings", "hypothesis", "pytest", "pytest_asyncio",
    "httpx", "httpx_sse", "starlette.applications", "uvicorn", "jinja2", "yaml", "rich", "typer",
    "sqlalchemy", "redis", "av", "pysubs2",
)  # fmt: skip


class Workspace:
    """A private copy of the tree that one worker mutates, one file at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", "*.pyc", ".pytest_cache")
        for name in COPIED:
            source = REPO / name
            if source.is_dir():
                shutil.copytree(source, root / name, ignore=ignore)
            elif source.exists():
                shutil.copy2(source, root / name)
        questions = REPO.parent / "shared/data/videomme/videomme_questions.json"
        env = {
            **os.environ,
            "PYTHONPATH": str(root / "src"),  # ahead of the editable install of the working tree
            "PYTHONDONTWRITEBYTECODE": "1",  # a same-size mutant must never reuse a stale .pyc
            "SKILLHARNESS_VIDEOMME_QUESTIONS": os.environ.get(
                "SKILLHARNESS_VIDEOMME_QUESTIONS", str(questions)
            ),
        }
        self.server = subprocess.Popen(
            [sys.executable, "-c", f"PRELOAD = {_PRELOAD!r}\n{_SERVER}"],
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def close(self) -> None:
        if self.server.stdin is not None:
            self.server.stdin.close()
        self.server.wait(timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)

    def run_tests(self, tests: list[str], timeout: float) -> tuple[str, float]:
        if self.server.stdin is None or self.server.stdout is None:
            raise RuntimeError("the test server has no pipes")
        started = time.monotonic()
        # One test may take at most a quarter of the run's timeout: a mutant that loops forever
        # fails that test (pytest-timeout) instead of holding the whole run.
        request = {"tests": tests, "timeout": timeout, "test_timeout": max(10, round(timeout / 4))}
        self.server.stdin.write(json.dumps(request) + "\n")
        self.server.stdin.flush()
        answer = self.server.stdout.readline()
        if not answer:
            raise RuntimeError(f"the test server in {self.root} stopped (exit {self.server.poll()})")
        result = json.loads(answer)
        elapsed = time.monotonic() - started
        if result == "timeout":
            return "timeout", elapsed
        if result == 0:
            return "survived", elapsed
        if result in (1, 2, 3):  # failures, an import error during collection, an internal error
            return "killed", elapsed
        raise RuntimeError(f"pytest exited {result} for {tests}")

    def run_mutant(self, mutant: Mutant, tests: list[str], timeout: float) -> Outcome:
        target = self.root / mutant.path
        original = target.read_text(encoding="utf-8")
        mutated = apply(original, mutant)
        try:
            compile(mutated, str(target), "exec")
        except SyntaxError:
            return Outcome(mutant.id, "invalid", 0.0, mutant.description)
        target.write_text(mutated, encoding="utf-8")
        try:
            status, seconds = self.run_tests(tests, timeout)
        finally:
            target.write_text(original, encoding="utf-8")
        return Outcome(mutant.id, status, round(seconds, 2), mutant.description)


def load_config() -> dict[str, dict[str, list[str]]]:
    modules = tomllib.loads(CONFIG.read_text(encoding="utf-8"))["modules"]
    for name, entry in modules.items():
        for key in ("sources", "tests"):
            if not entry.get(key):
                raise SystemExit(f"{CONFIG}: module {name!r} needs a non-empty {key!r} list")
    return modules


def load_equivalents() -> dict[str, str]:
    """Mutant id -> the reason it is equivalent (``#`` lines and blank lines are skipped)."""
    found: dict[str, str] = {}
    if not EQUIVALENTS.exists():
        return found
    for number, raw in enumerate(EQUIVALENTS.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        mutant_id, _, reason = line.partition(" ")
        if not reason.strip():
            raise SystemExit(f"{EQUIVALENTS}:{number}: {mutant_id} needs a one-line reason")
        found[mutant_id] = reason.strip()
    return found


def _workspaces(count: int) -> Iterator[Workspace]:
    for _ in range(count):
        yield Workspace(Path(tempfile.mkdtemp(prefix="skillharness-mutation-")))


def run_module(
    name: str, entry: dict[str, list[str]], workers: int, only: set[str], *, fresh: bool
) -> list[Outcome]:
    """Run the mutants of one module (all, or ``only``), saving each outcome as it arrives."""
    mutants = [m for path in entry["sources"] for m in mutants_of(path) if not only or m.id in only]
    if not mutants:
        return []
    pool: queue.Queue[Workspace] = queue.Queue()
    spaces = list(_workspaces(workers))
    try:
        status, baseline = spaces[0].run_tests(entry["tests"], timeout=600)
        if status != "survived":
            raise SystemExit(f"{name}: the unmutated tests do not pass ({status}); fix them first")
        timeout = max(30.0, 2.5 * baseline)
        print(
            f"{name}: {len(mutants)} mutants, tests take {baseline:.1f}s, timeout {timeout:.0f}s", flush=True
        )
        for space in spaces:
            pool.put(space)
        if fresh:
            save(name, [], merge=False)
        lock = threading.Lock()

        def one(mutant: Mutant) -> Outcome:
            space = pool.get()
            try:
                outcome = space.run_mutant(mutant, entry["tests"], timeout)
            finally:
                pool.put(space)
            with lock:  # saved at once, so a run stopped half-way can --resume
                save(name, [outcome], merge=True)
            if outcome.status == "survived":
                print(f"  survived {outcome.id}  ({outcome.description})", flush=True)
            return outcome

        with ThreadPoolExecutor(max_workers=workers) as executor:
            return list(executor.map(one, mutants))
    finally:
        for space in spaces:
            space.close()


def save(name: str, outcomes: list[Outcome], merge: bool) -> None:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    merged = {o["id"]: o for o in json.loads(path.read_text())} if merge and path.exists() else {}
    merged.update({o.id: asdict(o) for o in outcomes})
    path.write_text(json.dumps(list(merged.values()), indent=1))


def _saved_survivors(name: str) -> set[str]:
    path = RESULTS / f"{name}.json"
    saved = json.loads(path.read_text()) if path.exists() else []
    return {o["id"] for o in saved if o["status"] == "survived"}


def _saved(name: str) -> set[str]:
    path = RESULTS / f"{name}.json"
    return {o["id"] for o in json.loads(path.read_text())} if path.exists() else set()


def report(names: list[str], modules: dict[str, dict[str, list[str]]], *, markdown: bool = False) -> bool:
    """Print the kill rate per module and the survivors; True when no survivor is unexplained."""
    equivalents = load_equivalents()
    current = {m.id for name in names for path in modules[name]["sources"] for m in mutants_of(path)}
    clean = True
    rows = []
    table = [
        "| module | mutants run | killed | equivalent | surviving | not run yet | kill rate "
        "| excluding equivalents |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        path = RESULTS / f"{name}.json"
        if not path.exists():
            rows.append(f"{name:<12} (not run)")
            continue
        outcomes = [Outcome(**o) for o in json.loads(path.read_text()) if o["id"] in current]
        pending = sum(1 for p in modules[name]["sources"] for _ in mutants_of(p)) - len(outcomes)
        valid = [o for o in outcomes if o.status != "invalid"]
        killed = sum(o.status in ("killed", "timeout") for o in valid)
        survivors = [o for o in valid if o.status == "survived"]
        equivalent = [o for o in survivors if o.id in equivalents]
        live = [o for o in survivors if o.id not in equivalents]
        raw = 100 * killed / len(valid) if valid else 100.0
        adjusted = 100 * killed / (len(valid) - len(equivalent)) if len(valid) > len(equivalent) else 100.0
        rows.append(
            f"{name:<12} {len(valid):>4} mutants  {killed:>4} killed  {len(equivalent):>3} equivalent  "
            f"{len(live):>3} surviving  {pending:>3} not run yet   kill rate {raw:5.1f} %   "
            f"excluding equivalents {adjusted:5.1f} %"
        )
        table.append(
            f"| {name} | {len(valid)} | {killed} | {len(equivalent)} | {len(live)} | {pending} "
            f"| {raw:.1f} % | {adjusted:.1f} % |"
        )
        if equivalent:
            print(f"\n{name}: equivalent (judged by hand)")
            for o in equivalent:
                print(f"  {o.id}  {o.description}: {equivalents[o.id]}")
        if live:
            clean = False
            print(f"\n{name}: SURVIVING")
            for o in live:
                print(f"  {o.id}  {o.description}")
    sources = {path for name in names for path in modules[name]["sources"]}
    stale = [i for i in equivalents if i.split(":", 1)[0] in sources and i not in current]
    print("\nkill rate per module")
    print("\n".join(table if markdown else rows))
    if stale:
        print("\nequivalents that match no current mutant (the code moved; re-check them):")
        print("\n".join(f"  {i}" for i in stale))
    return clean


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(f"stopped by signal {signum}")  # unwinds through the cleanup of the workspaces


def main() -> int:
    signal.signal(signal.SIGTERM, _stop)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", help="a module of scripts/mutation.toml (repeatable)")
    parser.add_argument("--workers", type=int, default=1, help=f"parallel test runs (1..{MAX_WORKERS})")
    parser.add_argument("--only", action="append", default=[], help="run only this mutant id (repeatable)")
    parser.add_argument(
        "--survivors", action="store_true", help="run again only the mutants that survived the saved run"
    )
    parser.add_argument(
        "--resume", action="store_true", help="run only the mutants the saved results do not hold yet"
    )
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--report", action="store_true", help="print the saved results, run nothing")
    parser.add_argument("--markdown", action="store_true", help="print the kill rates as a Markdown table")
    args = parser.parse_args()
    if not 1 <= args.workers <= MAX_WORKERS:
        parser.error(f"--workers must be between 1 and {MAX_WORKERS}")
    modules = load_config()
    names = args.module or list(modules)
    unknown = [n for n in names if n not in modules]
    if unknown:
        parser.error(f"unknown module(s) {unknown}; known: {sorted(modules)}")
    if args.list:
        for name in names:
            for path in modules[name]["sources"]:
                for m in mutants_of(path):
                    print(f"{m.id}  {m.description}")
        return 0
    if not args.report:
        for name in names:
            only = set(args.only) | (_saved_survivors(name) if args.survivors else set())
            if args.resume:
                only |= {m.id for path in modules[name]["sources"] for m in mutants_of(path)} - _saved(name)
            if (args.only or args.survivors or args.resume) and not only:
                continue  # nothing of this module to run again
            run_module(name, modules[name], args.workers, only, fresh=not only)
    return 0 if report(names, modules, markdown=args.markdown) else 1


if __name__ == "__main__":
    sys.exit(main())
