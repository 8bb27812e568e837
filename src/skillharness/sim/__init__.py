"""The simulated model: an OpenAI-compatible server with a known ground truth, faults and an oracle.

It is a simulator. Its ground truth is a seeded world of hidden insights per task type; the
oracle reports the exact scored truth (the probability that the harness scores an answer right on
an :class:`AgentPath`) of any bundle text on any question set.
"""

from skillharness.sim.config import AnswerShape, FaultConfig, FaultKind, LatencyConfig, PlainShape, SimConfig
from skillharness.sim.oracle import BundleText, EditEffect, Oracle
from skillharness.sim.presets import decisive_world
from skillharness.sim.runner import SimServer, build_state, run_sim_server
from skillharness.sim.server import create_app
from skillharness.sim.world import AgentPath, World

__all__ = [
    "AgentPath",
    "AnswerShape",
    "BundleText",
    "EditEffect",
    "FaultConfig",
    "FaultKind",
    "LatencyConfig",
    "Oracle",
    "PlainShape",
    "SimConfig",
    "SimServer",
    "World",
    "build_state",
    "create_app",
    "decisive_world",
    "run_sim_server",
]
