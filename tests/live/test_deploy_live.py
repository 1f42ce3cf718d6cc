"""``deploy/`` on the real control plane: its manifests pass the API server's own schema and admission
(``kubectl apply --dry-run=server``) and gpufleet's schema check, and its RBAC is least-privilege for
real: with a token of its ServiceAccount alone, ``gpufleet scheduler`` holds its Lease, binds a gang,
annotates a fractional-GPU pod, preempts, and reports a pod that fits nowhere, while every right one
step beyond ``rbac.yaml`` is refused (SelfSubjectAccessReview, what ``kubectl auth can-i`` asks)."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml
from e2e.controlplane import ControlPlaneError
from e2e.gpufleet_scheduler import SchedulerProcess, pod_group_crd

from conftest import ROOT, kwok_node, wait_until
from gpufleet.cli import load_scheduler_config
from gpufleet.kube import schema_check
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.model.node import Taint

DEPLOY = ROOT / "deploy"
SA, SYSTEM = "gpufleet-scheduler", "kube-system"
LEASE = "gpufleet-scheduler"
NS = "live-deploy"
PSS_NS = "live-deploy-restricted"
NODES = ("deploy-gpu-a", "deploy-gpu-b")
LABEL = {"gpufleet-test": NS}
#: a node apart for preemption: only the pods that select it go there
PREEMPT_NODE, PREEMPT_LABEL = "deploy-gpu-c", {"gpufleet-test": f"{NS}-preempt"}
HIGH = "live-deploy-high"
TAINT = Taint("gpufleet-test", NS, "NoSchedule")
#: this test's profile: the deployed one renamed, so no other test's pod is ever its to schedule
SCHEDULER = "live-deploy-scheduler"
PODGROUPS = "scheduling.x-k8s.io"
LEASES = "coordination.k8s.io"


def _documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def _one(name: str, kind: str) -> dict[str, Any]:
    (found,) = (d for d in _documents(name) if d["kind"] == kind)
    return found


def _api(cp: Any, method: str, path: str, token: str, body: object = None) -> tuple[int, dict[str, Any]]:
    """One request to the control plane as the bearer of ``token``: the status and the JSON answer."""
    context = ssl.create_default_context(cafile=str(cp.credentials.ca_cert))
    request = urllib.request.Request(
        cp.server + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return int(response.status), dict(json.loads(response.read()))
    except urllib.error.HTTPError as exc:
        text = exc.read().decode(errors="replace")
        return int(exc.code), dict(json.loads(text)) if text.startswith("{") else {"message": text}


def _template_pod(namespace: str) -> dict[str, Any]:
    """The pod the Deployment's ReplicaSet would make (its template), named for a dry run."""
    template = _one("deployment.yaml", "Deployment")["spec"]["template"]
    metadata = {**template["metadata"], "name": "gpufleet-scheduler-dry-run", "namespace": namespace}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}


def _dry_run_create(cp: Any, doc: dict[str, Any]) -> str:
    return str(cp.kubectl("create", "--dry-run=server", "-o", "name", "-f", "-", stdin=json.dumps(doc)))


