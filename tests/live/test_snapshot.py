"""``gpufleet snapshot`` and ``gpufleet explain`` on a live cluster: the real control plane of the
test suite (kube-apiserver, kube-scheduler and kwok's nodes), never a mock of the API.

The snapshot must be what ``kubectl get <kind> -o json`` gives (a ``kind: List`` per kind), read
in pages (the API's ``limit``/``continue``), and the commands that read files must take it as it is.
"""

from __future__ import annotations

import json
import pwd
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e.gpufleet_scheduler import crds_installed, custom_resource, pod_group_crd
from typer.testing import CliRunner

from conftest import kwok_node, wait_until
from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.live.client import LiveCluster, LiveError, connect, load_config
from gpufleet.live.kinds import KINDS

NS = "live-snapshot"
OTHER_NS = "live-snapshot-other"
NODES = ("snap-gpu-a", "snap-gpu-b")
CLI = CliRunner()
GPU = "nvidia.com/gpu"


def _run(*args: str | Path) -> Any:
    return CLI.invoke(app, [str(a) for a in args])


def _names(path: Path) -> dict[str, dict[str, Any]]:
    return {f"{p['metadata'].get('namespace', '')}/{p['metadata']['name']}": p for p in _items(path)}


def _pod(name: str, gpus: int, namespace: str = NS, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "gpufleet-test", "operator": "In", "values": [NS]}]}
                    ]
                }
            }
        },
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _apply(cp: Any, *docs: dict[str, Any]) -> None:
    cp.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))


def _phase(cp: Any, namespace: str, name: str) -> str:
    pod = cp.get(f"/api/v1/namespaces/{namespace}/pods/{name}") or {}
    return str((pod.get("status") or {}).get("phase"))


def _recorded_unschedulable(cp: Any, name: str) -> bool:
    pod = cp.get(f"/api/v1/namespaces/{NS}/pods/{name}") or {}
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" for c in conditions)


@pytest.fixture(scope="module")
def cluster(control_plane: Any) -> Iterator[Any]:
    """Two 8-GPU kwok nodes; 6 GPUs used on each (one pod in another namespace, bound by name), a
    pending 4-GPU pod (4 GPUs free in all, 2 per node), a Deployment, a Job, a PriorityClass and a
    PodDisruptionBudget."""
    cp = control_plane
    for ns in (NS, OTHER_NS):
        _apply(cp, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    _apply(cp, *(kwok_node(n, labels={"gpufleet-test": NS}) for n in NODES))
    _apply(
        cp,
        _pod("train-a", 6, node=NODES[0]),
        _pod("other-b", 6, namespace=OTHER_NS, node=NODES[1]),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "live-snapshot-high"},
            "value": 1000,
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "serve", "namespace": NS},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "serve"}}},
        },
    )
    wait_until(
        "the bound pods", lambda: _phase(cp, NS, "train-a") == _phase(cp, OTHER_NS, "other-b") == "Running"
    )
    _apply(cp, _pod("big", 4))
    wait_until("kube-scheduler's verdict on big", lambda: _recorded_unschedulable(cp, "big"))
    yield cp
    for ns in (NS, OTHER_NS):
        cp.kubectl("delete", "namespace", ns, "--wait=false")
    cp.kubectl("delete", "priorityclass", "live-snapshot-high", "--ignore-not-found")
    cp.kubectl("delete", "node", *NODES, "--ignore-not-found")


def _items(path: Path) -> list[dict[str, Any]]:
    doc = json.loads(path.read_text())
    assert doc["apiVersion"] == "v1" and doc["kind"] == "List"
    return list(doc["items"])


def test_snapshot_writes_each_kind_as_the_list_kubectl_get_o_json_gives(cluster: Any, tmp_path: Path) -> None:
    result = CLI.invoke(
        app, ["snapshot", "--kubeconfig", str(cluster.kubeconfig), "-A", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    pods = {
        f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in _items(tmp_path / "pods.json")
    }
    assert {f"{NS}/train-a", f"{NS}/big", f"{OTHER_NS}/other-b"} <= set(pods)
    big = pods[f"{NS}/big"]
    # kubectl's shape: each item has its apiVersion and kind; managedFields are left out (kubectl get's
    # default --show-managed-fields=false)
    assert big["apiVersion"] == "v1" and big["kind"] == "Pod"
    assert "managedFields" not in big["metadata"]
    nodes = {n["metadata"]["name"] for n in _items(tmp_path / "nodes.json")}
    assert set(NODES) <= nodes
    assert [p["kind"] for p in _items(tmp_path / "poddisruptionbudgets.json")] == ["PodDisruptionBudget"]
    assert any(
        c["metadata"]["name"] == "live-snapshot-high" for c in _items(tmp_path / "priorityclasses.json")
    )
    # the test control plane has no scheduler-plugins, KEDA or Kueue CRDs: skipped with a warning
    assert "warning: skipped PodGroup (podgroups.scheduling.x-k8s.io v1alpha1): not served" in result.output
    assert "SNAPSHOT.md" in {p.name for p in tmp_path.iterdir()}
    # its time where the loader reads it: a Simulation's spec.startTime (time 0 of a run of the snapshot)
    simulation = json.loads((tmp_path / "simulation.json").read_text())
    assert (simulation["apiVersion"], simulation["kind"]) == ("gpufleet.io/v1alpha1", "Simulation")
    assert f"- taken at: {simulation['spec']['startTime']} (" in (tmp_path / "SNAPSHOT.md").read_text()


def test_a_snapshot_is_read_by_validate_and_explain_as_it_is(cluster: Any, tmp_path: Path) -> None:
    assert (
        CLI.invoke(
            app, ["snapshot", "--kubeconfig", str(cluster.kubeconfig), "-A", "--out", str(tmp_path)]
        ).exit_code
        == 0
    )
    validated = _run("validate", tmp_path)
    assert validated.exit_code == 0, validated.output
    explained = _run("explain", tmp_path, "--pod", f"{NS}/big", "--json")
    assert explained.exit_code == 0, explained.output
    (big,) = json.loads(explained.output)
    assert big["verdict"].startswith("gpufleet agrees with kube-scheduler's message")
    assert big["diagnosis"]["free_gpus"] == {NODES[0]: 2, NODES[1]: 2}


def test_explain_on_the_live_cluster_agrees_with_kube_scheduler(cluster: Any) -> None:
    """Without files, explain reads the cluster of the kubeconfig; ``-n`` reads that namespace, and
    the pods of other namespaces that hold node resources (other-b's 6 GPUs on snap-gpu-b)."""
    result = _run("explain", "--kubeconfig", cluster.kubeconfig, "-n", NS, "--json")
    assert result.exit_code == 0, result.output
    explanations = json.loads(result.output[result.output.index("[") :])
    assert [e["pod"] for e in explanations] == [f"{NS}/big"]
    (big,) = explanations
    assert "2 Insufficient nvidia.com/gpu" in big["message"]
    assert big["verdict"].startswith("gpufleet agrees with kube-scheduler's message")
    assert big["diagnosis"]["free_gpus"][NODES[1]] == 2


def test_a_namespace_snapshot_keeps_other_namespaces_pods_that_hold_nodes(
    cluster: Any, tmp_path: Path
) -> None:
    result = CLI.invoke(
        app, ["snapshot", "--kubeconfig", str(cluster.kubeconfig), "-n", NS, "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    names = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in _items(tmp_path / "pods.json")}
    assert {f"{NS}/train-a", f"{NS}/big", f"{OTHER_NS}/other-b"} <= names
    assert all(n.startswith(f"{NS}/") or n.split("/")[0] != NS for n in names)


def test_lists_are_read_in_pages_of_the_limit_asked(cluster: Any) -> None:
    """API concepts, "Retrieving large results sets in chunks": ``limit`` and ``continue``."""
    live = connect(cluster.kubeconfig)
    pages = [len(items) for items, _ in live.list_pages(KINDS["pods"], None, page_size=1)]
    live.close()
    assert len(pages) >= 3 and set(pages) == {1}


def test_the_current_context_of_a_kubeconfig_list_is_the_first_set(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """client-go's loading rules: KUBECONFIG files are merged, the first file's current-context and
    entries win; ``--context`` picks another context of the merged configuration."""
    admin = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    broken = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "nowhere",
        "clusters": [{"name": "closed", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "nobody", "user": {"token": "x"}}],
        "contexts": [{"name": "nowhere", "context": {"cluster": "closed", "user": "nobody"}}],
    }
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text(yaml.safe_dump(broken))
    second.write_text(yaml.safe_dump(admin))
    monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
    assert connect().server == "https://127.0.0.1:1"
    live = connect(context=admin["current-context"])
    assert live.server == cluster.server
    assert any(n["metadata"]["name"] == NODES[0] for n in live.list(KINDS["nodes"]))
    live.close()


def test_a_forbidden_list_names_the_verb_the_resource_and_the_rule_that_grants_it(
    cluster: Any, tmp_path: Path
) -> None:
    cluster.kubectl("create", "serviceaccount", "reader", "-n", NS)
    token = cluster.kubectl("create", "token", "reader", "-n", NS).strip()
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    config["users"] = [{"name": "admin", "user": {"token": token}}]
    kubeconfig = tmp_path / "reader.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    result = CLI.invoke(
        app, ["snapshot", "--kubeconfig", str(kubeconfig), "-n", NS, "--out", str(tmp_path / "s")]
    )
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("forbidden: cannot list namespaces at the cluster scope: ")
    assert 'User "system:serviceaccount:live-snapshot:reader" cannot list resource "namespaces"' in line
    assert 'apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] in a ClusterRole' in line


def test_an_unreachable_server_is_one_line_and_exit_2(cluster: Any, tmp_path: Path) -> None:
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    kubeconfig = tmp_path / "closed.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    live = connect(kubeconfig, retries=0)
    with pytest.raises(
        LiveError, match=r"^cannot reach the API server https://127.0.0.1:1: connection refused"
    ):
        next(live.list(KINDS["nodes"]))
    result = CLI.invoke(app, ["explain", "--kubeconfig", str(tmp_path / "missing")])
    assert (result.exit_code, result.output.strip()) == (
        2,
        f"--kubeconfig: {tmp_path / 'missing'}: no such file",
    )


def test_in_a_pod_without_a_kubeconfig_the_service_account_is_used(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rest.InClusterConfig: KUBERNETES_SERVICE_HOST/PORT and the mounted token, CA and namespace,
    when no kubeconfig is found (here a real service account token of the test cluster)."""
    cluster.kubectl("create", "serviceaccount", "in-cluster", "-n", NS)
    cluster.kubectl(
        "create",
        "clusterrolebinding",
        "live-snapshot-in-cluster",
        "--clusterrole=view",
        f"--serviceaccount={NS}:in-cluster",
    )
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(cluster.kubectl("create", "token", "in-cluster", "-n", NS).strip())
    (account / "ca.crt").write_bytes(Path(cluster.credentials.ca_cert).read_bytes())
    (account / "namespace").write_text(NS)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-such-kubeconfig"))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(cluster.api_port))
    try:
        config = load_config(service_account=account)
        assert config.namespace == NS
        live = LiveCluster(config)
        assert {p["metadata"]["name"] for p in live.list(KINDS["pods"], NS)} >= {"train-a", "big"}
        live.close()
        # a container's user without a home directory (no HOME, no passwd entry: deploy/'s uid 65532)
        with monkeypatch.context() as homeless:
            homeless.delenv("KUBECONFIG")
            homeless.delenv("HOME", raising=False)
            homeless.setattr(pwd, "getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
            assert load_config(service_account=account).namespace == NS
    finally:
        cluster.kubectl("delete", "clusterrolebinding", "live-snapshot-in-cluster")


def test_a_crd_installed_is_read_and_its_objects_are_modelled(cluster: Any, tmp_path: Path) -> None:
    """With scheduler-plugins' PodGroup CRD served, the snapshot reads the PodGroups and the reader
    makes them gangs (the same objects were skipped with a warning while the CRD was absent)."""
    with pod_group_crd(cluster):
        _apply(
            cluster,
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": "gang", "namespace": NS},
                "spec": {"minMember": 2},
            },
        )
        result = _run("snapshot", "--kubeconfig", cluster.kubeconfig, "-n", NS, "--out", tmp_path)
        assert result.exit_code == 0, result.output
        assert "skipped PodGroup (podgroups.scheduling.x-k8s.io" not in result.output
        assert [g["metadata"]["name"] for g in _items(tmp_path / "podgroups.json")] == ["gang"]
        validated = _run("validate", tmp_path)
        assert "pod groups: 1" in validated.output, validated.output


def test_the_queues_of_volcano_kai_and_kueue_are_read_and_install_their_schedulers(
    cluster: Any, tmp_path: Path
) -> None:
    """With Volcano's and KAI's Queue and Kueue's Cohort and WorkloadPriorityClass CRDs served, the
    snapshot reads those cluster-scoped objects, and the reader models them: a Volcano Queue installs
    the volcano scheduler, a KAI Queue the kai-scheduler (issue 15's kinds, read from a cluster)."""
    definitions = (
        custom_resource("scheduling.volcano.sh", "v1beta1", "queues", "Queue", namespaced=False),
        custom_resource("scheduling.run.ai", "v2", "queues", "Queue", namespaced=False),
        custom_resource("kueue.x-k8s.io", "v1beta2", "cohorts", "Cohort", namespaced=False),
        custom_resource(
            "kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", "WorkloadPriorityClass", namespaced=False
        ),
    )
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "research"},
            "spec": {"capability": {"nvidia.com/gpu": 8}},
        },
        {
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": {"name": "team"},
            "spec": {"resources": {"gpu": {"quota": -1, "limit": 4, "overQuotaWeight": 1}}},
        },
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "org"}, "spec": {}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "urgent"},
            "value": 1000,
        },
    ]
    with crds_installed(cluster, *definitions):
        _apply(cluster, *objects)
        result = _run("snapshot", "--kubeconfig", cluster.kubeconfig, "-n", NS, "--out", tmp_path)
        assert result.exit_code == 0, result.output
        read = {
            "volcano-queues": "research",
            "kai-queues": "team",
            "cohorts": "org",
            "workloadpriorityclasses": "urgent",
        }
        for stem, name in read.items():
            assert name in [o["metadata"]["name"] for o in _items(tmp_path / f"{stem}.json")], stem
        scenario = load_scenario([tmp_path])
        assert "volcano" in {p.scheduler_name for s in scenario.schedulers for p in s.profiles}
        assert list(scenario.kai_queues) == ["team"]  # the simulation runs kai-scheduler for it
        assert not [w for w in scenario.warnings if "Queue" in w or "Cohort" in w or "PriorityClass" in w]


def test_a_watch_from_a_lists_resource_version_sees_what_changed_after_it(cluster: Any) -> None:
    """API concepts, "Efficient detection of changes": list, then watch from the list's
    resourceVersion; the events after it arrive in order (ADDED, then MODIFIED as kwok runs it)."""
    live = connect(cluster.kubeconfig)
    *_, (_, version) = live.list_pages(KINDS["pods"], NS)
    _apply(cluster, _pod("watched", 0, node=NODES[0]))
    seen: list[tuple[str, str]] = []
    for kind, obj in live.watch(KINDS["pods"], NS, resource_version=version, timeout_s=10):
        if obj.get("metadata", {}).get("name") == "watched":
            seen.append((kind, str((obj.get("status") or {}).get("phase"))))
            if seen[-1] == ("MODIFIED", "Running"):
                break
    live.close()
    assert seen[0][0] == "ADDED" and seen[-1] == ("MODIFIED", "Running")
    assert "managedFields" not in obj["metadata"]


def test_a_list_file_holds_each_object_compact_on_a_line_of_its_own_with_sorted_keys(tmp_path: Path) -> None:
    """What ``snapshot`` writes, an object at a time: a ``kind: List`` file whose items are each one line
    (keys sorted, no spaces), the bytes ``json.dump`` wrote before ``json.dumps`` (the C encoder) did."""
    from gpufleet.live.snapshot import _ListWriter

    items: list[dict[str, Any]] = [{"b": 1, "a": {"y": [1, 2.5, None, True], "x": "é"}}, {"kind": "Pod"}]
    writer = _ListWriter(tmp_path / "pods.json")
    writer.add(items[:1])
    writer.add(items[1:])
    writer.close()
    text = (tmp_path / "pods.json").read_text()
    assert text == (
        '{"apiVersion": "v1", "kind": "List", "items": [\n'
        '{"a":{"x":"\\u00e9","y":[1,2.5,null,true]},"b":1},\n'
        '{"kind":"Pod"}\n'
        "]}\n"
    )
    assert json.loads(text)["items"] == items and writer.count == 2
