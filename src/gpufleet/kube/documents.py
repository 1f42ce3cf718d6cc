"""Reading manifests: files and directories of YAML or JSON, flattened into documents.

Mirrors ``kubectl apply -f``: a directory contributes every ``*.yaml``, ``*.yml`` and
``*.json`` file below it (sorted by path; names starting with ``.`` are skipped, as editors'
swap files and ``.git`` are); ``-`` is standard input, read once and named ``<stdin>`` (JSON when
it starts with ``{`` or ``[``, else YAML); a YAML file may hold several documents separated by ``---``;
empty documents are skipped, as kubectl skips them; kubectl's ``kind: List`` (and typed
lists such as ``PodList``) contribute their ``items``.

Numbering: ``document N`` counts from 1 over the documents of one file in the order they
appear, after lists are flattened (a List contributes its items, not itself), so the third
item of a List that opens a file is document 3. ``order`` counts over all files in the
order they are read. YAML is read as Kubernetes reads it (``sigs.k8s.io/yaml``): YAML 1.1
scalars, but timestamps stay strings and non-string keys become strings. A malformed
document is reported and the documents after it are still read.
"""

from __future__ import annotations

import json
import re
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.reader import ReaderError

from gpufleet.collector import collector_paused
from gpufleet.kube.problems import Location, Problems, render
from gpufleet.model.named_paths import stat_or_problem
from gpufleet.model.standard_input import STDIN_NAME, is_stdin, read_stdin

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
#: YAML nested deeper than any Kubernetes object needs is refused (it would exhaust recursion).
MAX_DEPTH = 100

