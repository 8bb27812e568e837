"""commands layer: one module per command group (each with a ``register(app)``).

Importing the package makes typer's rich ``--help`` show boolean flags as flags
(:mod:`skillharness.commands.help_flags`), for the CLI and for any app built from its groups.
"""

from skillharness.commands.help_flags import show_flags_as_flags

show_flags_as_flags()
