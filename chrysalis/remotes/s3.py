"""``s3://bucket/prefix``: any S3-compatible store, through boto3.

Credentials, region and endpoint come from the standard AWS chain (environment, profile,
``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3``, instance roles), or from the URL's query:
``s3://bucket/prefix?endpoint_url=http://127.0.0.1:9000&region=us-east-1&profile=work``.
Create-only writes send ``If-None-Match: *`` (AWS S3 since 2024, MinIO, moto); a store that
ignores it would silently overwrite, so `Sync` checks ``format.json`` once at first use.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

from chrysalis.core.errors import InvalidInput
from chrysalis.net.loopback import check_loopback_service
from chrysalis.remotes import (
    ObjectInfo,
    Remote,
    RemoteError,
    RemoteNotFound,
    RemoteUnavailable,
    check_key,
    register,
)

_OPTIONS = ("endpoint_url", "region", "profile", "addressing_style", "timeout", "retries")
_TAKEN = ("PreconditionFailed", "ConditionalRequestConflict", "412", "409")
# How long a loopback endpoint found served by us (or root) is not asked again: the window in
# which another user who takes the port after the real server stopped still gets requests.
# Our own server stopping makes requests fail for seconds anyway; a second adds little.
OWNER_CHECKED_FOR = 1.0


def parse(url: str) -> tuple[str, str, dict[str, str]]:
    """An ``s3://`` URL's bucket, key prefix (``""`` or ending in ``/``) and options;
    `InvalidInput` naming what is wrong. No I/O, no boto3."""
    parts = urlsplit(url)
    if not parts.netloc:
        raise InvalidInput(f"remote URL {url!r}: expected s3://bucket/prefix")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = sorted(set(query) - set(_OPTIONS))
    if unknown:
        raise InvalidInput(
            f"remote URL {url!r}: unknown option {unknown[0]!r} (known: {', '.join(_OPTIONS)})"
        )
    try:
        float(query.get("timeout", 10)), int(query.get("retries", 4))
    except ValueError:
        raise InvalidInput(f"remote URL {url!r}: timeout and retries must be numbers") from None
    prefix = parts.path.strip("/") + "/" if parts.path.strip("/") else ""
    return parts.netloc, prefix, query


class S3Remote(Remote):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.bucket, self.prefix, query = parse(url)
        import boto3  # heavy: only when an s3 remote is used
        from botocore.config import Config

        timeout = float(query.get("timeout", 10))
        attempts = int(query.get("retries", 4))
        session = boto3.session.Session(profile_name=query.get("profile"))
        self.endpoint = query.get("endpoint_url")
        self.client = session.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=query.get("region"),
            config=Config(
                connect_timeout=timeout,
                read_timeout=timeout,
                retries={"max_attempts": attempts, "mode": "standard"},
                s3={"addressing_style": query.get("addressing_style", "auto")},
            ),
        )
        from botocore.exceptions import BotoCoreError, ClientError

        self._client_error = ClientError
        self._boto_error = BotoCoreError
        self._owner_checked_at = float("-inf")

    def _start(self, verb: str) -> None:
        """Count the call; first, when the endpoint is on loopback, make sure another local
        user has not taken its port (they would get every object, and without a sync key the
        text itself). The answer "it is ours" is trusted for `OWNER_CHECKED_FOR` seconds:
        reading ``/proc/net/tcp`` costs ~10 ms here, per request it dominated a push of many
        small objects. A refusal is never remembered (each request asks again), and a failed
        request forgets the answer (the server may have stopped and its port be free)."""
        self.count(verb)
        if self.endpoint is not None:
            now = time.monotonic()
            if now - self._owner_checked_at > OWNER_CHECKED_FOR:
                check_loopback_service(self.endpoint, "the S3 endpoint", RemoteUnavailable)
                self._owner_checked_at = now

    def _key(self, key: str) -> str:
        return self.prefix + check_key(key)

    def _fail(self, verb: str, key: str, exc: Exception) -> RemoteError:
        # The server may have stopped: whoever binds its port next is asked about first.
        self._owner_checked_at = float("-inf")
        code = _code(exc)
        if code == "NoSuchBucket":
            return RemoteUnavailable(f"{self.url}: bucket {self.bucket!r} does not exist")
        return RemoteUnavailable(f"{self.url}: {verb} {key!r} failed: {code or exc}")

    def get(self, key: str) -> bytes:
        self._start("get")
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
            return reply["Body"].read()  # type: ignore[no-any-return]
        except (self._client_error, self._boto_error) as exc:
            if _code(exc) in ("NoSuchKey", "404"):
                raise RemoteNotFound(f"{self.url}: no object {key}") from None
            raise self._fail("get", key, exc) from exc

    def put(self, key: str, data: bytes) -> None:
        self._start("put")
        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data)
        except (self._client_error, self._boto_error) as exc:
            raise self._fail("put", key, exc) from exc

    def put_if_absent(self, key: str, data: bytes) -> bool:
        self._start("put")
        try:
            self.client.put_object(
                Bucket=self.bucket, Key=self._key(key), Body=data, IfNoneMatch="*"
            )
        except (self._client_error, self._boto_error) as exc:
            if _code(exc) in _TAKEN:
                return False
            raise self._fail("put", key, exc) from exc
        return True

    def list(self, prefix: str = "") -> list[ObjectInfo]:
        self._start("list")
        out: list[ObjectInfo] = []
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.prefix + prefix
            )
            for page in pages:
                if len(out):
                    self.count("list")
                for obj in page.get("Contents", ()):
                    when = obj.get("LastModified")
                    out.append(
                        ObjectInfo(
                            obj["Key"][len(self.prefix) :],
                            int(obj["Size"]),
                            when.timestamp() if when is not None else None,
                        )
                    )
        except (self._client_error, self._boto_error) as exc:
            raise self._fail("list", prefix, exc) from exc
        return sorted(out, key=lambda o: o.key)

    def delete(self, key: str) -> None:
        self._start("delete")
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))
        except (self._client_error, self._boto_error) as exc:
            raise self._fail("delete", key, exc) from exc

    def close(self) -> None:
        self.client.close()


def _code(exc: Exception) -> str:
    response: Any = getattr(exc, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


register("s3", check=parse)(S3Remote)
