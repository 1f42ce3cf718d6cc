"""A prometheus trigger's connection keys are parsed as KEDA v2.20.2 parses them, then ignored.

Upstream: ``kedacore/keda`` v2.20.2, ``pkg/scalers/prometheus_scaler.go`` (``prometheusMetadata``:
``customHeaders``/``queryParameters`` maps, ``unsafeSsl`` bool, ``timeout`` duration),
``pkg/scalers/authentication/authentication_types.go`` (``authModes``: ``enum`` and
``exclusiveSet``; ``Config.Validate``: each mode's credentials, auth params that only a
TriggerAuthentication gives; ``APIKeyAuth.Method``'s enum) and
``pkg/scalers/scalersconfig/typed_config.go`` (``setConfigValueMap``,
``setConfigValueHelper`` for ``time.Duration``). Before, gpufleet accepted any value for these
keys, so a ScaledObject KEDA refuses loaded. The same typed config trims every metadata value
(``configParamValue``) and reads numbers with ``json.Unmarshal``; before, gpufleet refused a padded
``" 10 "`` that KEDA reads as 10 and accepted a ``".5"`` that KEDA refuses.
"""

from __future__ import annotations

import pytest

from gpufleet.model.keda import KedaSpecError, PrometheusScaler, ScaleTrigger, parse_metadata_duration_s

_BASE = {"serverAddress": "http://prom:9090", "query": "sum(queue_length)", "threshold": "10"}


def prometheus(**metadata: str) -> ScaleTrigger:
    return ScaleTrigger.parse("prometheus", {**_BASE, **metadata})


@pytest.mark.parametrize("key", ["customHeaders", "queryParameters"])
@pytest.mark.parametrize("value", ["key1=value1,key2", "a=b=c", "k=v,"])
def test_header_and_parameter_maps_need_key_equals_value_elements(key: str, value: str) -> None:
    # setConfigValueMap: each comma-separated element split on "=" must give exactly two parts.
    with pytest.raises(KedaSpecError, match=rf"^metadata\.{key}: expected format key=value, got "):
        prometheus(**{key: value})


@pytest.mark.parametrize("key", ["customHeaders", "queryParameters"])
def test_header_and_parameter_maps_accept_trimmed_pairs_and_empty_values(key: str) -> None:
    assert prometheus(**{key: " X-Org = a , tenant=b"}).type == "prometheus"
    assert prometheus(**{key: "k="}).type == "prometheus"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1000", 1.0), ("30s", 30.0), ("1.5m", 90.0), ("1h30m", 5400.0), ("250ms", 0.25), ("0", 0.0)],
)
def test_timeout_is_a_go_duration_or_a_number_of_milliseconds(text: str, seconds: float) -> None:
    assert parse_metadata_duration_s({"timeout": text}, "timeout") == pytest.approx(seconds)
    assert prometheus(timeout=text).type == "prometheus"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-1", "duration cannot be negative: -1 milliseconds"),
        ("-5s", "duration cannot be negative"),
        ("a", "unable to parse duration value 'a'"),
        ("1.5", "unable to parse duration value '1.5'"),
        ("10 s", "unable to parse duration value"),
    ],
)
def test_timeout_that_is_negative_or_not_a_duration_is_refused(text: str, message: str) -> None:
    with pytest.raises(KedaSpecError, match=rf"^metadata\.timeout: {message}"):
        prometheus(timeout=text)


def test_unsafe_ssl_must_be_a_boolean() -> None:
    assert prometheus(unsafeSsl="true").type == "prometheus"
    with pytest.raises(KedaSpecError, match=r"^metadata\.unsafeSsl: 'yes' is not a boolean"):
        prometheus(unsafeSsl="yes")


@pytest.mark.parametrize("modes", ["tls", "bearer", "tls, basic", "custom,tls", "apiKey", "oauth"])
def test_known_auth_modes_are_accepted(modes: str) -> None:
    metadata = {**_BASE, "authModes": modes}
    assert ScaleTrigger.parse("prometheus", metadata, authentication_ref=True).type == "prometheus"