# -- the manifests ------------------------------------------------------------------------------
def test_every_manifest_passes_gpufleets_schema_check_and_names_the_others_consistently(
    tmp_path: Path,
) -> None:
    """Each document of ``deploy/*.yaml`` is a standard kind that the strict 1.34 schemas accept
    (``kubectl --validate=strict``); the checker is not vacuous on them (a misspelt field is caught).
    The files agree with each other: the Deployment runs as the ServiceAccount and mounts the
    ConfigMap where ``--config`` reads it; the configuration loads as ``gpufleet scheduler`` loads it,
    and its Lease is the one the Role grants, in the Role's namespace."""
    kinds = schema_check.standard_kinds()
    checked = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        for number, doc in enumerate(_documents(path.name), 1):
            group, _, version = doc["apiVersion"].rpartition("/")
            definition = kinds[(group, version, doc["kind"])]
            problems = Problems()
            schema_check.check(doc, definition, Reporter(problems, Location(path.name, 0, number)))
            assert Problems.lines(problems.errors) == []
            checked.append(f"{doc['kind']}/{doc['metadata']['name']}")
    assert sorted(checked) == sorted(
        [
            "ServiceAccount/gpufleet-scheduler",
            "ClusterRole/gpufleet-scheduler",
            "ClusterRoleBinding/gpufleet-scheduler",
            "Role/gpufleet-scheduler-leader-election",
            "RoleBinding/gpufleet-scheduler-leader-election",
            "ConfigMap/gpufleet-scheduler-config",
            "Deployment/gpufleet-scheduler",
        ]
    )

    deployment = _one("deployment.yaml", "Deployment")
    misspelt = json.loads(json.dumps(deployment))
    misspelt["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFileSystem"] = True
    problems = Problems()
    schema_check.check(misspelt, kinds[("apps", "v1", "Deployment")], Reporter(problems, Location("x", 0, 1)))
    assert any("readOnlyRootFileSystem" in line for line in Problems.lines(problems.errors))

    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["serviceAccountName"] == _one("rbac.yaml", "ServiceAccount")["metadata"]["name"] == SA
    config_map = _one("config.yaml", "ConfigMap")
    (mount,) = (m for m in container["volumeMounts"] if m["name"] == "config")
    (volume,) = (v for v in pod["volumes"] if v["name"] == "config")
    assert volume["configMap"]["name"] == config_map["metadata"]["name"]
    (key,) = config_map["data"]
    config_path = container["args"][container["args"].index("--config") + 1]
    assert config_path == f"{mount['mountPath']}/{key}"
    assert container["livenessProbe"]["httpGet"]["port"] == container["readinessProbe"]["httpGet"]["port"]
    assert f"0.0.0.0:{container['livenessProbe']['httpGet']['port']}" in container["args"]

    written = tmp_path / key
    written.write_text(config_map["data"][key])
    config = load_scheduler_config(written)
    assert [p.scheduler_name for p in config.profiles] == ["gpufleet-scheduler"]
    assert config.process.leader_elect
    role = _one("rbac.yaml", "Role")
    (by_name,) = (r for r in role["rules"] if r.get("resourceNames"))
    assert (config.process.resource_namespace, [config.process.resource_name]) == (
        role["metadata"]["namespace"],
        by_name["resourceNames"],
    )


def test_every_manifest_passes_the_api_servers_dry_run(control_plane: Any) -> None:
    """``kubectl apply --dry-run=server -f deploy/`` (the README's command, run through the API
    server's decoding, defaulting, validation and admission without persisting) accepts every
    object of every file (kubectl reads only the ``.yaml`` files of the folder)."""
    out = control_plane.kubectl("apply", "--dry-run=server", "-o", "name", "-f", str(DEPLOY))
    assert sorted(out.split()) == sorted(
        [
            "serviceaccount/gpufleet-scheduler",
            "clusterrole.rbac.authorization.k8s.io/gpufleet-scheduler",
            "clusterrolebinding.rbac.authorization.k8s.io/gpufleet-scheduler",
            "role.rbac.authorization.k8s.io/gpufleet-scheduler-leader-election",
            "rolebinding.rbac.authorization.k8s.io/gpufleet-scheduler-leader-election",
            "configmap/gpufleet-scheduler-config",
            "deployment.apps/gpufleet-scheduler",
        ]
    )


def test_the_schedulers_pod_meets_the_restricted_pod_security_standard(control_plane: Any) -> None:
    """The pod of the Deployment's template, created (dry run) in a namespace that enforces the
    ``restricted`` Pod Security Standard (``pod-security.kubernetes.io/enforce``), is admitted:
    non-root, no privilege escalation, every capability dropped, ``RuntimeDefault`` seccomp."""
    cp = control_plane
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": PSS_NS, "labels": {"pod-security.kubernetes.io/enforce": "restricted"}},
    }
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SA, "namespace": PSS_NS}}
    cp.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([namespace, account]))
    try:
        assert _dry_run_create(cp, _template_pod(PSS_NS)).strip() == "pod/gpufleet-scheduler-dry-run"
        root = _template_pod(PSS_NS)
        del root["spec"]["securityContext"]["runAsNonRoot"]
        with pytest.raises(ControlPlaneError, match="violates PodSecurity"):
            _dry_run_create(cp, root)
    finally:
        cp.kubectl("delete", "namespace", PSS_NS, "--wait=false")


