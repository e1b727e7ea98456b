"""Run identity and lifetime: run ids, state files, the cleanup registry."""
