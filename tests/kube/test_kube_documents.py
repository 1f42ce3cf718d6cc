"""Reading files: multi-document YAML, JSON, kubectl Lists, directories, and malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kube_manifests import NODE, load, pod, problems, relative, write

from gpufleet.kube import ScenarioError, load_scenario


def test_multi_document_yaml_json_and_kubectl_list_load_together(tmp_path: Path) -> None:
    yaml_file = write(tmp_path, "a.yaml", f"---\n{NODE}\n---\n# only a comment\n---\n{pod(name='one')}")
    json_file = tmp_path / "b.json"
    json_file.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "two"},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            }
        )
    )
    list_file = tmp_path / "c.json"
    items = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"item-{i}"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
        for i in range(3)
    ]
    list_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}}))

    scenario = load_scenario([yaml_file, json_file, list_file])

    assert [n.name for n in scenario.nodes] == ["gpu-0"]
    assert [p.pod.name for p in scenario.pods] == ["one", "two", "item-0", "item-1", "item-2"]
    # created.order counts documents over all files, in the order they are read.
    assert [p.created.order for p in scenario.pods] == [1, 2, 3, 4, 5]
    assert scenario.sources == [str(yaml_file), str(json_file), str(list_file)]


def test_list_items_are_numbered_as_documents_of_their_file(tmp_path: Path) -> None:
    bad_item = '{"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": {"name": "x"}}'
    text = f"""
    {NODE.strip()}
    ---
    {{"apiVersion": "v1", "kind": "List", "items": [{bad_item}, {bad_item}]}}
    """
    lines = problems(
        tmp_path, "\n".join(line.strip() if line.startswith("    ") else line for line in text.splitlines())
    )
    assert lines == [
        'scenario.yaml: document 2 (Deploymnet/x): kind: unknown kind "Deploymnet" in apps/v1',
        'scenario.yaml: document 3 (Deploymnet/x): kind: unknown kind "Deploymnet" in apps/v1',
    ]


def test_typed_list_items_take_their_kind_from_the_list(tmp_path: Path) -> None:
    text = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "PodList",
            "metadata": {},
            "items": [{"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}],
        }
    )
    assert [p.pod.name for p in load(tmp_path, text, "pods.json").pods] == ["p"]


def test_a_directory_contributes_every_manifest_below_it_sorted_by_path(tmp_path: Path) -> None:
    write(tmp_path, "cluster/b/pods.yml", pod(name="late"))
    write(tmp_path, "cluster/a/pods.yaml", pod(name="early"))
    write(
        tmp_path,
        "cluster/a/nodes.json",
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n"},
                "status": {"capacity": {"cpu": "1"}},
            }
        ),
    )
    write(tmp_path, "cluster/README.md", "not a manifest")
    write(tmp_path, "cluster/.git/x.yaml", "not: [valid")

    scenario = load_scenario([tmp_path / "cluster"])

    assert [p.pod.name for p in scenario.pods] == ["early", "late"]
    assert [n.name for n in scenario.nodes] == ["n"]
    assert relative(tmp_path, scenario.sources) == [
        "cluster/a/nodes.json",
        "cluster/a/pods.yaml",
        "cluster/b/pods.yml",
    ]


def test_malformed_yaml_is_reported_with_its_line_and_later_documents_still_load(tmp_path: Path) -> None:
    text = f"{NODE}---\nkind: [Pod\n---\n{pod(spec='resourcs: {}')}"
    lines = problems(tmp_path, text)
    assert lines[0].startswith("scenario.yaml: document 2: invalid YAML: ")
    assert "(while parsing a flow sequence started at line 8, column 7)" in lines[0]
    # The document after the malformed one was still read and checked.
    assert lines[1] == (
        "scenario.yaml: document 3 (Pod/default/p): spec.resourcs: "
        "Additional properties are not allowed ('resourcs' was unexpected)"
    )


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    assert problems(tmp_path, '{"apiVersion": "v1",\n "kind": }', "bad.json") == [
        "bad.json: document 1: invalid JSON: Expecting value at line 2, column 10"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n- b\n", "a document must be a mapping with apiVersion and kind, not a list"),
        ("just text\n", "a document must be a mapping with apiVersion and kind, not a string"),
        ("a: &x [*x]\n", "invalid YAML: an alias refers to the node that contains it"),
        ("apiVersion: v1\nkind: List\nitems: 3\n", "items: List items must be a list, not a number"),
    ],
)
def test_documents_that_are_not_objects_are_problems(tmp_path: Path, text: str, message: str) -> None:
    assert problems(tmp_path, text) == [f"scenario.yaml: document 1: {message}"]


def test_a_missing_path_is_a_problem_line_and_files_are_still_read(tmp_path: Path) -> None:
    good = write(tmp_path, "good.yaml", pod(spec="bogus: 1"))
    with pytest.raises(ScenarioError) as caught:
        load_scenario([tmp_path / "missing.yaml", good])
    assert relative(tmp_path, caught.value.problems) == [
        "missing.yaml: no such file or directory",
        "good.yaml: document 1 (Pod/default/p): spec.bogus: Additional properties are not allowed ('bogus' "
        "was unexpected)",
    ]
    assert str(caught.value) == "\n".join(caught.value.problems)


def test_non_utf8_and_empty_directories_are_problems(tmp_path: Path) -> None:
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScenarioError) as caught:
        load_scenario([tmp_path / "binary.yaml", tmp_path / "empty"])
    lines = relative(tmp_path, caught.value.problems)
    assert lines[0].startswith("binary.yaml: cannot read: not UTF-8 text")
    assert lines[1] == "empty: no *.yaml, *.yml or *.json files in this directory"


def test_yaml_timestamps_stay_strings_as_kubernetes_reads_them(tmp_path: Path) -> None:
    scenario = load(tmp_path, pod(metadata="creationTimestamp: 2024-05-01T10:00:00Z"))
    assert scenario.pods[0].pod.name == "p"


def test_yaml_aliases_that_multiply_a_document_are_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    assert problems(tmp_path, "\n".join(lines) + "\n") == [
        "scenario.yaml: document 1: invalid YAML: aliases expand it beyond the size of the file"
    ]
