"""``python -m ferrokafka``: the same as the ``ferrokafka`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
