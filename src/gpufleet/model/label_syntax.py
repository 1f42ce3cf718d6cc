"""The syntax of label keys and values, as ``k8s.io/apimachinery/pkg/util/validation`` checks it.

``IsQualifiedName`` (a label key, an extended resource name after ``requests.``: an optional
DNS-1123 subdomain prefix and ``/``, then a name of at most 63 alphanumerics, ``-``, ``_`` or ``.``
starting and ending with an alphanumeric), ``IsValidLabelValue`` (empty, or such a name) and
``IsDNS1123Subdomain``. Each returns upstream's messages, empty when the text is valid; the
selector parser (``labels.NewRequirement``, ``requirement_problems``) refuses a requirement whose
key or values fail them, and reads ``Gt``/``Lt`` values as Go's ``strconv.ParseInt`` does.
"""

from __future__ import annotations

import re

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_QNAME = re.compile(_QNAME_FMT)
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
NAME_MAX_LENGTH = 63
SUBDOMAIN_MAX_LENGTH = 253


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``RegexError``."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(length: int) -> str:
    return f"must be no more than {length} characters"


def dns1123_subdomain_problems(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errs = []
    if len(value) > SUBDOMAIN_MAX_LENGTH:
        errs.append(_max_len(SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def qualified_name_problems(value: str) -> list[str]:
    """``IsQualifiedName``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        detail = _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
        tail = "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        return [f"a qualified name {detail} {tail}"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend(f"prefix part {m}" for m in dns1123_subdomain_problems(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > NAME_MAX_LENGTH:
        errs.append(f"name part {_max_len(NAME_MAX_LENGTH)}")
    if not _QNAME.fullmatch(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_problems(value: str) -> list[str]:
    """``IsValidLabelValue``."""
    errs = []
    if len(value) > NAME_MAX_LENGTH:
        errs.append(_max_len(NAME_MAX_LENGTH))
    if value and not _QNAME.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


_INT64 = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: an optional sign and decimal digits, within int64."""
    if not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


#: ``nodeaffinity.validSelectorOperators``
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def go_strings(values: tuple[str, ...]) -> str:
    """A ``[]string`` as ``field.Invalid`` prints it (Go's ``%#v``); an empty list reads as nil."""
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}" if values else "[]string(nil)"


def unsupported(value: str, supported: tuple[str, ...]) -> str:
    """``field.NotSupported``'s message."""
    return f'Unsupported value: "{value}": supported values: ' + ", ".join(f'"{s}"' for s in supported)


def requirement_problems(key: str, operator: str, values: tuple[str, ...]) -> list[str]:
    """What node affinity's selector parser refuses in one ``matchExpressions`` entry, as
    ``path: message`` lines: an operator outside ``NODE_SELECTOR_OPERATORS``
    (``nodeSelectorRequirementsAsSelector``), else ``labels.NewRequirement``'s complaints: the key
    must be a qualified name, ``In``/``NotIn`` need values, ``Exists``/``DoesNotExist`` take none,
    ``Gt``/``Lt`` take one integer, and each value is a label value."""
    if operator not in NODE_SELECTOR_OPERATORS:
        return [f"operator: {unsupported(operator, NODE_SELECTOR_OPERATORS)}"]
    errs = []
    key_problems = qualified_name_problems(key)
    if key_problems:
        errs.append(f'key: Invalid value: "{key}": {"; ".join(key_problems)}')
    listed = f"values: Invalid value: {go_strings(values)}"
    if operator in ("In", "NotIn") and not values:
        errs.append(f"{listed}: for 'in', 'notin' operators, values set can't be empty")
    elif operator in ("Exists", "DoesNotExist") and values:
        errs.append(f"{listed}: values set must be empty for exists and does not exist")
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(f"{listed}: for 'Gt', 'Lt' operators, exactly one value is required")
        errs.extend(
            f"values[{i}]: Invalid value: \"{v}\": for 'Gt', 'Lt' operators, the value must be an integer"
            for i, v in enumerate(values)
            if parse_int64(v) is None
        )
    for i, value in enumerate(values):
        value_problems = label_value_problems(value)
        if value_problems:  # ``validateLabelValue`` puts the key after the index: ``values[0][key]``
            errs.append(f'values[{i}][{key}]: Invalid value: "{value}": {"; ".join(value_problems)}')
    return errs
