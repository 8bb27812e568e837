"""Evolution: proposals of edits from case packs, and their rebase onto the incumbent."""
