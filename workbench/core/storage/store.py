"""A catalog root's storage: a local folder or an object store (``s3://``, ``gs://``, ``az://``).

Small metadata objects (Delta commits, leases, tags) go through obstore, the Python face of the
Rust ``object_store`` that delta-rs uses, because it offers put-if-absent on every store (a
conditional put on S3): the one primitive the commit protocol needs. Parquet goes through the
matching pyarrow filesystem. Storage options use delta-rs's names (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_ALLOW_HTTP``, ...), so one dict configures every library.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from workbench.core.storage import file_cache
from workbench.core.storage.identity import masked, redacted, store_identity
from workbench.core.storage.limits import KEYS as LIMIT_KEYS
from workbench.core.storage.limits import Limits, with_defaults
from workbench.core.storage.outages import store_of, watched

if TYPE_CHECKING:
    import pyarrow.fs as pafs

_S3_KEYS = {
    "aws_endpoint_url": "endpoint",
    "aws_endpoint": "endpoint",
    "endpoint_url": "endpoint",
    "aws_access_key_id": "access_key_id",
    "aws_secret_access_key": "secret_access_key",
    "aws_session_token": "session_token",
    "aws_region": "region",
    "aws_default_region": "region",
}


def is_local(root: str) -> bool:
    """True for a path or ``file://`` URI on the local filesystem."""
    return "://" not in root or root.startswith("file://")


def local_path(root: str) -> str:
    """The filesystem path of a local root."""
    return root.removeprefix("file://")


def _flag(value: Any) -> bool:
    return str(value).lower() in ("1", "true", "yes")


MAX_CONCURRENT_GETS = 16  # requests one get_many keeps under way


