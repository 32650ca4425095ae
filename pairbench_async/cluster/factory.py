"""The one place a command's sandbox is built: ``--sandbox local`` (default) or ``ray``.

``exec``, ``validate``, ``run`` and ``build-dataset`` all call :func:`make_sandbox`,
so they offer the same choice with the same checks. A Ray sandbox is imported only
when asked for: nothing else of the package imports Ray.
"""

from __future__ import annotations

from ..core.errors import ConfigError
from ..sandbox.config import SandboxConfig
from ..sandbox.interface import Sandbox
from ..sandbox.pool import SandboxPool
from .options import RayOptions

__all__ = ["SANDBOX_KINDS", "make_sandbox"]

SANDBOX_KINDS = ("local", "ray")


def make_sandbox(kind: str = "local", config: SandboxConfig | None = None, *,
                 ray_address: str | None = None, ray: RayOptions | None = None) -> Sandbox:
    """A sandbox, not started: the local pool, or a pool per node of a Ray cluster.

    With ``ray``, ``config.workers`` (``--workers``) is the workers per node.
    """
    if kind == "local":
        if ray_address is not None or ray is not None:
            raise ConfigError("--ray-address needs --sandbox ray")
        return SandboxPool(config)
    if kind == "ray":
        from .ray_sandbox import RaySandbox, import_ray

        import_ray()  # the install hint now, before anything runs
        options = ray or RayOptions()
        if ray_address is not None:
            options = RayOptions(**{**_fields(options), "address": ray_address})
        if config is not None and config.workers is not None and options.workers_per_node is None:
            options = RayOptions(**{**_fields(options), "workers_per_node": config.workers})
        return RaySandbox(config, options)
    raise ConfigError(f"unknown sandbox {kind!r} (known: {', '.join(SANDBOX_KINDS)})")


def _fields(options: RayOptions) -> dict[str, object]:
    return {name: getattr(options, name) for name in options.__struct_fields__}
