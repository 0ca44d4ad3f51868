"""ferrokafka's own source of randomness (backoff jitter, partition choice, candidate order).

The ``random`` module's shared generator belongs to the application: a service that seeds it
for a reproducible run, or a test framework that checks nothing else draws from it, must see the
same sequence with ferrokafka in the process as without it.
"""

from __future__ import annotations

import random

rng = random.Random()