@dataclass(frozen=True)
class Storage:
    """Object access under one root. Keys are '/'-separated paths relative to the root."""

    root: str
    options: dict[str, str] = field(default_factory=dict)

    def __reduce__(self) -> tuple[type[Storage], tuple[str, dict[str, str]]]:
        # Only the root and options travel to Ray tasks and Spark executors; each side opens
        # its own connections.
        return Storage, (self.root, dict(self.options))

    def __repr__(self) -> str:
        return f"Storage({self.root!r}, {masked(self.options)!r})"

    @cached_property
    def identity(self) -> str:
        """What tells this store from any other in this process's caches: the root and a
        digest of the options (two catalogs on one root with other options are other stores)."""
        return store_identity(self.root, self.options)

    # -------------------------------------------------------------------- stores and filesystems
    def _store(self, write: bool = False) -> Any:
        """The store to use; None for reads of a local root that does not exist yet (a write
        creates it)."""
        missing = "store" not in self.__dict__ and is_local(self.root)
        if missing and not os.path.isdir(local_path(self.root)):
            if not write:
                return None
            os.makedirs(local_path(self.root), exist_ok=True)
        return self.store

    @cached_property
    def store(self) -> Any:
        """The obstore store rooted at the catalog root."""
        from obstore.store import LocalStore, S3Store, from_url

        if is_local(self.root):
            return LocalStore(local_path(self.root))
        scheme, _, rest = self.root.partition("://")
        bucket, _, prefix = rest.partition("/")
        retry, timeouts = self.limits.obstore_retry(), self.limits.obstore_client()
        if scheme in ("s3", "s3a"):
            config, client = self._s3_config()
            return S3Store(
                bucket,
                prefix=prefix or None,
                config=config,
                client_options={**client, **timeouts},
                retry_config=retry,  # type: ignore[arg-type]
            )
        config = {k: v for k, v in self.options.items() if k.lower() not in LIMIT_KEYS}
        return from_url(
            self.root,
            config=config or None,
            client_options=timeouts,  # type: ignore[arg-type]
            retry_config=retry,  # type: ignore[arg-type]
        )

    @cached_property
    def limits(self) -> Limits:
        """How long requests to the root's object store may wait and retry (``limits``)."""
        return Limits.of(self.options)

    @property
    def delta_options(self) -> dict[str, str] | None:
        """The storage options deltalake gets for this root: the catalog's, over the default
        retry and timeout limits on an object store (None for a local folder without any)."""
        if is_local(self.root):
            return dict(self.options) or None
        return with_defaults(self.options)

    @property
    def s3(self) -> dict[str, Any]:
        """S3 settings by name (endpoint, access_key_id, secret_access_key, session_token,
        region, allow_http) for engines that take them in their own form."""
        config, client = self._s3_config()
        return {**config, "allow_http": bool(client.get("allow_http"))}

    def _s3_config(self) -> tuple[dict[str, str], dict[str, Any]]:
        """S3 settings from the options, over ``AWS_*`` environment variables (which delta-rs
        also reads), so every library sees the same endpoint, credentials and region."""
        config: dict[str, str] = {}
        client: dict[str, Any] = {}
        environment = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
        for key, value in {**environment, **self.options}.items():
            name = key.lower()
            if name in ("aws_allow_http", "allow_http"):
                client["allow_http"] = _flag(value)
            elif name in _S3_KEYS:
                config[_S3_KEYS[name]] = value
            elif name.removeprefix("aws_") in _S3_KEYS.values():
                config[name.removeprefix("aws_")] = value
        return config, client

    @cached_property
    def filesystem(self) -> pafs.FileSystem:
        """A pyarrow filesystem for the root's data files."""
        import pyarrow.fs as pafs

        if is_local(self.root):
            return pafs.LocalFileSystem()
        if self.root.startswith(("s3://", "s3a://")):
            config, client = self._s3_config()
            endpoint = config.get("endpoint")
            scheme = "https"
            if endpoint and "://" in endpoint:
                scheme, _, endpoint = endpoint.partition("://")
            return pafs.S3FileSystem(
                access_key=config.get("access_key_id"),
                secret_key=config.get("secret_access_key"),
                session_token=config.get("session_token"),
                region=config.get("region"),
                endpoint_override=endpoint,
                scheme="http" if client.get("allow_http") and scheme == "http" else scheme,
                connect_timeout=self.limits.connect_timeout.total_seconds(),
                request_timeout=self.limits.read_timeout.total_seconds(),  # no byte this long
                retry_strategy=pafs.AwsStandardS3RetryStrategy(self.limits.aws_sdk_attempts),
            )
        return pafs.FileSystem.from_uri(self.root)[0]

    def fs_path(self, uri_or_key: str) -> str:
        """A URI under the root, or a key, as a path of ``filesystem``."""
        if "://" in uri_or_key:
            return local_path(uri_or_key) if is_local(uri_or_key) else uri_or_key.split("://")[1]
        if is_local(self.root) and os.path.isabs(uri_or_key):
            return uri_or_key
        if is_local(self.root):
            return f"{local_path(self.root).rstrip('/')}/{uri_or_key}"
        return f"{self.root.split('://', 1)[1].rstrip('/')}/{uri_or_key}"

    def locate(self, uri: str) -> tuple[pafs.FileSystem, str]:
        """The filesystem and its path for a URI (or local path) under this storage."""
        return self.filesystem, self.fs_path(uri)

    def uri(self, key: str) -> str:
        """The URI (or local path) of a key."""
        return f"{self.root.rstrip('/')}/{key}"

    @contextmanager
    def open_output(self, uri: str) -> Iterator[Any]:
        """A stream to write a new file at ``uri`` (under the root) into, for pyarrow writers:
        on an object store one request for a small file and a multipart upload for a big one
        (pyarrow's own S3 stream always makes three requests), nothing stored if it fails."""
        if is_local(self.root):
            path = self.fs_path(uri)
            # a table created inside an open transaction has no folder until it commits
            self.filesystem.create_dir(path.rsplit("/", 1)[0], recursive=True)
            with self.filesystem.open_output_stream(path) as out:
                yield out
            return
        import obstore

        with (
            self._errors(),
            obstore.open_writer(self._store(write=True), self.key_of(uri)) as writer,
        ):
            yield _Sink(writer)

    # ------------------------------------------------------------------------------ objects
    def put_if_absent(self, key: str, data: bytes) -> bool:
        """Write ``data`` at ``key`` unless an object is there already; True if written. The
        write is atomic: readers see all of it or nothing."""
        import obstore
        from obstore.exceptions import AlreadyExistsError

        try:
            with self._errors():
                obstore.put(self._store(write=True), key, data, mode="create")
        except (AlreadyExistsError, FileExistsError):
            return self._landed(key, data)
        return True

    def _landed(self, key: str, data: bytes) -> bool:
        """True when the object a put-if-absent found at ``key`` holds ``data``: on an object
        store its first attempt landed though the answer was lost (a dropped connection), and
        the retry found it."""
        return not is_local(self.root) and self.get(key) == data

    def put(self, key: str, data: bytes) -> None:
        """Write (or replace) the object at ``key``."""
        import obstore

        with self._errors():
            obstore.put(self._store(write=True), key, data)

    def get(self, key: str) -> bytes | None:
        """The object's bytes, or None when there is none."""
        import obstore

        plain = self._plain_local_path(key)
        if plain is not None:
            try:
                with open(plain, "rb") as f:
                    return f.read()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return None
        store = self._store()
        if store is None:
            return None
        try:
            with self._errors():
                return bytes(obstore.get(store, key).bytes())
        except (FileNotFoundError, NotADirectoryError):  # the latter: a file where a folder is
            self.check_bucket()
            return None

    def get_many(self, uris: list[str], immutable: bool = False) -> list[bytes | None]:
        """The bytes of each file at ``uris`` (URIs under the root; None where there is none),
        fetched at once: one request per object, all under way together (obstore's requests
        leave the GIL). ``immutable`` files (never changed once written, as a Delta table's
        data files) of an object store are kept in the process's file cache."""
        keys = [self.key_of(u) for u in uris]
        if immutable and not is_local(self.root):
            return file_cache.get_many(self.identity, keys, self.get_keys)
        return self.get_keys(keys)

    def get_keys(self, keys: list[str]) -> list[bytes | None]:
        """The bytes of the object at each key (None where there is none), all requests under
        way together."""
        if len(keys) <= 1:
            return [self.get(k) for k in keys]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(len(keys), MAX_CONCURRENT_GETS)) as pool:
            return list(pool.map(self.get, keys))

    def exists(self, key: str) -> bool:
        """True when an object is at ``key``."""
        import obstore

        plain = self._plain_local_path(key)
        if plain is not None:
            return os.path.isfile(plain)
        store = self._store()
        if store is None:
            return False
        try:
            with self._errors():
                obstore.head(store, key)
        except (FileNotFoundError, NotADirectoryError):
            self.check_bucket()
            return False
        return True

    def _plain_local_path(self, key: str) -> str | None:
        """The file of ``key`` under a local root, when the store would name it the same (no
        character it encodes): read directly, a missing file costs a stat, not a request
        through the store (what a catalog log's check for a newer commit mostly is)."""
        if not is_local(self.root) or not _PLAIN_KEY.fullmatch(key):
            return None
        return f"{local_path(self.root).rstrip('/')}/{key}"

    def check_bucket(self) -> None:
        """Raise ``StorageUnreachableError`` if an object store root's bucket does not exist
        (checked once, by a listing: a missing object and a missing bucket look alike to a
        read of one object)."""
        if not is_local(self.root):
            self._bucket_listed  # noqa: B018 - the listing raises when there is no bucket

    def check_readable(self, *uris: str) -> None:
        """Raise ``FileNotFoundError`` naming the first of ``uris`` (under the root) that is not
        there, and ``StorageUnreachableError`` when the store refuses or does not answer: one
        request for one file, one listing per folder for more (a request per thousand entries
        on an object store), so a lazy read fails now with a typed error, not later in an
        engine's own words."""
        if len(uris) == 1:
            if not self.exists(self.key_of(uris[0])):
                raise FileNotFoundError(uris[0])
            return
        keys = {self.key_of(uri): uri for uri in uris}
        present: set[str] = set()
        for folder in {key.rpartition("/")[0] for key in keys}:
            present.update(self._files_in(folder))
        missing = [uri for key, uri in keys.items() if key not in present]
        if missing:
            raise FileNotFoundError(missing[0])

    def _files_in(self, folder: str) -> list[str]:
        """Keys of the files directly in ``folder`` ('' for the root)."""
        listed = self._listed(folder)
        if listed is None:
            self.check_bucket()
            return []
        return [entry["path"] for entry in listed["objects"]]

    @contextmanager
    def access_errors(self) -> Iterator[None]:
        """Errors other libraries (pyarrow, deltalake) raise reaching this root, typed: on an
        object store a missing object is ``FileNotFoundError`` and any other ``OSError``
        ``StorageUnreachableError`` saying which options to check; a local folder's errors pass
        unchanged. While the store is found not answering they fail at once (``_watched``)."""
        from workbench.core.base.errors import StorageUnreachableError

        with self._watched():
            try:
                yield
            except (FileNotFoundError, StorageUnreachableError):
                raise
            except OSError as e:
                if is_local(self.root):
                    raise
                if _MISSING_OBJECT.search(str(e)):  # pyarrow's words for a missing key
                    raise FileNotFoundError(str(e)) from e
                raise _unreachable(self.root, e, self.options) from e

    @cached_property
    def _bucket_listed(self) -> bool:
        import obstore

        with self._errors():
            obstore.list_with_delimiter(self.store, None)
        return True

    def delete(self, key: str) -> None:
        """Delete the object at ``key`` (nothing happens if there is none)."""
        import obstore

        store = self._store()
        if store is not None:
            with suppress(FileNotFoundError), self._errors():
                obstore.delete(store, key)

    def remove(self, uri: str) -> None:
        """Delete the file at ``uri`` (a path or URI under the root; nothing happens if there
        is none). On an object store no folder marker is left behind, as pyarrow's
        ``delete_file`` leaves one for a folder it empties."""
        if is_local(self.root):
            with suppress(FileNotFoundError):
                self.filesystem.delete_file(self.fs_path(uri))
            return
        self.delete(self.key_of(uri))

    def move(self, uri: str, target: str) -> None:
        """Move the file at ``uri`` to ``target`` (both under the root); on an object store a
        copy and a delete, leaving no folder marker where it was."""
        if is_local(self.root):
            self.filesystem.move(self.fs_path(uri), self.fs_path(target))
            return
        import obstore

        with self._errors():
            obstore.rename(self._store(write=True), self.key_of(uri), self.key_of(target))

    def key_of(self, uri: str) -> str:
        """The key of a URI under an object store root."""
        return self.fs_path(uri)[len(self.fs_path("")) :]

    def list(self, prefix: str) -> list[dict[str, Any]]:
        """Objects under ``prefix`` (path, size, last_modified)."""
        import obstore

        store = self._store()
        if store is None:
            return []
        try:
            with self._errors():
                return [m for chunk in obstore.list(store, prefix) for m in chunk]
        except FileNotFoundError:
            return []

    def folders(self, prefix: str) -> list[str]:
        """Names of the folders directly under ``prefix`` ('' for the root), sorted."""
        listed = self._listed(prefix)
        prefixes = listed["common_prefixes"] if listed else []
        return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in prefixes)

    def _listed(self, prefix: str) -> dict[str, Any] | None:
        """obstore's listing of what is directly under ``prefix`` ('' for the root); None when
        nothing is there."""
        import obstore

        store = self._store()
        if store is None:
            return None
        try:
            with self._errors():
                return obstore.list_with_delimiter(store, prefix or None)
        except FileNotFoundError:
            return None

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """obstore's errors reaching this root, typed (see ``_os_errors``), never showing a
        secret of its options; at once while the store is found not answering."""
        with self._watched(), _os_errors(self.root, self.options):
            yield

    def _watched(self) -> AbstractContextManager[None]:
        """Requests to an object store that fail at once while it is found not answering, and
        find it so when one spends its whole retry budget failing (``outages``)."""
        if is_local(self.root):
            return nullcontext()
        budget = self.limits.retry_timeout.total_seconds()
        return watched(self._outage_store, budget, self._refusal)

    def _refusal(self, why: str) -> Exception:
        """The error for a request to this root not made: the store is found not answering."""
        return _unreachable(self.root, OSError(why), self.options)

    @cached_property
    def _outage_store(self) -> str:
        return store_of(self.root, self.options)


