"""Where the work runs: in this process (default) or on a Ray cluster. The database is never touched here.

Both executors take a module-level function ``fn(item, cache)`` and items, and yield an :class:`Outcome` per
item as it finishes; ``cache`` is a dict private to one worker (the campaign keeps loaded models in it).

Determinism. A campaign's attack of an input depends only on the input, the model, the solver options and
the input's seed (:func:`applications.campaign.spec.input_seed`), not on its chunk or worker. With
``batch_size=1`` every sample goes to the model alone, so a given input gets **bit-identical** results on
either executor and with any chunking (a test checks it). With larger model batches a network may return
logits that differ in the last bits with the batch's size and composition (CPU and GPU kernels pick
different reduction orders), which can flip a label for a point within ε of the decision boundary; results
then agree in distribution, not bit for bit. One more batch effect: an untargeted input for which none of the
random initial directions reaches another class falls back to the other inputs of its call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LocalExecutor", "Outcome", "RayExecutor", "init_ray", "make_executor"]


@dataclass
class Outcome:
    """One finished item: its result, or the error that ended it, and the worker that ran it."""

    item: Any
    result: Any = None
    error: BaseException | None = None
    worker: str = "local"


class LocalExecutor:
    """Run every item in this process, one after the other (each item is itself a batched attack call)."""

    name = "local"
    workers = 1

    def __init__(self) -> None:
        self.cache: dict[Any, Any] = {}

    def imap(self, fn: Callable[[Any, dict[Any, Any]], Any], items: Iterable[Any]) -> Iterator[Outcome]:
        """Yield each item's outcome as soon as it is done. KeyboardInterrupt propagates at once."""
        for item in items:
            try:
                yield Outcome(item, fn(item, self.cache))
            except Exception as exc:  # one failing chunk must not end the campaign; the driver reports it
                yield Outcome(item, error=exc)

    def share(self, obj: Any) -> Any:
        """Data every item needs: here, the object itself."""
        return obj

    def close(self) -> None:
        """Nothing to release."""


class _Worker:
    """A Ray actor: keeps its own cache (loaded models) between items. Wrapped by ``ray.remote`` lazily."""

    def __init__(self, index: int, threads: int) -> None:
        import torch

        torch.set_num_threads(threads)  # one thread per CPU Ray gave us: workers must not fight over cores
        self.index = index
        self.cache: dict[Any, Any] = {}

    def call(self, fn: Callable[[Any, dict[Any, Any]], Any], item: Any) -> Any:
        return fn(item, self.cache)


class RayExecutor:
    """Fan items out over Ray actors (CPU workers, or GPU workers sharing a device with fractional GPUs).

    Parameters
    ----------
    address
        Address of a running cluster (``"auto"``, ``"ray://host:10001"``); ``None`` starts a local one.
    workers
        Number of actors (default: the cluster's CPUs divided by ``cpus_per_worker``).
    cpus_per_worker
        CPUs reserved per actor (and its torch threads).
    gpus_per_worker
        GPU share per actor: 0.25 packs four workers on one GPU; the actor's models then go to ``cuda``.
    in_flight
        Items queued per actor: 2 keeps an actor busy while the driver stores the previous result.
    max_restarts
        Times a dead actor is restarted (and its queued items retried) before its items count as failed.
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        cpus_per_worker: float = 1.0,
        gpus_per_worker: float = 0.0,
        in_flight: int = 2,
        max_restarts: int = 3,
    ) -> None:
        try:
            import ray
        except ImportError as exc:  # ray is an optional extra
            raise RuntimeError('the Ray executor needs ray: pip install -e ".[ray]"') from exc
        self.ray = ray
        self.started_here = False
        if not ray.is_initialized():
            cpus = None if workers is None or address is not None else max(1, int(round(workers * cpus_per_worker)))
            init_ray(address, num_cpus=cpus)
            self.started_here = True
        available = ray.cluster_resources()
        if workers is None:
            workers = max(1, int(available.get("CPU", 1) // cpus_per_worker))
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers
        self.in_flight = max(1, in_flight)
        # A worker that dies (a lost node, the memory monitor) is restarted and its chunks retried.
        remote = ray.remote(num_cpus=cpus_per_worker, num_gpus=gpus_per_worker, max_restarts=max_restarts,
                            max_task_retries=max_restarts)(_Worker)
        threads = max(1, int(cpus_per_worker))
        self.actors = [remote.remote(i, threads) for i in range(workers)]

    def imap(self, fn: Callable[[Any, dict[Any, Any]], Any], items: Iterable[Any]) -> Iterator[Outcome]:
        """Yield outcomes in completion order; on an interrupt, cancel what is queued and re-raise."""
        ray = self.ray
        queue = list(items)[::-1]
        pending: dict[Any, tuple[int, Any]] = {}

        def submit(index: int) -> None:
            item = queue.pop()
            pending[self.actors[index].call.remote(fn, item)] = (index, item)

        try:
            for _ in range(self.in_flight):
                for index in range(self.workers):
                    if queue:
                        submit(index)
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                ref = ready[0]
                index, item = pending.pop(ref)
                if queue:
                    submit(index)
                try:
                    yield Outcome(item, ray.get(ref), worker=f"ray-{index}")
                except ray.exceptions.RayError as exc:
                    yield Outcome(item, error=exc, worker=f"ray-{index}")
        finally:
            for ref in pending:
                try:
                    ray.cancel(ref)  # actor tasks cannot be force-cancelled; close() kills the actors
                except Exception:  # noqa: BLE001 - best effort on the way out
                    pass

    def share(self, obj: Any) -> Any:
        """Data every item needs, put once in the object store (each node fetches it once, not per item)."""
        return self.ray.put(obj)

    def close(self) -> None:
        """Stop the actors, and the local cluster if this executor started it."""
        for actor in self.actors:
            self.ray.kill(actor)
        if self.started_here:
            self.ray.shutdown()


def init_ray(address: str | None = None, *, num_cpus: int | None = None) -> None:
    """Connect to a Ray cluster, or start a local one whose workers import this very checkout.

    A local cluster's workers get this checkout first on ``PYTHONPATH`` (an editable install may point to
    another copy); a remote cluster must have zeroopt installed on its nodes. Every worker gets this process's
    ``ZEROOPT_PLUGINS`` (what ``--plugin`` loaded), so a solver of a plugin is found by name there too.
    """
    import ray

    from zeroopt.recipes.plugins import ENV_VAR, exported_plugins

    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
    plugins = exported_plugins()  # a worker's working directory is not this one: files by their absolute paths
    env_vars = {ENV_VAR: plugins} if plugins else {}
    if address is None:
        root = str(Path(__file__).resolve().parents[2])
        env_vars["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
        if num_cpus is not None:
            kwargs["num_cpus"] = num_cpus
    if env_vars:
        kwargs["runtime_env"] = {"env_vars": env_vars}
    ray.init(address=address, **kwargs)


def make_executor(name: str, **options: Any) -> LocalExecutor | RayExecutor:
    """``"local"`` or ``"ray"`` (with :class:`RayExecutor`'s options; those left ``None`` take defaults)."""
    if name == "local":
        return LocalExecutor()
    if name == "ray":
        return RayExecutor(**{k: v for k, v in options.items() if v is not None})
    raise ValueError(f"unknown executor {name!r}; choose local or ray")
