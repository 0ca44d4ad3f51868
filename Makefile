# The two commands of the README. Both work on a fresh clone: they make the venv and build the
# native module first (tools/bootstrap).
.PHONY: run test

run:
	tools/bootstrap
	.venv/bin/python -m ferrokafka demo

test:
	tools/test
