"""KEDA (``keda.sh/v1alpha1``) ScaledObject and ScaledJob specs, and the triggers gpufleet models.

Pure data: the fields, defaults and validation of the two custom resources, mirroring
``kedacore/keda: apis/keda/v1alpha1/scaledobject_types.go`` (``GetHPAMinReplicas``,
``GetHPAMaxReplicas``, ``CheckReplicaCountBoundsAreValid``, ``CheckFallbackValid``),
``scaledobject_webhook.go`` (``verifyCPUMemoryScalers``: only cpu/memory triggers cannot scale to
zero; ``ValidateAndCompileScalingModifiers``: ``advanced.scalingModifiers``, :class:`ScalingModifiers`,
its formula an expr-lang program, :mod:`gpufleet.model.expr_lang`), ``scaletriggers_types.go``
(``ValidateTriggers``: trigger names unique) and ``apis/keda/v1alpha1/scaledjob_types.go``
(``MinReplicaCount``, ``MaxReplicaCount``), with the metadata of these scalers: ``redis`` and its
``redis-cluster``/``redis-sentinel`` variants
(``pkg/scalers/redis_scaler.go``: ``listName``, ``listLength`` default 5, ``activationListLength``
default 0), ``prometheus`` (``pkg/scalers/prometheus_scaler.go``: ``serverAddress``, ``query``
parsed as PromQL (:mod:`gpufleet.model.promql`), ``threshold``, ``activationThreshold`` default 0,
``ignoreNullValues`` default true), ``cron`` (``pkg/scalers/cron_scaler.go``: ``timezone``,
``start``, ``end``, ``desiredReplicas``; :mod:`gpufleet.model.cron_schedule`) and ``cpu``/``memory``
(``pkg/scalers/cpu_memory_scaler.go``: ``value`` and the trigger's ``metricType``, a Resource metric
of the HPA), as in KEDA v2.20.2; other trigger types are refused
(:mod:`gpufleet.model.keda_trigger_types`). Trigger metadata is ``map[string]string`` upstream;
the strings are trimmed and parsed here as KEDA's typed config parses them
(``pkg/scalers/scalersconfig/typed_config.go``: JSON numbers, Go booleans), with an error naming
the key when one does not parse.
Metadata keys that only matter for talking to a real server are checked as KEDA parses them
(``pkg/scalers/scalersconfig/typed_config.go``: ``key=value`` maps, durations, booleans, the
``authModes`` enum) and then ignored, with a warning where a manifest sets them
(:mod:`gpufleet.kube.keda`): for ``prometheus`` the connection, TLS, auth and cloud keys
(:data:`PROMETHEUS_CONNECTION_KEYS`); for the redis triggers the database, TLS and credential keys and
the ``...FromEnv`` forms (:data:`REDIS_CONNECTION_KEYS`), with ``redisMetadata.Validate``'s address
rules (``address``/``addresses``, or as many ``host``/``hosts`` as ``port``/``ports``:
:class:`RedisConnection`) as far as the metadata decides them: gpufleet reads neither the scale
target's container environment nor a TriggerAuthentication's auth params.

The decisions (activation, cooldown, the HPA inputs, ScaledJob strategies) live in
``gpufleet.autoscaling.keda``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gpufleet.model.cron_schedule import CronSchedule, CronSyntaxError
from gpufleet.model.expr_lang import ExprError, Program, compile_program
from gpufleet.model.hpa import HorizontalPodAutoscalerBehavior, HPASpecError, MetricTarget, milli_value
from gpufleet.model.keda_trigger_types import REDIS_LIST_TYPES, unmodelled_trigger_reason
from gpufleet.model.promql import PromExpr, PromQLUnsupported, parse_query
from gpufleet.model.quantity import QuantityError, parse_go_duration

MetricType = Literal["AverageValue", "Value", "Utilization"]
TriggerType = Literal["redis", "redis-cluster", "redis-sentinel", "prometheus", "cron", "cpu", "memory"]
FallbackBehavior = Literal[
    "static", "currentReplicas", "currentReplicasIfHigher", "currentReplicasIfLower", "scalingModifiers"
]
ScalingStrategyName = Literal["default", "custom", "accurate", "eager"]
MultipleScalersCalculation = Literal["max", "min", "avg", "sum"]

METRIC_TYPES: tuple[MetricType, ...] = ("AverageValue", "Value", "Utilization")
FALLBACK_BEHAVIORS: tuple[FallbackBehavior, ...] = (
    "static",
    "currentReplicas",
    "currentReplicasIfHigher",
    "currentReplicasIfLower",
    "scalingModifiers",
)
SCALING_STRATEGIES: tuple[ScalingStrategyName, ...] = ("default", "custom", "accurate", "eager")
MULTIPLE_SCALERS_CALCULATIONS: tuple[MultipleScalersCalculation, ...] = ("max", "min", "avg", "sum")

#: The pod conditions gpufleet's pods carry (a ScaledJob's ``pendingPodConditions`` may name them).
TRACKED_POD_CONDITIONS: tuple[str, ...] = ("PodScheduled", "Initialized", "ContainersReady", "Ready")
#: ``defaultPollingInterval`` (``pkg/scaling/executor/scale_executor.go``), seconds.
DEFAULT_POLLING_INTERVAL_S = 30
#: ``defaultCooldownPeriod``, seconds; applies only to the N -> 0 (or idle) step.
DEFAULT_COOLDOWN_PERIOD_S = 300
#: ``defaultHPAMaxReplicas`` (ScaledObject) and ``defaultScaledJobMaxReplicaCount`` (ScaledJob).
DEFAULT_MAX_REPLICA_COUNT = 100
#: ``defaultSuccessfulJobsHistoryLimit`` / ``defaultFailedJobsHistoryLimit`` (``scale_jobs.go``).
DEFAULT_JOBS_HISTORY_LIMIT = 100
#: ``defaultTargetListLength`` of the redis scaler (the docs call ``listLength`` required; the code
#: defaults it to 5).
DEFAULT_REDIS_LIST_LENGTH = 5

#: ``prometheusMetadata`` keys (and the ``authentication.Config``, AWS, Azure and GCP ones the
#: prometheus scaler reads from trigger metadata) that only shape the HTTP request to a real
#: Prometheus: gpufleet evaluates the query over its simulated series, so they change nothing.
PROMETHEUS_CONNECTION_KEYS: tuple[str, ...] = (
    "namespace",
    "customHeaders",
    "queryParameters",
    "unsafeSsl",
    "timeout",
    "authModes",
    "authMode",
    "apiKey",
    "method",
    "keyParamName",
    "awsRegion",
    "identityOwner",
    "awsAccessKeyID",
    "awsAccessKeyIDFromEnv",
    "awsSecretAccessKeyFromEnv",
    "cloud",
    "azureManagedPrometheusResourceURL",
    "credentialsFromEnv",
    "credentialsFromEnvFile",
)
#: ``authentication.Config.Modes``: ``enum=apiKey;basic;tls;bearer;custom;oauth``,
#: ``exclusiveSet=bearer;basic;oauth``.
AUTH_MODES: tuple[str, ...] = ("apiKey", "basic", "tls", "bearer", "custom", "oauth")
EXCLUSIVE_AUTH_MODES: tuple[str, ...] = ("bearer", "basic", "oauth")

_INTEGER = re.compile(r"^[+-]?\d+$")
#: Go ``strconv.ParseInt(s, 10, ...)``: an optional sign and ASCII decimal digits.
_GO_INT = re.compile(r"^[+-]?[0-9]+$")
_DECIMAL = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
#: JSON's number and integer grammars (what ``json.Unmarshal`` accepts for a float64 / int64).
_JSON_NUMBER = re.compile(r"^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$")
_JSON_INTEGER = re.compile(r"^-?(?:0|[1-9]\d*)$")


class KedaSpecError(ValueError):
    """A ScaledObject, ScaledJob or trigger that KEDA would reject (or that gpufleet cannot model).

    ``path`` names the field (``spec.triggers[0].metadata.listLength``); ``str()`` gives
    ``"<path>: <message>"``.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


