"""Kueue's admission checks with its ProvisioningRequest admission check controller, through the simulator
(``gpufleet.control.kueue_admission_checks`` driving cluster-autoscaler's ProvisioningRequests in
``gpufleet.control.cluster_autoscaler_loop``), on ``examples/kueue/provisioning-admission-check.yaml``: a
4-pod Job of 8-GPU pods in a ClusterQueue whose AdmissionCheck asks cluster-autoscaler, through a
ProvisioningRequest, for the nodes of an empty pool.

Rules from ``kubernetes-sigs/kueue``: ``pkg/controller/admissionchecks/provisioning/controller.go``
(``syncOwnedProvisionRequest``, ``syncCheckStates``, ``createPodTemplate``, ``podSetUpdates``),
``provisioning.go`` (``ProvisioningRequestName``), ``pkg/workload/admissionchecks.go``
(``SyncAdmittedCondition``, ``UpdateAdmissionCheckRequeueState``), ``pkg/workload/workload.go``
(``AdmissionChecksForWorkload``), ``pkg/controller/core/workload_controller.go``
(``reconcileCheckBasedEviction``, ``buildAdmissionChecksMessage``) and ``pkg/workload/evict/evict.go``
(``resetChecksOnEviction``); ``site/content/en/docs/admission-check-controllers/provisioning.md``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from conftest import pods_by_name, run_simulation, simulated, simulated_text
from gpufleet.kube.problems import ScenarioError
from gpufleet.model.kueue import CHECK_RETRY, RetryStrategy
from gpufleet.scheduling.kueue.admission_checks import (
    CLASS_ANNOTATION,
    CONSUME_ANNOTATION,
    CheckState,
    checks_message,
)

EXAMPLE = Path(__file__).parents[2] / "examples" / "kueue" / "provisioning-admission-check.yaml"
ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
FAILING = (
    (ATOMIC, 'check-capacity.autoscaling.x-k8s.io\n  parameters: {noRetry: "true"}'),
    ("backoffLimitCount: 3", "backoffLimitCount: 2"),
)
NO_CAPACITY = "CA could not find requested capacity"
ACCEPTED = "ProvisioningRequest is accepted by ClusterAutoscaler"
FOUND = "Capacity is found in the cluster"
EVICTED = (
    f'Evicted due to AdmissionCheck in Retry state: "gpu-capacity" (Retrying after failure: {NO_CAPACITY})'
)


def example_text(edits: tuple[tuple[str, str], ...] = ()) -> str:
    text = EXAMPLE.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    return text


def workload(summary: dict[str, Any], key: str = "Job/ml/trainer") -> dict[str, Any]:
    return next(w for w in summary["kueue"]["workloads"] if w["name"] == key)


def request_events(summary: dict[str, Any]) -> list[tuple[float, str, str]]:
    return [
        (e["t_s"], e["pods"][0].split("/", 1)[1], e["reason"])
        for e in summary["autoscaler_events"]
        if e["kind"] == "provisioning-request"
    ]


def test_a_ready_provisioning_check_admits_the_workload_and_its_pods_consume_the_request() -> None:
    """``SyncAdmittedCondition``: quota reserved at 5 s, Admitted only when the check is Ready (10 s: the
    request Provisioned by the scale-up of the loop after it was created); the pods carry the request and its
    class (``podSetUpdates``), so they trigger no scale-up of their own, and run on the booked nodes (GPUs
    ready at 195 s)."""
    summary = simulated([EXAMPLE])
    wl = workload(summary)
    assert (wl["quota_reservations"], wl["admissions"], wl["evictions"]) == ([5.0], [10.0], [])
    (check,) = wl["admission_checks"]
    assert check["history"] == [[5.0, "Pending", ""], [10.0, "Ready", "Capacity is found in the cluster"]]
    assert check["provisioning_requests"] == ["job-trainer-gpu-capacity-1"]
    assert [e["reason"] for e in wl["events"]] == [
        "ProvisioningRequestCreated",
        "AdmissionCheckUpdated",
        "Admitted",
    ]
    assert wl["events"][1]["message"] == (
        "Admission check gpu-capacity updated state from Pending to Ready with message: "
        "Capacity is found in the cluster"
    )
    assert request_events(summary)[:3] == [
        (5.0, "job-trainer-gpu-capacity-1", "created"),
        (10.0, "job-trainer-gpu-capacity-1", f"Accepted=True Accepted: {ACCEPTED}"),
        (10.0, "job-trainer-gpu-capacity-1", f"Provisioned=True CapacityIsProvisioned: {FOUND}"),
    ]  # fmt: skip
    # the BookingExpired of an admitted workload's request changes nothing (syncCheckStates)
    assert (620.0, "job-trainer-gpu-capacity-1", "BookingExpired=True CapacityReservationTimeExpired: "
            "Capacity reservation time is expired") in request_events(summary)  # fmt: skip
    ups = [e for e in summary["autoscaler_events"] if e["kind"] == "scale-up"]
    assert [(e["t_s"], len(e["nodes"])) for e in ups] == [(10.0, 4)]
    pods = pods_by_name(summary)
    assert {(p["bound_s"], p["working_s"], p["stages"]["queueing"]) for p in pods.values()} == {
        (195.0, 195.0, 5.0)
    }
    assert summary["kueue"]["cluster_queues"]["team"]["admission_checks"] == [
        {"name": "gpu-capacity", "on_flavors": ["h100"]}
    ]


def test_admitted_pods_get_the_consume_and_class_annotations() -> None:
    """``podSetUpdates``: each pod set's pods get ``autoscaling.x-k8s.io/consume-provisioning-request`` and
    the class annotation, with the flavor's node labels."""
    sim = run_simulation([EXAMPLE], duration_s=60.0)
    pod = sim.records["ml/trainer-0"].pod
    assert pod.annotations[CONSUME_ANNOTATION] == "job-trainer-gpu-capacity-1"
    assert pod.annotations[CLASS_ANNOTATION] == ATOMIC
    assert pod.node_selector["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"


def test_the_created_provisioning_request_is_named_and_templated_as_upstream() -> None:
    """``ProvisioningRequestName`` (``<workload>-<check>-<attempt>``; the workload ``job-trainer``), one
    PodTemplate ``ppt-<request>-<podset>`` per pod set with its admitted count, the set's template with the
    flavor's node labels (``createPodTemplate``), the config's class and parameters."""
    sim = run_simulation([EXAMPLE], duration_s=6.0)
    (request,) = sim.autoscaler.provisioning.requests
    assert (request.key, request.class_name, dict(request.parameters)) == (
        "ml/job-trainer-gpu-capacity-1",
        ATOMIC,
        {},
    )
    (pod_set,) = request.pod_sets
    assert (pod_set.template, pod_set.count) == ("ppt-job-trainer-gpu-capacity-1-main", 4)
    assert pod_set.pod.node_selector == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert pod_set.pod.requests["nvidia.com/gpu"] == 8
    message = sim.records["ml/trainer-0"].message
    assert message == (
        'Quota reserved in ClusterQueue team; The workload has not all checks ready: "gpu-capacity" Pending'
    )


def test_a_failed_request_retries_with_backoff_then_rejects_and_deactivates() -> None:
    """``syncCheckStates``: a ``Failed`` request makes the check Retry (``Retrying after failure: ...``) while
    its attempt is at most ``backoffLimitCount`` (2); ``reconcileCheckBasedEviction`` evicts the workload
    (reason AdmissionCheck), it releases its quota, its request is deleted and it is queued again after the
    check's ``requeueAfterSeconds`` (60 s, then 120 s: ``UpdateAdmissionCheckRequeueState``), a new request
    ``-2``, ``-3`` each time (``retryCount + 1``); the third failure is past the limit: Rejected, the workload
    deactivated (``Deactivated``, underlying cause ``AdmissionCheck``) and never admitted."""
    summary = simulated_text_at(example_text(FAILING), "600s")
    wl = workload(summary)
    assert (wl["quota_reservations"], wl["admissions"]) == ([5.0, 70.0, 190.0], [])
    assert [(e["t_s"], e["reason"], e["underlying_cause"]) for e in wl["evictions"]] == [
        (10.0, "AdmissionCheck", None),
        (70.0, "AdmissionCheck", None),
        (190.0, "Deactivated", "AdmissionCheck"),
    ]
    (check,) = wl["admission_checks"]
    assert check["provisioning_requests"] == [f"job-trainer-gpu-capacity-{n}" for n in (1, 2, 3)]
    assert [row[:2] for row in check["history"]] == [
        [5.0, "Pending"],
        [10.0, "Retry"],
        [10.0, "Pending"],
        [70.0, "Retry"],
        [70.0, "Pending"],
        [190.0, "Rejected"],
        [190.0, "Pending"],
    ]
    assert check["history"][1][2] == f"Retrying after failure: {NO_CAPACITY}"
    assert check["history"][2][2] == "Reset to Pending after eviction. Previously: Retry"
    rejected = f'AdmissionCheck in Rejected state: "gpu-capacity" ({NO_CAPACITY})'
    assert wl["active"] is False and wl["message"] == f"The workload is deactivated due to {rejected}"
    assert wl["events"][-1] == {
        "t_s": 190.0,
        "reason": "AdmissionCheckRejected",
        "message": f"Deactivated due to {rejected}",
    }
    assert {"t_s": 10.0, "reason": "EvictedDueToAdmissionCheck", "message": EVICTED} in wl["events"]
    # the quota goes back at each eviction (at 70 s and 190 s the request fails in the loop of the instant it
    # was created: the usage steps keep a time's last value); each request is deleted with its eviction
    steps = summary["kueue"]["cluster_queues"]["team"]["usage"]["h100/nvidia.com/gpu"]["steps"]
    assert steps == [[0.0, 0.0], [5.0, 32.0], [10.0, 0.0], [70.0, 0.0], [190.0, 0.0]]
    assert [e for e in request_events(summary) if e[2] == "deleted"] == [
        (t, f"job-trainer-gpu-capacity-{n}", "deleted") for t, n in ((10.0, 1), (70.0, 2), (190.0, 3))
    ]
    assert summary["kueue"]["cluster_queues"]["team"]["evicted"] == {"AdmissionCheck": 2, "Deactivated": 1}
    assert not [e for e in summary["autoscaler_events"] if e["kind"] == "scale-up"]


def test_a_workload_waiting_out_its_check_backoff_says_so() -> None:
    """Between the eviction (10 s) and the end of the check's backoff (70 s) the gated pods say why."""
    summary = simulated_text_at(example_text(FAILING), "30s")
    message = f"{EVICTED}; waiting for the requeue backoff until 70s"
    assert workload(summary)["message"] == message
    assert pods_by_name(summary)["trainer-0"]["message"] == message
    assert workload(summary)["requeue_state"] == {"count": 0, "requeue_at_s": 70.0}


def test_a_check_of_another_controller_is_reported_not_modelled_and_never_admits() -> None:
    """Only ``kueue.x-k8s.io/provisioning-request`` is modelled: a check of another controller is a warning
    when read, and the workload keeps its reservation with the check Pending, never admitted."""
    text = example_text(
        (("controllerName: kueue.x-k8s.io/provisioning-request", "controllerName: example.com/mine"),)
    )
    summary = simulated_text_at(text, "300s")
    assert any(
        'spec.controllerName: controller "example.com/mine" is not modelled' in w for w in summary["warnings"]
    )
    wl = workload(summary)
    assert (wl["quota_reservations"], wl["admissions"]) == ([5.0], [])
    assert wl["message"] == (
        'Quota reserved in ClusterQueue team; The workload has not all checks ready: "gpu-capacity" Pending '
        '(the check\'s controller "example.com/mine" is not modelled by gpufleet: the check stays Pending)'
    )
    (check,) = wl["admission_checks"]
    assert check["state"] == "Pending"
    assert check["message"] == (
        'the check\'s controller "example.com/mine" is not modelled by gpufleet: the check stays Pending'
    )
    assert pods_by_name(summary)["trainer-0"]["phase"] == "Pending"


def test_on_flavors_applies_the_check_only_to_workloads_assigned_that_flavor() -> None:
    """``AdmissionChecksForWorkload`` with an admission: the check's ``onFlavors`` (here ``spot``) meet the
    flavors assigned. The first Job gets ``h100`` (quota 32) and is admitted at once, with no check and no
    request; the second no longer fits there and gets ``spot``, whose check asks for a request."""
    text = example_text(
        (
            ("      - {name: nvidia.com/gpu, nominalQuota: 32}\n",
             "      - {name: nvidia.com/gpu, nominalQuota: 32}\n    - name: spot\n      resources:\n"
             "      - {name: cpu, nominalQuota: 384}\n      - {name: memory, nominalQuota: 3Ti}\n"
             "      - {name: nvidia.com/gpu, nominalQuota: 32}\n"),
            ("      onFlavors: [h100]", "      onFlavors: [spot]"),
        )
    )  # fmt: skip
    spot = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: spot}\n"
    second = text[text.index("apiVersion: batch/v1") :].replace("name: trainer", "name: second")
    summary = simulated_text_at(text + spot + "---\n" + second, "60s")
    first, other = workload(summary), workload(summary, "Job/ml/second")
    assert (first["admissions"], "admission_checks" in first) == ([5.0], False)
    assert (other["quota_reservations"], other["admissions"]) == ([5.0], [10.0])
    assert other["admission_checks"][0]["provisioning_requests"] == ["job-second-gpu-capacity-1"]


