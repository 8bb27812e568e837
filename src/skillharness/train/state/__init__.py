"""What every step of a run shares: its context, checkpoint, records, budget, draws and role caller."""
