"""Small helpers with aiokafka's names (``aiokafka.helpers``)."""

from __future__ import annotations

import ssl

__all__ = ["create_ssl_context"]


def create_ssl_context(
    *,
    cafile: str | None = None,
    capath: str | None = None,
    cadata: str | bytes | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    password: str | None = None,
    crlfile: str | None = None,
) -> ssl.SSLContext:
    """An ``SSLContext`` for ``security_protocol="SSL"``: server certificates are verified
    against the given CA (or the system's), with hostname checking; ``certfile``/``keyfile``
    add a client certificate; ``crlfile`` turns on leaf certificate revocation checks."""
    context = ssl.create_default_context(
        purpose=ssl.Purpose.SERVER_AUTH, cafile=cafile, capath=capath, cadata=cadata
    )
    if crlfile is not None:
        context.load_verify_locations(crlfile)
        context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if certfile is not None:
        context.load_cert_chain(certfile=certfile, keyfile=keyfile, password=password)
    return context
