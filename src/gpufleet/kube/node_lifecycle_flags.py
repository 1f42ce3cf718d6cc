"""A ``Simulation``'s ``spec.controllerManager`` and ``spec.apiServer``: kube-controller-manager's node
lifecycle flags and kube-apiserver's ``DefaultTolerationSeconds`` flags, camelCased as
``KubeControllerManagerConfiguration`` names them (``model.node_lifecycle_config``,
``model.default_toleration_seconds``).

``controllerManager``: ``nodeMonitorGracePeriod`` (50s), ``nodeMonitorPeriod`` (5s),
``nodeStartupGracePeriod`` (1m), ``nodeEvictionRate`` (0.1), ``secondaryNodeEvictionRate`` (0.01),
``largeClusterSizeThreshold`` (50), ``unhealthyZoneThreshold`` (0.55). ``apiServer``:
``defaultNotReadyTolerationSeconds`` and ``defaultUnreachableTolerationSeconds`` (300).

Upstream checks none of them (``NodeLifecycleControllerOptions.Validate`` and
``KubeCloudSharedOptions.Validate`` return no error for them; the admission plugin's flags are plain
``flag.Int64``). gpufleet rejects what upstream's comments rule out or what it cannot run: a duration of 0 or
less (``monitorNodeHealth`` would run without pause, every node would be NotReady at once), a grace period no
longer than the monitor period (``Controller.nodeMonitorPeriod``: "This value should be lower than
nodeMonitorGracePeriod"). As upstream, a ``nodeEvictionRate`` of 0 or less gives each zone a first tainter
(``addPodEvictorForNewZone``: a token bucket at that rate and burst 1) that lets one node be tainted and then
none, until its zone's state swaps it for a rate above 0 (``sim.unreachable_nodes.Tainter``); a
``secondaryNodeEvictionRate`` of 0 or less stops a partially disrupted zone's tainter (``SwapLimiter``:
``NewFakeNeverRateLimiter``); a negative toleration deletes at once (``getMinTolerationTime``).
Warned: a grace period no longer than the kubelet's heartbeat (its Lease renewed every 10 s, its status
posted every 10 s: the real controller then sets healthy nodes NotReady between heartbeats, which gpufleet
does not model), and the two fields gpufleet reads nowhere else (``nodeMonitorPeriod``: a node is NotReady
the grace period after its kubelet stopped, not at the next pass; ``nodeStartupGracePeriod``: every node of
gpufleet posts its Ready condition as it joins).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from gpufleet.kube.problems import Reporter, invalid
from gpufleet.kube.spec_model import PositiveDuration, SpecModel
from gpufleet.model.default_toleration_seconds import DefaultTolerationSeconds
from gpufleet.model.node_lifecycle_config import NodeLifecycleConfig
from gpufleet.model.node_lifecycle_zones import EvictionRates

#: the kubelet's heartbeat: its node Lease renewed every quarter of ``nodeLeaseDurationSeconds`` 40 s
#: (``pkg/kubelet/nodelease``) and its status posted every ``nodeStatusUpdateFrequency`` 10 s
KUBELET_HEARTBEAT_S = 10.0
#: a Go ``int32`` and ``int64`` flag's range
GoInt32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
GoInt64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


class ControllerManager(SpecModel):
    node_monitor_grace_period: PositiveDuration | None = None
    node_monitor_period: PositiveDuration | None = None
    node_startup_grace_period: PositiveDuration | None = None
    node_eviction_rate: float | None = None  # (the flag's float32)
    secondary_node_eviction_rate: float | None = None
    large_cluster_size_threshold: GoInt32 | None = None
    unhealthy_zone_threshold: float | None = None


class ApiServer(SpecModel):
    default_not_ready_toleration_seconds: GoInt64 | None = None
    default_unreachable_toleration_seconds: GoInt64 | None = None


def _set(values: dict[str, Any]) -> dict[str, Any]:
    """The fields given (not None)."""
    return {k: v for k, v in values.items() if v is not None}


def node_lifecycle_config(spec: ControllerManager | None, report: Reporter) -> NodeLifecycleConfig:
    """``spec.controllerManager`` over upstream's defaults; its problems reported under that path."""
    if spec is None:
        return NodeLifecycleConfig()
    at = report.at("spec.controllerManager")
    rates = EvictionRates(
        **_set(
            {
                "node_eviction_rate": spec.node_eviction_rate,
                "secondary_node_eviction_rate": spec.secondary_node_eviction_rate,
                "large_cluster_size_threshold": spec.large_cluster_size_threshold,
                "unhealthy_zone_threshold": spec.unhealthy_zone_threshold,
            }
        )
    )
    config = NodeLifecycleConfig(
        eviction=rates,
        **_set(
            {
                "node_monitor_grace_period_s": spec.node_monitor_grace_period,
                "node_monitor_period_s": spec.node_monitor_period,
                "node_startup_grace_period_s": spec.node_startup_grace_period,
            }
        ),
    )
    grace, period = config.node_monitor_grace_period_s, config.node_monitor_period_s
    if grace <= period and spec.node_monitor_grace_period is not None:
        detail = f"must be greater than nodeMonitorPeriod ({period:g}s)"
        at.error("nodeMonitorGracePeriod", invalid(f"{grace:g}s", detail))
    elif grace <= period:
        detail = f"must be less than nodeMonitorGracePeriod ({grace:g}s)"
        at.error("nodeMonitorPeriod", invalid(f"{period:g}s", detail))
    elif grace <= KUBELET_HEARTBEAT_S:
        at.warn(
            "nodeMonitorGracePeriod",
            f"no longer than the kubelet's heartbeat ({KUBELET_HEARTBEAT_S:g}s): the real controller would "
            "set healthy nodes NotReady between heartbeats, which gpufleet does not model",
        )
    if spec.node_monitor_period is not None:
        at.not_modelled(
            "nodeMonitorPeriod", note="a node goes NotReady the grace period after its kubelet stopped"
        )
    if spec.node_startup_grace_period is not None:
        at.not_modelled("nodeStartupGracePeriod", note="every node posts its Ready condition as it joins")
    return config


def default_toleration_seconds(spec: ApiServer | None) -> DefaultTolerationSeconds:
    """``spec.apiServer`` over upstream's defaults."""
    if spec is None:
        return DefaultTolerationSeconds()
    given = {
        "not_ready_s": spec.default_not_ready_toleration_seconds,
        "unreachable_s": spec.default_unreachable_toleration_seconds,
    }
    return DefaultTolerationSeconds(**_set(given))
