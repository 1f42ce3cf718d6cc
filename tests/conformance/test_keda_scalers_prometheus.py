"""KEDA's prometheus scaler tests, ported case by case.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scalers/prometheus_scaler_test.go``. Each pytest id is
``<upstream test function>/<index in its table> <the case's comment or name>``.

How the upstream fixtures map onto gpufleet:

- ``parsePrometheusMetadata(metadata)`` is a ScaledObject with one ``prometheus`` trigger carrying
  that metadata, read by the manifest loader (:func:`gpufleet.kube.load_scenario`): an upstream
  error is a load error naming ``spec.triggers[0].metadata.<key>``; a success loads, and each
  connection, TLS, auth or cloud key gpufleet does not model is a not-modelled warning, never an
  error nor silently dropped.
- The upstream query ``up`` becomes ``sum(queue_length)``: gpufleet refuses a query on a metric it
  does not simulate (the scaler would never scale), and every ``up`` case is about another key.
- ``authParams`` and the pod identity live in a TriggerAuthentication, which gpufleet does not read:
  a case with auth params gives its trigger an ``authenticationRef`` and checks that the ``authModes``
  metadata is accepted with a warning; a case with none (or only empty values, which the typed
  config reads as absent) has no TriggerAuthentication, so that ``Config.Validate`` refuses a mode
  whose credentials are missing, in its words; a case whose verdict rests on what the auth params or
  the pod identity hold is skipped.
- ``ExecutePromQuery`` over an HTTP body is :func:`gpufleet.autoscaling.keda_triggers.prometheus_value`
  over the evaluated instant vector: ``data.result`` is the list of samples, a failed request
  (an HTTP error status) is a failed evaluation (``None``), and an error is ``None`` (upstream: -1
  and an error). ``unsafeSsl`` only configures the HTTP client and plays no part.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from autoscaling_builders import SCALED_DEPLOYMENT

from gpufleet.autoscaling.keda_triggers import metric_name, prometheus_value
from gpufleet.autoscaling.promql_eval import Sample
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.keda import PrometheusScaler, ScaleTrigger

_UP = "sum(queue_length)"
_BASE = {"serverAddress": "http://localhost:9090", "metricName": "http_requests_total", "threshold": "100"}


def _scaled_object(metadata: dict[str, str]) -> dict[str, object]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "web-scaler", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"name": "web"},
            "triggers": [{"type": "prometheus", "metadata": metadata}],
        },
    }


def _read(tmp_path: Path, metadata: dict[str, str], auth: bool = False) -> tuple[list[str], list[str]]:
    """(problems, warnings) of a ScaledObject with one prometheus trigger (with an ``authenticationRef``
    if ``auth``), paths without the file label."""
    metadata = {k: (_UP if k == "query" and v == "up" else v) for k, v in metadata.items()}
    path = tmp_path / "so.yaml"
    scaled = _scaled_object(metadata)
    if auth:
        scaled["spec"]["triggers"][0]["authenticationRef"] = {"name": "prometheus-auth"}  # type: ignore[index]
    path.write_text("\n---\n".join(json.dumps(doc) for doc in (scaled, SCALED_DEPLOYMENT)))

    def strip(lines: list[str]) -> list[str]:
        return [line.split("(ScaledObject/default/web-scaler): ", 1)[-1] for line in lines]

    try:
        scenario = load_scenario([path])
    except ScenarioError as err:
        return strip(err.problems), []
    return [], strip(scenario.warnings)


def _warning(key: str) -> str:
    return (
        f"spec.triggers[0].metadata.{key} is not modelled "
        "(gpufleet evaluates the query over its simulated series); ignored"
    )


# (metadata, the key an error names or None, the keys warned as not modelled)
_Case = tuple[dict[str, str], str | None, tuple[str, ...]]

_PARSE_METADATA: list[tuple[str, _Case]] = [
    ("0 empty", ({}, "serverAddress", ())),
    ("1 all properly formed", ({**_BASE, "query": "up"}, None, ())),
    (
        "2 all properly formed, with namespace",
        (
            {"serverAddress": "http://localhost:9090", "threshold": "100", "query": "up", "namespace": "foo"},
            None,
            ("namespace",),
        ),
    ),
    (
        "3 all properly formed, with ignoreNullValues",
        ({**_BASE, "query": "up", "ignoreNullValues": "false"}, None, ()),
    ),
    (
        "4 all properly formed, with activationThreshold",
        ({**_BASE, "query": "up", "activationThreshold": "50"}, None, ()),
    ),
    ("5 missing serverAddress", ({**_BASE, "serverAddress": "", "query": "up"}, "serverAddress", ())),
    (
        "6 missing threshold",
        (
            {"serverAddress": "http://localhost:9090", "metricName": "http_requests_total", "query": "up"},
            "threshold",
            (),
        ),
    ),
    ("7 malformed threshold", ({**_BASE, "threshold": "one", "query": "up"}, "threshold", ())),
    (
        "8 malformed threshold (activationThreshold)",
        ({**_BASE, "activationThreshold": "one", "query": "up"}, "activationThreshold", ()),
    ),
    ("9 missing query", ({**_BASE, "query": ""}, "query", ())),
    (
        "10 ignoreNullValues with wrong value",
        ({**_BASE, "query": "up", "ignoreNullValues": "xxxx"}, "ignoreNullValues", ()),
    ),
    (
        "11 unsafeSsl",
        (
            {**_BASE, "serverAddress": "https://localhost:9090", "query": "up", "unsafeSsl": "true"},
            None,
            ("unsafeSsl",),
        ),
    ),
    (
        "12 customHeaders",
        ({**_BASE, "query": "up", "customHeaders": "key1=value1,key2=value2"}, None, ("customHeaders",)),
    ),
    (
        "13 customHeaders with wrong format",
        ({**_BASE, "query": "up", "customHeaders": "key1=value1,key2"}, "customHeaders", ()),
    ),
    (
        "14 queryParameters",
        ({**_BASE, "query": "up", "queryParameters": "key1=value1,key2=value2"}, None, ("queryParameters",)),
    ),
    (
        "15 queryParameters with wrong format",
        ({**_BASE, "query": "up", "queryParameters": "key1=value1,key2"}, "queryParameters", ()),
    ),
    (
        "16 valid custom http client timeout",
        ({**_BASE, "query": "up", "timeout": "1000"}, None, ("timeout",)),
    ),
    (
        "17 invalid - negative - custom http client timeout",
        ({**_BASE, "query": "up", "timeout": "-1"}, "timeout", ()),
    ),
    (
        "18 invalid - not a number - custom http client timeout",
        ({**_BASE, "query": "up", "timeout": "a"}, "timeout", ()),
    ),
]


@pytest.mark.parametrize(
    ("metadata", "error_key", "warned"),
    [pytest.param(*case, id=f"TestPrometheusParseMetadata/{name}") for name, case in _PARSE_METADATA],
)
def test_prometheus_parse_metadata(
    tmp_path: Path, metadata: dict[str, str], error_key: str | None, warned: tuple[str, ...]
) -> None:
    problems, warnings = _read(tmp_path, metadata)
    if error_key is None:
        assert problems == []
        assert warnings == [_warning(key) for key in warned]
    else:
        assert len(problems) == 1, problems
        assert problems[0].startswith(f"spec.triggers[0].metadata.{error_key}: "), problems


@pytest.mark.parametrize(
    ("table_index", "trigger_index", "name"),
    [
        pytest.param(1, 0, "s0-prometheus", id="TestPrometheusGetMetricSpecForScaling/0 s0-prometheus"),
        pytest.param(1, 1, "s1-prometheus", id="TestPrometheusGetMetricSpecForScaling/1 s1-prometheus"),
    ],
)
def test_prometheus_get_metric_spec_for_scaling(table_index: int, trigger_index: int, name: str) -> None:
    metadata = {**_PARSE_METADATA[table_index][1][0], "query": _UP}
    assert metric_name(trigger_index, ScaleTrigger.parse("prometheus", metadata)) == name


def _auth_params(what: str) -> str:
    return (
        f"the error is that the TriggerAuthentication's auth params lack {what}; gpufleet does not read "
        "TriggerAuthentications, so with an authenticationRef it cannot tell"
    )


_POD_IDENTITY = (
    "the case is about the pod identity provider of a TriggerAuthentication, which gpufleet does not "
    "read; the trigger metadata alone is the plain all-properly-formed case"
)
_AUTH = {**_BASE, "query": "up"}


def _auth(modes: str) -> dict[str, str]:
    return {**_AUTH, "authModes": modes}


# (metadata, whether the case has auth params (an authenticationRef here), Config.Validate's error or None)
_AUTH_CASES = [
    pytest.param(_auth("tls"), True, None, id="TestPrometheusScalerAuthParams/0 success TLS"),
    pytest.param(_auth("tls"), True, None, id="TestPrometheusScalerAuthParams/1 TLS, ca is optional"),
    pytest.param(
        _auth("tls"),
        True,
        "cert=<present> and key=<empty> are required",
        id="TestPrometheusScalerAuthParams/2 fail TLS, key not given",
        marks=pytest.mark.skip(reason=_auth_params("the key (they hold ca and cert)")),
    ),
    pytest.param(
        _auth("tls"),
        True,
        "cert=<empty> and key=<present> are required",
        id="TestPrometheusScalerAuthParams/3 fail TLS, cert not given",
        marks=pytest.mark.skip(reason=_auth_params("the cert (they hold ca and key)")),
    ),
    pytest.param(_auth("bearer"), True, None, id="TestPrometheusScalerAuthParams/4 success bearer default"),
    pytest.param(
        _auth("bearer"),
        False,
        "bearer token=<empty> is required when bearer auth is enabled",
        id="TestPrometheusScalerAuthParams/5 fail bearerAuth with no token",
    ),
    pytest.param(_auth("basic"), True, None, id="TestPrometheusScalerAuthParams/6 success basicAuth"),
    pytest.param(
        _auth("basic"),
        False,
        "username=<empty> is required when basic auth is enabled",
        id="TestPrometheusScalerAuthParams/7 fail basicAuth with no username",
    ),
    pytest.param(
        _auth("tls, basic"), True, None, id="TestPrometheusScalerAuthParams/8 tls, basic with all params"
    ),
    pytest.param(
        _auth("tls,basic"),
        True,
        "cert=<empty> and key=<empty> are required",
        id="TestPrometheusScalerAuthParams/9 tls,basic without cert and key",
        marks=pytest.mark.skip(reason=_auth_params("cert and key (they hold username and password)")),
    ),
    pytest.param(_auth("custom"), True, None, id="TestPrometheusScalerAuthParams/10 success custom auth"),
    pytest.param(
        _auth("custom"),
        False,
        "customAuthHeader=<empty> and customAuthValue=<empty> are required when custom auth is enabled",
        id="TestPrometheusScalerAuthParams/11 fail custom auth with no customAuthHeader",
    ),
    pytest.param(
        _auth("custom"),
        False,
        "customAuthHeader=<empty> and customAuthValue=<empty> are required when custom auth is enabled",
        id="TestPrometheusScalerAuthParams/12 fail custom auth with no customAuthValue",
    ),
    pytest.param(
        _auth("custom"),
        True,
        None,
        id="TestPrometheusScalerAuthParams/13 success custom auth with newlines in customAuthHeader",
    ),
    pytest.param(
        _auth("tls,basic"),
        True,
        "cert=<empty> and key=<empty> are required",
        id="TestPrometheusScalerAuthParams/14 tls,basic without cert and key (again)",
        marks=pytest.mark.skip(reason=_auth_params("cert and key (they hold username and password)")),
    ),
    pytest.param(
        _auth("basic"),
        True,
        "pod identity cannot be enabled with other auth types",
        id="TestPrometheusScalerAuthParams/15 pod identity and other auth modes enabled together",
        marks=pytest.mark.skip(
            reason="the error is that the TriggerAuthentication's podIdentity (azure-workload) is set beside "
            "authModes (checkAuthConfigWithPodIdentity); gpufleet does not read TriggerAuthentications"
        ),
    ),
    pytest.param(
        _AUTH,
        False,
        None,
        id="TestPrometheusScalerAuthParams/16 azure workload identity",
        marks=pytest.mark.skip(reason=_POD_IDENTITY),
    ),
    pytest.param(
        _AUTH,
        False,
        None,
        id="TestPrometheusScalerAuthParams/17 azure pod identity",
        marks=pytest.mark.skip(reason=_POD_IDENTITY),
    ),
]


@pytest.mark.parametrize(("metadata", "auth", "error"), _AUTH_CASES)
def test_prometheus_scaler_auth_params(
    tmp_path: Path, metadata: dict[str, str], auth: bool, error: str | None
) -> None:
    problems, warnings = _read(tmp_path, metadata, auth)
    if error is None:
        assert problems == []
        assert warnings == [_warning("authModes")]
    else:
        assert len(problems) == 1, problems
        assert problems[0].startswith(f"spec.triggers[0].metadata.authModes: {error}"), problems


def _not_a_sample(body: str) -> str:
    return (
        f"the body {body} is a malformed answer of Prometheus' HTTP API (a result whose value is not a "
        "[timestamp, value] pair); gpufleet's evaluator yields (labels, value) samples and has no such state"
    )


def _one(value: float) -> list[Sample]:
    return [({}, value)]


@pytest.mark.parametrize(
    ("result", "ignore_null_values", "expected"),
    [
        pytest.param([], True, 0.0, id="TestPrometheusScalerExecutePromQuery/no results"),
        pytest.param([], True, 0.0, id="TestPrometheusScalerExecutePromQuery/no values"),
        pytest.param(
            [], False, None, id="TestPrometheusScalerExecutePromQuery/no values but shouldn't ignore"
        ),
        pytest.param(
            None,
            True,
            0.0,
            id="TestPrometheusScalerExecutePromQuery/value is empty list",
            marks=pytest.mark.skip(reason=_not_a_sample('{"data":{"result":[{"value": []}]}}')),
        ),
        pytest.param(
            None,
            False,
            None,
            id="TestPrometheusScalerExecutePromQuery/value is empty list but shouldn't ignore",
            marks=pytest.mark.skip(reason=_not_a_sample('{"data":{"result":[{"value": []}]}}')),
        ),
        pytest.param(_one(2.0), True, 2.0, id="TestPrometheusScalerExecutePromQuery/valid value"),
        pytest.param(
            None,
            True,
            None,
            id="TestPrometheusScalerExecutePromQuery/not enough values",
            marks=pytest.mark.skip(reason=_not_a_sample('{"data":{"result":[{"value": ["1"]}]}}')),
        ),
        pytest.param(
            [({}, 0.0), ({}, 0.0)], True, None, id="TestPrometheusScalerExecutePromQuery/multiple results"
        ),
        pytest.param(None, True, None, id="TestPrometheusScalerExecutePromQuery/error status response"),
        pytest.param(_one(math.inf), True, 0.0, id="TestPrometheusScalerExecutePromQuery/+Inf"),
        pytest.param(
            _one(math.inf), False, None, id="TestPrometheusScalerExecutePromQuery/+Inf but shouldn't ignore"
        ),
        pytest.param(_one(-math.inf), True, 0.0, id="TestPrometheusScalerExecutePromQuery/-Inf"),
        pytest.param(
            _one(-math.inf), False, None, id="TestPrometheusScalerExecutePromQuery/-Inf but shouldn't ignore"
        ),
        pytest.param(_one(math.nan), True, 0.0, id="TestPrometheusScalerExecutePromQuery/NaN"),
        pytest.param(
            _one(math.nan), False, None, id="TestPrometheusScalerExecutePromQuery/NaN but shouldn't ignore"
        ),
    ],
)
def test_prometheus_scaler_execute_prom_query(
    result: list[Sample] | None, ignore_null_values: bool, expected: float | None
) -> None:
    scaler = PrometheusScaler("http://localhost:9090", _UP, 100.0, ignore_null_values=ignore_null_values)
    assert prometheus_value(scaler, result) == expected


_GCP = "TestPrometheusScaler_ExecutePromQuery_WithGcpNativeAuthentication"
_EMPTY_RESULT = "; its verdict on the empty result is TestPrometheusScalerExecutePromQuery/no results"
_GMP = (
    "checks the request KEDA sends to Google Managed Prometheus (the "
    "/v1/projects/.../prometheus/api/v1/query path and the OAuth2 'Authorization: Bearer' header) "
    "with credentials from {source}; gpufleet sends no request and reads no credentials"
)


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param(
            "checks the customHeaders KEDA sets on its HTTP request (X-Client-Id, X-Tenant-Id, "
            "X-Organization-Token); gpufleet sends none" + _EMPTY_RESULT,
            id="TestPrometheusScalerCustomHeaders",
        ),
        pytest.param(
            "checks the URL of KEDA's HTTP request (/api/v1/query, its time and queryParameters); gpufleet "
            "sends none" + _EMPTY_RESULT,
            id="TestPrometheusScalerExecutePromQueryParameters",
        ),
        pytest.param(
            _GMP.format(source="the GCP pod identity of a TriggerAuthentication"),
            id=_GCP + "/using GCP workload identity",
        ),
        pytest.param(
            _GMP.format(source="a TriggerAuthentication's auth params (GoogleApplicationCredentials)"),
            id=_GCP + "/with Google app credentials on auth params",
        ),
        pytest.param(
            _GMP.format(source="the container environment (credentialsFromEnv)"),
            id=_GCP + "/with Google app credentials on envs",
        ),
        pytest.param(
            _GMP.format(source="a file named in the container environment (credentialsFromEnvFile)"),
            id=_GCP + "/with Google app credentials file on auth params",
        ),
    ],
)
def test_not_expressible(reason: str) -> None:
    pytest.skip(reason)
