# The two commands of the README. Both work on a fresh clone: they make the venv and build the
# native module first. `make run` installs only what the demo uses (tools/bootstrap: no root,
# no system packages); `make test` adds the test tools and MIT Kerberos (tools/bootstrap --dev).
.PHONY: run test

run:
	tools/bootstrap
	.venv/bin/python -m ferrokafka demo

test:
	tools/test
