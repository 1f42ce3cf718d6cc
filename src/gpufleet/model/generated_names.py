"""Names made from a prefix, as the API server makes them for ``metadata.generateName`` and as
controllers name their pods (a ReplicaSet's ``<rs>-<5 chars>``), but deterministic.

Upstream (k8s.io/apiserver pkg/storage/names, ``simpleNameGenerator.GenerateName``) cuts the prefix
to ``MaxGeneratedNameLength`` (63 - 5) characters and appends 5 characters drawn at random from
``k8s.io/apimachinery/pkg/util/rand``'s ``alphanums``. Here the 5 characters come from a hash of a
key the caller chooses (the scenario's seed and the object's place among those sharing its prefix),
so that a scenario names its objects the same way on every run; a name already taken is drawn
again with the next attempt, as a client retries a create refused with ``AlreadyExists``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container

#: ``alphanums`` of k8s.io/apimachinery/pkg/util/rand (no vowels, no confusable characters)
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5
MAX_GENERATED_NAME_LENGTH = 63 - RANDOM_LENGTH


def generate_name(base: str, key: str) -> str:
    """``base`` (cut to 58 characters) and 5 characters of ``ALPHANUMS`` chosen by ``key``."""
    number = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    suffix = []
    for _ in range(RANDOM_LENGTH):
        number, index = divmod(number, len(ALPHANUMS))
        suffix.append(ALPHANUMS[index])
    return base[:MAX_GENERATED_NAME_LENGTH] + "".join(suffix)


def unique_name(base: str, key: str, taken: Container[str]) -> str:
    """``generate_name(base, key)``, drawn again (key ``<key>#<attempt>``) while it is in ``taken``."""
    name, attempt = generate_name(base, key), 0
    while name in taken:
        attempt += 1
        name = generate_name(base, f"{key}#{attempt}")
    return name