# -- least rights, for real ---------------------------------------------------------------------
class Account(NamedTuple):
    token: str
    kubeconfig: Path


@pytest.fixture(scope="module")
def account(control_plane: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Account]:
    """``deploy/rbac.yaml`` applied (its names taken by nothing before), a token of its ServiceAccount
    from the TokenRequest API, and a kubeconfig with that token and the control plane's CA and server
    (as ``e2e.pki.Credentials.kubeconfig`` writes the components' own)."""
    cp = control_plane
    paths = {
        "ServiceAccount": f"/api/v1/namespaces/{SYSTEM}/serviceaccounts/",
        "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles/",
        "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/",
        "Role": f"/apis/rbac.authorization.k8s.io/v1/namespaces/{SYSTEM}/roles/",
        "RoleBinding": f"/apis/rbac.authorization.k8s.io/v1/namespaces/{SYSTEM}/rolebindings/",
    }
    taken = [
        d["metadata"]["name"]
        for d in _documents("rbac.yaml")
        if cp.get(paths[d["kind"]] + d["metadata"]["name"])
    ]
    assert taken == [], "deploy/rbac.yaml would take over existing objects"
    cp.kubectl("apply", "-f", str(DEPLOY / "rbac.yaml"))
    try:
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        }
        path = f"/api/v1/namespaces/{SYSTEM}/serviceaccounts/{SA}/token"
        code, answer = _api(cp, "POST", path, cp.credentials.tokens["admin"], request)
        assert code == 201, answer
        token = str(answer["status"]["token"])
        kubeconfig = tmp_path_factory.mktemp("deploy") / "gpufleet-scheduler.kubeconfig"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "gpufleet-e2e",
                    "cluster": {"server": cp.server, "certificate-authority": str(cp.credentials.ca_cert)},
                }
            ],
            "users": [{"name": SA, "user": {"token": token}}],
            "contexts": [{"name": SA, "context": {"cluster": "gpufleet-e2e", "user": SA}}],
            "current-context": SA,
        }
        kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False))
        yield Account(token, kubeconfig)
    finally:
        cp.kubectl("delete", "-f", str(DEPLOY / "rbac.yaml"), "--ignore-not-found")
        cp.kubectl("delete", "lease", LEASE, "-n", SYSTEM, "--ignore-not-found")


def test_the_schedulers_pod_is_admitted_in_kube_system_with_its_service_account(
    control_plane: Any, account: Account
) -> None:
    """The pod of the Deployment's template, created (dry run) in ``kube-system`` where ``rbac.yaml``
    made its ServiceAccount, passes pod admission (the ServiceAccount plugin finds the account; the
    Priority plugin resolves ``system-cluster-critical``)."""
    assert _dry_run_create(control_plane, _template_pod(SYSTEM)).strip() == "pod/gpufleet-scheduler-dry-run"


def _pod(
    name: str,
    gpus: int,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    selector: dict[str, str] = LABEL,
    priority_class: str | None = None,
) -> dict[str, Any]:
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    priority = {"priorityClassName": priority_class} if priority_class else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels or {}, "annotations": annotations or {}},
        "spec": {
            **priority,
            "schedulerName": SCHEDULER,
            "nodeSelector": selector,
            "tolerations": [
                {"key": "gpufleet-test", "operator": "Equal", "value": NS, "effect": "NoSchedule"}
            ],
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}, "limits": limits}}
            ],
        },
    }


def _get(cp: Any, path: str) -> dict[str, Any]:
    return dict(cp.get(path) or {})


def _scheduled_false(pod: dict[str, Any]) -> dict[str, Any] | None:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "PodScheduled" and c["status"] == "False"), None)


@pytest.fixture
def crd(control_plane: Any) -> Iterator[None]:
    with pod_group_crd(control_plane):
        yield


def test_with_rbac_yaml_alone_the_scheduler_leads_binds_preempts_and_reports(
    control_plane: Any, account: Account, crd: None, tmp_path: Path
) -> None:
    """``gpufleet scheduler`` on the deployed configuration (its profile renamed for this test),
    connected with the ServiceAccount's token only: it takes the Lease ``kube-system/gpufleet-scheduler``
    (leases create, get, update), binds both pods of a PodGroup of ``minMember`` 2 (pods/binding) and
    marks the PodGroup ``Scheduled`` (podgroups/status patch), annotates a pod with half a GPU
    (``gpu-fraction``, KAI's annotation) with the GPU it chose before binding it (pods patch), and
    gives a pod that fits nowhere ``PodScheduled=False`` (pods/status patch) and a ``FailedScheduling``
    Event (events create), and preempts a low-priority pod for a high-priority one (its victim deleted,
    pods delete, with a ``Preempted`` Event); no request is refused; on SIGTERM it gives the Lease up
    (exit 0)."""
    cp = control_plane
    settings = yaml.safe_load(_one("config.yaml", "ConfigMap")["data"]["config.yaml"])
    settings["profiles"][0]["schedulerName"] = SCHEDULER
    group_label = {"scheduling.x-k8s.io/pod-group": "train"}
    docs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        *(kwok_node(n, 8, labels=LABEL, taints=(TAINT,)) for n in NODES),
        kwok_node(PREEMPT_NODE, 8, labels=PREEMPT_LABEL, taints=(TAINT,)),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": HIGH},
            "value": 1000,
        },
        {
            "apiVersion": f"{PODGROUPS}/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "train", "namespace": NS},
            "spec": {"minMember": 2},
        },
    ]
    scheduler = SchedulerProcess(cp, settings, tmp_path, name=SCHEDULER, kubeconfig=account.kubeconfig)
    try:
        cp.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))
        scheduler.start()
        pods = [
            _pod("train-0", 4, group_label),
            _pod("train-1", 4, group_label),
            _pod("half", 0, annotations={"gpu-fraction": "0.5"}),
            _pod("too-big", 16),
            _pod("low", 8, selector=PREEMPT_LABEL),
        ]
        cp.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(pods))

        def pod(name: str) -> dict[str, Any]:
            return _get(cp, f"/api/v1/namespaces/{NS}/pods/{name}")

        def bound_to() -> dict[str, str]:
            nodes = {
                name: pod(name).get("spec", {}).get("nodeName")
                for name in ("train-0", "train-1", "half", "low")
            }
            return {k: str(v) for k, v in nodes.items() if v}

        wait_until("train-0, train-1, half and low bound", lambda: len(bound_to()) == 4)
        assert pod("half")["metadata"]["annotations"]["gpufleet.io/gpu-devices"] in {str(i) for i in range(8)}
        group = wait_until(
            "the PodGroup's status Scheduled",
            lambda: (
                (g := _get(cp, f"/apis/{PODGROUPS}/v1alpha1/namespaces/{NS}/podgroups/train"))
                .get("status", {})
                .get("phase")
                == "Scheduled"
                and g
            ),
        )
        assert group["status"]["scheduled"] == 2
        condition = wait_until("too-big PodScheduled=False", lambda: _scheduled_false(pod("too-big")))
        assert condition["reason"] == "Unschedulable"

        def events(name: str, reason: str) -> list[dict[str, Any]]:
            items = _get(cp, f"/api/v1/namespaces/{NS}/events").get("items") or []
            return [e for e in items if e["involvedObject"]["name"] == name and e["reason"] == reason]

        (event,) = wait_until(
            "a FailedScheduling Event for too-big", lambda: events("too-big", "FailedScheduling")
        )
        assert (event["source"]["component"], event["message"]) == (
            "gpufleet-scheduler",
            condition["message"],
        )

        cp.kubectl(
            "apply", "-f", "-", stdin=json.dumps(_pod("high", 8, selector=PREEMPT_LABEL, priority_class=HIGH))
        )
        wait_until(
            "high bound in low's place", lambda: pod("high").get("spec", {}).get("nodeName") == PREEMPT_NODE
        )
        assert pod("low") == {}
        assert [e["type"] for e in events("low", "Preempted")] == ["Normal"]
        preempted = [(d["pod"], d["by"]) for d in scheduler.decisions() if d["action"] == "preempt"]
        assert preempted == [(f"{NS}/low", f"{NS}/high")]

        lease = _get(cp, f"/apis/{LEASES}/v1/namespaces/{SYSTEM}/leases/{LEASE}")
        assert lease["spec"]["holderIdentity"] == SCHEDULER
        bound = {d["pod"] for d in scheduler.decisions() if d["action"] == "bound"}
        assert bound == {f"{NS}/{name}" for name in ("train-0", "train-1", "half", "low", "high")}
        assert "forbidden" not in scheduler.stderr().lower(), scheduler.stderr()
        assert scheduler.stop() == 0
        released = _get(cp, f"/apis/{LEASES}/v1/namespaces/{SYSTEM}/leases/{LEASE}")
        assert released["spec"].get("holderIdentity", "") == ""
    finally:
        scheduler.kill()
        cp.kubectl("delete", "namespace", NS, "--wait=false", "--ignore-not-found")
        cp.kubectl("delete", "node", *NODES, PREEMPT_NODE, "--ignore-not-found")
        cp.kubectl("delete", "priorityclass", HIGH, "--ignore-not-found")


class Right(NamedTuple):
    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    def __str__(self) -> str:
        what = "/".join(p for p in (self.resource, self.subresource) if p)
        what = f"{what}.{self.group}" if self.group else what
        where = f" {self.name}" if self.name else ""
        return f"{self.verb} {what}{where}" + (f" -n {self.namespace}" if self.namespace else "")


#: every right the scheduler uses (rbac.yaml's rules, one by one)
GRANTED = [
    Right("list", "nodes"),
    Right("watch", "nodes"),
    Right("get", "pods", namespace=NS),
    Right("list", "pods"),
    Right("watch", "pods"),
    Right("patch", "pods", namespace=NS),
    Right("delete", "pods", namespace=NS),
    Right("create", "pods", subresource="binding", namespace=NS),
    Right("patch", "pods", subresource="status", namespace=NS),
    Right("create", "events", namespace=NS),
    Right("patch", "events", namespace=NS),
    Right("list", "namespaces"),
    Right("watch", "namespaces"),
    Right("list", "poddisruptionbudgets", "policy"),
    Right("watch", "poddisruptionbudgets", "policy"),
    Right("list", "podgroups", PODGROUPS),
    Right("watch", "podgroups", PODGROUPS),
    Right("patch", "podgroups", PODGROUPS, "status", namespace=NS),
    Right("create", "leases", LEASES, namespace=SYSTEM),
    Right("get", "leases", LEASES, namespace=SYSTEM, name=LEASE),
    Right("update", "leases", LEASES, namespace=SYSTEM, name=LEASE),
]