@pytest.mark.parametrize(
    ("modes", "message"),
    [
        ("bearer", "bearer token=<empty> is required when bearer auth is enabled"),
        ("tls, basic", "username=<empty> is required when basic auth is enabled"),
        ("custom,tls", "cert=<empty> and key=<empty> are required when tls auth is enabled"),
        ("oauth", "oauthTokenURI=<empty> and clientID=<empty> are required when oauth is enabled"),
        ("custom", "customAuthHeader=<empty> and customAuthValue=<empty> are required"),
        ("apiKey", "apiKey is required when apiKey auth is enabled"),
    ],
)
def test_auth_modes_without_a_trigger_authentication_lack_their_credentials(modes: str, message: str) -> None:
    # authentication.Config.Validate: the credentials are auth params (apiKey may be metadata), which
    # only a TriggerAuthentication (authenticationRef) gives.
    with pytest.raises(KedaSpecError, match=rf"^metadata\.authModes: {message}"):
        prometheus(authModes=modes)
    assert prometheus(authModes="apiKey", apiKey="k", method="query").type == "prometheus"


def test_api_key_method_is_header_or_query() -> None:
    # authentication.APIKeyAuth.Method: `default=header, enum=header;query`.
    with pytest.raises(
        KedaSpecError, match=r'^metadata\.method: parameter "method" value "body" must be one of'
    ):
        prometheus(method="body")


@pytest.mark.parametrize(
    ("modes", "message"),
    [
        ("kerberos", "'kerberos': must be one of apiKey, basic, tls, bearer, custom, oauth"),
        ("tls,", "'': must be one of"),
        ("basic,bearer", "basic, bearer: only one of bearer, basic, oauth is allowed"),
    ],
)
def test_unknown_or_conflicting_auth_modes_are_refused(modes: str, message: str) -> None:
    with pytest.raises(KedaSpecError, match=rf"^metadata\.authModes: {message}"):
        prometheus(authModes=modes)


def test_metadata_values_are_trimmed_and_blank_counts_as_absent() -> None:
    # typed_config.go configParamValue: strings.TrimSpace, then an empty value is not there.
    trigger = ScaleTrigger.parse(
        "prometheus",
        {"serverAddress": " http://prom:9090 ", "query": " sum(queue_length) ", "threshold": " 10 "},
    )
    assert trigger.scaler == PrometheusScaler("http://prom:9090", "sum(queue_length)", 10.0)
    assert (
        ScaleTrigger.parse(
            "redis", {"address": "r:6379", "listName": "jobs", "listLength": " 3 "}
        ).target_value
        == 3.0
    )
    with pytest.raises(KedaSpecError, match=r"^metadata\.serverAddress: required$"):
        prometheus(serverAddress="   ")
    assert prometheus(activationThreshold="  ", ignoreNullValues=" false ").scaler == PrometheusScaler(
        "http://prom:9090", "sum(queue_length)", 10.0, 0.0, False
    )


@pytest.mark.parametrize("value", [".5", "+5", "05", "5.", "0x10", "1e400"])
def test_threshold_is_a_json_number(value: str) -> None:
    # setConfigValueHelper: a float64 field is json.Unmarshal'd, so only JSON's number grammar parses.
    with pytest.raises(KedaSpecError, match=r"^metadata\.threshold: .* is not a finite decimal number"):
        prometheus(threshold=value)


@pytest.mark.parametrize(
    ("value", "threshold"), [("0.5", 0.5), ("1e3", 1000.0), ("100.50", 100.5), ("2E-1", 0.2)]
)
def test_threshold_json_numbers_parse(value: str, threshold: float) -> None:
    assert prometheus(threshold=value).target_value == pytest.approx(threshold)
