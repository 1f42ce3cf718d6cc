"""A small read-only client of Prometheus' HTTP API (``/api/v1/query`` and ``/api/v1/query_range``; the
response format of https://prometheus.io/docs/prometheus/latest/querying/api/), with timeouts,
retries with exponential backoff for connection failures, 429 and 5xx (as the Kubernetes client
does, ``gpufleet.live.client.RETRYABLE_STATUS``), and every failure as one line naming the URL: an answer
not in the API's format (a proxy's page, a series without its labels, a point that is not
``[time, "value"]`` or not finite) included.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from gpufleet.live.client import RETRYABLE_STATUS
from gpufleet.model.problem_lines import one_line

#: One sample of an instant vector: its labels and its value.
Sample = tuple[dict[str, str], float]
#: One point of a series: its time (Unix seconds) and its value.
Point = tuple[float, float]


class PrometheusError(Exception):
    """Prometheus could not be reached or refused a query, in one line for the user."""


@dataclass(frozen=True)
class PrometheusAPI:
    url: str
    timeout_s: float = 60.0
    attempts: int = 3
    backoff_s: float = 0.25

    def __post_init__(self) -> None:
        parsed = urllib.parse.urlparse(self.url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise PrometheusError(f"--prometheus: not an http(s) URL: {self.url!r}")

    def query(self, expr: str, at: float) -> list[Sample]:
        """The instant vector ``expr`` evaluates to at ``at`` (Unix seconds)."""
        body = self._post("/api/v1/query", {"query": expr, "time": f"{at:.3f}"})
        return [(metric, points[0][1]) for metric, points in self._result(expr, body, "vector")]

    def last_seen(self, expr: str, start: float, end: float, step: float) -> list[Sample]:
        """When each series of ``expr`` last had a value between ``start`` and ``end``, to the ``step``:
        the time of its last point in a range query (``/api/v1/query_range``)."""
        form = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
        body = self._post("/api/v1/query_range", form)
        return [(metric, points[-1][0]) for metric, points in self._result(expr, body, "matrix") if points]

    def _result(self, expr: str, body: dict[str, Any], kind: str) -> list[tuple[dict[str, str], list[Point]]]:
        """Each series of an answer's ``data.result`` (of ``resultType`` ``kind``) with its points, checked
        against the API's format: ``metric`` maps label names to strings, a point is ``[time, "value"]``,
        both finite (the series gpufleet reads are times, counts and sizes: NaN or Inf is not one of them).
        """
        data = body.get("data")
        if (
            not isinstance(data, dict)
            or data.get("resultType") != kind
            or not isinstance(data.get("result"), list)
        ):
            expected = "an instant vector" if kind == "vector" else "a range vector"
            raise PrometheusError(self._line(f"{expr}: expected {expected}, got {str(body)[:200]}"))
        found = []
        for series in data["result"]:
            metric = series.get("metric") if isinstance(series, dict) else None
            raw = series.get("value" if kind == "vector" else "values") if isinstance(series, dict) else None
            points = [raw] if kind == "vector" else raw
            if (
                not isinstance(metric, dict)
                or not all(isinstance(v, str) for v in metric.values())
                or not isinstance(points, list)
            ):
                raise PrometheusError(
                    self._line(f"{expr}: not a series of the API's format: {str(series)[:200]}")
                )
            found.append((metric, [self._point(expr, point) for point in points]))
        return found

    def _point(self, expr: str, point: object) -> Point:
        try:
            if not isinstance(point, list) or len(point) != 2 or not isinstance(point[1], str):
                raise ValueError
            at, value = float(point[0]), float(point[1])
        except (TypeError, ValueError, OverflowError):
            raise PrometheusError(
                self._line(f'{expr}: not a [time, "value"] point: {str(point)[:200]}')
            ) from None
        if not (math.isfinite(at) and math.isfinite(value)):
            raise PrometheusError(self._line(f"{expr}: a point that is not finite: {str(point)[:200]}"))
        return at, value

    def _line(self, problem: str) -> str:
        return one_line(f"{self.url}: {problem}")

    def _post(self, path: str, form: dict[str, str]) -> dict[str, Any]:
        endpoint = self.url.rstrip("/") + path
        request = urllib.request.Request(endpoint, data=urllib.parse.urlencode(form).encode(), method="POST")
        delay, reason = self.backoff_s, ""
        for attempt in range(1, self.attempts + 1):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    return self._decode(endpoint, response.read())
            except urllib.error.HTTPError as exc:
                if exc.code not in RETRYABLE_STATUS:
                    raise PrometheusError(self._refusal(endpoint, form, exc)) from None
                reason = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError) as exc:
                cause = getattr(exc, "reason", exc)
                reason = f"cannot connect: {getattr(cause, 'strerror', None) or cause}"
            if attempt < self.attempts:
                time.sleep(delay)
                delay *= 2
        raise PrometheusError(f"--prometheus {self.url}: {reason} (after {self.attempts} attempts)")

    @staticmethod
    def _decode(endpoint: str, raw: bytes) -> dict[str, Any]:
        try:
            body = json.loads(raw)
        except ValueError:
            raise PrometheusError(f"{endpoint}: not a Prometheus HTTP API (the answer is not JSON)") from None
        if not isinstance(body, dict) or body.get("status") != "success":
            raise PrometheusError(
                one_line(f"{endpoint}: not a Prometheus HTTP API answer: {str(body)[:200]}")
            )
        return body

    @staticmethod
    def _refusal(endpoint: str, form: dict[str, str], exc: urllib.error.HTTPError) -> str:
        try:
            body = json.loads(exc.read())
            detail = f"{body.get('errorType')}: {body.get('error')}"
        except (ValueError, AttributeError):
            detail = "not a Prometheus HTTP API (is the URL Prometheus' base URL?)"
        return one_line(f"{endpoint}: HTTP {exc.code}: {detail} (query: {form.get('query')})")
