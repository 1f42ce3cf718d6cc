"""``gpufleet.io/*`` annotations: a pod's simulated behaviour (DESIGN.md, "Annotations").

Every annotation becomes a ``Behavior`` field: sizes are quantities (``140GB``, ``64Gi``),
times are Go durations, flags are ``"true"``/``"false"``, and ``warmup`` is a duration or a
``{median, p95}`` / ``{min, max}`` mapping written as YAML or JSON (checked with
``gpufleet.lifecycle.distributions``, kept as written). ``cpu-usage`` and ``memory-usage`` are a
running pod's constant usage (quantities: cores, bytes), what the metrics server reports for it.
``time-limit`` is the run time the user declares (Slurm's ``--time``): only the Backfill plugin reads
it, never as the true duration. ``exit-code`` is the exit code of the pod's first (main) container once its
work is done (after ``duration``, or its work list empty): a decimal integer in the range of a container
status's ``exitCode`` (int32, ``-2147483648`` to ``2147483647``; a Linux process exits with 0 to 255), 0 by
default. A non-zero code fails the pod under ``restartPolicy: Never`` with that code (its container's
terminated state: reason ``Error``), for a Job's ``podFailurePolicy`` ``onExitCodes`` rules to match; under
``OnFailure`` or ``Always`` the kubelet restarts the container in place after its back-off (the pod stays
Running, its ``restartCount`` grows and its ``lastState`` holds the code: ``sim.pod_lifecycle``), and its
work runs again and exits the same way. ``Always`` restarts a container that exits 0 too, with the same
back-off: a pod under ``Always`` never succeeds (a Deployment's pod with a ``duration`` is a process that
exits after that long and is restarted in place). An unknown ``gpufleet.io/``
key is an error: it is most likely a typo, and a typo would otherwise silently change the simulation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from gpufleet.kube.documents import YamlValueError, yaml_value
from gpufleet.kube.problems import Reporter, invalid, unsupported
from gpufleet.lifecycle.distributions import parse_duration_spec
from gpufleet.model.pod import ALL_GATES, Behavior
from gpufleet.model.quantity import parse_duration, parse_quantity
from gpufleet.model.ray import RAY_DEMAND, RayDemand

PREFIX = "gpufleet.io/"
SUBMIT_AT = PREFIX + "submit-at"
DURATION = PREFIX + "duration"
CHECKPOINT_INTERVAL = PREFIX + "checkpoint-interval"
CHECKPOINT_SAVE = PREFIX + "checkpoint-save"
IMAGE_SIZE = PREFIX + "image-size"
MODEL_SIZE = PREFIX + "model-size"
WARMUP = PREFIX + "warmup"
GPU_MEMORY = PREFIX + "gpu-memory"
CHECKPOINT_ON_SIGTERM = PREFIX + "checkpoint-on-sigterm"
REQUEUE_ON_SIGTERM = PREFIX + "requeue-on-sigterm"
TIME_LIMIT = PREFIX + "time-limit"
CONSUMES = PREFIX + "consumes"
DELETE_AT = PREFIX + "delete-at"
#: a running pod's constant CPU (cores) and memory (bytes) usage, as the metrics server reports it
CPU_USAGE = PREFIX + "cpu-usage"
MEMORY_USAGE = PREFIX + "memory-usage"
UNGATE_AT = PREFIX + "ungate-at"
EXIT_CODE = PREFIX + "exit-code"
#: the range of ``ContainerStateTerminated.exitCode`` (int32)
MIN_EXIT_CODE, MAX_EXIT_CODE = -(2**31), 2**31 - 1
#: written by gpufleet's live scheduler, not by users: the GPU indices a fractional share was placed on
#: (docs/scheduler.md); read back by nothing (the model places a bound pod's share itself)
GPU_DEVICES = PREFIX + "gpu-devices"


def _positive_duration(text: str) -> float:
    seconds = parse_duration(text)
    if seconds <= 0:
        raise ValueError(invalid(text, "must be greater than 0"))
    return seconds


def _duration(text: str) -> float:
    seconds = parse_duration(text)
    if seconds < 0:
        raise ValueError(invalid(text, "must be greater than or equal to 0"))
    return seconds


def _size(text: str) -> float:
    size = parse_quantity(text)
    if size < 0:
        raise ValueError(invalid(text, "must be greater than or equal to 0"))
    return float(size)


def _flag(text: str) -> bool:
    if text not in ("true", "false"):
        raise ValueError(unsupported(text, ("true", "false")))
    return text == "true"


def _list_name(text: str) -> str:
    if not text.strip():
        raise ValueError(invalid(text, "must name a list (e.g. train:jobs)"))
    return text


def _exit_code(text: str) -> int:
    """A container's exit code: a decimal integer (an optional ``-``, digits only) within int32."""
    if re.fullmatch(r"-?[0-9]+", text) is None:
        raise ValueError(invalid(text, "must be an integer (the container's exit code)"))
    code = int(text)
    if not MIN_EXIT_CODE <= code <= MAX_EXIT_CODE:
        raise ValueError(invalid(text, f"must be between {MIN_EXIT_CODE} and {MAX_EXIT_CODE}, inclusive"))
    return code


