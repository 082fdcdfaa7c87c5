"""Remotes for tests: a real S3 HTTP API on 127.0.0.1 (moto's ThreadedMotoServer, started here)
and plain folders. Every test gets a fresh, empty remote URL of each kind it asks for."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",  # never ask an instance-metadata service
    "AWS_CONFIG_FILE": "/nonexistent/chrysalis-tests",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/chrysalis-tests",
}
# MinIO from deploy/compose.yaml, where Docker runs: set CHRYSALIS_TEST_MINIO_ENDPOINT (e.g.
# http://127.0.0.1:9000) and every remote test runs a third time, against it. moto accepts any
# credentials, so MinIO's are used for both.
MINIO = os.environ.get("CHRYSALIS_TEST_MINIO_ENDPOINT")
if MINIO:
    AWS_ENV["AWS_ACCESS_KEY_ID"] = os.environ.get("CHRYSALIS_TEST_MINIO_USER", "chrysalis")
    AWS_ENV["AWS_SECRET_ACCESS_KEY"] = os.environ.get(
        "CHRYSALIS_TEST_MINIO_PASSWORD", "chrysalis-secret"
    )
KINDS = ["file", "s3"] + (["minio"] if MINIO else [])
_names = itertools.count()


class S3Server:
    """moto's S3 on a free loopback port; stop() and start() again on the same port."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self._cls = ThreadedMotoServer
        self.server: Any = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        self.port: int = self.server._server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.running = True

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1")

    def new_bucket(self) -> str:
        name = f"memory-{os.getpid()}-{next(_names)}"
        self.client().create_bucket(Bucket=name)
        return name

    def url(self, bucket: str, prefix: str = "team") -> str:
        return f"s3://{bucket}/{prefix}?endpoint_url={self.endpoint}&timeout=2&retries=2"

    def stop(self) -> None:
        if self.running:
            self.server.stop()
            self.running = False

    def start(self) -> None:
        """Start again on the same port (moto keeps its state in the process)."""
        if not self.running:
            self.server = self._cls(ip_address="127.0.0.1", port=self.port, verbose=False)
            self.server.start()
            self.running = True

    def objects(self, bucket: str) -> dict[str, bytes]:
        c = self.client()
        out = {}
        for page in c.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for obj in page.get("Contents", ()):
                out[obj["Key"]] = c.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
        return out


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    saved = {k: os.environ.get(k) for k in AWS_ENV}
    os.environ.update(AWS_ENV)
    server = S3Server()
    yield server
    server.stop()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(params=KINDS)
def remote_url(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """A factory of fresh, empty remote URLs of one kind (the test runs once per kind)."""

    def make() -> str:
        if request.param == "file":
            root = tmp_path / f"remote-{next(_names)}"
            root.mkdir()
            return f"file://{root}"
        if request.param == "minio":
            import boto3

            request.getfixturevalue("s3_server")  # for its credentials in the environment
            bucket = f"memory-{os.getpid()}-{next(_names)}"
            boto3.client("s3", endpoint_url=MINIO, region_name="us-east-1").create_bucket(
                Bucket=bucket
            )
            return f"s3://{bucket}/team?endpoint_url={MINIO}&timeout=2&retries=2"
        server: S3Server = request.getfixturevalue("s3_server")
        return server.url(server.new_bucket())

    return make


def key_file(tmp_path: Path, keyed: bool) -> Path | None:
    """A fresh sync key (32 random bytes, hex) in ``tmp_path``, or None for a plaintext remote."""
    if not keyed:
        return None
    key = tmp_path / "key"
    key.write_text(os.urandom(32).hex())
    return key