def parse_decimal(text: str) -> float | None:
    """A finite decimal in Go ``strconv.ParseFloat`` syntax (``"100.50"``, ``"1e3"``, ``".5"``), else None.

    Go also accepts ``Inf``, ``NaN`` and hexadecimal floats; gpufleet does not, since no finite
    scaling decision can come from them.
    """
    return float(text) if _DECIMAL.match(text) else None


def metadata_value(metadata: Mapping[str, str], key: str) -> str | None:
    """A trigger-metadata value as KEDA's typed config looks it up (``configParamValue``,
    ``pkg/scalers/scalersconfig/typed_config.go``): trimmed of white space, and absent (None) when
    nothing is left."""
    raw = metadata.get(key)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise KedaSpecError(f"metadata.{key}", f"{raw!r} is not a string")
    return raw.strip() or None


def parse_metadata_int(metadata: Mapping[str, str], key: str, default: int) -> int:
    """An integer trigger-metadata value, or ``default`` if absent (:func:`metadata_value`).

    KEDA's ``setConfigValueHelper`` reads an ``int64`` field with ``json.Unmarshal``: a JSON
    integer (``"5"``, ``"-1"``), not ``"+5"``, ``"05"``, ``"1.0"`` or ``"1e3"``.
    """
    text = metadata_value(metadata, key)
    if text is None:
        return default
    if not _JSON_INTEGER.match(text) or not -(2**63) <= int(text) < 2**63:
        raise KedaSpecError(f"metadata.{key}", f"{text!r} is not an integer")
    return int(text)


def parse_metadata_float(metadata: Mapping[str, str], key: str, default: float | None) -> float:
    """A decimal trigger-metadata value; required when ``default`` is None.

    KEDA's ``setConfigValueHelper`` reads a ``float64`` field with ``json.Unmarshal``: a JSON number
    (``"100.50"``, ``"1e3"``, ``"-2"``), not ``".5"``, ``"+5"``, ``"05"``, ``"Inf"`` or ``"NaN"``;
    a number beyond float64 is an error too.
    """
    text = metadata_value(metadata, key)
    if text is None:
        if default is None:
            raise KedaSpecError(f"metadata.{key}", "required")
        return default
    value = float(text) if _JSON_NUMBER.match(text) else math.nan
    if not math.isfinite(value):
        raise KedaSpecError(f"metadata.{key}", f"{text!r} is not a finite decimal number")
    return value


def parse_metadata_bool(metadata: Mapping[str, str], key: str, default: bool) -> bool:
    """A boolean trigger-metadata value (Go ``strconv.ParseBool`` syntax), or ``default`` if absent."""
    text = metadata_value(metadata, key)
    if text is None:
        return default
    value = _go_parse_bool(text)
    if value is None:
        raise KedaSpecError(f"metadata.{key}", f"{text!r} is not a boolean")
    return value


def parse_metadata_map(metadata: Mapping[str, str], key: str) -> dict[str, str]:
    """A ``key1=value1,key2=value2`` trigger-metadata value (``customHeaders``, ``queryParameters``),
    ``{}`` if absent: KEDA's ``setConfigValueMap`` splits on ``,``, trims each element and needs
    exactly one ``=`` in it (``expected format key=value``)."""
    text = metadata_value(metadata, key)
    if text is None:
        return {}
    out: dict[str, str] = {}
    for element in text.split(","):
        parts = element.strip().split("=")
        if len(parts) != 2:
            raise KedaSpecError(f"metadata.{key}", f"expected format key=value, got {element.strip()!r}")
        out[parts[0].strip()] = parts[1].strip()
    return out


def parse_metadata_duration_s(metadata: Mapping[str, str], key: str) -> float | None:
    """A duration trigger-metadata value (``timeout``) in seconds, None if absent.

    KEDA's ``setConfigValueHelper`` for a ``time.Duration``: a Go duration string (``30s``, ``5m``),
    else a whole number of milliseconds (``1000``); negative either way is an error.
    """
    text = metadata_value(metadata, key)
    if text is None:
        return None
    seconds = parse_go_duration(text)
    if seconds is not None:
        if seconds < 0:
            raise KedaSpecError(f"metadata.{key}", f"duration cannot be negative: {text!r}")
        return seconds
    if _INTEGER.match(text):
        milliseconds = int(text)
        if milliseconds < 0:
            raise KedaSpecError(
                f"metadata.{key}", f"duration cannot be negative: {milliseconds} milliseconds"
            )
        return milliseconds / 1000
    raise KedaSpecError(
        f"metadata.{key}",
        f"unable to parse duration value {text!r}: must be either a duration string (e.g. '30s', '5m') "
        "or a number of milliseconds",
    )


#: ``authentication.Config.Validate``: what each mode needs, in the order it checks them, and the
#: message it gives when the TriggerAuthentication's auth params lack it (``<empty>`` for each).
_AUTH_MODE_NEEDS: tuple[tuple[str, str], ...] = (
    ("bearer", "bearer token=<empty> is required when bearer auth is enabled"),
    ("basic", "username=<empty> is required when basic auth is enabled"),
    ("tls", "cert=<empty> and key=<empty> are required when tls auth is enabled"),
    ("oauth", "oauthTokenURI=<empty> and clientID=<empty> are required when oauth is enabled"),
    (
        "custom",
        "customAuthHeader=<empty> and customAuthValue=<empty> are required when custom auth is enabled",
    ),
)
#: ``authentication.APIKeyAuth.Method``: ``default=header, enum=header;query``.
API_KEY_METHODS: tuple[str, ...] = ("header", "query")


def check_auth_modes(metadata: Mapping[str, str], authentication_ref: bool = False) -> tuple[str, ...]:
    """``authModes`` (or ``authMode``) as KEDA's typed config reads it from trigger metadata: each
    comma-separated mode one of :data:`AUTH_MODES`, at most one of bearer, basic and oauth
    (``authentication.Config``'s ``enum`` and ``exclusiveSet`` tags); ``method`` one of
    :data:`API_KEY_METHODS`. The credentials each mode needs (``Config.Validate``) come from a
    TriggerAuthentication's auth params, which gpufleet does not read: with an ``authenticationRef``
    they are not checked; without one there are none, and KEDA refuses the mode (``apiKey`` may be
    given in the metadata)."""
    found = ((k, metadata_value(metadata, k)) for k in ("authModes", "authMode"))
    key, text = next(((k, t) for k, t in found if t is not None), ("", None))
    modes = () if text is None else tuple(m.strip() for m in text.split(","))
    unknown = [m for m in modes if m not in AUTH_MODES]
    if unknown:
        raise KedaSpecError(
            f"metadata.{key}", f"{', '.join(map(repr, unknown))}: must be one of {', '.join(AUTH_MODES)}"
        )
    exclusive = [m for m in modes if m in EXCLUSIVE_AUTH_MODES]
    if len(exclusive) > 1:
        raise KedaSpecError(
            f"metadata.{key}",
            f"{', '.join(exclusive)}: only one of {', '.join(EXCLUSIVE_AUTH_MODES)} is allowed",
        )
    method = metadata_value(metadata, "method")
    if method is not None and method not in API_KEY_METHODS:
        raise KedaSpecError(
            "metadata.method",
            f'parameter "method" value "{method}" must be one of [{" ".join(API_KEY_METHODS)}]',
        )
    if not authentication_ref:
        for mode, message in _AUTH_MODE_NEEDS:
            if mode in modes:
                raise KedaSpecError(f"metadata.{key}", f"{message} (no authenticationRef)")
        if "apiKey" in modes and metadata_value(metadata, "apiKey") is None:
            raise KedaSpecError(
                f"metadata.{key}", "apiKey is required when apiKey auth is enabled (no authenticationRef)"
            )
    return modes


