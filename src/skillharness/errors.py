"""Every exception skillharness raises, in one tree.

User-input errors (the user can fix the file, flag or config) are kept apart from run-time
errors (the endpoint, the disk or the store misbehaved)::

    SkillharnessError
    ├── UserError                    the user's input is wrong; the message names it
    │   ├── ConfigError              config file, env var or CLI flag (key path + file)
    │   ├── DataError                questions file, video, subtitles (file + row/line + field)
    │   ├── SplitError               split artifacts (exists without --force, hash mismatch)
    │   ├── SkillError               skill document / bundle / workspace (file + line)
    │   └── TemplateError            missing, empty or badly rendering prompt template
    └── RunError                     something failed while running
        ├── LLMError                 a model call failed
        │   ├── TransientLLMError    worth retrying (timeouts, disconnects, 429/5xx, cut stream)
        │   └── FatalLLMError        retrying cannot help (400/401/403/404/422)
        │       └── AuthError        names the endpoint and the env var, never the key
        ├── InfraError               frames, disk, store: the question could not be asked
        ├── StoreError               run store schema/version/readonly problems
        │   ├── StoreMissing         no store at the path a reader was given
        │   ├── StoreNotInitialised  the store exists but no run was ever recorded in it
        │   ├── RunInputsChanged     a resume whose inputs differ from the stored run's
        │   └── StoreOutdated        an older schema, which a reader never upgrades
        ├── CacheError               cache backend problems (never a corrupt entry: that is a miss)
        └── ExcludedShareError       a diagnosis excluded too many wrong answers to go on

Third-party exceptions are translated at the layer boundary (``raise X(...) from exc``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_SQLALCHEMY_BACKGROUND = re.compile(r"\s*\(Background on this error at: [^)]*\)")
# The statement and its parameters SQLAlchemy appends: our own SQL, which tells a user nothing about
# their store (and can run to pages); the chained exception keeps it for a traceback.
_SQLALCHEMY_STATEMENT = re.compile(r"\s*\[SQL: .*?\](\s*\[parameters: .*?\])?(?=\s*(\(Background|\Z))", re.S)


class SkillharnessError(Exception):
    """Base class. ``context`` carries machine-readable details (file, row, field, ...)."""

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.context: Mapping[str, Any] = dict(context)

    def __str__(self) -> str:
        return self.message


class UserError(SkillharnessError):
    """The user's input is at fault; the message says which input and how."""


class ConfigError(UserError):
    """A config file, environment variable or flag is invalid."""


class BundleSlotError(ConfigError):
    """A reference protocol offers no place for the bundle's text under ``auto``."""


class DataError(UserError):
    """A questions file, video or subtitle file is invalid."""


class SplitError(UserError):
    """Split artifacts are missing, mismatched, or would be overwritten."""


class SkillError(UserError):
    """A skill document, bundle or workspace is malformed."""


class ExportError(SkillError):
    """A bundle cannot be exported, or an export cannot be read back; the message names the input."""


class TemplateError(UserError):
    """A prompt template is missing, empty or fails strict rendering."""


class RunError(SkillharnessError):
    """Something failed at run time."""


class LLMError(RunError):
    """A model call failed."""


class TransientLLMError(LLMError):
    """A model call failed in a way that a retry may fix."""

    def __init__(self, message: str, *, retry_after_s: float | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.retry_after_s = retry_after_s


class FatalLLMError(LLMError):
    """A model call failed in a way that a retry cannot fix."""


class AuthError(FatalLLMError):
    """The endpoint refused our credentials. Names the endpoint and env var, never the key."""


class InfraError(RunError):
    """Infrastructure (frames, disk, store) failed; the question could not be asked fairly."""


class StoreError(RunError):
    """The run store could not be opened, migrated or written.

    A message quoting a SQLAlchemy error loses its "Background on this error at: <link>" line and
    the ``[SQL: ...]`` statement: they explain SQLAlchemy and our queries, not what the user can do
    about the store.
    """

    def __init__(self, message: str, **context: Any) -> None:
        plain = _SQLALCHEMY_BACKGROUND.sub("", _SQLALCHEMY_STATEMENT.sub("", message))
        super().__init__(plain.rstrip(), **context)


class StoreMissing(StoreError):
    """A reader was given a path where no store exists (a reader never creates one)."""


class StoreOutdated(StoreError):
    """The store has an older schema: a reader never upgrades it, the next writer does."""


class RunInputsChanged(StoreError):
    """A resume with inputs (settings, bundle, model) other than the stored run's. ``differences``
    says which, without the advice, so a command can name its own flag for a new run."""

    def __init__(self, message: str, *, differences: str, **context: Any) -> None:
        super().__init__(message, **context)
        self.differences = differences


class StoreNotInitialised(StoreError):
    """The store exists but was never initialised: a start-up stopped before it created the
    schema. It holds nothing, so a caller that would replace it loses nothing."""


class CacheError(RunError):
    """A cache backend is unreachable or misconfigured."""


class CircuitOpenError(TransientLLMError):
    """An endpoint's circuit breaker stayed open past the caller's wait deadline (or fail-fast).

    Transient for the run (a resume asks again), but the retry layer does not retry it: the
    caller has already waited as long as the config allows.
    """


class GateError(RunError):
    """A gate was misused: fed after its decision, past its budget, or with a malformed outcome."""


class ExcludedShareError(RunError):
    """Too many wrong answers of a rollout could not be diagnosed (infra, degraded, failed judge).

    ``context`` holds ``counts`` (by cause, plus ``wrong``), ``excluded``, ``share`` and ``limit``:
    a training step never continues on evidence that thin.
    """