def _warmup(text: str) -> object:
    spec: object = text
    if ":" in text:  # a mapping, in YAML or JSON; a Go duration never has a colon
        try:
            spec = yaml_value(text)
        except YamlValueError as exc:
            raise ValueError(invalid(text, f"not a YAML or JSON mapping: {exc}")) from None
    try:
        parse_duration_spec(spec)
    except ValueError as exc:
        raise ValueError(invalid(text, str(exc))) from None
    return spec


def _ungate_at(text: str) -> tuple[tuple[str, float], ...]:
    """One duration (every gate), or a YAML/JSON mapping of gate name to duration."""
    if ":" not in text:
        return ((ALL_GATES, parse_duration(text)),)
    try:
        spec = yaml_value(text)
    except YamlValueError as exc:
        raise ValueError(invalid(text, f"not a YAML or JSON mapping: {exc}")) from None
    if not isinstance(spec, dict) or not spec:
        raise ValueError(invalid(text, "must be a duration or a mapping of scheduling gate to duration"))
    return tuple((str(gate), parse_duration(at)) for gate, at in spec.items())


def _ray_demand(text: str) -> tuple[RayDemand, ...]:
    """A YAML or JSON list of ``{at, bundles, resources: {<Ray resource>: amount}, duration}``."""
    try:
        spec = yaml_value(text)
    except YamlValueError as exc:
        raise ValueError(invalid(text, f"not a YAML or JSON list: {exc}")) from None
    shape = "must be a list of {at, bundles, resources: {<Ray resource>: amount}, duration}"
    if not isinstance(spec, list):
        raise ValueError(invalid(text, shape))
    out = []
    for item in spec:
        if not isinstance(item, dict) or set(item) - {"at", "bundles", "resources", "duration"}:
            raise ValueError(invalid(text, shape))
        resources = item.get("resources")
        bundles = item.get("bundles", 1)
        if not isinstance(resources, dict) or not resources or not isinstance(bundles, int) or bundles < 1:
            raise ValueError(invalid(text, shape))
        amounts = tuple(sorted((str(k), float(parse_quantity(v))) for k, v in resources.items()))
        duration = item.get("duration")
        out.append(
            RayDemand(
                parse_duration(item.get("at", "0s")),
                bundles,
                amounts,
                None if duration is None else _positive_duration(str(duration)),
            )
        )
    return tuple(out)