def _required_string(metadata: Mapping[str, str], key: str) -> str:
    text = metadata_value(metadata, key)
    if text is None:
        raise KedaSpecError(f"metadata.{key}", "required")
    return text


#: ``ErrRedisNoAddresses`` and ``ErrRedisUnequalHostsAndPorts`` (``redis_scaler.go``).
REDIS_NO_ADDRESSES = (
    "no addresses or hosts given. address should be a comma separated list of host:port "
    "or set the host/port values"
)
REDIS_UNEQUAL_HOSTS_AND_PORTS = (
    "not enough hosts or ports given. number of hosts should be equal to the number of ports"
)
#: ``redisConnectionInfo`` keys read from trigger metadata (``name=`` tags, first name first); each may
#: also be given as ``<key>FromEnv``, the name of a variable of the scale target's container
#: environment (the ``resolvedEnv`` order). ``cert``, ``key``, ``keyPassword``, ``ca`` and ``tls`` are
#: read from a TriggerAuthentication's auth params only.
REDIS_ADDRESS_KEYS: tuple[str, ...] = ("address", "addresses")
REDIS_HOST_KEYS: tuple[str, ...] = ("host", "hosts")
REDIS_PORT_KEYS: tuple[str, ...] = ("port", "ports")
REDIS_CREDENTIAL_KEYS: tuple[str, ...] = (
    "username",
    "password",
    "sentinelUsername",
    "sentinelPassword",
    "sentinelMaster",
)
#: The ``redis`` trigger's keys that only shape the connection to a real Redis (database, TLS,
#: credentials, and every ``...FromEnv`` form): gpufleet reads the list's length from its simulated
#: queue, so they change nothing. ``address``/``host``/``port`` name the server that queue stands for
#: (as ``serverAddress`` does for prometheus): required as KEDA requires them, not warned.
REDIS_CONNECTION_KEYS: tuple[str, ...] = (
    "databaseIndex",
    "enableTLS",
    "unsafeSsl",
    *REDIS_CREDENTIAL_KEYS,
    *(
        f"{key}FromEnv"
        for key in (*REDIS_ADDRESS_KEYS, *REDIS_HOST_KEYS, *REDIS_PORT_KEYS, *REDIS_CREDENTIAL_KEYS)
    ),
)


def _metadata_list(metadata: Mapping[str, str], keys: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """The first of ``keys`` set in trigger metadata and its ``[]string`` value as KEDA's typed config
    reads one (``setConfigValueSlice``: split on ``,``, each element trimmed), None if none is set."""
    for key in keys:
        text = metadata_value(metadata, key)
        if text is not None:
            return key, tuple(element.strip() for element in text.split(","))
    return None


def _from_env(metadata: Mapping[str, str], keys: tuple[str, ...]) -> bool:
    """Whether one of ``keys`` names a variable of the container environment (``<key>FromEnv``)."""
    return any(metadata_value(metadata, f"{key}FromEnv") is not None for key in keys)


@dataclass(frozen=True)
class RedisConnection:
    """What a redis trigger's metadata says of its connection (``redisConnectionInfo``), as far as the
    trigger metadata alone tells: ``addresses`` as ``validateRedisAddress`` builds them (``address`` or
    ``addresses``, then ``host:port`` for each host/port pair), empty where they come from the
    container environment or a TriggerAuthentication, which gpufleet does not read. Checked, then
    unused: gpufleet reads the list from its simulated queue."""

    addresses: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    ports: tuple[str, ...] = ()
    username: str | None = None
    password: str | None = None
    sentinel_username: str | None = None
    sentinel_password: str | None = None
    sentinel_master: str | None = None
    database_index: int = 0
    enable_tls: bool = False
    unsafe_ssl: bool = False

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str], authentication_ref: bool = False) -> RedisConnection:
        """``redisConnectionInfo`` and ``redisMetadata.Validate`` over trigger metadata, with KEDA's
        errors (``validateRedisAddress``: ``ErrRedisUnequalHostsAndPorts``, ``ErrRedisNoAddresses``;
        ``SetEnableTLS``). A key may instead come from the container environment (``<key>FromEnv``) or,
        with an ``authenticationRef``, from a TriggerAuthentication: a check that rests on such a
        value is not made (it could pass); one that fails whatever they hold is."""
        database_index = parse_metadata_int(metadata, "databaseIndex", 0)
        enable_tls_text = metadata_value(metadata, "enableTLS")
        credentials = {key: metadata_value(metadata, key) for key in REDIS_CREDENTIAL_KEYS}
        unsafe_ssl = parse_metadata_bool(metadata, "unsafeSsl", False)
        elsewhere = authentication_ref  # keys the TriggerAuthentication may hold
        address = _metadata_list(metadata, REDIS_ADDRESS_KEYS)
        hosts = _metadata_list(metadata, REDIS_HOST_KEYS)
        ports = _metadata_list(metadata, REDIS_PORT_KEYS)
        addresses = address[1] if address else ()
        if hosts and ports:
            if len(hosts[1]) != len(ports[1]):
                raise KedaSpecError(f"metadata.{hosts[0]}", REDIS_UNEQUAL_HOSTS_AND_PORTS)
            addresses += tuple(_join_host_port(h, p) for h, p in zip(hosts[1], ports[1], strict=True))
        may_have_address = address is not None or elsewhere or _from_env(metadata, REDIS_ADDRESS_KEYS)
        may_have_hosts = hosts is not None or elsewhere or _from_env(metadata, REDIS_HOST_KEYS)
        may_have_ports = ports is not None or elsewhere or _from_env(metadata, REDIS_PORT_KEYS)
        if (addresses and not addresses[0]) or not (may_have_address or (may_have_hosts and may_have_ports)):
            raise KedaSpecError(f"metadata.{address[0] if address else 'address'}", REDIS_NO_ADDRESSES)
        enable_tls = False if enable_tls_text is None else _go_parse_bool(enable_tls_text)
        if enable_tls is None:
            raise KedaSpecError(
                "metadata.enableTLS",
                f'EnableTLS parsing error strconv.ParseBool: parsing "{enable_tls_text}": invalid syntax',
            )
        return cls(
            addresses=addresses,
            hosts=hosts[1] if hosts else (),
            ports=ports[1] if ports else (),
            username=credentials["username"],
            password=credentials["password"],
            sentinel_username=credentials["sentinelUsername"],
            sentinel_password=credentials["sentinelPassword"],
            sentinel_master=credentials["sentinelMaster"],
            database_index=database_index,
            enable_tls=enable_tls,
            unsafe_ssl=unsafe_ssl,
        )


def _join_host_port(host: str, port: str) -> str:
    """Go ``net.JoinHostPort``: an IPv6 host (one with a colon) in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _go_parse_bool(text: str) -> bool | None:
    """Go ``strconv.ParseBool``, None where it fails."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


