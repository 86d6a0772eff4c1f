"""Model inference on Ray: ``map_batches`` over an actor pool whose actors each load the model
once; the driver streams the predicted batches back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from workbench.core.inference.worker import BatchPredictor

if TYPE_CHECKING:
    import pyarrow as pa
    import ray.data

    from workbench.core.inference.model import Model
    from workbench.core.inference.plan import PredictPlan


def predict_dataset(
    dataset: ray.data.Dataset, model: Model, plan: PredictPlan
) -> Iterator[pa.Table]:
    """The model's predictions over a work dataset, ``plan.concurrency`` actors (1 unless set)."""
    import pyarrow as pa
    from ray.data import ActorPoolStrategy

    predicted = dataset.map_batches(
        BatchPredictor,  # an actor: the model loads once per actor
        fn_constructor_kwargs={"model": model, "plan": plan},
        batch_format="pyarrow",
        batch_size=plan.batch_size,
        compute=ActorPoolStrategy(size=plan.concurrency or 1),  # Ray 2.51+: not concurrency=
    )
    for batch in predicted.iter_batches(batch_format="pyarrow", batch_size=None):
        yield batch if isinstance(batch, pa.Table) else pa.table(batch)
