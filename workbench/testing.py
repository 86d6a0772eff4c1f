"""A throwaway S3 server on this machine (moto, from the ``dev`` extra), to try catalogs on an
object store without an account: the tests and benchmarks use it, and so can anyone.

    with LocalS3() as s3:
        lake = dc.Catalog(dc.CatalogProperties(f"s3://{s3.new_bucket()}/lake", s3.options))
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

from workbench.core.base.errors import EngineUnavailableError, WorkbenchError

START_SECONDS = 30.0


class LocalS3:
    """moto's S3 server in a child process on 127.0.0.1 (a free port), stopped on exit."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen | None = None

    @property
    def options(self) -> dict[str, str]:
        """Storage options (delta-rs names) that reach this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }

    def start(self) -> LocalS3:
        """Start the server and wait until it answers."""
        try:
            import moto.server  # noqa: F401
        except ImportError as e:
            raise EngineUnavailableError(
                "A local S3 server needs moto: pip install 'workbench[dev]'."
            ) from e
        command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]
        self._process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + START_SECONDS
        while not self._answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise WorkbenchError(f"moto's S3 server did not start on {self.endpoint}.")
            time.sleep(0.1)
        return self

    def _answers(self) -> bool:
        try:
            urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).close()
        except (urllib.error.URLError, OSError):
            return False
        return True

    def new_bucket(self) -> str:
        """Create a fresh, empty bucket and return its name."""
        import boto3

        name = f"lake-{uuid.uuid4().hex[:12]}"
        boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        ).create_bucket(Bucket=name)
        return name

    def stop(self) -> None:
        """Stop the server (its buckets are gone with it)."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=10)
        self._process = None

    def __enter__(self) -> LocalS3:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