@dataclass(frozen=True)
class RedisListScaler:
    """The ``redis`` trigger (or ``redis-cluster``, ``redis-sentinel``: the same scaler, another
    connection): the length of a Redis list (``LLEN``).

    :meth:`from_metadata` reads the trigger as ``parseRedisMetadata`` does (``redisMetadata``'s typed
    config, then ``Validate``); the connection (:class:`RedisConnection`) is checked and kept aside."""

    list_name: str
    #: Target *average* list length per replica (HPA ``AverageValue`` target).
    list_length: int = DEFAULT_REDIS_LIST_LENGTH
    #: Active when ``LLEN > activationListLength`` (strictly).
    activation_list_length: int = 0
    trigger_type: Literal["redis", "redis-cluster", "redis-sentinel"] = "redis"
    #: What the metadata says of the connection; not part of the scaler's identity.
    connection: RedisConnection = field(default=RedisConnection(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.list_name:
            raise KedaSpecError("metadata.listName", "required")
        if self.list_length <= 0:
            # gpufleet refuses it: the HPA KEDA creates would divide by zero.
            raise KedaSpecError("metadata.listLength", f"must be positive, got {self.list_length}")

    @classmethod
    def from_metadata(
        cls,
        metadata: Mapping[str, str],
        trigger_type: Literal["redis", "redis-cluster", "redis-sentinel"],
        authentication_ref: bool = False,
    ) -> RedisListScaler:
        """``parseRedisMetadata``: the fields in ``redisMetadata``'s order (``listLength`` and
        ``activationListLength`` JSON integers, ``listName`` required, then the connection,
        :meth:`RedisConnection.from_metadata`); the first error is raised (KEDA joins them all)."""
        list_length = parse_metadata_int(metadata, "listLength", DEFAULT_REDIS_LIST_LENGTH)
        activation_list_length = parse_metadata_int(metadata, "activationListLength", 0)
        list_name = _required_string(metadata, "listName")
        connection = RedisConnection.from_metadata(metadata, authentication_ref)
        return cls(
            list_name=list_name,
            list_length=list_length,
            activation_list_length=activation_list_length,
            trigger_type=trigger_type,
            connection=connection,
        )


@dataclass(frozen=True)
class PrometheusScaler:
    """The ``prometheus`` trigger: the single value a PromQL query returns.

    The query is parsed and narrowed to what gpufleet evaluates over its simulated series
    (:func:`gpufleet.model.promql.parse_query`); any other query is refused here, naming the part.
    """

    server_address: str
    query: str
    #: Target value (may be a decimal); the HPA target is ``int64(threshold * 1000)`` milli-units.
    threshold: float
    #: Active when the query value ``> activationThreshold`` (strictly).
    activation_threshold: float = 0.0
    #: ``ignoreNullValues`` (default true): an empty result, NaN or ±Inf reads as 0, else it fails.
    ignore_null_values: bool = True
    trigger_type: ClassVar[Literal["prometheus"]] = "prometheus"
    #: The parsed query.
    expr: PromExpr = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.server_address:
            raise KedaSpecError("metadata.serverAddress", "required")
        if not self.query:
            raise KedaSpecError("metadata.query", "required")
        try:
            object.__setattr__(self, "expr", parse_query(self.query))
        except PromQLUnsupported as err:
            raise KedaSpecError("metadata.query", f"{self.query!r}: {err}") from None
        if not (math.isfinite(self.threshold) and math.isfinite(self.activation_threshold)):
            raise KedaSpecError("metadata.threshold", "threshold and activationThreshold must be finite")
        if int(self.threshold * 1000) <= 0:
            # GetMetricTargetMili truncates to milli-units; a zero target divides by zero in the HPA.
            raise KedaSpecError("metadata.threshold", f"must be at least 0.001, got {self.threshold}")

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str], authentication_ref: bool = False) -> PrometheusScaler:
        """The scaler of a trigger's metadata, as ``parsePrometheusMetadata`` reads it: the connection
        keys (:data:`PROMETHEUS_CONNECTION_KEYS`) must parse, then play no part; ``authentication_ref``:
        the trigger names a TriggerAuthentication (:func:`check_auth_modes`)."""
        scaler = cls(
            server_address=_required_string(metadata, "serverAddress"),
            query=_required_string(metadata, "query"),
            threshold=parse_metadata_float(metadata, "threshold", None),
            activation_threshold=parse_metadata_float(metadata, "activationThreshold", 0.0),
            ignore_null_values=parse_metadata_bool(metadata, "ignoreNullValues", True),
        )
        parse_metadata_map(metadata, "customHeaders")
        parse_metadata_map(metadata, "queryParameters")
        parse_metadata_bool(metadata, "unsafeSsl", False)
        parse_metadata_duration_s(metadata, "timeout")
        check_auth_modes(metadata, authentication_ref)
        return scaler


