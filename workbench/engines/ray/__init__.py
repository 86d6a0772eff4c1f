"""The Ray engine: lazy Ray Datasets over a version's files, parallel writes by Ray tasks."""

from workbench.engines.ray.engine import RayEngine

__all__ = ["RayEngine"]
