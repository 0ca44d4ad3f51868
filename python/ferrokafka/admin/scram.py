"""The admin client's SCRAM credential operations: DescribeUserScramCredentials and
AlterUserScramCredentials to any broker (KRaft forwards changes to the controller), as Java's
``describeUserScramCredentials`` and ``alterUserScramCredentials``. The password never leaves
the client: it sends a random salt and the salted password (RFC 5802's ``Hi``, PBKDF2 with the
mechanism's HMAC), as Java does."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, NamedTuple

from ..protocol import Api
from ._base import AdminBase, raise_for, raise_for_each

if TYPE_CHECKING:
    from .._native import AlterUserScramCredentialsRequest, DescribeUserScramCredentialsRequest

__all__ = [
    "ScramCredentialInfo",
    "ScramMechanism",
    "ScramOperations",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
]

_SALT_BYTES = 32
MIN_ITERATIONS = 4096  # the broker refuses fewer (RFC 7677's floor)


class ScramMechanism(IntEnum):
    """The SCRAM mechanisms Kafka stores credentials for (the protocol's codes)."""

    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def hash_name(self) -> str:
        return "sha256" if self is ScramMechanism.SCRAM_SHA_256 else "sha512"


class ScramCredentialInfo(NamedTuple):
    mechanism: ScramMechanism
    iterations: int


@dataclass(frozen=True)
class UserScramCredentialUpsertion:
    """Create or replace ``user``'s credential for ``mechanism``; ``salt`` random unless
    given."""

    user: str
    mechanism: ScramMechanism
    password: str = field(repr=False)
    iterations: int = MIN_ITERATIONS
    salt: bytes | None = field(default=None, repr=False)

    def salted_password(self, salt: bytes) -> bytes:
        """RFC 5802's SaltedPassword: Hi(password, salt, iterations)."""
        return hashlib.pbkdf2_hmac(
            self.mechanism.hash_name, self.password.encode(), salt, self.iterations
        )


@dataclass(frozen=True)
class UserScramCredentialDeletion:
    """Delete ``user``'s credential for ``mechanism``."""

    user: str
    mechanism: ScramMechanism


class ScramOperations(AdminBase):
    """Users' SCRAM credentials."""

    async def describe_user_scram_credentials(
        self, users: Iterable[str] | None = None
    ) -> dict[str, list[ScramCredentialInfo]]:
        """The mechanisms and iteration counts of each user's credentials (every user with
        one by default). A named user without credentials raises ``ResourceNotFoundError``
        naming the user."""
        request: DescribeUserScramCredentialsRequest = {
            "users": None if users is None else [{"name": u} for u in dict.fromkeys(users)]
        }
        response = await self._client.send_to_any(Api.DESCRIBE_USER_SCRAM_CREDENTIALS, request)
        what = "describe_user_scram_credentials"
        raise_for(response["error_code"], what, response["error_message"])
        described: dict[str, list[ScramCredentialInfo]] = {}
        for result in response["results"]:
            raise_for(
                result["error_code"], f"{what}: user {result['user']!r}", result["error_message"]
            )
            described[result["user"]] = [
                ScramCredentialInfo(ScramMechanism(c["mechanism"]), c["iterations"])
                for c in result["credential_infos"]
            ]
        return described

    async def alter_user_scram_credentials(
        self, alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion]
    ) -> None:
        """Create, replace or delete credentials; a user's error (too few or too many
        iterations, a deletion of a credential that does not exist, two changes to one user
        in one call, which the controller refuses as Java's ``Admin`` sees it too) is raised
        naming the user."""
        request: AlterUserScramCredentialsRequest = {"deletions": [], "upsertions": []}
        for change in alterations:
            if isinstance(change, UserScramCredentialDeletion):
                request["deletions"].append(
                    {"name": change.user, "mechanism": int(change.mechanism)}
                )
                continue
            salt = change.salt if change.salt is not None else os.urandom(_SALT_BYTES)
            request["upsertions"].append(
                {
                    "name": change.user,
                    "mechanism": int(change.mechanism),
                    "iterations": change.iterations,
                    "salt": salt,
                    "salted_password": change.salted_password(salt),
                }
            )
        if not request["deletions"] and not request["upsertions"]:
            return
        response = await self._client.send_to_any(Api.ALTER_USER_SCRAM_CREDENTIALS, request)
        raise_for_each(response["results"], "alter_user_scram_credentials: user", "user")