def _zone(name: str) -> ZoneInfo | None:
    """The IANA zone ``name`` (Go ``time.LoadLocation``), None if there is none by that name."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


@dataclass(frozen=True)
class CronScaler:
    """The ``cron`` trigger (``pkg/scalers/cron_scaler.go``): ``desiredReplicas`` between ``start`` and
    ``end`` in ``timezone``, else 0.

    ``cronMetadata`` takes the four keys, all required (``desiredReplicas`` a JSON integer, not 0);
    ``Validate`` parses ``start`` and ``end`` (:class:`gpufleet.model.cron_schedule.CronSchedule`) and
    refuses them equal. ``timezone`` is loaded only when the scaler is asked for its metrics
    (``GetMetricsAndActivity``: ``unable to load timezone``): a name with no IANA zone is accepted
    here and makes the scaler fail at every poll (:attr:`zone` is None).
    """

    timezone: str
    start: str
    end: str
    desired_replicas: int
    trigger_type: ClassVar[Literal["cron"]] = "cron"
    start_schedule: CronSchedule = field(init=False, repr=False, compare=False)
    end_schedule: CronSchedule = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for key, text in (("start", self.start), ("end", self.end)):
            try:
                object.__setattr__(self, f"{key}_schedule", CronSchedule.parse(text))
            except CronSyntaxError as err:
                raise KedaSpecError(f"metadata.{key}", f"error parsing {key} schedule: {err}") from None
        if self.start == self.end:
            raise KedaSpecError("metadata.end", "start and end can not have exactly same time input")
        if self.desired_replicas == 0:
            raise KedaSpecError("metadata.desiredReplicas", "no desiredReplicas specified")

    @property
    def zone(self) -> ZoneInfo | None:
        return _zone(self.timezone)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> CronScaler:
        _required_string(metadata, "desiredReplicas")
        return cls(
            timezone=_required_string(metadata, "timezone"),
            start=_required_string(metadata, "start"),
            end=_required_string(metadata, "end"),
            desired_replicas=parse_metadata_int(metadata, "desiredReplicas", 0),
        )


ResourceName = Literal["cpu", "memory"]


@dataclass(frozen=True)
class ResourceScaler:
    """The ``cpu`` and ``memory`` triggers (``pkg/scalers/cpu_memory_scaler.go``): no External metric,
    but a ``Resource`` metric of the HPA KEDA writes (``GetMetricSpecForScaling``), with the trigger's
    ``metricType`` (``Utilization``: ``value`` a percentage of the request, ``AverageValue``: a
    quantity per pod); ``containerName`` would make it a ``ContainerResource`` metric.

    ``parseResourceMetadata``: ``value`` required; the deprecated ``type`` key is an error
    (``deprecated`` tag: removed in v2.18); ``metricType`` must be ``Utilization`` (``value`` a base-10
    int32, ``strconv.ParseInt``) or ``AverageValue`` (``value`` a quantity, ``resource.MustParse``,
    which panics on a bad one: refused here), nothing else and not unset; the HPA's own validation of
    the target (positive) follows when KEDA writes the HPA.
    """

    resource: ResourceName
    metric_type: Literal["Utilization", "AverageValue"]
    value: str
    container_name: str | None = None
    #: the HPA's target (``averageUtilization`` percent, or ``averageValue`` milli-units)
    target: MetricTarget = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.metric_type == "Utilization":
            if not _GO_INT.match(self.value) or not -(2**31) <= int(self.value) < 2**31:
                raise KedaSpecError(
                    "metadata.value", f'strconv.ParseInt: parsing "{self.value}": invalid syntax or range'
                )
            target = _resource_target("Utilization", average_utilization=int(self.value))
        elif self.metric_type == "AverageValue":
            try:
                milli = milli_value(self.value)
            except (QuantityError, ValueError) as err:
                raise KedaSpecError(
                    "metadata.value",
                    f"{self.value!r} is not a quantity ({err}; KEDA's resource.MustParse panics)",
                ) from None
            target = _resource_target("AverageValue", average_value=milli)
        else:
            raise KedaSpecError(
                "metricType",
                f"unknown metric type: {self.metric_type}, "
                "allowed values are 'Utilization' or 'AverageValue'",
            )
        object.__setattr__(self, "target", target)

    @property
    def trigger_type(self) -> ResourceName:
        return self.resource

    @classmethod
    def from_metadata(
        cls, resource: ResourceName, metadata: Mapping[str, str], metric_type: str
    ) -> ResourceScaler:
        if metadata_value(metadata, "type") is not None:
            raise KedaSpecError(
                "metadata.type",
                f"scaler {resource} info: The 'type' setting is DEPRECATED and is removed in v2.18 - "
                "Use 'metricType' instead.",
            )
        return cls(
            resource=resource,
            metric_type=cast(Any, metric_type),
            value=_required_string(metadata, "value"),
            container_name=metadata_value(metadata, "containerName"),
        )


def _resource_target(type_: Literal["Utilization", "AverageValue"], **kwargs: int) -> MetricTarget:
    try:
        return MetricTarget(type_, **kwargs)
    except HPASpecError as err:  # what the API server says of the HPA KEDA writes
        raise KedaSpecError("metadata.value", f"the HPA KEDA writes is invalid: resource.{err}") from None


Scaler = RedisListScaler | PrometheusScaler | CronScaler | ResourceScaler


@dataclass(frozen=True)
class ScaleTrigger:
    """One entry of ``spec.triggers``: ``{type, metadata, metricType, name}``."""

    scaler: Scaler
    #: ``metricType``: ``AverageValue`` (the default, ``GetMetricTargetType``) or ``Value``.
    #: ``Utilization`` exists for the cpu and memory triggers only (whose scaler holds it); for external
    #: scalers KEDA refuses it (``ErrScalerUnsupportedUtilizationMetricType``, ``pkg/scalers/scaler.go``).
    metric_type: MetricType = "AverageValue"
    name: str = ""

    def __post_init__(self) -> None:
        if self.metric_type not in METRIC_TYPES:
            raise KedaSpecError(
                "metricType", f"must be one of {', '.join(METRIC_TYPES)}, got {self.metric_type!r}"
            )
        if isinstance(self.scaler, ResourceScaler):
            if self.metric_type != self.scaler.metric_type:
                raise KedaSpecError("metricType", f"must be the {self.scaler.resource} scaler's own")
        elif self.metric_type == "Utilization":
            raise KedaSpecError(
                "metricType",
                "'Utilization' metric type is unsupported for external metrics, "
                "allowed values are 'Value' or 'AverageValue'",
            )

    @classmethod
    def parse(
        cls,
        type_: str,
        metadata: Mapping[str, str],
        metric_type: str = "",
        name: str = "",
        authentication_ref: bool = False,
    ) -> ScaleTrigger:
        """Build a trigger from its manifest strings (``metric_type`` ``""``: unset); :class:`KedaSpecError`
        names the bad key. ``authentication_ref``: the trigger names a TriggerAuthentication, whose auth
        params (which gpufleet does not read) may hold what the metadata lacks (a redis address, the
        credentials of a prometheus ``authModes``)."""
        scaler: Scaler
        if type_ in ("cpu", "memory"):
            resource = ResourceScaler.from_metadata(cast(ResourceName, type_), metadata, metric_type)
            return cls(scaler=resource, metric_type=resource.metric_type, name=name)
        if type_ in REDIS_LIST_TYPES:
            scaler = RedisListScaler.from_metadata(metadata, cast(Any, type_), authentication_ref)
        elif type_ == "prometheus":
            scaler = PrometheusScaler.from_metadata(metadata, authentication_ref)
        elif type_ == "cron":
            scaler = CronScaler.from_metadata(metadata)
        else:
            raise KedaSpecError("type", unmodelled_trigger_reason(type_))
        return cls(scaler=scaler, metric_type=cast(MetricType, metric_type or "AverageValue"), name=name)

    @property
    def type(self) -> TriggerType:
        return self.scaler.trigger_type

    @property
    def is_resource(self) -> bool:
        """A cpu or memory trigger: a Resource metric of the HPA, no External metric, no activity."""
        return isinstance(self.scaler, ResourceScaler)

    @property
    def target_value(self) -> float:
        """The HPA target: ``listLength`` (redis), ``threshold`` (prometheus) or 1 (cron, whose metric is
        the replica count itself); a cpu/memory trigger has none (its Resource metric's target is
        :attr:`ResourceScaler.target`)."""
        scaler = self.scaler
        if isinstance(scaler, RedisListScaler):
            return float(scaler.list_length)
        if isinstance(scaler, PrometheusScaler):
            return scaler.threshold
        if isinstance(scaler, CronScaler):
            return 1.0
        raise ValueError(f"a {scaler.resource} trigger has no External metric target")

    @property
    def activation_value(self) -> float:
        """``activationListLength`` (redis) or ``activationThreshold`` (prometheus); 0 otherwise."""
        if isinstance(self.scaler, RedisListScaler):
            return float(self.scaler.activation_list_length)
        if isinstance(self.scaler, PrometheusScaler):
            return self.scaler.activation_threshold
        return 0.0


@dataclass(frozen=True)
class ScaleTargetRef:
    """``spec.scaleTargetRef``; KEDA defaults ``apiVersion``/``kind`` to a Deployment."""

    name: str
    kind: str = "Deployment"
    api_version: str = "apps/v1"


@dataclass(frozen=True)
class Fallback:
    """``spec.fallback``: replicas to report to the HPA once a trigger has failed too often.

    Valid for ``AverageValue`` and ``Value`` triggers alike (``CheckFallbackValid``, KEDA v2.18+)."""

    failure_threshold: int
    replicas: int
    behavior: FallbackBehavior = "static"


def _check_triggers(triggers: tuple[ScaleTrigger, ...]) -> None:
    """``ValidateTriggers`` (``apis/keda/v1alpha1/scaletriggers_types.go``): at least one trigger, and
    no trigger name given twice."""
    if not triggers:
        raise KedaSpecError("spec.triggers", "at least one trigger is required")
    seen: set[str] = set()
    for i, trigger in enumerate(triggers):
        if trigger.name in seen:
            raise KedaSpecError(
                f"spec.triggers[{i}].name",
                f"triggerName {trigger.name!r} is defined multiple times in the ScaledObject/ScaledJob, "
                "but it must be unique",
            )
        if trigger.name:
            seen.add(trigger.name)


#: ``CompositeMetricName``: the one External metric of the HPA of a ScaledObject with a formula.
COMPOSITE_METRIC_NAME = "composite-metric"
_MODIFIERS = "spec.advanced.scalingModifiers"
#: the CRD's enum of ``scalingModifiers.metricType``
MODIFIER_METRIC_TYPES: tuple[str, ...] = ("AverageValue", "Value")


def cast_to_float_if_necessary(formula: str) -> str:
    """``castToFloatIfNecessary`` (``scaledobject_webhook.go``): the formula KEDA compiles. One with ``??``
    may answer nil (then the fallback's replicas apply): ``let _kedaCompositeResult = (<formula>);
    _kedaCompositeResult == nil ? nil : float(_kedaCompositeResult)``; any other is wrapped in
    ``float(...)`` unless it starts with ``float(``."""
    if "??" in formula:
        if formula.startswith("let _kedaCompositeResult = "):
            return formula
        return (
            f"let _kedaCompositeResult = ({formula}); "
            "_kedaCompositeResult == nil ? nil : float(_kedaCompositeResult)"
        )
    return formula if formula.startswith("float(") else f"float({formula})"


@dataclass(frozen=True)
class ScalingModifiers:
    """``spec.advanced.scalingModifiers`` (``ScalingModifiers``, ``scaledobject_types.go``): a formula
    (:mod:`gpufleet.model.expr_lang`) over the named triggers' metric values whose result is the one
    External metric (``composite-metric``) of the HPA, against ``target`` (``AverageValue``, or ``Value``
    per ``metricType``); the ScaledObject is active when the result is above ``activationTarget``
    (default 0). All strings, as in the CRD; :meth:`compiled` validates them as KEDA's webhook does."""

    formula: str = ""
    target: str = ""
    activation_target: str = ""
    metric_type: str = ""
    #: the formula as KEDA runs it (:func:`cast_to_float_if_necessary`), compiled (:meth:`compiled`)
    program: Program | None = field(default=None, compare=False, repr=False)

    @property
    def in_use(self) -> bool:
        """``IsUsingModifiers``: any of the fields set."""
        return any((self.formula, self.target, self.activation_target, self.metric_type))

    @property
    def target_value(self) -> float:
        """``target`` as a float (positive once :meth:`compiled` accepted it)."""
        return parse_decimal(self.target) or 0.0

    @property
    def target_type(self) -> Literal["AverageValue", "Value"]:
        """The composite metric's target type (``getScaledObjectMetricSpecs``): ``AverageValue`` unless
        ``metricType`` says ``Value``."""
        return "Value" if self.metric_type == "Value" else "AverageValue"

    @property
    def activation_value(self) -> float | None:
        """``activationTarget`` as a float, 0 when unset; None when it does not parse (KEDA's poll fails:
        ``scalingModifiers.ActivationTarget parsing error``)."""
        return 0.0 if not self.activation_target else parse_decimal(self.activation_target)

    @property
    def integer_target(self) -> bool:
        """``HasValidFallback``'s check (``pkg/fallback/fallback.go``): with a formula, a fallback applies
        only when ``target`` parses as a positive integer (``strconv.ParseInt``)."""
        return bool(_GO_INT.match(self.target)) and int(self.target) > 0

    def compiled(self, triggers: tuple[ScaleTrigger, ...]) -> ScalingModifiers:
        """``ValidateAndCompileScalingModifiers`` (``scaledobject_webhook.go``), with its errors: a formula
        is mandatory and needs a target; it compiles (``expr.Compile``) with each named trigger but the
        cpu/memory ones as a float64 variable and runs with them all -1; the target is a float above 0;
        ``metricType`` is one of the CRD's enum (``AverageValue``, ``Value``)."""
        if self.metric_type and self.metric_type not in MODIFIER_METRIC_TYPES:
            raise KedaSpecError(
                f"{_MODIFIERS}.metricType",
                f'Unsupported value: "{self.metric_type}": supported values: "AverageValue", "Value"',
            )
        if not self.formula:
            raise KedaSpecError(f"{_MODIFIERS}.formula", "error ScalingModifiers.Formula is mandatory")
        formula_error = "error validating formula in ScalingModifiers"
        if not self.target:
            raise KedaSpecError(
                f"{_MODIFIERS}.target", f"{formula_error}: formula is given but target is empty"
            )
        names = [t.name for t in triggers if t.name and not t.is_resource]
        source = cast_to_float_if_necessary(self.formula)
        try:
            program = compile_program(source, names)
            program.run(dict.fromkeys(names, -1.0))
        except ExprError as err:
            raise KedaSpecError(
                f"{_MODIFIERS}.formula", f"{formula_error}: {err.headline} in {source!r}, as KEDA compiles it"
            ) from None
        target = parse_decimal(self.target)
        if target is None or target <= 0:
            cause = (
                f'strconv.ParseFloat: parsing "{self.target}": invalid syntax'
                if target is None
                else "%!w(<nil>)"
            )
            raise KedaSpecError(
                f"{_MODIFIERS}.target",
                "error validating target in ScalingModifiers: error converting target for scalingModifiers "
                f"(string->float) to valid target: {cause}",
            )
        if int(target * 1000) <= 0:
            # getScaledObjectMetricSpecs writes NewMilliQuantity(int64(target*1000)): a zero target
            raise KedaSpecError(f"{_MODIFIERS}.target", f"must be at least 0.001, got {self.target}")
        return replace(self, program=program)


def _check_count(path: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise KedaSpecError(path, f"must be an integer >= {minimum}, got {value!r}")


@dataclass(frozen=True)
class ScaledObjectSpec:
    """A ScaledObject: what KEDA itself decides (0 <-> 1) and the HPA it creates (1 <-> N)."""

    name: str
    namespace: str
    scale_target_ref: ScaleTargetRef
    triggers: tuple[ScaleTrigger, ...]
    polling_interval_s: int = DEFAULT_POLLING_INTERVAL_S
    cooldown_period_s: int = DEFAULT_COOLDOWN_PERIOD_S
    initial_cooldown_period_s: int = 0
    min_replica_count: int = 0
    max_replica_count: int = DEFAULT_MAX_REPLICA_COUNT
    #: Only 0 works correctly upstream (kedacore/keda#2314); must be below minReplicaCount.
    idle_replica_count: int | None = None
    fallback: Fallback | None = None
    #: ``advanced.horizontalPodAutoscalerConfig.behavior``, copied verbatim into the HPA; kept opaque.
    hpa_behavior: Mapping[str, Any] | None = field(default=None, hash=False)
    #: the same behavior as HPA rules (the loader converts it); None: the HPA's defaults
    hpa_behavior_rules: HorizontalPodAutoscalerBehavior | None = None
    #: ``advanced.horizontalPodAutoscalerConfig.name``; default ``keda-hpa-<name>``.
    hpa_name: str | None = None
    #: ``advanced.scalingModifiers``; None when unset or empty (``IsUsingModifiers`` false), else compiled
    scaling_modifiers: ScalingModifiers | None = None

    def __post_init__(self) -> None:
        _check_triggers(self.triggers)
        modifiers = self.scaling_modifiers
        if modifiers is not None:
            # verifyScaledObjects (scaledobject_webhook.go): ValidateAndCompileScalingModifiers
            compiled = modifiers.compiled(self.triggers) if modifiers.in_use else None
            object.__setattr__(self, "scaling_modifiers", compiled)
        _check_count("spec.pollingInterval", self.polling_interval_s, 1)
        _check_count("spec.cooldownPeriod", self.cooldown_period_s, 0)
        _check_count("spec.initialCooldownPeriod", self.initial_cooldown_period_s, 0)
        _check_count("spec.minReplicaCount", self.min_replica_count, 0)
        _check_count("spec.maxReplicaCount", self.max_replica_count, 0)
        # CheckReplicaCountBoundsAreValid compares against GetHPAMinReplicas (min if > 0, else 1).
        hpa_min = self.hpa_min_replicas
        if hpa_min > self.max_replica_count:
            raise KedaSpecError(
                "spec.minReplicaCount",
                f"MinReplicaCount={hpa_min} must be less than MaxReplicaCount={self.max_replica_count}",
            )
        if self.idle_replica_count is not None:
            _check_count("spec.idleReplicaCount", self.idle_replica_count, 0)
            if self.idle_replica_count >= hpa_min:
                raise KedaSpecError(
                    "spec.idleReplicaCount",
                    f"IdleReplicaCount={self.idle_replica_count} must be less than MinReplicaCount={hpa_min}",
                )
        if self.fallback is not None:
            self._check_fallback(self.fallback)
        if self.min_replica_count == 0 and all(t.is_resource for t in self.triggers):
            # verifyCPUMemoryScalers (apis/keda/v1alpha1/scaledobject_webhook.go)
            raise KedaSpecError(
                "spec.minReplicaCount",
                "scaledobject has only cpu/memory triggers AND minReplica is 0 "
                "(scale to zero doesn't work in this case)",
            )

    def _check_fallback(self, fallback: Fallback) -> None:
        # CheckFallbackValid (scaledobject_types.go).
        if fallback.failure_threshold < 0 or fallback.replicas < 0:
            raise KedaSpecError(
                "spec.fallback",
                f"FailureThreshold={fallback.failure_threshold} & Replicas={fallback.replicas} "
                "must both be greater than or equal to 0",
            )
        if fallback.behavior not in FALLBACK_BEHAVIORS:
            raise KedaSpecError("spec.fallback.behavior", f"must be one of {', '.join(FALLBACK_BEHAVIORS)}")
        if fallback.behavior == "scalingModifiers" and self.scaling_modifiers is None:
            # verifyScaledObjects (scaledobject_webhook.go)
            raise KedaSpecError(
                "spec.fallback.behavior",
                "scalingModifiers fallback behavior requires scalingModifiers.formula to be defined",
            )
        if self.scaling_modifiers is None and all(t.is_resource for t in self.triggers):
            raise KedaSpecError(
                "spec.fallback",
                "at least one trigger (that is not cpu or memory) has to have the `AverageValue` type "
                "for the fallback to be enabled",
            )
        # Since KEDA v2.18 a fallback also serves ``Value`` triggers (``doFallback`` divides by the
        # ready replicas); cpu/memory triggers have no External metric, so no fallback reaches them.

    @property
    def fallback_tracked(self) -> bool:
        """``isFallbackEnabled && HasValidFallback`` (``pkg/fallback/fallback.go``): a fallback, and with a
        formula a ``target`` that is a positive integer; otherwise a failing trigger is just an error and
        ``status.health`` is left alone."""
        if self.fallback is None:
            return False
        return self.scaling_modifiers is None or self.scaling_modifiers.integer_target

    @property
    def hpa_min_replicas(self) -> int:
        """``GetHPAMinReplicas``: ``minReplicaCount`` if > 0, else 1."""
        return self.min_replica_count if self.min_replica_count > 0 else 1

    @property
    def resolved_hpa_name(self) -> str:
        """``getHPAName``: ``advanced.horizontalPodAutoscalerConfig.name`` or ``keda-hpa-<name>``."""
        return self.hpa_name or f"keda-hpa-{self.name}"


@dataclass(frozen=True)
class ScalingStrategy:
    """ScaledJob ``spec.scalingStrategy``."""

    #: The CRD's enum (``default``, ``custom``, ``accurate``, ``eager``); the API server refuses others.
    strategy: ScalingStrategyName = "default"
    #: None (unset) deducts nothing (KEDA v2.20's ``customScalingStrategy``, kedacore/keda#7798).
    custom_scaling_queue_length_deduction: int | None = None
    #: A string in the CRD, parsed when the strategy runs; if it does not parse, KEDA falls back to
    #: the ``default`` strategy (:attr:`selected`).
    custom_scaling_running_job_percentage: str = ""
    #: Pod conditions that, all True, make a Job no longer pending; used by the caller that counts
    #: pending Jobs (``getPendingJobCount``).
    pending_pod_conditions: tuple[str, ...] = ()
    multiple_scalers_calculation: MultipleScalersCalculation = "max"

    def __post_init__(self) -> None:
        if self.strategy not in SCALING_STRATEGIES:
            raise KedaSpecError(
                "spec.scalingStrategy.strategy", f"must be one of {', '.join(SCALING_STRATEGIES)}"
            )
        if self.multiple_scalers_calculation not in MULTIPLE_SCALERS_CALCULATIONS:
            raise KedaSpecError(
                "spec.scalingStrategy.multipleScalersCalculation",
                f"must be one of {', '.join(MULTIPLE_SCALERS_CALCULATIONS)}",
            )

    @property
    def selected(self) -> ScalingStrategyName:
        """The strategy KEDA runs (``NewScalingStrategy``): ``custom`` becomes ``default`` when
        ``customScalingRunningJobPercentage`` does not parse as a float (an empty string included)."""
        if self.strategy == "custom" and self.running_job_percentage is None:
            return "default"
        return self.strategy

    @property
    def running_job_percentage(self) -> float | None:
        """``customScalingRunningJobPercentage`` as ``strconv.ParseFloat`` reads it, None if it does not."""
        return parse_decimal(self.custom_scaling_running_job_percentage)


@dataclass(frozen=True)
class ScaledJobSpec:
    """A ScaledJob: KEDA creates one Job per poll-computed slot from ``jobTargetRef``."""

    name: str
    namespace: str
    #: The CRD inlines a JobSpec; which Job template it maps to is the caller's concern, kept as a key.
    job_target_ref: str
    triggers: tuple[ScaleTrigger, ...]
    polling_interval_s: int = DEFAULT_POLLING_INTERVAL_S
    min_replica_count: int = 0
    #: None = unset (then 100 and, unlike a set value, not reduced by minReplicaCount).
    max_replica_count: int | None = None
    successful_jobs_history_limit: int = DEFAULT_JOBS_HISTORY_LIMIT
    failed_jobs_history_limit: int = DEFAULT_JOBS_HISTORY_LIMIT
    scaling_strategy: ScalingStrategy = ScalingStrategy()

    def __post_init__(self) -> None:
        _check_triggers(self.triggers)
        for i, trigger in enumerate(self.triggers):
            if trigger.is_resource:
                # the ScaledJob's metrics loop skips a scaler with no External metric (scale_handler.go)
                raise KedaSpecError(
                    f"spec.triggers[{i}].type",
                    f"KEDA ignores a {trigger.type} trigger in a ScaledJob (it has no External metric): "
                    "it would never scale the Jobs",
                )
        _check_count("spec.pollingInterval", self.polling_interval_s, 1)
        _check_count("spec.minReplicaCount", self.min_replica_count, 0)
        if self.max_replica_count is not None:
            _check_count("spec.maxReplicaCount", self.max_replica_count, 0)
        _check_count("spec.successfulJobsHistoryLimit", self.successful_jobs_history_limit, 0)
        _check_count("spec.failedJobsHistoryLimit", self.failed_jobs_history_limit, 0)

    @property
    def effective_min_replica_count(self) -> int:
        """``ScaledJob.MinReplicaCount()``: ``minReplicaCount``, capped at ``maxReplicaCount``."""
        if self.max_replica_count is not None and self.min_replica_count > self.max_replica_count:
            return self.max_replica_count
        return self.min_replica_count

    @property
    def effective_max_replica_count(self) -> int:
        """``ScaledJob.MaxReplicaCount()``: ``maxReplicaCount - MinReplicaCount()`` (the Jobs above the
        minimum), ``maxReplicaCount`` itself when min exceeds it, 100 when unset."""
        if self.max_replica_count is None:
            return DEFAULT_MAX_REPLICA_COUNT
        if self.min_replica_count > self.max_replica_count:
            return self.max_replica_count
        return self.max_replica_count - self.effective_min_replica_count


# --- manifests ---------------------------------------------------------------------------------


def _get(doc: Mapping[str, Any], path: str, key: str, kind: type, default: Any) -> Any:
    """``doc[key]`` checked against ``kind``; ``default`` when absent or null."""
    value = doc.get(key)
    if value is None:
        return default
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise KedaSpecError(f"{path}.{key}", f"must be an integer, got {value!r}")
    if not isinstance(value, kind):
        raise KedaSpecError(f"{path}.{key}", f"must be a {kind.__name__}, got {value!r}")
    return value


def _mapping(doc: Mapping[str, Any], path: str, key: str) -> Mapping[str, Any]:
    value: Mapping[str, Any] = _get(doc, path, key, dict, {})
    return value


def _triggers_from_manifest(spec: Mapping[str, Any]) -> tuple[ScaleTrigger, ...]:
    raw = _get(spec, "spec", "triggers", list, [])
    triggers = []
    for i, item in enumerate(raw):
        path = f"spec.triggers[{i}]"
        if not isinstance(item, dict):
            raise KedaSpecError(path, "must be a mapping")
        metadata = _mapping(item, path, "metadata")
        for key, value in metadata.items():
            if not isinstance(value, str):
                raise KedaSpecError(f"{path}.metadata.{key}", f"must be a string, got {value!r}")
        try:
            triggers.append(
                ScaleTrigger.parse(
                    str(_get(item, path, "type", str, "")),
                    metadata,
                    str(_get(item, path, "metricType", str, "")),
                    str(_get(item, path, "name", str, "")),
                    authentication_ref=item.get("authenticationRef") is not None,
                )
            )
        except KedaSpecError as err:
            raise KedaSpecError(f"{path}.{err.path}", err.message) from None
    return tuple(triggers)


def _metadata_name(doc: Mapping[str, Any]) -> tuple[str, str]:
    metadata = _mapping(doc, "", "metadata")
    name = _get(metadata, "metadata", "name", str, "")
    if not name:
        raise KedaSpecError("metadata.name", "required")
    return name, _get(metadata, "metadata", "namespace", str, "default")


def scaled_object_from_manifest(doc: Mapping[str, Any]) -> ScaledObjectSpec:
    """A ScaledObject from its manifest (``kind: ScaledObject``), field paths in errors."""
    name, namespace = _metadata_name(doc)
    spec = _mapping(doc, "", "spec")
    target = _mapping(spec, "spec", "scaleTargetRef")
    target_name = _get(target, "spec.scaleTargetRef", "name", str, "")
    if not target_name:
        raise KedaSpecError("spec.scaleTargetRef.name", "required")
    fallback_doc = _get(spec, "spec", "fallback", dict, None)
    fallback = None
    if fallback_doc is not None:
        for key in ("failureThreshold", "replicas"):
            if key not in fallback_doc:
                raise KedaSpecError(f"spec.fallback.{key}", "required")
        fallback = Fallback(
            failure_threshold=_get(fallback_doc, "spec.fallback", "failureThreshold", int, None),
            replicas=_get(fallback_doc, "spec.fallback", "replicas", int, None),
            behavior=_get(fallback_doc, "spec.fallback", "behavior", str, "static"),
        )
    advanced = _mapping(spec, "spec", "advanced")
    hpa_config = _mapping(advanced, "spec.advanced", "horizontalPodAutoscalerConfig")
    modifiers = _mapping(advanced, "spec.advanced", "scalingModifiers")
    hpa_path = "spec.advanced.horizontalPodAutoscalerConfig"
    return ScaledObjectSpec(
        name=name,
        namespace=namespace,
        scale_target_ref=ScaleTargetRef(
            name=target_name,
            kind=_get(target, "spec.scaleTargetRef", "kind", str, "Deployment"),
            api_version=_get(target, "spec.scaleTargetRef", "apiVersion", str, "apps/v1"),
        ),
        triggers=_triggers_from_manifest(spec),
        polling_interval_s=_get(spec, "spec", "pollingInterval", int, DEFAULT_POLLING_INTERVAL_S),
        cooldown_period_s=_get(spec, "spec", "cooldownPeriod", int, DEFAULT_COOLDOWN_PERIOD_S),
        initial_cooldown_period_s=_get(spec, "spec", "initialCooldownPeriod", int, 0),
        min_replica_count=_get(spec, "spec", "minReplicaCount", int, 0),
        max_replica_count=_get(spec, "spec", "maxReplicaCount", int, DEFAULT_MAX_REPLICA_COUNT),
        idle_replica_count=_get(spec, "spec", "idleReplicaCount", int, None),
        fallback=fallback,
        hpa_behavior=_get(hpa_config, hpa_path, "behavior", dict, None),
        hpa_name=_get(hpa_config, hpa_path, "name", str, None),
        scaling_modifiers=ScalingModifiers(
            *(
                _get(modifiers, _MODIFIERS, key, str, "")
                for key in ("formula", "target", "activationTarget", "metricType")
            )
        ),
    )


def scaled_job_from_manifest(doc: Mapping[str, Any]) -> ScaledJobSpec:
    """A ScaledJob from its manifest (``kind: ScaledJob``); ``job_target_ref`` is the ScaledJob's name."""
    name, namespace = _metadata_name(doc)
    spec = _mapping(doc, "", "spec")
    if "jobTargetRef" not in spec:
        raise KedaSpecError("spec.jobTargetRef", "required")
    strategy = _mapping(spec, "spec", "scalingStrategy")
    path = "spec.scalingStrategy"
    conditions = _get(strategy, path, "pendingPodConditions", list, [])
    if not all(isinstance(c, str) for c in conditions):
        raise KedaSpecError(f"{path}.pendingPodConditions", "must be a list of strings")
    return ScaledJobSpec(
        name=name,
        namespace=namespace,
        job_target_ref=name,
        triggers=_triggers_from_manifest(spec),
        polling_interval_s=_get(spec, "spec", "pollingInterval", int, DEFAULT_POLLING_INTERVAL_S),
        min_replica_count=_get(spec, "spec", "minReplicaCount", int, 0),
        max_replica_count=_get(spec, "spec", "maxReplicaCount", int, None),
        successful_jobs_history_limit=_get(
            spec, "spec", "successfulJobsHistoryLimit", int, DEFAULT_JOBS_HISTORY_LIMIT
        ),
        failed_jobs_history_limit=_get(
            spec, "spec", "failedJobsHistoryLimit", int, DEFAULT_JOBS_HISTORY_LIMIT
        ),
        scaling_strategy=ScalingStrategy(
            strategy=_get(strategy, path, "strategy", str, "default"),
            custom_scaling_queue_length_deduction=_get(
                strategy, path, "customScalingQueueLengthDeduction", int, None
            ),
            custom_scaling_running_job_percentage=_get(
                strategy, path, "customScalingRunningJobPercentage", str, ""
            ),
            pending_pod_conditions=tuple(conditions),
            multiple_scalers_calculation=_get(strategy, path, "multipleScalersCalculation", str, "max"),
        ),
    )