class _Sink:
    """An obstore writer as the file object pyarrow writes to (it counts what it got)."""

    closed = False

    def __init__(self, writer: Any):
        self._writer = writer
        self._written = 0

    def write(self, data: Any) -> int:
        self._writer.write(bytes(data))
        self._written += len(data)
        return len(data)

    def tell(self) -> int:
        return self._written

    def flush(self) -> None:
        """Parts are uploaded as they fill; the rest when the writer closes."""

    def writable(self) -> bool:
        return True


_PLAIN_KEY = re.compile(r"(?:[A-Za-z0-9_=-][A-Za-z0-9._=-]*/)*[A-Za-z0-9_=-][A-Za-z0-9._=-]*")
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_TERMINAL_CODES = re.compile(r"\x1b\[[0-9;]*m")  # colours in delta-rs's messages
_NO_BUCKET = "<Code>NoSuchBucket</Code>"
_MISSING_OBJECT = re.compile(r"AWS Error (RESOURCE_NOT_FOUND|NO_SUCH_KEY)\b")


@contextmanager
def _os_errors(root: str, options: dict[str, str] | None) -> Iterator[None]:
    """obstore's errors from the local filesystem as the ``OSError`` they stand for (so a
    read-only folder raises ``PermissionError``); an object store that cannot be reached, a
    missing bucket or refused credentials as ``StorageUnreachableError`` saying what to check."""
    from obstore.exceptions import AlreadyExistsError, BaseError, NotFoundError

    try:
        yield
    except AlreadyExistsError:
        raise
    except NotFoundError as e:
        if _NO_BUCKET in str(e):
            raise _unreachable(root, e, options) from e
        raise
    except BaseError as e:
        found = _OS_ERROR.search(str(e))
        if found is None:  # a network or service failure
            raise _unreachable(root, e, options) from e
        code = int(found.group(1))
        raise OSError(code, os.strerror(code), redacted(str(e).splitlines()[0], options)) from e


def _unreachable(root: str, error: Exception, options: dict[str, str] | None) -> Exception:
    """The typed error for a store that cannot be reached, saying what to check (never an
    option's secret value, should the library's own words carry one)."""
    from workbench.core.base.errors import StorageUnreachableError

    text = redacted(_TERMINAL_CODES.sub("", str(error)).strip(), options) or type(error).__name__
    if _NO_BUCKET in text:
        bucket = root.split("://", 1)[1].split("/", 1)[0]
        return StorageUnreachableError(
            f"The bucket {bucket!r} of catalog root {root!r} does not exist; create it first, "
            "or point the catalog at an existing bucket."
        )
    return StorageUnreachableError(
        f"The object store of catalog root {root!r} could not be reached or refused the "
        f"request ({' '.join(text.splitlines()[0].split())[:300]}). Check the catalog's storage "
        "options: AWS_ENDPOINT_URL (with AWS_ALLOW_HTTP=true for an http:// endpoint), the "
        "credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and AWS_REGION; for a store "
        "that is up but slow to answer, raise retry_timeout, connect_timeout or read_timeout."
    )