_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
_DOCUMENT_START = re.compile(r"^---(?:[ \t]|$)", re.MULTILINE)
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """Safe YAML without timestamps, as ``sigs.k8s.io/yaml`` leaves them strings."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _integer(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> object:
    """A YAML integer, refused (with its place) when longer than Python reads (``int_max_str_digits``)."""
    if len(node.value) > sys.get_int_max_str_digits():
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of more than {sys.get_int_max_str_digits()} digits", node.start_mark
        )
    return loader.construct_yaml_int(node)


def _json_integer(text: str) -> int:
    if len(text) > sys.get_int_max_str_digits():
        raise _Bad(f"invalid JSON: an integer of more than {sys.get_int_max_str_digits()} digits")
    return int(text)


_Loader.add_constructor("tag:yaml.org,2002:int", _integer)
# A bare ``=`` is YAML 1.1's "value" tag, which PyYAML cannot construct (yaml/pyyaml#89).
_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


@dataclass(frozen=True)
class Document:
    """One object read from a file."""

    location: Location
    order: int  # over all files, from 0
    body: dict[str, Any]


class _Bad(Exception):
    """A document that cannot be used, with the message to report."""


def read_documents(paths: Sequence[str | Path], problems: Problems) -> tuple[list[Document], list[str]]:
    """Every document of ``paths`` in order, and the files read; problems go to ``problems``."""
    documents: list[Document] = []
    sources: list[str] = []
    for file_index, (source, path, problem) in enumerate(_expand(paths)):
        try:
            text = _read(path) if path is not None else ""
        except _Bad as exc:
            problem = str(exc)
        if problem:
            problems.file_error(source, file_index, problem)
            continue
        sources.append(source)
        is_json = path is not None and (
            path.suffix.lower() == ".json" if not is_stdin(path) else text.lstrip()[:1] in ("{", "[")
        )
        with collector_paused():  # (what is parsed lives as long as the documents)
            entries = _flatten(_parse_json(text) if is_json else _parse_yaml(text))
        for number, entry in enumerate(entries, start=1):
            location = Location(source, file_index, number)
            if isinstance(entry, _Bad):
                problems.add(True, location, None, "", str(entry))
            else:
                documents.append(Document(location, len(documents), entry))
    return documents, sources


def manifest_files(paths: Sequence[str | Path]) -> list[str]:
    """The names of the files ``read_documents(paths)`` reads, in its order, and of each path it reports
    for naming no file: given more paths after these, it numbers their files (``file_index``) from here."""
    return [source for source, _, _ in _expand(paths)]


def _expand(paths: Sequence[str | Path]) -> Iterator[tuple[str, Path | None, str]]:
    """Each file to read once: the name to show for it, its path, and what is wrong with it, if anything."""
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if is_stdin(given):
            if path not in seen:
                seen.add(path)
                yield STDIN_NAME, path, ""
            continue
        found = stat_or_problem(path)
        if isinstance(found, str):
            yield str(given), None, found
            continue
        if stat.S_ISDIR(found.st_mode):
            files = sorted(
                p
                for p in path.rglob("*")
                if p.suffix.lower() in MANIFEST_SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not files:
                yield str(given), None, "no *.yaml, *.yml or *.json files in this directory"
        else:
            files = [path]
        for file in files:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                yield str(file), file, ""


def _read(path: Path) -> str:
    try:
        return (read_stdin() if is_stdin(path) else path.read_bytes()).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Bad(f"cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise _Bad(f"cannot read: {exc.strerror or exc}") from None


def _parse_json(text: str) -> list[object]:
    try:
        return [json.loads(text, parse_int=_json_integer)]
    except _Bad as exc:
        return [exc]
    except json.JSONDecodeError as exc:
        return [_Bad(f"invalid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")]
    except RecursionError:
        return [_Bad("invalid JSON: nested too deeply")]


def _parse_yaml(text: str) -> list[object]:
    """All documents of a YAML stream; a malformed one becomes ``_Bad`` and the rest still parse."""
    try:
        return [_plain(doc, len(text)) for doc in yaml.load_all(text, Loader=_Loader) if doc is not None]
    except (yaml.YAMLError, RecursionError, _Bad):
        pass
    # Slow path: parse each ``---`` section on its own. Blank lines in front keep yaml's
    # line numbers those of the file.
    starts = [0, *(m.start() for m in _DOCUMENT_START.finditer(text) if m.start() > 0)]
    out: list[object] = []
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        padding = "\n" * text.count("\n", 0, start)
        try:
            out.extend(
                _plain(doc, len(text))
                for doc in yaml.load_all(padding + text[start:end], Loader=_Loader)
                if doc is not None
            )
        except yaml.YAMLError as exc:
            out.append(_Bad(f"invalid YAML: {yaml_message(exc)}"))
        except RecursionError:
            out.append(_Bad(f"invalid YAML: nested more than {MAX_DEPTH} levels deep"))
        except _Bad as exc:
            out.append(exc)
    return out


class YamlValueError(ValueError):
    """A YAML value inside something else (an annotation, a ConfigMap's data, a grid file) that cannot be
    read: the reason on one line, and the line it is on (from 1) where YAML says."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.line = line


def yaml_value(text: str) -> object:
    """One YAML (or JSON) value read as documents are (``_Loader``: timestamps stay strings, keys become
    strings) and checked as they are (depth, aliases, cycles); ``YamlValueError`` when it cannot be."""
    try:
        return _plain(yaml.load(text, Loader=_Loader), len(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise YamlValueError(yaml_message(exc), None if mark is None else mark.line + 1) from None
    except RecursionError:
        raise YamlValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    except _Bad as exc:
        raise YamlValueError(str(exc).removeprefix("invalid YAML: ")) from None


def yaml_message(exc: yaml.YAMLError) -> str:
    """PyYAML's error on one line (its own text spreads the place over further lines)."""
    if isinstance(exc, ReaderError):
        return f"{str(exc).splitlines()[0]} at position {exc.position}"
    if not isinstance(exc, yaml.MarkedYAMLError):
        return " ".join(str(exc).split())
    problem = exc.problem or "malformed document"
    if exc.problem_mark is not None:
        problem += f" at line {exc.problem_mark.line + 1}, column {exc.problem_mark.column + 1}"
    if exc.context:
        context = exc.context
        if exc.context_mark is not None:
            context += f" started at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}"
        problem += f" ({context})"
    return problem


def _plain(value: object, text_size: int) -> object:
    """``value`` as plain JSON data (string keys, lists), checked for cycles, depth and size.

    Without aliases a document holds fewer objects than its text has characters; more means
    aliases multiply it ("billion laughs"), which is refused. Converts in place: the objects
    are fresh from the YAML parser.
    """
    budget = [text_size]
    active: set[int] = set()

    def walk(item: object, depth: int) -> object:
        if type(item) in _JSON_SCALARS:
            return item
        if isinstance(item, tuple | set):  # !!omap, !!pairs, !!set
            return walk(list(item), depth)
        if isinstance(item, bytes):  # !!binary
            return item.decode("latin-1")
        if not isinstance(item, dict | list):
            return str(item)
        budget[0] -= 1
        if budget[0] < 0:
            raise _Bad("invalid YAML: aliases expand it beyond the size of the file")
        if depth > MAX_DEPTH:
            raise _Bad(f"invalid YAML: nested more than {MAX_DEPTH} levels deep")
        marker = id(item)
        if marker in active:
            raise _Bad("invalid YAML: an alias refers to the node that contains it")
        active.add(marker)
        if isinstance(item, dict):
            for key, child in item.items():
                plain = walk(child, depth + 1)
                if plain is not child:
                    item[key] = plain
            if any(type(key) is not str for key in item):
                item = {_key(key): child for key, child in item.items()}
        elif isinstance(item, list):
            for index, child in enumerate(item):
                plain = walk(child, depth + 1)
                if plain is not child:
                    item[index] = plain
        active.discard(marker)
        return item

    return walk(value, 0)


def _key(key: object) -> str:
    """A mapping key as ``sigs.k8s.io/yaml`` turns it into a JSON key."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return render(key)
    return str(key)


def _flatten(parsed: list[object]) -> Iterator[dict[str, Any] | _Bad]:
    """Documents in order, with the items of lists in place of the lists."""
    for doc in parsed:
        if isinstance(doc, _Bad):
            yield doc
        elif not isinstance(doc, dict):
            yield _Bad(f"a document must be a mapping with apiVersion and kind, not {_type_name(doc)}")
        elif _is_list(doc):
            yield from _list_items(doc)
        else:
            yield doc


def _is_list(doc: dict[str, Any]) -> bool:
    kind = doc.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in doc and "spec" not in doc


def _list_items(doc: dict[str, Any]) -> Iterator[dict[str, Any] | _Bad]:
    items = doc["items"]
    if items is None:
        return
    if not isinstance(items, list):
        yield _Bad(f"items: {doc['kind']} items must be a list, not {_type_name(items)}")
        return
    item_kind = doc["kind"][: -len("List")]  # PodList holds Pods; a plain List holds anything
    for item in items:
        if not isinstance(item, dict):
            yield _Bad(
                f"a {doc['kind']} item must be a mapping with apiVersion and kind, not {_type_name(item)}"
            )
        elif _is_list(item):
            yield from _list_items(item)
        elif item_kind and "kind" not in item:
            # The API server leaves apiVersion and kind out of a typed list's items.
            yield {"apiVersion": doc.get("apiVersion"), "kind": item_kind, **item}
        else:
            yield item


def _type_name(value: object) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )
