"""The run: open it, loop over epochs and steps, decide each test, and store its end."""
