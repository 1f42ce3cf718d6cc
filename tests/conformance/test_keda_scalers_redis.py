"""KEDA's redis scaler tests, ported case by case.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scalers/redis_scaler_test.go``. Each pytest id is
``<upstream test function>/<index in its table> <the case's comment or name>``.

How the upstream fixtures map onto gpufleet:

- ``parseRedisMetadata(config)`` is a ScaledObject with one ``redis`` trigger (``redis-cluster`` for
  ``TestParseRedisClusterMetadata``, ``redis-sentinel`` for ``TestParseRedisSentinelMetadata``: the
  same ``parseRedisMetadata``) carrying the case's ``TriggerMetadata``, read by the manifest loader
  (:func:`gpufleet.kube.load_scenario`): an upstream error is a load error naming
  ``spec.triggers[0].metadata.<key>`` (in KEDA's words where the case names an error), a success loads,
  and each database, TLS, credential or ``...FromEnv`` key is a not-modelled warning
  (:data:`gpufleet.model.keda.REDIS_CONNECTION_KEYS`), never an error nor silently dropped.
- KEDA joins every error of the typed config and ``Validate`` (``errors.Join``); gpufleet names the
  first. Where a case's expected error is a later one (``ErrRedisNoAddresses`` after a missing
  ``listName``), the connection's own check (:meth:`gpufleet.model.keda.RedisConnection.from_metadata`,
  the ``Validate`` part) is asked too.
- ``AuthParams`` live in a TriggerAuthentication, which gpufleet does not read: a case with auth params
  gives its trigger an ``authenticationRef``, so that what they may hold (an address, hosts, ports) is
  not required of the metadata; the fields they set are compared as unread (empty). A case whose
  verdict rests on what the auth params hold is skipped.
- ``ResolvedEnv`` is the scale target's container environment, which gpufleet does not resolve: a
  ``<key>FromEnv`` field is compared as unread (empty) and warned; a case whose verdict rests on
  whether the variable exists is skipped.
- ``wantMeta`` is compared through the scaler: ``ListLength``/``ListName`` on
  :class:`gpufleet.model.keda.RedisListScaler`, ``ConnectionInfo`` on its
  :class:`gpufleet.model.keda.RedisConnection` (``""`` is None there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from autoscaling_builders import SCALED_DEPLOYMENT

from gpufleet.autoscaling.keda_triggers import metric_name
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.keda import (
    REDIS_CONNECTION_KEYS,
    REDIS_NO_ADDRESSES,
    REDIS_UNEQUAL_HOSTS_AND_PORTS,
    KedaSpecError,
    RedisConnection,
    RedisListScaler,
    ScaleTrigger,
)


def _scaled_object(trigger_type: str, metadata: dict[str, str], auth: bool) -> dict[str, object]:
    trigger: dict[str, object] = {"type": trigger_type, "metadata": metadata}
    if auth:
        trigger["authenticationRef"] = {"name": "redis-auth"}
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "web-scaler", "namespace": "default"},
        "spec": {"scaleTargetRef": {"name": "web"}, "triggers": [trigger]},
    }


def _read(
    tmp_path: Path, trigger_type: str, metadata: dict[str, str], auth: bool
) -> tuple[list[str], list[str], RedisListScaler | None]:
    """(problems, warnings, the scaler) of a ScaledObject with one redis trigger, without file labels."""
    path = tmp_path / "so.yaml"
    docs = (_scaled_object(trigger_type, metadata, auth), SCALED_DEPLOYMENT)
    path.write_text("\n---\n".join(json.dumps(doc) for doc in docs))

    def strip(lines: list[str]) -> list[str]:
        return [line.split("(ScaledObject/default/web-scaler): ", 1)[-1] for line in lines]

    try:
        scenario = load_scenario([path])
    except ScenarioError as err:
        return strip(err.problems), [], None
    [scaled] = scenario.scaled_objects
    scaler = scaled.triggers[0].scaler
    assert isinstance(scaler, RedisListScaler)
    return [], strip(scenario.warnings), scaler


def _warning(key: str) -> str:
    note = "gpufleet reads the list from its simulated queue"
    if key.endswith("FromEnv"):
        note += "; the container's environment is not resolved"
    return f"spec.triggers[0].metadata.{key} is not modelled ({note}); ignored"


def _warned(metadata: dict[str, str]) -> list[str]:
    """The not-modelled warnings a trigger with ``metadata`` gets: its connection keys that are set."""
    return sorted(_warning(k) for k in REDIS_CONNECTION_KEYS if metadata.get(k, "").strip())


# --- TestRedisParseMetadata ----------------------------------------------------------------------

_ENV = "the scale target's container environment (ResolvedEnv), which gpufleet does not resolve"
_ZERO = (
    "listLength 0: KEDA's parse accepts it, but the HPA KEDA writes would have an averageValue of 0, "
    "which the API server refuses (must be positive); gpufleet refuses it at load"
)
_AUTH = "a TriggerAuthentication's auth params, which gpufleet does not read"


def _skip(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.skip(reason=reason)


# (metadata, has auth params, the key gpufleet's error names or None for a success, EnableTLS)
_PARSE_METADATA = [
    pytest.param({}, False, "listName", False, id="TestRedisParseMetadata/0 nothing passed"),
    pytest.param(
        {
            "listName": "mylist",
            "listLength": "10",
            "addressFromEnv": "REDIS_HOST",
            "passwordFromEnv": "REDIS_PASSWORD",
        },
        False,
        None,
        False,
        id="TestRedisParseMetadata/1 properly formed listName",
    ),
    pytest.param(
        {
            "listName": "mylist",
            "listLength": "10",
            "hostFromEnv": "REDIS_HOST",
            "portFromEnv": "REDIS_PORT",
            "passwordFromEnv": "REDIS_PASSWORD",
        },
        False,
        None,
        False,
        id="TestRedisParseMetadata/2 properly formed hostPort",
    ),
    pytest.param(
        {
            "listName": "mylist",
            "listLength": "10",
            "addressFromEnv": "REDIS_HOST",
            "host": "REDIS_HOST",
            "port": "REDIS_PORT",
            "passwordFromEnv": "REDIS_PASSWORD",
        },
        False,
        None,
        False,
        id="TestRedisParseMetadata/3 properly formed hostPort (address from env, host and port)",
    ),
    pytest.param(
        {
            "listName": "mylist",
            "listLength": "10",
            "hostFromEnv": "REDIS_HOST",
            "passwordFromEnv": "REDIS_PASSWORD",
        },
        False,
        "address",
        False,
        id="TestRedisParseMetadata/4 improperly formed hostPort",
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "10", "address": "", "password": ""},
        False,
        "address",
        False,
        id="TestRedisParseMetadata/5 properly formed listName, empty address",
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "AA", "addressFromEnv": "REDIS_HOST", "password": ""},
        False,
        "listLength",
        False,
        id="TestRedisParseMetadata/6 improperly formed listLength",
    ),
    pytest.param(
        {
            "listName": "mylist",
            "listLength": "1",
            "activationListLength": "AA",
            "addressFromEnv": "REDIS_HOST",
            "password": "",
        },
        False,
        "activationListLength",
        False,
        id="TestRedisParseMetadata/7 improperly formed activationListLength",
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0", "addressFromEnv": "REDIS_WRONG", "password": ""},
        False,
        "address",
        False,
        id="TestRedisParseMetadata/8 address does not resolve",
        marks=_skip(f"the error is that REDIS_WRONG is missing from {_ENV}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0", "addressFromEnv": "REDIS_WRONG"},
        True,
        "address",
        False,
        id="TestRedisParseMetadata/9 password is defined in the authParams",
        marks=_skip(f"the error is that REDIS_WRONG is missing from {_ENV}; the password is in {_AUTH}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0"},
        True,
        None,
        False,
        id="TestRedisParseMetadata/10 address is defined in the authParams",
        marks=_skip(f"the address is in {_AUTH}; and {_ZERO}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0"},
        True,
        None,
        False,
        id="TestRedisParseMetadata/11 host and port is defined in the authParams",
        marks=_skip(f"the host and port are in {_AUTH}; and {_ZERO}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0"},
        True,
        None,
        True,
        id="TestRedisParseMetadata/12 enableTLS, TLS defined in the authParams only",
        marks=_skip(f"the case checks tls, ca, cert and key read from {_AUTH}; and {_ZERO}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0"},
        True,
        None,
        True,
        id="TestRedisParseMetadata/13 enableTLS, TLS cert/key and assumed public CA",
        marks=_skip(f"the case checks tls, cert and key read from {_AUTH}; and {_ZERO}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0"},
        True,
        None,
        True,
        id="TestRedisParseMetadata/14 enableTLS, TLS cert/key + key password and assumed public CA",
        marks=_skip(f"the case checks tls, cert, key and keyPassword read from {_AUTH}; and {_ZERO}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0"},
        True,
        None,
        True,
        id="TestRedisParseMetadata/15 enableTLS, TLS CA only",
        marks=_skip(f"the case checks tls and ca read from {_AUTH}; and {_ZERO}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0", "enableTLS": "true"},
        True,
        None,
        True,
        id="TestRedisParseMetadata/16 enableTLS is enabled by metadata",
        marks=_skip(f"the address is in {_AUTH}; and {_ZERO}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0", "enableTLS": "true"},
        True,
        "enableTLS",
        True,
        id="TestRedisParseMetadata/17 enableTLS is defined both in authParams and metadata",
        marks=_skip(f"the error is that tls is also set in {_AUTH}"),
    ),
    pytest.param(
        {"listName": "mylist", "listLength": "0"},
        True,
        "address",
        False,
        id="TestRedisParseMetadata/18 host only is defined in the authParams",
        marks=_skip(f"the error is that {_AUTH} hold a host and no port"),
    ),
]


@pytest.mark.parametrize(("metadata", "auth", "error_key", "enable_tls"), _PARSE_METADATA)
def test_redis_parse_metadata(
    tmp_path: Path, metadata: dict[str, str], auth: bool, error_key: str | None, enable_tls: bool
) -> None:
    problems, warnings, scaler = _read(tmp_path, "redis", metadata, auth)
    if error_key is None:
        assert problems == []
        assert sorted(warnings) == _warned(metadata)
        assert scaler is not None and scaler.connection.enable_tls == enable_tls
    else:
        assert len(problems) == 1, problems
        assert problems[0].startswith(f"spec.triggers[0].metadata.{error_key}: "), problems
        if error_key == "address":
            assert problems[0].endswith(REDIS_NO_ADDRESSES)


@pytest.mark.parametrize(
    ("trigger_index", "name"),
    [
        pytest.param(0, "s0-redis-mylist", id="TestRedisGetMetricSpecForScaling/0 s0-redis-mylist"),
        pytest.param(1, "s1-redis-mylist", id="TestRedisGetMetricSpecForScaling/1 s1-redis-mylist"),
    ],
)
def test_redis_get_metric_spec_for_scaling(trigger_index: int, name: str) -> None:
    metadata = _PARSE_METADATA[1].values[0]
    assert isinstance(metadata, dict)
    assert metric_name(trigger_index, ScaleTrigger.parse("redis", metadata)) == name


# --- TestParseRedisClusterMetadata / TestParseRedisSentinelMetadata -------------------------------

_HOSTS_PORTS = {"hosts": "a, b, c", "ports": "1, 2, 3"}
_ABC = {"Addresses": ["a:1", "b:2", "c:3"], "Hosts": ["a", "b", "c"], "Ports": ["1", "2", "3"]}

#: upstream ``wantMeta`` field -> (gpufleet's field, the metadata/auth-param keys that set it)
_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Addresses": ("addresses", ("address", "addresses", "host", "hosts", "port", "ports")),
    "Hosts": ("hosts", ("host", "hosts")),
    "Ports": ("ports", ("port", "ports")),
    "Username": ("username", ("username",)),
    "Password": ("password", ("password",)),
    "SentinelUsername": ("sentinel_username", ("sentinelUsername",)),
    "SentinelPassword": ("sentinel_password", ("sentinelPassword",)),
    "SentinelMaster": ("sentinel_master", ("sentinelMaster",)),
    "EnableTLS": ("enable_tls", ("enableTLS",)),
    "UnsafeSsl": ("unsafe_ssl", ("unsafeSsl",)),
}


def _case(
    name: str,
    metadata: dict[str, str],
    auth_params: dict[str, str] | None = None,
    want: dict[str, Any] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    return {"name": name, "metadata": metadata, "auth": auth_params or {}, "want": want, "error": error}


_PARSE_ERR = "error parsing redis metadata"

_CLUSTER_CASES = [
    _case("empty metadata", {}, error=REDIS_NO_ADDRESSES),
    _case(
        "unequal number of Hosts/Ports",
        {"listName": "mylist", "hosts": "a, b, c", "ports": "1, 2"},
        error=REDIS_UNEQUAL_HOSTS_AND_PORTS,
    ),
    _case("no list name", {**_HOSTS_PORTS, "listLength": "5"}, error=_PARSE_ERR),
    _case(
        "invalid list length",
        {**_HOSTS_PORTS, "listName": "mylist", "listLength": "invalid"},
        error=_PARSE_ERR,
    ),
    _case(
        "address is defined in auth params",
        {"listName": "mylist"},
        {"addresses": ":7001, :7002"},
        {"Addresses": [":7001", ":7002"]},
    ),
    _case(
        "Hosts and Ports given in auth params",
        {"listName": "mylist"},
        {"hosts": "   a, b,    c ", "ports": "1, 2, 3"},
        _ABC,
    ),
    _case(
        "Username given in authParams",
        {**_HOSTS_PORTS, "listName": "mylist"},
        {"username": "username"},
        {**_ABC, "Username": "username"},
    ),
    _case(
        "Username given in metadata",
        {**_HOSTS_PORTS, "listName": "mylist", "username": "username"},
        {},
        {**_ABC, "Username": "username"},
    ),
    _case(
        "Username given in metadata from env",
        {**_HOSTS_PORTS, "listName": "mylist", "usernameFromEnv": "REDIS_USERNAME"},
        {},
        {**_ABC, "Username": "none"},
    ),
    _case(
        "Password given in authParams",
        {**_HOSTS_PORTS, "listName": "mylist"},
        {"password": "password"},
        {**_ABC, "Password": "password"},
    ),
    _case(
        "Password given in metadata from env",
        {**_HOSTS_PORTS, "listName": "mylist", "passwordFromEnv": "REDIS_PASSWORD"},
        {},
        {**_ABC, "Password": "none"},
    ),
    _case(
        "tls enabled without setting UnsafeSsl",
        {"listName": "mylist", "enableTLS": "true"},
        {"addresses": ":7001, :7002"},
        {"Addresses": [":7001", ":7002"], "EnableTLS": True, "UnsafeSsl": False},
    ),
    _case(
        "tls enabled with UnsafeSsl true",
        {"listName": "mylist", "enableTLS": "true", "unsafeSsl": "true"},
        {"addresses": ":7001, :7002"},
        {"Addresses": [":7001", ":7002"], "EnableTLS": True, "UnsafeSsl": True},
    ),
]

_SENTINEL_CASES = [
    _case("empty metadata", {}, error=REDIS_NO_ADDRESSES),
    _case(
        "unequal number of Hosts/Ports",
        {"hosts": "a, b, c", "ports": "1, 2"},
        error=REDIS_UNEQUAL_HOSTS_AND_PORTS,
    ),
    *_CLUSTER_CASES[2:6],
    _CLUSTER_CASES[5],  # upstream lists "Hosts and Ports given in auth params" twice
    *_CLUSTER_CASES[6:11],
    _case(
        "sentinelUsername given in authParams",
        {**_HOSTS_PORTS, "listName": "mylist"},
        {"sentinelUsername": "sentinelUsername"},
        {**_ABC, "SentinelUsername": "sentinelUsername"},
    ),
    _case(
        "sentinelUsername given in metadata",
        {**_HOSTS_PORTS, "listName": "mylist", "sentinelUsername": "sentinelUsername"},
        {},
        {**_ABC, "SentinelUsername": "sentinelUsername"},
    ),
    _case(
        "sentinelUsername given in metadata from env",
        {**_HOSTS_PORTS, "listName": "mylist", "sentinelUsernameFromEnv": "REDIS_SENTINEL_USERNAME"},
        {},
        {**_ABC, "SentinelUsername": "none"},
    ),
    _case(
        "sentinelPassword given in authParams",
        {**_HOSTS_PORTS, "listName": "mylist"},
        {"sentinelPassword": "sentinelPassword"},
        {**_ABC, "SentinelPassword": "sentinelPassword"},
    ),
    _case(
        "sentinelPassword given in metadata from env",
        {**_HOSTS_PORTS, "listName": "mylist", "sentinelPasswordFromEnv": "REDIS_SENTINEL_PASSWORD"},
        {},
        {**_ABC, "SentinelPassword": "none"},
    ),
    _case(
        "sentinelMaster given in authParams",
        {**_HOSTS_PORTS, "listName": "mylist"},
        {"sentinelMaster": "sentinelMaster"},
        {**_ABC, "SentinelMaster": "sentinelMaster"},
    ),
    _case(
        "sentinelMaster given in metadata",
        {**_HOSTS_PORTS, "listName": "mylist", "sentinelMaster": "sentinelMaster"},
        {},
        {**_ABC, "SentinelMaster": "sentinelMaster"},
    ),
    _case(
        "sentinelMaster given in metadata from env",
        {**_HOSTS_PORTS, "listName": "mylist", "sentinelMasterFromEnv": "REDIS_SENTINEL_MASTER"},
        {},
        {**_ABC, "SentinelMaster": "none"},
    ),
    *_CLUSTER_CASES[11:13],
]


def _unread(field: str, keys: tuple[str, ...], metadata: dict[str, str], auth: dict[str, str]) -> bool:
    """Whether upstream sets ``field`` from auth params or the container environment (gpufleet: unread)."""
    if any(k in auth for k in keys) or any(f"{k}FromEnv" in metadata for k in keys):
        return True
    # validateRedisAddress joins the hosts and ports: addresses are unread when either is.
    return field == "Addresses" and any(_unread(f, _FIELDS[f][1], metadata, auth) for f in ("Hosts", "Ports"))


def _check_case(tmp_path: Path, trigger_type: str, case: dict[str, Any]) -> None:
    metadata: dict[str, str] = case["metadata"]
    auth: dict[str, str] = case["auth"]
    problems, warnings, scaler = _read(tmp_path, trigger_type, metadata, bool(auth))
    if case["error"] is not None:
        assert len(problems) == 1, problems
        if case["error"] == _PARSE_ERR:  # any parse error (ErrorContains "error parsing redis metadata")
            return
        if problems[0].endswith(case["error"]):
            return
        # KEDA joins the typed config's errors with Validate's; gpufleet names the first (listName), and
        # the connection's own check gives the case's error.
        assert problems[0].startswith("spec.triggers[0].metadata.listName: required"), problems
        with pytest.raises(KedaSpecError, match=case["error"].replace(".", r"\.")):
            RedisConnection.from_metadata(metadata)
        return
    assert problems == [], problems
    assert sorted(warnings) == _warned(metadata)
    assert scaler is not None
    want: dict[str, Any] = case["want"]
    assert (scaler.list_length, scaler.list_name) == (5, "mylist")
    for upstream, (field, keys) in _FIELDS.items():
        default: Any = False if field in ("enable_tls", "unsafe_ssl") else None
        if field in ("addresses", "hosts", "ports"):
            default = ()
        expected = default if _unread(upstream, keys, metadata, auth) else want.get(upstream, default)
        if isinstance(expected, list):
            expected = tuple(expected)
        assert getattr(scaler.connection, field) == expected, field


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=f"TestParseRedisClusterMetadata/{i} {c['name']}")
        for i, c in enumerate(_CLUSTER_CASES)
    ],
)
def test_parse_redis_cluster_metadata(tmp_path: Path, case: dict[str, Any]) -> None:
    _check_case(tmp_path, "redis-cluster", case)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=f"TestParseRedisSentinelMetadata/{i} {c['name']}")
        for i, c in enumerate(_SENTINEL_CASES)
    ],
)
def test_parse_redis_sentinel_metadata(tmp_path: Path, case: dict[str, Any]) -> None:
    _check_case(tmp_path, "redis-sentinel", case)
