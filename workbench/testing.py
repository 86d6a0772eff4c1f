"""Throwaway servers on this machine, to try workbench without an account or a cluster: an S3
server (moto, from the ``dev`` extra), a Spark standalone cluster, a Ray cluster and a Kafka
cluster (librdkafka's mock brokers, from the ``streaming`` extra). The tests and benchmarks use
them, and so can anyone.

    with LocalS3() as s3, LocalSparkCluster() as spark, LocalRayCluster() as ray_cluster:
        lake = dc.Catalog(dc.CatalogProperties(f"s3://{s3.new_bucket()}/lake", s3.options))
        dc.init({"default": lake}, engines={"spark": {"master": spark.master_url},
                                            "ray": {"address": ray_cluster.address}})
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any, ClassVar

from workbench.core.base.dependencies import STREAMING_INSTALL, require
from workbench.core.base.errors import EngineUnavailableError, WorkbenchError

START_SECONDS = 30.0
_USER = "lake"
_USER_SETUP = ("CreateUser", "PutUserPolicy", "CreateAccessKey")  # requests moto leaves unchecked
_ALLOW_ALL = {"Effect": "Allow", "Action": "*", "Resource": "*"}
CLUSTER_START_SECONDS = 180.0  # a cold JVM or Ray node takes 5-20 s on a busy 2-core machine
STOP_SECONDS = 5.0


class LocalS3:
    """moto's S3 server in a child process on 127.0.0.1 (a free port), stopped on exit. With
    ``check_credentials`` it checks every request's signature as AWS does (moto's IAM checks),
    and ``options`` hold the keys of a user allowed everything, so a wrong secret is refused.
    With ``outages`` the endpoint is a relay in front of the server, which ``cut`` takes away
    and ``restore`` brings back on the same port, the server's buckets kept meanwhile."""

    def __init__(self, check_credentials: bool = False, outages: bool = False) -> None:
        self.port = _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.check_credentials = check_credentials
        self._keys = ("testing", "testing")  # moto accepts any key while it checks none
        self._process: subprocess.Popen | None = None
        self._relay = _Relay(self.port, _free_port()) if outages else None

    @property
    def options(self) -> dict[str, str]:
        """Storage options (delta-rs names) that reach this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self._keys[0],
            "AWS_SECRET_ACCESS_KEY": self._keys[1],
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
        port = self.port if self._relay is None else self._relay.target
        command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
        env = dict(os.environ)
        if self.check_credentials:  # the requests that make the user go unchecked
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(len(_USER_SETUP))
        self._process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        if self._relay is not None:
            self._relay.open()
        deadline = time.monotonic() + START_SECONDS
        while not self._answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise WorkbenchError(f"moto's S3 server did not start on {self.endpoint}.")
            time.sleep(0.1)
        if self.check_credentials:
            self._keys = self._make_user()
        return self

    def _make_user(self) -> tuple[str, str]:
        """Create an IAM user allowed everything; its access key id and secret."""
        iam = self._client("iam")
        policy = {"Version": "2012-10-17", "Statement": [_ALLOW_ALL]}
        iam.create_user(UserName=_USER)
        iam.put_user_policy(UserName=_USER, PolicyName="all", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=_USER)["AccessKey"]
        return key["AccessKeyId"], key["SecretAccessKey"]

    def _client(self, service: str) -> Any:
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            aws_access_key_id=self._keys[0],
            aws_secret_access_key=self._keys[1],
            region_name="us-east-1",
        )

    def _answers(self) -> bool:
        try:
            urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).close()
        except (urllib.error.URLError, OSError):
            return False
        return True

    def new_bucket(self, name: str | None = None) -> str:
        """Create a fresh, empty bucket (called ``name``, else a new name) and return its name."""
        name = name or f"lake-{uuid.uuid4().hex[:12]}"
        self._client("s3").create_bucket(Bucket=name)
        return name

    def stop(self) -> None:
        """Stop the server (its buckets are gone with it)."""
        if self._relay is not None:
            self._relay.close()
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGCONT)  # a paused server could not end
            self._process.terminate()
            self._process.wait(timeout=10)
        self._process = None

    def cut(self) -> None:
        """Take the endpoint away, as if the server had stopped (needs ``outages``): its port
        refuses connections and the open ones drop, while the server keeps its buckets."""
        self._relayed().close()

    def restore(self) -> None:
        """Open the endpoint again on its port after ``cut``, every bucket as it was."""
        self._relayed().open()

    def _relayed(self) -> _Relay:
        if self._relay is None:
            raise WorkbenchError("Only a LocalS3(outages=True) can cut and restore its endpoint.")
        return self._relay

    def pause(self) -> None:
        """Stop the server's process where it is (SIGSTOP): its port still takes connections,
        but nothing answers on them until ``resume``."""
        if self._process is not None:
            self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused server go on (SIGCONT): it answers what came meanwhile."""
        if self._process is not None:
            self._process.send_signal(signal.SIGCONT)

    def __enter__(self) -> LocalS3:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalKafka:
    """A Kafka cluster in this process: librdkafka's mock brokers (confluent-kafka, the
    ``streaming`` extra), real brokers on 127.0.0.1 that this and other processes reach at
    ``bootstrap_servers`` until ``close``. Topics are created on first use, with ``PARTITIONS``
    partitions (the mock brokers take no CreateTopics)."""

    PARTITIONS = 4  # librdkafka's mock cluster's default for an auto-created topic
    # A consumer killed with -9 leaves its group when its session times out: a short session
    # moves its partitions to the others in seconds, not Kafka's default 45. Not below 3.5 s:
    # the brokers hold a group's first join 3 s for more members, and a shorter session expires
    # while it waits.
    GROUP_SETTINGS: ClassVar[dict[str, Any]] = {
        "session.timeout.ms": 4000,
        "heartbeat.interval.ms": 300,
        "max.poll.interval.ms": 10000,
        "log_level": 3,  # errors only
    }

    def __init__(self, brokers: int = 1) -> None:
        kafka = require("confluent_kafka", "LocalKafka", STREAMING_INSTALL)
        # log_level 4: the brokers' notices (mock cluster enabled, peers gone) stay quiet
        self._owner = kafka.Producer({"test.mock.num.brokers": brokers, "log_level": 4})
        found = self._owner.list_topics(timeout=START_SECONDS).brokers.values()
        self.bootstrap_servers = ",".join(f"{b.host}:{b.port}" for b in found)
        self._producer = kafka.Producer(
            {"bootstrap.servers": self.bootstrap_servers, "log_level": 4}
        )

    def consumer_config(self, group: str) -> dict[str, Any]:
        """Settings of a consumer of ``group`` on this cluster (see ``GROUP_SETTINGS``)."""
        return {
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": group,
            **self.GROUP_SETTINGS,
        }

    def produce(self, topic: str, values: Iterable[bytes | str]) -> int:
        """Send ``values`` to ``topic``, spread over its partitions in turn; how many were sent
        (every one acknowledged before it returns)."""
        sent = 0
        for i, value in enumerate(values):
            self._send(topic, value, i % self.PARTITIONS)
            sent += 1
        if self._producer.flush(START_SECONDS):
            raise WorkbenchError(f"The local Kafka cluster did not take every message of {topic}.")
        return sent

    def _send(self, topic: str, value: bytes | str, partition: int) -> None:
        try:
            self._producer.produce(topic, value, partition=partition)
        except BufferError:  # the client's queue is full: let it drain, then send again
            self._producer.flush(START_SECONDS)
            self._producer.produce(topic, value, partition=partition)

    def close(self) -> None:
        """Stop the brokers (their topics go with them)."""
        self._producer.flush(STOP_SECONDS)
        self._producer = self._owner = None

    def __enter__(self) -> LocalKafka:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Relay:
    """A TCP relay from 127.0.0.1:``port`` to the server at ``target``, in a child process of
    its own (a thread of this one would wait while a library holds the GIL). Closed, the relay
    is killed: its port refuses connections and every connection through it drops, as when a
    server's process ends; opened again, a new relay serves the same port."""

    def __init__(self, port: int, target: int) -> None:
        self.port, self.target = port, target
        self._process: subprocess.Popen | None = None

    def open(self) -> None:
        """Listen on the port (again), once the relay says it does; a port still held a moment
        (by a connection that went with the last relay) is tried again for a few seconds."""
        deadline = time.monotonic() + START_SECONDS
        while self._process is None:
            said = self._start()
            if said and time.monotonic() > deadline:
                raise WorkbenchError(f"The relay did not start on port {self.port}: {said}")
            if said:
                time.sleep(0.1)

    def _start(self) -> str:
        """Start the relay: '' once it listens, else the last line it said as it ended."""
        command = [sys.executable, "-c", _RELAY_MAIN, str(self.port), str(self.target)]
        with tempfile.TemporaryFile() as errors:
            self._process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors)
            assert self._process.stdout is not None
            if self._process.stdout.readline():
                return ""
            self._process.wait()
            self._process = None
            errors.seek(0)
            said = errors.read().decode(errors="replace").strip().splitlines()
        return said[-1] if said else "it ended"

    def close(self) -> None:
        """Kill the relay: its port and every connection through it go at once."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


_RELAY_MAIN = "import sys; from workbench.testing import relay; relay(*map(int, sys.argv[1:]))"


def relay(port: int, target: int) -> None:
    """Relay every connection to 127.0.0.1:``port`` to the server at ``target`` until killed,
    printing a line once listening (``LocalS3(outages=True)`` runs this in a child process)."""

    async def serve() -> None:
        server = await asyncio.start_server(
            lambda reader, writer: _relayed(target, reader, writer), "127.0.0.1", port
        )
        print("listening", flush=True)
        await server.serve_forever()

    asyncio.run(serve())


async def _relayed(target: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Pass one connection's bytes both ways between its client and the server."""
    try:
        upstream, to_server = await asyncio.open_connection("127.0.0.1", target)
    except OSError:  # the server is not up (yet)
        writer.transport.abort()
        return
    await asyncio.gather(_pipe(reader, to_server), _pipe(upstream, writer))


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy ``source`` into ``sink`` until ``source`` ends or either end fails, then close
    ``sink`` once what it holds is sent (so the other way ends too)."""
    with suppress(OSError):
        while data := await source.read(1 << 16):
            sink.write(data)
            await sink.drain()
    sink.close()


class LocalSparkCluster:
    """A Spark standalone cluster on 127.0.0.1 started from pyspark's own ``spark-class``: a
    master and ``workers`` workers of ``cores`` cores, so tasks run in executor JVMs and Python
    workers of other processes, as on a real cluster. Stopped, with its executors, on exit."""

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "2g") -> None:
        self.workers, self.cores, self.memory = workers, cores, memory
        self.port = _free_port()
        self.webui_port = _free_port()
        self.master_url = f"spark://127.0.0.1:{self.port}"
        self._group: _ProcessGroups | None = None

    def start(self) -> LocalSparkCluster:
        """Start the master and the workers; return once every worker has registered."""
        try:
            import pyspark
        except ImportError as e:
            raise EngineUnavailableError(
                "A local Spark cluster needs pyspark: pip install 'workbench[spark]'."
            ) from e
        spark_class = str(Path(pyspark.__file__).parent / "bin" / "spark-class")
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            raise EngineUnavailableError(
                "A local Spark cluster needs Java 17 or 21: "
                "sudo apt-get install -y openjdk-17-jre-headless"
            )
        self._group = group = _ProcessGroups()
        env = {
            **os.environ,  # the rest of the environment reaches executors and Python workers
            "PYTHONPATH": _import_path(),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",  # no fixed port 6066
        }
        try:
            master = [
                *(spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"),
                *("--port", str(self.port), "--webui-port", str(self.webui_port)),
            ]
            group.spawn("master", master, env)
            for i in range(self.workers):
                worker = [
                    *(spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1"),
                    *("--cores", str(self.cores), "--memory", self.memory),
                    *("--webui-port", str(_free_port())),
                    *("--work-dir", str(group.folder / f"work-{i}"), self.master_url),
                ]
                group.spawn(f"worker-{i}", worker, env)
            group.wait_until(
                lambda: self._alive_workers() == self.workers,
                f"Spark's standalone cluster at {self.master_url} ({self.workers} workers)",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _alive_workers(self) -> int:
        try:
            url = f"http://127.0.0.1:{self.webui_port}/json/"
            with urllib.request.urlopen(url, timeout=2) as answer:
                state = json.load(answer)
        except (urllib.error.URLError, OSError, ValueError):
            return 0
        return int(state.get("aliveworkers", 0)) if state.get("status") == "ALIVE" else 0

    @property
    def pids(self) -> dict[str, int]:
        """Process ids of the master and the workers by name (``master``, ``worker-0``, ...);
        executors run as children of their worker."""
        return self._group.pids if self._group is not None else {}

    def stop(self) -> None:
        """Stop the workers (and their executors), then the master."""
        if self._group is not None:
            self._group.stop()
            self._group = None

    def __enter__(self) -> LocalSparkCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalRayCluster:
    """A Ray cluster of ``nodes`` nodes on this machine (``ray start --head`` and ``ray start``
    joining it, ``cpus`` CPUs each), so tasks and actors run in other processes on either node.
    Stopped by ending the processes it started, never by ``ray stop`` (which would end every Ray
    on the machine)."""

    def __init__(self, nodes: int = 2, cpus: int = 1, object_store_bytes: int = 256 * 1024**2):
        self.nodes, self.cpus, self.object_store_bytes = nodes, cpus, object_store_bytes
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self._group: _ProcessGroups | None = None

    def start(self) -> LocalRayCluster:
        """Start the head, then the other nodes; return once every node is alive."""
        try:
            import ray  # noqa: F401
        except ImportError as e:
            raise EngineUnavailableError(
                "A local Ray cluster needs ray: pip install 'workbench[ray]'."
            ) from e
        ray_cli = str(Path(sys.executable).with_name("ray"))
        self._group = group = _ProcessGroups()
        env = {
            **os.environ,  # PYTHONPATH and the rest reach Ray's worker processes
            "RAY_USAGE_STATS_ENABLED": "0",
            # No token to hand around: `ray start` would otherwise turn token auth on, which the
            # local Ray instances workbench starts do not use.
            "RAY_AUTH_MODE": "disabled",
        }

        def node(*flags: str) -> list[str]:
            return [
                *(ray_cli, "start", *flags, f"--num-cpus={self.cpus}"),
                f"--object-store-memory={self.object_store_bytes}",
                f"--temp-dir={group.folder}",
                f"--dashboard-agent-listen-port={_free_port()}",  # 52365 by default: one a node
                *("--disable-usage-stats", "--block"),
            ]

        try:
            head = node("--head", f"--port={self.port}", "--include-dashboard=false")
            group.spawn("head", head, env)
            group.wait_until(lambda: self._alive_nodes() == 1, f"Ray's head at {self.address}")
            for i in range(1, self.nodes):
                group.spawn(f"node-{i}", node(f"--address={self.address}"), env)
            group.wait_until(
                lambda: self._alive_nodes() == self.nodes,
                f"the Ray cluster at {self.address} ({self.nodes} nodes)",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _alive_nodes(self) -> int:
        from ray._raylet import GcsClient

        try:  # Ray's client waits 30 s for a server that is not up yet: try the port first
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            nodes = GcsClient(address=self.address).get_all_node_info(timeout=2)
        except Exception:  # not answering yet: Ray raises several types for that
            return 0
        return sum(1 for node in nodes.values() if node.state == 0)  # 0 is ALIVE

    @property
    def pids(self) -> dict[str, int]:
        """Process ids of the ``ray start`` of each node by name (``head``, ``node-1``, ...);
        the node's raylet and workers run as its descendants."""
        return self._group.pids if self._group is not None else {}

    def stop(self) -> None:
        """Stop the nodes and their workers."""
        if self._group is not None:
            self._group.stop()
            self._group = None

    def __enter__(self) -> LocalRayCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _ProcessGroups:
    """Child processes, each in a process group of its own (it and everything it starts), with
    their output in log files of a private folder, for error messages."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="wb-"))
        self.processes: dict[str, subprocess.Popen] = {}

    def spawn(self, name: str, command: list[str], env: dict[str, str]) -> None:
        with open(self.folder / f"{name}.log", "wb") as log:
            self.processes[name] = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    @property
    def pids(self) -> dict[str, int]:
        return {name: process.pid for name, process in self.processes.items()}

    def wait_until(self, ready: Callable[[], bool], what: str) -> None:
        """Return when ``ready()``; raise ``EngineUnavailableError`` with the log of a process
        that exited, or of every process after the time limit."""
        deadline = time.monotonic() + CLUSTER_START_SECONDS
        while not ready():
            exited = [n for n, p in self.processes.items() if p.poll() is not None]
            if exited or time.monotonic() > deadline:
                why = (
                    f"{exited[0]} exited"
                    if exited
                    else f"not ready in {CLUSTER_START_SECONDS:.0f} s"
                )
                logs = "\n".join(self._tail(n) for n in (exited or self.processes))
                raise EngineUnavailableError(f"{what} did not start ({why}).\n{logs}")
            time.sleep(0.5)

    def _tail(self, name: str, lines: int = 15) -> str:
        text = (self.folder / f"{name}.log").read_text(errors="replace").splitlines()
        return f"--- {name} ---\n" + "\n".join(text[-lines:])

    def stop(self) -> None:
        """End the process groups (SIGTERM, then SIGKILL to what is left of them after
        ``STOP_SECONDS``: these servers keep nothing worth a longer wait), wait for the
        processes, and delete the folder."""
        deadline = time.monotonic() + STOP_SECONDS
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for process in self.processes.values():
                with suppress(ProcessLookupError):  # no process of the group is left
                    os.killpg(process.pid, sig)
            while time.monotonic() < deadline and any(map(_running, self.processes.values())):
                time.sleep(0.2)
        for process in self.processes.values():
            process.wait()
        self.processes.clear()
        shutil.rmtree(self.folder, ignore_errors=True)


def _running(process: subprocess.Popen) -> bool:
    process.poll()  # reap the leader
    return _group_running(process.pid)


def _group_running(group: int) -> bool:
    """True while a process of the group runs (exited children of an exited leader stay in it
    as zombies until init reaps them, which can take a while)."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # gone meanwhile
                continue
            if fields[0] != "Z" and int(fields[2]) == group:  # state and process group
                return True
    return False


def _import_path() -> str:
    """This process's import path as a PYTHONPATH, so Python workers a cluster starts import
    what it does (e.g. a model defined in a test module, pickled by reference)."""
    paths = [os.path.abspath(p) for p in sys.path if p and os.path.isdir(p)]
    return os.pathsep.join(dict.fromkeys(paths))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