def test_a_queue_naming_a_missing_check_is_inactive_and_admits_nothing() -> None:
    """A ClusterQueue naming an AdmissionCheck that does not exist is inactive (``AdmissionCheckNotFound``):
    a warning, and its workloads wait."""
    text = example_text((("    - name: gpu-capacity\n", "    - name: missing\n"),))
    summary = simulated_text_at(text, "60s")
    assert any('no AdmissionCheck "missing": the ClusterQueue is inactive' in w for w in summary["warnings"])
    wl = workload(summary)
    assert (wl["admissions"], wl["message"]) == ([], "ClusterQueue team is inactive")


def test_retry_strategy_defaults_and_strict_decoding(tmp_path: Path) -> None:
    """``ProvisioningRequestRetryStrategy``'s CRD defaults (3, 60 s, 1800 s); a misspelt field is an error."""
    assert RetryStrategy() == RetryStrategy(3, 60.0, 1800.0)
    text = example_text((("  managedResources: [nvidia.com/gpu]", "  managedResource: [nvidia.com/gpu]"),))
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    try:
        simulated([path])
    except ScenarioError as exc:
        assert "document 2 (ProvisioningRequestConfig/atomic): spec.managedResource" in str(exc)
    else:
        raise AssertionError("a misspelt field is an error")


