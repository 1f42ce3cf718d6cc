"""``advanced.scalingModifiers`` as ``gpufleet validate`` reads a ScaledObject (KEDA v2.20.2): modelled, no
longer a "not modelled" warning; a formula that does not compile is an error naming the file, the document
and the field, in expr's words (``ValidateAndCompileScalingModifiers``, ``scaledobject_webhook.go``), exit 2;
what KEDA accepts and then does not do is a warning (an ``activationTarget`` that is not a number:
``getScaledObjectState``; a fallback with a non-integer formula target: ``HasValidFallback``).
"""

from __future__ import annotations

from pathlib import Path

from kube_manifests import problems, warnings
from typer.testing import CliRunner

from gpufleet.cli import app


def _manifest(field: str, formula: str = "queue * 2", fallback: str = "") -> str:
    target = "" if field.startswith("target:") else "      target: '2'\n"
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - {{name: server, image: server:1, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: web}}
spec:
  scaleTargetRef: {{name: web}}
  {fallback}
  advanced:
    scalingModifiers:
      formula: '{formula}'
{target}      {field}
  triggers:
  - type: redis
    name: queue
    metadata: {{address: 'redis:6379', listName: jobs}}
"""


def test_scaling_modifiers_load_without_a_not_modelled_warning(tmp_path: Path) -> None:
    assert warnings(tmp_path, _manifest("activationTarget: '1'")) == []


def test_a_formula_that_does_not_compile_is_an_error_naming_the_field(tmp_path: Path) -> None:
    [line] = problems(tmp_path, _manifest("metricType: Value", formula="queue +"))
    assert line == (
        "scenario.yaml: document 2 (ScaledObject/default/web): spec.advanced.scalingModifiers.formula: "
        'error validating formula in ScalingModifiers: unexpected token Operator(")") (1:14) in '
        "'float(queue +)', as KEDA compiles it"
    )


def test_validate_exits_2_on_a_bad_formula_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "so.yaml"
    path.write_text(_manifest("metricType: Value", formula="queue ? 1 : 2"))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert (
        "spec.advanced.scalingModifiers.formula: error validating formula in ScalingModifiers: "
        in result.output
    )
    assert "non-bool expression (type float64) used as condition" in result.output
    assert "Traceback" not in result.output


def test_an_activation_target_that_is_not_a_number_is_a_warning(tmp_path: Path) -> None:
    [warning] = warnings(tmp_path, _manifest("activationTarget: half"))
    assert "spec.advanced.scalingModifiers.activationTarget: 'half' is not a number" in warning


def test_a_fallback_with_a_non_integer_formula_target_is_a_warning(tmp_path: Path) -> None:
    fallback = "fallback: {failureThreshold: 1, replicas: 4}"
    [warning] = warnings(tmp_path, _manifest("target: '2.5'", fallback=fallback))
    assert "spec.fallback: the formula's target '2.5' is not a positive integer" in warning
