"""The chaos soak (``benches/soak.py``): a three-node cluster behind fault proxies, an
idempotent producer and four group members in child processes, faults at seeded random
intervals, and a verification of what was acknowledged, processed and committed."""