def simulated_text_at(text: str, duration: str) -> dict[str, Any]:
    """The scenario text run for ``duration`` (a Simulation document put first)."""
    header = (
        "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: t}\n"
        f"spec: {{duration: {duration}}}\n---\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        return simulated_text(Path(tmp), header + text)


def test_the_admission_checks_message_names_the_checks_sorted_by_name() -> None:
    """``buildAdmissionChecksMessage`` sorts the checks by name before naming them, whatever order the
    workload's status lists them in."""
    checks = [CheckState("zeta", CHECK_RETRY, "budget exhausted"), CheckState("alpha", CHECK_RETRY)]
    assert checks_message(checks, CHECK_RETRY) == (
        'AdmissionChecks in Retry state: "alpha"; "zeta" (budget exhausted)'
    )


def test_the_workload_controller_says_admitted_with_the_wait_since_reservation() -> None:
    """``Reconcile``: when its last check turns Ready, the workload controller admits the workload and records
    the event ``Admitted`` -- ``Admitted by ClusterQueue <queue>, wait time since reservation was <s>s``
    (quota reserved at 5 s, admitted at 10 s)."""
    wl = workload(simulated([EXAMPLE]))
    assert wl["events"][-1] == {
        "t_s": 10.0,
        "reason": "Admitted",
        "message": "Admitted by ClusterQueue team, wait time since reservation was 5s",
    }