_PARSERS: dict[str, Callable[[str], object]] = {
    SUBMIT_AT: parse_duration,
    DURATION: parse_duration,
    CHECKPOINT_INTERVAL: _positive_duration,
    CHECKPOINT_SAVE: _duration,
    IMAGE_SIZE: _size,
    MODEL_SIZE: _size,
    WARMUP: _warmup,
    GPU_MEMORY: _size,
    CHECKPOINT_ON_SIGTERM: _flag,
    REQUEUE_ON_SIGTERM: _flag,
    TIME_LIMIT: _positive_duration,
    CONSUMES: _list_name,
    DELETE_AT: parse_duration,
    CPU_USAGE: _size,
    MEMORY_USAGE: _size,
    UNGATE_AT: _ungate_at,
    RAY_DEMAND: _ray_demand,
    EXIT_CODE: _exit_code,
}
#: Every annotation a manifest may carry for the simulation (``docs/annotations.md``).
READ_KEYS = frozenset(_PARSERS)
#: What the test control plane's kwok Stages read (``e2e/kwok/stages.yaml``: a node's start chain, a
#: pod's image pull and readiness there); on objects read back from it they are not modelled.
KWOK_STAGE_KEYS = frozenset(
    f"{PREFIX}{name}"
    for name in ("ready-after", "gpu-after", "ready-at", "gpu-at", "pull-after", "ready-delay")
)
#: On a workload's own metadata (not its pod template) only the creation time applies.
WORKLOAD_KEYS = frozenset({SUBMIT_AT})
#: Objects that are not pods and not workloads take none.
NO_KEYS: frozenset[str] = frozenset()


def read(
    annotations: Mapping[str, str] | None, report: Reporter, allowed: frozenset[str] | None = None
) -> dict[str, object]:
    """Parsed values of the ``gpufleet.io/`` annotations (``allowed``: the keys valid here; all by default).

    ``report`` is positioned at the object's ``metadata``.
    """
    values: dict[str, object] = {}
    for key, text in (annotations or {}).items():
        if not key.startswith(PREFIX):
            continue
        path = f"annotations.{key}"
        if key in KWOK_STAGE_KEYS:
            report.not_modelled(path, note="an annotation of the test control plane's kwok Stages")
            continue
        if key == GPU_DEVICES:
            continue
        if key not in _PARSERS:
            known = ", ".join(sorted(READ_KEYS))
            report.error(path, f"unknown gpufleet annotation (known: {known})")
            continue
        if allowed is not None and key not in allowed:
            report.error(path, "this annotation belongs on a pod or a pod template (spec.template.metadata)")
            continue
        try:
            values[key] = _PARSERS[key](text)
        except ValueError as exc:
            report.error(path, str(exc))
    return values


def parsed(key: str, text: str) -> object:
    """One annotation's value as ``read`` parses it; None when it is invalid (``read`` reports that)."""
    try:
        return _PARSERS[key](text)
    except ValueError:
        return None


def behavior(
    values: Mapping[str, object], image: str, container: str = "", image_pull_policy: str = ""
) -> Behavior:
    """A pod's ``Behavior`` from the values ``read`` returned; ``image``, ``container`` (its name) and
    ``image_pull_policy`` (as given) are its first container's."""
    consumes = values.get(CONSUMES)
    return Behavior(
        submit_at_s=number(values, SUBMIT_AT) or 0.0,
        duration_s=number(values, DURATION),
        checkpoint_interval_s=number(values, CHECKPOINT_INTERVAL),
        checkpoint_save_s=number(values, CHECKPOINT_SAVE) or 0.0,
        image=image,
        image_pull_policy=image_pull_policy,
        image_size_bytes=number(values, IMAGE_SIZE),
        model_size_bytes=number(values, MODEL_SIZE),
        warmup=values.get(WARMUP),
        gpu_memory_bytes=number(values, GPU_MEMORY),
        checkpoint_on_sigterm=values.get(CHECKPOINT_ON_SIGTERM) is True,
        requeue_on_sigterm=values.get(REQUEUE_ON_SIGTERM) is True,
        time_limit_s=number(values, TIME_LIMIT),
        consumes=consumes if isinstance(consumes, str) else None,
        delete_at_s=number(values, DELETE_AT),
        ungate_at=_gate_times(values.get(UNGATE_AT)),
        cpu_usage=number(values, CPU_USAGE),
        memory_usage_bytes=number(values, MEMORY_USAGE),
        container=container,
        exit_code=exit_code if isinstance(exit_code := values.get(EXIT_CODE), int) else None,
    )


def _gate_times(value: object) -> tuple[tuple[str, float], ...]:
    return tuple(value) if isinstance(value, tuple) else ()


def number(values: Mapping[str, object], key: str) -> float | None:
    """The number (seconds, or bytes for sizes) ``read`` parsed for ``key``, if any."""
    value = values.get(key)
    return value if isinstance(value, float) else None
