"""Node affinity keys and values as the API server validates them (Kubernetes 1.34.10
``ValidateNodeSelectorRequirement``): a key is a label name in every term; a value is a label value
in a required term (an error) but may be anything in a preferred term, which kube-scheduler then
cannot parse (``NewPreferredSchedulingTerms`` fails its PreScore): a warning saying so."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, pod, problems, warnings

LABEL = "scenario.yaml: document 1 (Pod/default/p)"
AFFINITY = "spec.affinity.nodeAffinity"
PREFERRED = f"{AFFINITY}.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0]"
REQUIRED = (
    f"{AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
)


def affinity(kind: str, expression: str) -> str:
    if kind == "required":
        body = "requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n"
        body += f"      - matchExpressions: [{expression}]"
    else:
        body = "preferredDuringSchedulingIgnoredDuringExecution:\n    - weight: 1\n      preference:\n"
        body += f"        matchExpressions: [{expression}]"
    return f"affinity:\n  nodeAffinity:\n    {body}\n"


def test_an_invalid_key_is_refused_in_any_term(tmp_path: Path) -> None:
    lines = problems(tmp_path, pod(affinity("preferred", "{key: 'bad key', operator: Exists}")))
    assert len(lines) == 1 and lines[0].startswith(
        f'{LABEL}: {PREFERRED}.key: Invalid value: "bad key": name part must consist of alphanumeric '
    )


def test_an_invalid_value_in_a_required_term_is_refused(tmp_path: Path) -> None:
    lines = problems(tmp_path, pod(affinity("required", "{key: foo, operator: NotIn, values: ['a b']}")))
    assert len(lines) == 1 and lines[0].startswith(
        f'{LABEL}: {REQUIRED}.values[0]: Invalid value: "a b": a valid label must be an empty string '
    )


def test_an_invalid_value_in_a_preferred_term_is_a_warning_that_says_what_kube_scheduler_does(
    tmp_path: Path,
) -> None:
    text = pod(affinity("preferred", "{key: foo, operator: In, values: ['a b']}"))
    (line,) = warnings(tmp_path, text)
    assert line.startswith(f'{LABEL}: {PREFERRED}.values[0]: Invalid value: "a b": a valid label must')
    assert line.endswith(
        "kube-scheduler cannot parse this preferred term: its PreScore fails the pod's scheduling attempt "
        "whenever more than one node fits; not modelled, gpufleet scores the node without the term"
    )
    (loaded,) = load(tmp_path, text).pods
    assert loaded.pod.preferred_terms[0].term.parse_errors
