"""Model inference on Ray: a pool of long-lived actors per model, each loading the model once
and kept across ``dc.infer`` calls of a session (starting a pool costs seconds); the work
dataset's blocks go to the actors by reference, and the actors write the predictions as
Parquet files and return only the files' descriptions."""

from __future__ import annotations

import atexit
import hashlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from workbench.core.delta.part_writer import written_parts
from workbench.core.inference.worker import in_batches, loaded

if TYPE_CHECKING:
    import pyarrow as pa
    import ray.data

    from workbench.core.data.predict_plan import PredictPlan
    from workbench.core.delta.data_files import WrittenFile
    from workbench.core.inference.model import Model

# The one pool kept: (model fingerprint, size, Ray job) -> its actors. A call with another model
# replaces it, so pools never pile up holding a cluster's memory.
_pool: dict[tuple[str, int, str], list[Any]] = {}
WORK_BLOCK_ROWS = 10_000  # rows of work an actor takes at a time, so several actors share it


class _ModelActor:
    """A Ray actor holding one loaded model (declared with Ray on first use)."""

    def __init__(self, model: Model):
        self.model = loaded(model)

    def write(
        self, work: pa.Table, plan: PredictPlan, schema: pa.Schema, folder: str
    ) -> list[WrittenFile]:
        predicted = in_batches(self.model, work, plan)
        return list(written_parts(predicted, schema, folder, plan.storage))


def predict_files(
    dataset: ray.data.Dataset, model: Model, plan: PredictPlan, schema: pa.Schema, folder: str
) -> Iterator[WrittenFile]:
    """The model's predictions over a work dataset, written by the actors into ``folder``;
    the files are reported block by block."""
    for files in _on_pool(
        dataset, model, plan, lambda a, b: a.write.remote(b, plan, schema, folder)
    ):
        yield from files


def _on_pool(dataset: ray.data.Dataset, model: Model, plan: PredictPlan, call: Any) -> Iterator:
    """``call(actor, block)`` over the work's blocks on the session's pool of
    ``plan.concurrency`` actors (1 unless set), results in block order."""
    import math

    from ray.exceptions import RayActorError
    from ray.util import ActorPool

    actors = actors_for(model, plan.concurrency or 1)
    blocks = max(len(actors), math.ceil(dataset.count() / WORK_BLOCK_ROWS))
    refs = dataset.repartition(blocks).to_arrow_refs()  # the driver holds references only
    try:
        yield from ActorPool(actors).map(call, refs)
    except RayActorError:
        shut_down()  # a dead actor: the next call starts a fresh pool
        raise


def actors_for(model: Model, size: int) -> list[Any]:
    """The session's actors for ``model``: the pool kept from an earlier call when it serves
    the same model (by its pickled form, so an edited function is a new model), else a new one
    replacing it."""
    import ray
    from ray import cloudpickle

    fingerprint = hashlib.sha256(cloudpickle.dumps(model)).hexdigest()
    key = (fingerprint, size, ray.get_runtime_context().get_job_id())
    if key not in _pool:
        shut_down()
        # no CPU reserved: the pool lives between calls, and Ray's own tasks (the reads that
        # feed it) must still find cores; spread so a cluster shares the work
        remote = ray.remote(num_cpus=0, scheduling_strategy="SPREAD")(_ModelActor)
        _pool[key] = [remote.remote(model) for _ in range(size)]
    return _pool[key]


@atexit.register
def shut_down() -> None:
    """Stop the kept pool's actors (at exit, or when a call needs another pool)."""
    import ray

    job = ray.get_runtime_context().get_job_id() if ray.is_initialized() else None
    actors = [a for (_, _, owner), pool in _pool.items() if owner == job for a in pool]
    _pool.clear()  # a pool of an earlier Ray session went with it
    for actor in actors:
        ray.kill(actor)