#: for each rule, one step more: another verb, another subresource, another name or namespace
REFUSED = [
    # nodes: read by the informer only
    Right("get", "nodes", name="n"),
    Right("create", "nodes"),
    Right("update", "nodes", name="n"),
    Right("patch", "nodes", name="n"),
    Right("delete", "nodes", name="n"),
    Right("patch", "nodes", subresource="status", name="n"),
    # pods: no new pod, no replaced pod, nothing run inside one, no eviction API
    Right("create", "pods", namespace=NS),
    Right("update", "pods", namespace=NS),
    Right("deletecollection", "pods", namespace=NS),
    Right("create", "pods", subresource="exec", namespace=NS),
    Right("create", "pods", subresource="eviction", namespace=NS),
    Right("get", "pods", subresource="log", namespace=NS),
    # bindings: the pods/binding subresource only, not the legacy bindings resource
    Right("create", "bindings", namespace=NS),
    # pods/status: patched, never replaced
    Right("update", "pods", subresource="status", namespace=NS),
    # events: written, never read or deleted; core v1 only
    Right("get", "events", namespace=NS),
    Right("list", "events"),
    Right("delete", "events", namespace=NS),
    Right("create", "events", "events.k8s.io", namespace=NS),
    # namespaces: the informer only
    Right("get", "namespaces", name=NS),
    Right("create", "namespaces"),
    Right("delete", "namespaces", name=NS),
    # poddisruptionbudgets: read by the informer only
    Right("get", "poddisruptionbudgets", "policy", namespace=NS),
    Right("create", "poddisruptionbudgets", "policy", namespace=NS),
    Right("patch", "poddisruptionbudgets", "policy", subresource="status", namespace=NS),
    # podgroups: read by the informer; only their status patched
    Right("get", "podgroups", PODGROUPS, namespace=NS),
    Right("create", "podgroups", PODGROUPS, namespace=NS),
    Right("patch", "podgroups", PODGROUPS, namespace=NS),
    Right("delete", "podgroups", PODGROUPS, namespace=NS),
    Right("update", "podgroups", PODGROUPS, "status", namespace=NS),
    # leases: its own one, in kube-system only
    Right("get", "leases", LEASES, namespace=SYSTEM, name="kube-scheduler"),
    Right("update", "leases", LEASES, namespace=SYSTEM, name="kube-scheduler"),
    Right("update", "leases", LEASES, namespace=SYSTEM, name="kube-controller-manager"),
    Right("patch", "leases", LEASES, namespace=SYSTEM, name=LEASE),
    Right("delete", "leases", LEASES, namespace=SYSTEM, name=LEASE),
    Right("list", "leases", LEASES, namespace=SYSTEM),
    Right("watch", "leases", LEASES, namespace=SYSTEM),
    Right("create", "leases", LEASES, namespace="default"),
    Right("get", "leases", LEASES, namespace="default", name=LEASE),
    Right("update", "leases", LEASES, namespace="default", name=LEASE),
    # nothing else: secrets, config maps, tokens, RBAC itself, impersonation, workloads
    Right("get", "secrets", namespace=SYSTEM),
    Right("list", "secrets"),
    Right("get", "configmaps", namespace=SYSTEM, name="gpufleet-scheduler-config"),
    Right("create", "serviceaccounts", subresource="token", namespace=SYSTEM, name=SA),
    Right("bind", "clusterroles", "rbac.authorization.k8s.io", name="cluster-admin"),
    Right("escalate", "clusterroles", "rbac.authorization.k8s.io", name=SA),
    Right("create", "clusterrolebindings", "rbac.authorization.k8s.io"),
    Right("impersonate", "users"),
    Right("create", "deployments", "apps", namespace=SYSTEM),
    Right("*", "*", "*"),
]


def _allowed(cp: Any, token: str, right: Right) -> bool:
    """A SelfSubjectAccessReview, as ``kubectl auth can-i`` asks it, by the bearer of ``token``."""
    attributes = {
        k: v
        for k, v in (
            ("verb", right.verb),
            ("resource", right.resource),
            ("group", right.group),
            ("subresource", right.subresource),
            ("namespace", right.namespace),
            ("name", right.name),
        )
        if v
    }
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    code, answer = _api(cp, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", token, review)
    assert code == 201, answer
    return bool(answer["status"].get("allowed"))


def test_the_service_account_can_do_what_the_scheduler_does_and_not_one_step_more(
    control_plane: Any, account: Account
) -> None:
    """Each right of ``rbac.yaml`` is granted to the ServiceAccount, and for each rule the rights one
    step beyond it (another verb, subresource, Lease name or namespace) are refused, as are secrets,
    RBAC and everything else (``*``)."""
    granted = [str(r) for r in GRANTED if not _allowed(control_plane, account.token, r)]
    refused = [str(r) for r in REFUSED if _allowed(control_plane, account.token, r)]
    assert (granted, refused) == ([], [])
