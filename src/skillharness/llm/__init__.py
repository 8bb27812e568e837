"""The LLM layer: streaming client, errors, retries, breaker, routing, cache."""
